#!/bin/bash
# The StarPU peer's numbers, the other side of bench_starpu.py's ratios and
# of its exit-3 message: its GFlop/s is Cholesky's n^3/3 over its time; a
# breakdown names the global column, whatever the tiles (the column a 1-wide
# tile breaks in is its own index plus one), and under StarPU-MPI the first
# column any rank met (the tasks after a breakdown still run on what it
# left, and a later diagonal tile on another rank breaks down too); its
# --threads goes up to the StarPU build's most workers, and --sched wins over
# STARPU_SCHED (StarPU reads the environment first). With MPIEXEC, the time
# of a 1x2 run whose one tile rank 1 does not hold is the slowest rank's.
#   starpu_peer_numbers.sh STARPU_PEER [MPIEXEC]
set -u
peer=$1 mpiexec=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export STARPU_HOME=$dir/home
fail() { echo "FAIL: $*"; exit 1; }
run() {  # name expected-status command...
  local name=$1 want=$2
  shift 2
  "$@" >"$dir/$name.out" 2>&1
  local got=$?
  [ "$got" = "$want" ] || { cat "$dir/$name.out"; fail "$name: exit $got, expected $want"; }
}
column() { grep -o 'not positive definite (column [0-9]*)' "$dir/$1.out" | grep -o '[0-9]*)' | tr -d ')'; }

run gflops 0 "$peer" --n 500 --nb 96 --threads 2 --json "$dir/gflops.json"
python3 - "$dir/gflops.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
got, flops = r["gflops"] * r["time_s"] * 1e9, 500**3 / 3
if abs(got / flops - 1) > 1e-9:
    sys.exit(f"FAIL: gflops x time_s = {got:.6g} flops, Cholesky's count is {flops:.6g}")
PY

# Seed 4's general matrix of order 40 breaks down in column 3, past the first 1- and 2-wide tiles.
for nb in 40 2 1; do run "nb$nb" 3 "$peer" --n 40 --nb "$nb" --matrix general --seed 4; done
c40=$(column nb40)
[ -n "$c40" ] && [ "$c40" -gt 2 ] || fail "one 40-wide tile: breakdown column '$c40', expected one past the second"
for nb in 2 1; do [ "$(column "nb$nb")" = "$c40" ] || fail "--nb $nb: column $(column "nb$nb"), one 40-wide tile: $c40"; done

most=$("$peer" --n 300 --nb 64 --threads 99 2>&1 | grep -o 'at most [0-9]* CPU workers' | grep -o '[0-9]*')
[ -n "$most" ] || fail "--threads 99 did not name the most workers"
run most 0 "$peer" --n 300 --nb 64 --threads "$most" --check
grep -q "threads=$most " "$dir/most.out" || { cat "$dir/most.out"; fail "--threads $most: not in the line"; }
STARPU_SCHED=eager run sched 0 "$peer" --n 300 --nb 64 --sched lws --check
grep -q "sched=lws " "$dir/sched.out" || { cat "$dir/sched.out"; fail "STARPU_SCHED=eager --sched lws: not lws"; }

if [ -n "$mpiexec" ]; then
  mpi=("$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$peer")
  for g in 1x2 2x1; do
    run "mpi$g" 3 "${mpi[@]}" --grid "$g" --n 40 --nb 2 --matrix general --seed 4
    [ "$(column "mpi$g")" = "$c40" ] || fail "--grid $g: column $(column "mpi$g"), one process: $c40"
  done
  run one_block 0 "${mpi[@]}" --grid 1x2 --n 1200 --nb 1200 --json "$dir/one_block.json"
  run one_rank 0 "$peer" --n 1200 --nb 1200 --json "$dir/one_rank.json"
  python3 - "$dir" <<'PY' || exit 1
import json, sys
t2, t1 = (json.load(open(f"{sys.argv[1]}/{n}.json"))["time_s"] for n in ("one_block", "one_rank"))
if t2 < 0.3 * t1:
    sys.exit(f"FAIL: one tile on 1x2 took {t2} s, on one process {t1} s: the time is not the slowest rank's")
PY
fi
echo "ok: flop count, breakdown column $c40 at every tile width${mpiexec:+ and on both grids}, --threads $most, --sched over STARPU_SCHED"
