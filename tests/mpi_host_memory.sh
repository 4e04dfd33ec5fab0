#!/usr/bin/env bash
# Host memory exhausted on one rank (issue 17 point 2): under mpirun on a 1x2
# grid, rank 1 alone runs under `ulimit -v` (an MPMD launch: `mpirun -np 1 A
# : -np 1 sh -c 'ulimit -v L; exec A'`); rank 0 has no limit.
#  1. A limit below its share of the matrix: rank 1 stops before allocating,
#     naming the share, the limit, what the process maps and what its
#     threads reserve; the job ends with exit 4 (MPI_Abort) within 10 s.
#     (Not asserted: Open MPI's own MPI_ABORT notice, which mpirun sometimes
#     fails to unpack from a rank that ends at once.)
#  2. A limit that holds the share but not the address space the rank's
#     threads reserve (stacks, malloc arenas, OpenBLAS's per-thread buffer):
#     the same, naming the threads. (Before the preflight counted them, such a
#     rank passed the check and OpenBLAS then retried its failing mmap
#     forever: the job hung.)
#  3. A limit with room for both: the run succeeds.
# Usage: mpi_host_memory.sh TESSERA MPIEXEC
set -u
tessera=$1 mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run() {  # name, expected status, expected line (regex), ulimit -v of rank 1 (KiB), tessera arguments...
  local name=$1 rc=$2 line=$3 limit=$4
  shift 4
  timeout 10 "$mpiexec" --allow-run-as-root --oversubscribe -np 1 "$tessera" "$@" : \
    -np 1 sh -c 'ulimit -v "$0" && exec "$@"' "$limit" "$tessera" "$@" > "$dir/out" 2> "$dir/err"
  local got=$?
  [ "$got" = "$rc" ] || { cat "$dir/out" "$dir/err"; fail "$name: exit $got, expected $rc (124: still running after 10 s)"; }
  [ "$(cat "$dir/out" "$dir/err" | grep -c -E "$line")" = 1 ] || { cat "$dir/out" "$dir/err"; fail "$name: no one line matches '$line'"; }
  if [ "$rc" != 0 ]; then
    grep -q "backend=" "$dir/out" && fail "$name: a failed run printed a summary line"
  fi
  echo "ok: $name"
}
bytes_of() {  # the byte count after "$2" in file $1: "... 0.26 GiB (275808256 bytes) this process maps"
  sed -n "s/.* \([0-9.]*\) GiB (\([0-9]*\) bytes) $2.*/\2/p" "$1" | head -1
}

# The address space a rank maps before it allocates tiles depends on the
# build (a CUDA build maps its libraries): learn it from a run whose share no
# limit would hold (exit 4 naming what the process maps and what its threads
# reserve), then set the limits around it.
run probe 4 "^tessera: error: rank 1: out of memory: the run needs .* this process maps already and .* its 3 threads reserve .*$" \
  8000000 run --algo cholesky --n 200000 --grid 1x2 --threads 1
maps=$(bytes_of "$dir/err" "this process maps") reserve=$(bytes_of "$dir/err" "its 3 threads reserve")
[ -n "$maps" ] && [ -n "$reserve" ] || fail "probe: no mapped and reserved bytes in the message"

# Half the 784,000,000-byte share of --n 14000 on 2 ranks above what is mapped and reserved.
run share_above_limit 4 "^tessera: error: rank 1: out of memory: the run needs 0\.73 GiB \(784000000 bytes\) on this node \(its 1/2 share of --grid 1x2\) but [0-9.]+ GiB \([0-9]+ bytes\) is available \(the address-space limit \(ulimit -v, RLIMIT_AS\) of [0-9.]+ GiB \([0-9]+ bytes\) less the [0-9.]+ GiB \([0-9]+ bytes\) this process maps already and the [0-9.]+ GiB \([0-9]+ bytes\) its 3 threads reserve \(stacks, malloc arenas, OpenBLAS buffers\)\): .*--n 14000.*$" \
  $(((maps + reserve + 392000000) / 1024)) run --algo cholesky --n 14000 --grid 1x2 --threads 1

share=16000000
run threads_above_limit 4 "^tessera: error: rank 1: out of memory: the run needs 0\.01 GiB \(16000000 bytes\) .* its 3 threads reserve \(stacks, malloc arenas, OpenBLAS buffers\)\): .*$" \
  $(((maps + share + reserve / 2) / 1024)) run --algo cholesky --n 2000 --grid 1x2 --threads 1

# 3. Room for all of it, and 256 MiB for what the check does not count (tiles received from rank 0).
run room_for_all 0 "^cholesky +tile d 2000x2000 .* grid=1x2 .* backend=native .*unchecked$" \
  $(((maps + share + reserve) / 1024 + 262144)) run --algo cholesky --n 2000 --grid 1x2 --threads 1
echo "host memory exhausted on one rank: 4 cases pass"
