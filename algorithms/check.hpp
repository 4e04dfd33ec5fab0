#pragma once
// Scaled residuals of the factorizations. A run passes when every ratio is
// below kResidualThreshold = 30, the threshold LAPACK's test programs use for
// ratios of this kind (LAPACK TESTING/dtest.in and stest.in, THRESH = 30.0,
// applied to e.g. ||L L^T - A|| / (N ||A|| eps) in xPOT01 and
// ||A - Q R|| / (M ||A|| eps), ||I - Q^T Q|| / (M eps) in xQRT01).
#include <vector>

#include "algorithms/qr.hpp"
#include "base/tile_matrix.hpp"

namespace tessera {

inline constexpr double kResidualThreshold = 30.0;

struct Residuals {
  double factor = 0;  // ||A - LL^T||_1 / (N ||A||_1 eps)  or  ||A - QR||_1 / (max(m,n) ||A||_1 eps)
  double orth = 0;    // QR only: ||I - Q^T Q||_1 / (m eps)
  bool passed() const { return factor < kResidualThreshold && orth < kResidualThreshold; }
};

// resid / (scale * anorm * eps), following LAPACK's convention for a zero matrix.
double scaled_ratio(double resid, double anorm, double scale, double eps);

// `a` is the original matrix (column-major, m×n, only its lower triangle is
// used for Cholesky); `factored` holds the factorization's output.
template <class T>
Residuals cholesky_residual(const std::vector<T>& a, const TileMatrix<T>& factored);

// `q` is the thin m×n Q (column-major), formed from the factorization.
template <class T>
Residuals qr_residual(const std::vector<T>& a, const TileMatrix<T>& factored, const std::vector<T>& q);

}  // namespace tessera
