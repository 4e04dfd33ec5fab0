#!/bin/bash
# The ScaLAPACK peer's numbers, the other side of every bench_mpi.py ratio:
# its GFlop/s is its algorithm's flop count over its time (n^3/3 Cholesky,
# 4n^3/3 QR, 2n^3/3 LU); its time is the factorization's, the slowest rank's
# after the closing barrier (with one block of 600, rank 1 of 1x2 holds
# nothing and is done at once: its own span would be microseconds, where the
# one-rank run takes milliseconds); LU's growth factor max|U| / max|A| of the
# same matrix is the same on 1x2 and 2x1 (partial pivoting picks the same
# rows) and at least 1 (the first pivot is max|A|); and the matrix is tessera's
# own: tessera's partial-pivoting LU of the same kind and seed has the same
# growth factor (to rounding), where another matrix of the kind has another.
#   scalapack_peer_numbers.sh MPIEXEC SCALAPACK_PEER TESSERA
set -u
mpiexec=$1 peer=$2 tessera=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # ranks name args...
  local np=$1 name=$2
  shift 2
  "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$peer" "$@" --json "$dir/$name.json" >"$dir/$name.out" 2>&1 ||
    { cat "$dir/$name.out"; echo "FAIL: $name: exit status"; exit 1; }
}
for algo in cholesky qr lu; do run 2 "$algo" --algo "$algo" --n 600 --nb 64 --grid 1x2 --check; done
run 2 lu_2x1 --algo lu --n 600 --nb 64 --grid 2x1 --check
run 2 one_block --algo cholesky --n 600 --nb 600 --grid 1x2
run 1 one_rank --algo cholesky --n 600 --nb 600 --grid 1x1
run 2 lu_graded --algo lu --n 600 --nb 64 --grid 1x2 --matrix graded --seed 7 --check
for case in "lu --seed 1" "lu_graded --matrix graded --seed 7" "lu_seed2 --seed 2"; do
  set -- $case
  name=$1
  shift
  "$tessera" run --algo lu --pivot partial --n 600 --B 64 --threads 1 --check "$@" --json "$dir/tessera_$name.json" \
    >"$dir/tessera_$name.out" 2>&1 || { cat "$dir/tessera_$name.out"; echo "FAIL: tessera $name: exit status"; exit 1; }
done
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}.json"))
n = 600
for algo, flops in (("cholesky", n**3 / 3), ("qr", 4 * n**3 / 3), ("lu", 2 * n**3 / 3)):
    r = load(algo)
    got = r["gflops"] * r["time_s"] * 1e9
    if abs(got / flops - 1) > 1e-9:
        sys.exit(f"FAIL: {algo}: gflops x time_s = {got:.6g} flops, its count is {flops:.6g}")
g12, g21 = load("lu")["growth_factor"], load("lu_2x1")["growth_factor"]
if not (g12 >= 1 and abs(g12 / g21 - 1) < 1e-6):
    sys.exit(f"FAIL: LU growth factor {g12} on 1x2, {g21} on 2x1: the same matrix's, at least 1")
for peer_run, ours in (("lu", "tessera_lu"), ("lu_graded", "tessera_lu_graded")):
    gp, gt = load(peer_run)["growth_factor"], load(ours)["growth_factor"]
    if abs(gp / gt - 1) > 1e-9:
        sys.exit(f"FAIL: LU growth factor {gp} in the peer, {gt} in tessera: not the same matrix ({peer_run})")
other = load("tessera_lu_seed2")["growth_factor"]
if abs(other / g12 - 1) < 1e-3:
    sys.exit(f"FAIL: LU growth factor {other} with seed 2, {g12} with seed 1: the comparison cannot tell matrices apart")
t2, t1 = load("one_block")["time_s"], load("one_rank")["time_s"]
if t2 < 0.05 * t1:
    sys.exit(f"FAIL: one block on 1x2 took {t2} s, the one-rank run {t1} s: the time is not the slowest rank's")
print(f"ok: flop counts, growth {g12:.4g} on both grids and in tessera, one block {t2:.4g} s against one rank {t1:.4g} s")
PY
