#!/usr/bin/env bash
# What a command's outputs become when something fails (experiments/output_path.hpp): "a command that is refused or
# fails leaves every file as it was", and a finished run's result is not lost.
#   1. A standard output closed early (`| true`: SIGPIPE at the summary line): the JSON is written first, so it exists.
#   2. Node 1's trace of a simulated 1x2 run, a link into a missing directory: refused before the run (exit 2, naming
#      node 1's file), and the JSON from an earlier run is untouched (it was overwritten before the trace failed).
#   3. A write that fails part-way (a file size limit, `ulimit -f`, with SIGXFSZ ignored: EFBIG): exit 2 naming the
#      reason, the trace from the earlier run whole and unchanged, no temporary file left.
#   4. A JSON output that cannot be written (/dev/full): exit 2 for `model comm`, and for the StarPU and ScaLAPACK
#      peers (given): each said nothing and exited 0 before.
#   5. Outputs written in place: --json /dev/stdout with the standard output sent to a file, and a hard-linked file.
# Usage: outputs_on_failure.sh TESSERA MACHINE_FILE [STARPU_PEER] [SCALAPACK_PEER MPIEXEC]
set -u
tessera=$1 machine=$2 starpu=${3:-} scalapack=${4:-} mpiexec=${5:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$dir" || exit 1

# 1.
"$tessera" run --algo cholesky --n 800 --B 100 --json piped.json | true
[ -s piped.json ] || fail "1: the JSON of a run whose standard output closed early is missing"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' piped.json || fail "1: piped.json is not JSON"
echo "ok: 1 (JSON written before the summary)"

# 2.
ln -s "$dir/missing/x.json" run.node1.json
echo '{"old": true}' > out.json
"$tessera" run --backend sim --machine "$machine" --grid 1x2 --algo cholesky --n 1200 --trace run.json \
  --json out.json > out 2> err
rc=$?
[ "$rc" = 2 ] || { cat out err; fail "2: exit $rc, expected 2"; }
grep -q "^tessera: error: --trace (node 1) run.node1.json: cannot open for writing (no directory $dir/missing)$" err ||
  { cat err; fail "2: no line naming node 1's trace"; }
[ "$(cat out.json)" = '{"old": true}' ] || fail "2: out.json changed"
[ ! -e run.json ] || fail "2: node 0's trace was written by a refused run"
[ ! -s out ] || fail "2: a refused run printed $(cat out)"
echo "ok: 2 (node 1's trace checked before the run)"

# 3.
"$tessera" run --algo cholesky --n 600 --B 100 --trace t.json > /dev/null || fail "3: the first run failed"
cp t.json t.before
(
  trap '' XFSZ
  ulimit -f 16  # KiB: the trace of the larger run below is longer
  exec "$tessera" run --algo cholesky --n 1500 --B 100 --trace t.json
) > out 2> err
rc=$?
[ "$rc" = 2 ] || { cat out err; fail "3: exit $rc, expected 2"; }
grep -q "^tessera: error: --trace t.json: write failed (File too large)$" err || { cat err; fail "3: no reason given"; }
cmp -s t.json t.before || fail "3: the earlier trace was changed by a failed write"
leftover=$(find . -name '.t.json.*')
[ -z "$leftover" ] || fail "3: temporary file left: $leftover"
echo "ok: 3 (a failed write leaves the earlier file whole)"

# 4.
"$tessera" model comm --algo cholesky --n 4000 --B 320 --s 1 --grid 2x2 --json /dev/full > /dev/null 2> err
rc=$?
[ "$rc" = 2 ] && grep -q "^tessera: error: --json /dev/full: write failed (No space left on device)$" err ||
  { cat err; fail "4: model comm exit $rc"; }
if [ -n "$starpu" ]; then
  STARPU_HOME=$dir "$starpu" --n 300 --nb 64 --json /dev/full > /dev/null 2> err
  rc=$?
  [ "$rc" = 2 ] && grep -q "^starpu_peer: error: --json /dev/full: write failed (No space left on device)$" err ||
    { cat err; fail "4: starpu_peer exit $rc"; }
fi
if [ -n "$scalapack" ]; then
  "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$scalapack" --algo cholesky --n 300 --nb 64 --grid 1x2 \
    --json /dev/full > /dev/null 2> err
  rc=$?
  [ "$rc" = 2 ] && grep -q "^scalapack_peer: error: --json /dev/full: write failed (No space left on device)$" err ||
    { cat err; fail "4: scalapack_peer exit $rc"; }
fi
echo "ok: 4 (an unwritable JSON is exit 2 for model comm${starpu:+, starpu_peer}${scalapack:+, scalapack_peer})"

# 5. Written in place, not renamed over: the command's own standard output sent to a file (the JSON and then the
#    summary line, neither over the other), and a file with a second hard link (both names see the new JSON).
"$tessera" run --algo cholesky --n 300 --json /dev/stdout > both.txt || fail "5: --json /dev/stdout failed"
python3 - both.txt <<'PY' || fail "5: both.txt is not the JSON followed by the summary line"
import json, sys
text = open(sys.argv[1]).read()
obj, end = json.JSONDecoder().raw_decode(text)
rest = text[end:].strip().splitlines()
assert obj["n"] == 300 and len(rest) == 1 and rest[0].startswith("cholesky "), rest
PY
echo old > first
ln first second
"$tessera" run --algo cholesky --n 300 --json second > /dev/null || fail "5: --json of a hard-linked file failed"
cmp -s first second && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' first ||
  fail "5: the other hard link does not hold the new JSON"
echo "ok: 5 (standard output and hard links written in place)"
