#!/usr/bin/env bash
# The main job: tile Cholesky and tile QR, double and single precision, at
# N = 4096 on every core of this machine; then both distributed over two MPI
# processes (a 1x2 node grid, when MPI was built) and over 16 simulated
# Keeneland nodes (a 4x4 grid, real data, when SimGrid was built); with three
# emulated GPUs on this node, and on 4 simulated Keeneland nodes with their
# three GPUs each. Every run is
# checked against the scaled residual threshold (30). Prints each run's
# summary line, then one table. Exits non-zero when any run fails or fails
# its check.
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
# run_case WHERE JSON COMMAND...: runs one checked factorization.
run_case() {
  local where="$1" json="$2"
  shift 2
  rm -f "$json"
  local rc=0
  "$@" --check --json "$json" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "main_job.sh: $where: $* exited with status $rc" >&2
    failed=1
  fi
  jsons+=("$where:$json")
}

for algo in cholesky qr; do
  for precision in d s; do
    run_case "1 node" "$OUT_DIR/${algo}_${precision}_n${N}.json" \
      "$TESSERA" run --algo "$algo" --precision "$precision" --n "$N" --threads "$THREADS"
  done
done
# Three emulated GPUs on this node (issue 5): every GPU path with real data.
for algo in cholesky qr; do
  run_case "1 node + 3 emulated GPUs" "$OUT_DIR/${algo}_d_n${N}_gpus3.json" \
    "$TESSERA" run --algo "$algo" --n "$N" --B 512 --s 4 --b 64 --threads 1 --gpus 3
done
# Distributed runs only where their backend was built (a 1x2 grid without mpirun says which).
if [[ -x "$(command -v mpirun)" ]] && ! "$TESSERA" run --algo cholesky --n 8 --grid 1x2 2>&1 | grep -q "built without"; then
  for algo in cholesky qr; do
    run_case "mpirun 1x2" "$OUT_DIR/${algo}_d_n${N}_mpi1x2.json" \
      mpirun --allow-run-as-root --oversubscribe -np 2 "$TESSERA" run --algo "$algo" --n "$N" --grid 1x2 --threads 1
  done
fi
if ! "$TESSERA" run --algo cholesky --n 8 --backend sim --machine platform/machines/keeneland.json 2>&1 | grep -q "built without"; then
  SIM_N=$(( N / 2 ))
  for algo in cholesky qr; do
    run_case "sim 4x4" "$OUT_DIR/${algo}_d_n${SIM_N}_sim4x4.json" \
      "$TESSERA" run --algo "$algo" --n "$SIM_N" --B 256 --grid 4x4 --backend sim \
      --machine platform/machines/keeneland.json --sim-data --threads 2
  done
  for algo in cholesky qr; do
    run_case "sim 2x2, 3 GPUs each" "$OUT_DIR/${algo}_d_n${SIM_N}_sim2x2_gpus3.json" \
      "$TESSERA" run --algo "$algo" --n "$SIM_N" --B 384 --s 3 --b 64 --grid 2x2 --gpus 3 --backend sim \
      --machine platform/machines/keeneland.json --sim-data --threads 2
  done
fi

echo
echo "tessera main job: N=$N, threads=$THREADS (mpirun: 1 per rank; simulated: time_s is simulated seconds), results in ${OUT_DIR#"$ROOT"/}/"
/usr/bin/python3 - "${jsons[@]}" <<'EOF' || failed=1
import json
import sys

header = ("where", "algo", "precision", "N", "time s", "GFlop/s", "residual", "orth", "ok")
rows, bad = [], False
for arg in sys.argv[1:]:
    where, path = arg.split(":", 1)
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        rows.append((where, "-", "-", "-", "-", "-", "-", "-", "FAILED (no result)"))
        bad = True
        continue
    passed = r.get("check_passed")
    bad |= passed is not True
    orth = r.get("orthogonality")
    rows.append((
        where,
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
left = {0, 1, 2, 8}
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
