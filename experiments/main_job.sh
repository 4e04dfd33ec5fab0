#!/usr/bin/env bash
# The main job: tile Cholesky and tile QR, double and single precision, at
# N = 4096 on every core of this machine, each checked against the scaled
# residual threshold (30). Prints each run's summary line, then one table.
# Exits non-zero when any run fails or fails its check.
#
#   experiments/main_job.sh            (after ./setup.sh build)
#   TESSERA_MAIN_N=1024 experiments/main_job.sh    a smaller size
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TESSERA="$ROOT/build/tessera"
N="${TESSERA_MAIN_N:-4096}"
THREADS="$(nproc)"
OUT_DIR="$ROOT/results/main_job"

[[ -x "$TESSERA" ]] || { echo "main_job.sh: $TESSERA not found; run ./setup.sh build first" >&2; exit 1; }
mkdir -p "$OUT_DIR"

failed=0
jsons=()
for algo in cholesky qr; do
  for precision in d s; do
    json="$OUT_DIR/${algo}_${precision}_n${N}.json"
    rm -f "$json"
    rc=0
    "$TESSERA" run --algo "$algo" --precision "$precision" --n "$N" --threads "$THREADS" --check \
      --json "$json" || rc=$?
    if [[ $rc -ne 0 ]]; then
      echo "main_job.sh: $algo precision=$precision n=$N exited with status $rc" >&2
      failed=1
    fi
    jsons+=("$algo:$precision:$json")
  done
done

echo
echo "tessera main job: N=$N, threads=$THREADS, results in ${OUT_DIR#"$ROOT"/}/"
/usr/bin/python3 - "${jsons[@]}" <<'EOF' || failed=1
import json
import sys

header = ("algo", "precision", "N", "time s", "GFlop/s", "residual", "orth", "ok")
rows, bad = [], False
for arg in sys.argv[1:]:
    algo, precision, path = arg.split(":", 2)
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        rows.append((algo, precision, "-", "-", "-", "-", "-", "FAILED (no result)"))
        bad = True
        continue
    passed = r.get("check_passed")
    bad |= passed is not True
    orth = r.get("orthogonality")
    rows.append((
        r["algo"],
        r["precision"],
        str(r["n"]),
        f'{r["time_s"]:.3f}',
        f'{r["gflops"]:.2f}',
        "-" if r["residual"] is None else f'{r["residual"]:.3g}',
        "-" if orth is None else f"{orth:.3g}",
        "ok" if passed else "FAILED",
    ))
widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
left = {0, 1, 7}
def fmt(row):
    return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
print(fmt(header))
print(fmt(tuple("-" * w for w in widths)))
for row in rows:
    print(fmt(row))
sys.exit(1 if bad else 0)
EOF

if [[ $failed -ne 0 ]]; then
  echo "main_job.sh: FAILED (a run failed or exceeded the residual threshold)" >&2
  exit 1
fi
echo "main_job.sh: all runs passed their checks"
