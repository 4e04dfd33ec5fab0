#!/usr/bin/env bash
# A GPU out of memory on one node of a distributed run (issue 17 point 2):
# Cholesky of n = 140 in tiles of B = 120 puts the 120 x 120 diagonal tile
# and the 20 x 120 tile below it on one node, whose TRSM needs both on its GPU
# (134400 bytes), while every other node's tasks need at most 22400 bytes. With
# GPUs of 120000 bytes that node alone fails: on a simulated 2x2 cluster
# (node 2) and under mpirun on a 1x2 grid of emulated GPUs (node 0), every
# node ends with exit 4 within 10 s, the GPU named once, no summary line. The
# same runs with GPUs of 140000 bytes succeed.
# Usage: distributed_gpu_oom.sh TESSERA MPIEXEC MACHINE_FILE
set -u
tessera=$1 mpiexec=$2 machine=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run() {  # name, expected status, expected line (regex), expected count of that line, command...
  local name=$1 rc=$2 line=$3 count=$4
  shift 4
  timeout 10 "$@" > "$dir/out" 2> "$dir/err"
  local got=$?
  [ "$got" = "$rc" ] || { cat "$dir/out" "$dir/err"; fail "$name: exit $got, expected $rc (124: still running after 10 s)"; }
  local seen
  seen=$(cat "$dir/out" "$dir/err" | grep -c -E "$line")
  [ "$seen" = "$count" ] || { cat "$dir/out" "$dir/err"; fail "$name: $seen lines match '$line', expected $count"; }
  if [ "$rc" != 0 ]; then
    grep -q "backend=" "$dir/out" && fail "$name: a failed run printed a summary line"
    [ "$(grep -c "GPU" "$dir/err")" = 1 ] || { cat "$dir/err"; fail "$name: the GPU is not named exactly once"; }
  fi
  echo "ok: $name"
}

shape=(run --algo cholesky --n 140 --B 120 --threads 1 --gpus 1)
fits=" does not fit \(115200 of 120000 bytes hold the other tiles of the task that needs it\)"

run sim_2x2 4 "^tessera: error: node 2: GPU 1 of node2 \(simulated\): out of memory: a buffer of 19200 bytes$fits$" 1 \
  "$tessera" "${shape[@]}" --gpu-memory 120000 --backend sim --machine "$machine" --grid 2x2
run sim_2x2_fits 0 "^cholesky +tile d 140x140 .* grid=2x2 .* gpus=1 .* backend=sim .*unchecked$" 1 \
  "$tessera" "${shape[@]}" --gpu-memory 140000 --backend sim --machine "$machine" --grid 2x2

mpi=("$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$tessera")
run mpi_1x2 4 "^tessera: error: node 0: GPU 1 \(emulated\): out of memory: a buffer of 19200 bytes$fits$" 1 \
  "${mpi[@]}" "${shape[@]}" --gpu-memory 120000 --grid 1x2
run mpi_1x2_fits 0 "^cholesky +tile d 140x140 .* grid=1x2 .* gpus=1 .* backend=native .*unchecked$" 1 \
  "${mpi[@]}" "${shape[@]}" --gpu-memory 140000 --grid 1x2
# A tile larger than a GPU, on rank 0 alone (n = 100 in tiles of 64: the
# 64 x 64 tile is node 0's): refused before the run on every rank alike, where
# rank 0 alone refused it and rank 1 waited in the run's first collective.
timeout 10 "${mpi[@]}" run --algo cholesky --n 100 --B 64 --gpus 1 --gpu-memory 20000 --grid 1x2 > "$dir/out" 2> "$dir/err"
got=$?
[ "$got" = 2 ] || { cat "$dir/out" "$dir/err"; fail "mpi_tile_too_large: exit $got, expected 2 (124: still running)"; }
[ "$(grep -c "^tessera: error: a tile of 32768 bytes does not fit in the 20000 bytes of GPU 1" "$dir/err")" = 2 ] ||
  { cat "$dir/err"; fail "mpi_tile_too_large: not both ranks named the tile"; }
echo "ok: mpi_tile_too_large"
echo "GPU out of memory on one node: 5 cases pass"
