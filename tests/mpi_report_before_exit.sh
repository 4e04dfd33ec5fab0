#!/usr/bin/env bash
# No rank ends before node 0 has reported. Under mpirun a failed --check ends
# every rank with exit 1 and node 0 alone writes the summary and the error
# line; mpirun kills the other ranks as soon as the first exits non-zero, so a
# rank that exited at once could take node 0's report with it (CI saw this
# once: exit 1, no line). Here node 0 is made slow to report, every time: its
# --trace is a FIFO whose reader starts reading only 1 s after rank 1's trace
# (a plain file) is whole JSON, and node 0's trace is larger than a pipe
# holds, so node 0 blocks in its trace write while rank 1 is done, however
# long MPI's start and the run took.
# Usage: mpi_report_before_exit.sh TESSERA MPIEXEC
set -u
tessera=$1 mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { cat "$dir/out" "$dir/err"; echo "FAIL: $*"; exit 1; }

mkfifo "$dir/trace.json"
# The reader gives up after 70 s (a tessera that never opens the FIFO would
# otherwise keep it, and this script, waiting).
timeout 70 bash -c 'exec 3< "$1/trace.json"
  until /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1/trace.node1.json" 2> /dev/null; do
    sleep 0.1
  done
  sleep 1
  cat <&3 > "$1/node0.json"' reader "$dir" &
reader=$!
timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$tessera" run --algo qr --n 300 --B 16 \
  --grid 1x2 --check --test-fault corrupt-factor --trace "$dir/trace.json" > "$dir/out" 2> "$dir/err"
rc=$?
wait $reader
[ "$rc" = 1 ] || fail "exit $rc, expected 1 (124: still running after 60 s)"
[ "$(grep -c -E '^qr +tile d 300x300 .* grid=1x2 .* FAILED$' "$dir/out")" = 1 ] || fail "no summary line from node 0"
[ "$(grep -c -E '^tessera: error: --check failed: residual [0-9.e+]+, orthogonality' "$dir/err")" = 1 ] ||
  fail "no one error line from node 0"
# Both traces whole: node 0's through the FIFO (more than a pipe's 64 KiB), rank 1's beside it.
[ "$(stat -c %s "$dir/node0.json")" -gt 65536 ] || fail "node 0's trace is $(stat -c %s "$dir/node0.json") bytes"
/usr/bin/python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$dir/node0.json" \
  "$dir/trace.node1.json" || fail "a trace is not whole JSON"
echo "ok: node 0 reported before the job ended"
