#pragma once
// Local checks of the LU factorization P A = L U (issue 14; paper 002).
// Every ratio is compared with kResidualThreshold = 30 (algorithms/check.hpp),
// the THRESH of LAPACK's test input files TESTING/dtest.in and stest.in, under
// which LAPACK's own LU tests pass.
//
// lu_residual returns:
//  - factor: the backward error ||P A - L U||_1 / (n ||A||_1 eps), the ratio of
//    LAPACK's test routine xGET01 (which divides by N, the column count, for
//    an M×N matrix as here). L U, the difference and the norms are computed
//    in double also for float factors, so the check adds no rounding of its
//    own at float's scale; eps is the unit roundoff of T
//    (base/numerics.hpp: LAPACK's DLAMCH('E'), 2^-53 and 2^-24).
//  - more[0] = {"solve", "solve_residual", r, checked}, square matrices only:
//    x solves A x = b through the factors (b permuted by P, then cblas ?trsv
//    with the unit lower L and with U, in precision T) for a random b, each
//    entry uniform in [-1, 1] from std::mt19937_64(seed), and
//      r = ||A x - b||_inf / (||A||_inf ||x||_inf n eps).
//    This follows the normwise residual of LAPACK's test routine xGET02,
//    ||b - A x|| / (||A|| ||x|| eps), with two differences: the infinity norm
//    instead of xGET02's 1-norm, and an extra factor n in the denominator
//    (xGET02 has none), which makes it n times more lenient than the same
//    ratio without it; same threshold 30. A x - b is formed in
//    double from the T values of A, x and b. For a tall matrix (m > n, A = P
//    L U with L m×n) A x = b has no solution in general and the entry is not
//    added at all (no least-squares substitute): only `factor` and `growth`
//    check a tall LU, so look the solve ratio up by name, not by position.
//  - {"growth", "growth_factor", max|U_ij| / max|A_ij|, false}: the growth
//    factor of the elimination, reported and never checked (GEPP's bound is
//    2^(n-1), reached by Wilkinson's matrix; CALU's worst-case bound is
//    larger, see kernels/cpu/lu_kernels.hpp). 0 for a zero matrix.
// A NaN in the factors makes `factor` NaN and the solve ratio infinite, so
// passed() fails (the norms here keep a NaN instead of dropping it).
#include <cstdint>
#include <vector>

#include "algorithms/check.hpp"
#include "base/tile_matrix.hpp"

namespace tessera {

// perm[i] (size m): the original row of A that ends at row i of P A
// (0-based). a: the original m×n matrix, column-major, m >= n. f: the
// factored matrix with the same m×n shape: L unit lower trapezoidal strictly
// below the diagonal, U upper triangular on and above it (its first n rows).
// seed: the random right-hand side of the solve check. Throws tessera::Error
// (exit status 5, an internal error) when m < n, a.size() != m n or
// perm is not a permutation of 0..m-1.
template <class T>
Residuals lu_residual(const std::vector<T>& a, const TileMatrix<T>& f, const std::vector<index_t>& perm,
                      std::uint64_t seed);

// The permutation perm (as above) of m rows from LAPACK-style 0-based pivots
// ipiv[0..k): for i = 0, ..., k-1 in that order, row i was swapped with row
// ipiv[i]. The swaps applied in that order to the identity 0..m-1. Throws
// tessera::Error (exit status 5) when m < 0, k > m or an ipiv[i] lies outside
// [0, m).
std::vector<index_t> lu_permutation_from_ipiv(index_t m, const std::vector<index_t>& ipiv);

}  // namespace tessera
