#!/usr/bin/env bash
# --column-major: the matrix starts and ends column-major, as a LAPACK caller holds it, and the conversions are timed
# apart (convert_s, outside time_s). Every factorization still passes --check from that start (the tiles built by
# TileMatrix::from_dense without zeroing), reports a positive convert_s, and the same time_s field as without; a run
# that is no native one-node CPU run (GPUs, a grid, a simulation, a peer) is refused with exit 2 naming the option.
# Usage: column_major.sh TESSERA
set -u
tessera=$1
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for algo in cholesky qr lu; do
  "$tessera" run --algo "$algo" --n 700 --m 700 --B 96 --threads 2 --check --column-major --json "$dir/$algo.json" \
    > "$dir/out" 2>&1 || { cat "$dir/out"; fail "$algo --column-major --check: exit $?"; }
  python3 - "$dir/$algo.json" "$algo" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
if r.get("check_passed") is not True:
    sys.exit("FAIL: %s: check_passed %r" % (sys.argv[2], r.get("check_passed")))
if not (isinstance(r.get("convert_s"), float) and 0 < r["convert_s"] < 60 and r["time_s"] > 0):
    sys.exit("FAIL: %s: convert_s %r, time_s %r" % (sys.argv[2], r.get("convert_s"), r.get("time_s")))
PY
done
"$tessera" run --algo cholesky --n 300 --B 64 --json "$dir/plain.json" > /dev/null || fail "a plain run"
grep -q '"convert_s"' "$dir/plain.json" && fail "a run without --column-major reports convert_s"
machine="$(cd "$(dirname "$0")/.." && pwd)/platform/machines/local-example.json"
for other in "--gpus 1" "--impl lapack" "--backend sim --machine $machine"; do
  # shellcheck disable=SC2086
  "$tessera" run --algo cholesky --n 300 --column-major $other > "$dir/out" 2> "$dir/err"
  rc=$?
  [ $rc = 2 ] || { cat "$dir/err"; fail "--column-major $other: exit $rc, not 2"; }
  grep -q "^tessera: error: --column-major .* not a run with ${other%% --machine*}\$" "$dir/err" ||
    { cat "$dir/err"; fail "--column-major $other: the message does not name it"; }
done
echo "ok: cholesky, qr and lu checked from a column-major start; refusals name --gpus, --impl, --backend sim"
