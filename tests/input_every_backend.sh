#!/usr/bin/env bash
# --input on every backend (issue 17 point 1): a Matrix Market file factored
# on one node, under mpirun on a 1x2 grid and in a simulated 2x2 cluster with
# --sim-data, each node streaming the file into its own tiles; the checks pass
# on each, an asymmetric file for Cholesky and a truncated file give exit 2
# and the same one-line error on every backend (once per rank under mpirun;
# also beside entries far larger than the asymmetry),
# and a matrix that is not positive definite ends a 2x2 run with exit 3; a
# file one rank alone cannot read ends both ranks with exit 2.
# Usage: input_every_backend.sh TESSERA MPIEXEC MACHINE_FILE
set -u
tessera=$1 mpiexec=$2 machine=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A symmetric positive definite file (coordinate, lower triangle: 4 on the
# diagonal, -1 on the first two subdiagonals, diagonally dominant), n = 300.
n=300
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "$n $n $((3 * n - 3))"
  awk -v n=$n 'BEGIN { for (j = 1; j <= n; j++) { print j, j, 4.5; if (j + 1 <= n) print j + 1, j, -1; if (j + 2 <= n) print j + 2, j, -0.5 } }'
} > "$dir/spd.mtx"
# A general 350 x 300 array file with values from a deterministic formula.
{
  echo "%%MatrixMarket matrix array real general"
  echo "350 300"
  awk 'BEGIN { for (j = 1; j <= 300; j++) for (i = 1; i <= 350; i++) printf "%.15g\n", sin(i * 12.9898 + j * 78.233) }'
} > "$dir/tall.mtx"
# A general file that is not symmetric, for Cholesky.
{
  echo "%%MatrixMarket matrix coordinate real general"
  echo "$n $n $((2 * n - 1))"
  awk -v n=$n 'BEGIN { for (j = 1; j <= n; j++) { print j, j, 4; if (j + 1 <= n) print j + 1, j, -1 } }'
} > "$dir/asym.mtx"
# Symmetric but not positive definite: a negative pivot at column 250.
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "$n $n $((2 * n - 1))"
  awk -v n=$n 'BEGIN { for (j = 1; j <= n; j++) { print j, j, (j == 250 ? -1 : 4); if (j + 1 <= n) print j + 1, j, -1 } }'
} > "$dir/notpd.mtx"
# Not positive definite from column 250 on: a node whose kernels run on after
# that breakdown meets later ones (257 on the other node of a 1x2 grid).
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "$n $n $((2 * n - 1))"
  awk -v n=$n 'BEGIN { for (j = 1; j <= n; j++) { print j, j, (j >= 250 ? -1 : 4); if (j + 1 <= n) print j + 1, j, -1 } }'
} > "$dir/notpd_tail.mtx"
# Asymmetric beside entries of far larger magnitude (one pair +-0.5 under a
# diagonal of 1e12, and of 1e308): a distributed run's streamed check summed
# against the sum of |a_ij|, which the large entries dominated (and overflowed).
for big in 1e12 1e308; do
  {
    echo "%%MatrixMarket matrix coordinate real general"
    echo "4 4 6"
    printf '1 1 %s\n2 2 %s\n3 3 1\n4 4 1\n4 3 0.5\n3 4 -0.5\n' "$big" "$big"
  } > "$dir/asym_$big.mtx"
  sed 's/-0.5$/0.5/' "$dir/asym_$big.mtx" > "$dir/sym_$big.mtx"  # the same, symmetric: accepted
done
# The SPD file cut short.
head -n 200 "$dir/spd.mtx" > "$dir/short.mtx"

mpi=("$mpiexec" --allow-run-as-root --oversubscribe -np 2)
sim=(--backend sim --machine "$machine" --grid 2x2 --sim-data)

run() {  # name, expected status, expected line (regex), expected count of that line, command...
  local name=$1 rc=$2 line=$3 count=$4
  shift 4
  "$@" > "$dir/out" 2> "$dir/err"
  local got=$?
  [ "$got" = "$rc" ] || { cat "$dir/out" "$dir/err"; fail "$name: exit $got, expected $rc"; }
  local seen
  seen=$(cat "$dir/out" "$dir/err" | grep -c -E "$line")
  [ "$seen" = "$count" ] || { cat "$dir/out" "$dir/err"; fail "$name: $seen lines match '$line', expected $count"; }
  if [ "$rc" != 0 ] && grep -q "backend=" "$dir/out"; then fail "$name: a failed run printed a summary line"; fi
  echo "ok: $name"
}

ok_chol="^cholesky +tile d 300x300 .* ok$"
ok_qr="^qr +tile d 350x300 .* ok$"
run chol_one_node 0 "$ok_chol" 1 "$tessera" run --algo cholesky --input "$dir/spd.mtx" --B 64 --threads 2 --check
run chol_mpi_1x2 0 "$ok_chol" 1 "${mpi[@]}" "$tessera" run --algo cholesky --input "$dir/spd.mtx" --B 64 --grid 1x2 --check
run chol_sim_2x2 0 "$ok_chol" 1 "$tessera" run --algo cholesky --input "$dir/spd.mtx" --B 64 --threads 2 "${sim[@]}" --check
run qr_mpi_1x2 0 "$ok_qr" 1 "${mpi[@]}" "$tessera" run --algo qr --input "$dir/tall.mtx" --B 64 --grid 1x2 --check
run qr_sim_2x2 0 "$ok_qr" 1 "$tessera" run --algo qr --input "$dir/tall.mtx" --B 64 --threads 2 "${sim[@]}" --check

asym="^tessera: error: --input .*asym[^ ]*\.mtx: --algo cholesky needs a symmetric matrix"
run asym_one_node 2 "$asym" 1 "$tessera" run --algo cholesky --input "$dir/asym.mtx" --B 64
run asym_mpi_1x2 2 "$asym" 2 "${mpi[@]}" "$tessera" run --algo cholesky --input "$dir/asym.mtx" --B 64 --grid 1x2
run asym_sim_2x2 2 "$asym" 1 "$tessera" run --algo cholesky --input "$dir/asym.mtx" --B 64 "${sim[@]}"
for big in 1e12 1e308; do
  run "asym_${big}_one_node" 2 "$asym" 1 "$tessera" run --algo cholesky --input "$dir/asym_$big.mtx" --B 2
  run "asym_${big}_sim_2x2" 2 "$asym" 1 "$tessera" run --algo cholesky --input "$dir/asym_$big.mtx" --B 2 "${sim[@]}"
  run "sym_${big}_sim_2x2" 0 "^cholesky +tile d 4x4 .* ok$" 1 "$tessera" run --algo cholesky --input "$dir/sym_$big.mtx" \
    --B 2 "${sim[@]}" --check
done

short="^tessera: error: --input .*short.mtx, line 200: file ends after 198 of 897 entries$"
run short_one_node 2 "$short" 1 "$tessera" run --algo cholesky --input "$dir/short.mtx" --B 64
run short_mpi_1x2 2 "$short" 2 "${mpi[@]}" "$tessera" run --algo cholesky --input "$dir/short.mtx" --B 64 --grid 1x2
run short_sim_2x2 2 "$short" 1 "$tessera" run --algo cholesky --input "$dir/short.mtx" --B 64 "${sim[@]}"

# A kernel failure on one node of a 2x2 grid (issue 17 point 2): every rank
# ends with exit 3 within 10 s, the failed node names the global column once,
# the others say which node failed.
notpd="^tessera: error: input matrix is not positive definite: .*global column 250, 1-based\)$"
run notpd_mpi_2x2 3 "$notpd" 1 timeout 10 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 "$tessera" run --algo cholesky \
  --input "$dir/notpd.mtx" --B 64 --grid 2x2
grep -c "failed (its message above says why)" "$dir/err" | grep -qx 3 || fail "notpd_mpi_2x2: not every other rank named the failed node"
run notpd_sim_2x2 3 "$notpd" 1 timeout 10 "$tessera" run --algo cholesky --input "$dir/notpd.mtx" --B 64 "${sim[@]}"
# The first breakdown in column order is the one reported: the node that met
# a later one, a consequence, says which node failed instead of naming its own.
run notpd_tail_mpi_1x2 3 "$notpd" 1 timeout 10 "${mpi[@]}" "$tessera" run --algo cholesky --input "$dir/notpd_tail.mtx" \
  --B 64 --grid 1x2
grep -q "node 1 failed (its message above says why)" "$dir/err" || fail "notpd_tail_mpi_1x2: node 0 did not name node 1"
# On 2x2, column 250 is node 3's (tile (3, 3)): the three others name node 3.
run notpd_tail_mpi_2x2 3 "$notpd" 1 timeout 10 "$mpiexec" --allow-run-as-root --oversubscribe -np 4 "$tessera" run \
  --algo cholesky --input "$dir/notpd_tail.mtx" --B 64 --grid 2x2
grep -c "node 3 failed (its message above says why)" "$dir/err" | grep -qx 3 ||
  fail "notpd_tail_mpi_2x2: not every other rank named node 3"

# A file only one rank cannot read (each host its own copy: missing on node 1's, or cut short there, met while it
# streams its tiles): that rank names it once, the other says node 1 failed, both end with exit 2 (they waited for
# each other's first collective for ever before). mpirun's MPMD form gives each rank its own file.
mpmd() {  # the file rank 1 reads
  mpmd_cmd=(timeout 20 "$mpiexec" --allow-run-as-root --oversubscribe
    -np 1 "$tessera" run --algo cholesky --input "$dir/spd.mtx" --B 64 --grid 1x2 :
    -np 1 "$tessera" run --algo cholesky --input "$1" --B 64 --grid 1x2)
}
missing="^tessera: error: --input .*missing.mtx: cannot open the file"
mpmd "$dir/missing.mtx"
run missing_on_one_rank 2 "$missing" 1 "${mpmd_cmd[@]}"
grep -q "node 1 failed (its message above says why)" "$dir/err" || fail "missing_on_one_rank: node 0 did not name node 1"
mpmd "$dir/short.mtx"
run short_on_one_rank 2 "$short" 1 "${mpmd_cmd[@]}"
grep -q "node 1 failed (its message above says why)" "$dir/err" || fail "short_on_one_rank: node 0 did not name node 1"
echo "input on every backend: 17 cases pass"
