#!/usr/bin/env bash
# A run does what its options say whatever the environment it inherits, or refuses with one line naming the variable
# and its value:
#   - a standard output that takes nothing (a full device, closed) loses the summary line, the only result of a run
#     without --json: exit 2 and one line naming standard output (it exited 0 with the result lost);
#   - mpirun's variables: OMPI_COMM_WORLD_SIZE that is not a count is refused; a local size or rank without the job's
#     size is a leftover of a shell or a script, not a job, and changes nothing (OMPI_COMM_WORLD_LOCAL_SIZE=100000
#     split the host's memory between 100,000 ranks: exit 4); --B auto is refused under a job of several ranks,
#     naming OMPI_COMM_WORLD_SIZE;
#   - SIGINT ends a simulation as it ends any other run (SimGrid's engine printed every actor and exited 1);
#   - with MPIEXEC given: every process a rank starts inherits the rank's environment, so a one-node run inside a job
#     of one rank runs without MPI (the second of two such runs failed in MPI_Init under the rank's identity, exit 1).
# Usage: environment.sh TESSERA [MPIEXEC]
set -u
tessera=$1
mpiexec=${2:-}
fail() { echo "FAIL: $*"; exit 1; }
machine=$(dirname "$0")/../platform/machines/keeneland.json
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=(run --algo cholesky --n 256 --B 64 --threads 1)

# expect STATUS REGEX: the last command's status, and its one stderr line matching REGEX.
expect() {
  [ "$rc" = "$1" ] || { cat "$dir/err"; fail "$what: exit $rc, expected $1"; }
  [ "$(wc -l < "$dir/err")" = 1 ] && grep -q -- "$2" "$dir/err" ||
    { cat "$dir/err"; fail "$what: not one line matching '$2'"; }
}

what="stdout on /dev/full"
"$tessera" "${run[@]}" > /dev/full 2> "$dir/err"; rc=$?
expect 2 "^tessera: error: standard output: a write failed"
what="stdout closed"
"$tessera" "${run[@]}" >&- 2> "$dir/err"; rc=$?
expect 2 "^tessera: error: standard output: closed"
what="stdout on /dev/full with --json"  # the file is written, and the status still says what was lost
"$tessera" "${run[@]}" --json "$dir/r.json" > /dev/full 2> "$dir/err"; rc=$?
expect 2 "standard output"
grep -q '"time_s"' "$dir/r.json" || fail "$what: no JSON written"

for value in abc 4x 0 -1 99999999999; do
  what="OMPI_COMM_WORLD_SIZE=$value"
  OMPI_COMM_WORLD_SIZE=$value "$tessera" "${run[@]}" > "$dir/out" 2> "$dir/err"; rc=$?
  expect 2 "^tessera: error: OMPI_COMM_WORLD_SIZE='$value' (in the environment): not an integer >= 1"
done
what="OMPI_COMM_WORLD_LOCAL_SIZE=x in a job"
OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_SIZE=x "$tessera" "${run[@]}" > "$dir/out" 2> "$dir/err"; rc=$?
expect 2 "OMPI_COMM_WORLD_LOCAL_SIZE='x'"

# Leftovers without the job's size: the host's memory is not split (a 2048-square run needs 64 MiB), on either backend.
for backend in "" "--backend sim --machine $machine --grid 1x2 --sim-data"; do
  what="OMPI_COMM_WORLD_LOCAL_SIZE=100000 alone${backend:+ ($backend)}"
  # shellcheck disable=SC2086
  OMPI_COMM_WORLD_LOCAL_SIZE=100000 OMPI_COMM_WORLD_LOCAL_RANK=7 "$tessera" run --algo cholesky --n 2048 --B 256 \
    --threads 1 $backend > "$dir/out" 2> "$dir/err"; rc=$?
  [ "$rc" = 0 ] || grep -q "built without SimGrid" "$dir/err" || { cat "$dir/err"; fail "$what: exit $rc"; }
done

what="--B auto in a job of 4 ranks"
OMPI_COMM_WORLD_SIZE=4 "$tessera" run --algo cholesky --n 256 --B auto > "$dir/out" 2> "$dir/err"; rc=$?
expect 2 "^tessera: error: --B auto under mpirun (OMPI_COMM_WORLD_SIZE=4)"

# Ctrl-C on a simulation: SimGrid's engine took SIGINT to list every actor and exit 1 (a failed --check's status);
# the run now ends as any other (killed by SIGINT), silently. A 4x4 Keeneland Cholesky takes about 15 s.
what="SIGINT to a simulation"
/usr/bin/python3 - "$tessera" "$machine" > "$dir/out" 2> "$dir/err" <<'PY'
import signal, subprocess, sys, time
cmd = [sys.argv[1], "run", "--backend", "sim", "--machine", sys.argv[2], "--grid", "4x4", "--algo", "cholesky",
       "--n", "138240", "--B", "1152", "--s", "2", "--b", "auto", "--gpus", "3"]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(2)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
if b"built without SimGrid" in err:
    sys.exit(0)
if p.returncode != -signal.SIGINT or err:
    sys.exit("returncode %s, stderr %r" % (p.returncode, err[:300]))
PY
rc=$?
[ "$rc" = 0 ] || { cat "$dir/err"; fail "$what: exit $rc"; }

if [ -n "$mpiexec" ]; then
  what="two one-node runs inside a job of one rank"
  timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np 1 bash -c \
    '"$0" "${@}" --check && "$0" "${@}" --check && "$0" run --algo cholesky --n 256 --B auto --threads 1' \
    "$tessera" "${run[@]}" > "$dir/out" 2> "$dir/err"; rc=$?
  [ "$rc" = 0 ] || { cat "$dir/out" "$dir/err"; fail "$what: exit $rc"; }
  [ "$(grep -c '^cholesky tile d 256x256 .* ok$' "$dir/out")" = 2 ] || { cat "$dir/out"; fail "$what: not 2 checked runs"; }
  grep -q "grid=" "$dir/out" && { cat "$dir/out"; fail "$what: ran as a distributed run"; }
fi
echo "ok"
