#pragma once
// Scaled residuals of the factorizations. A run passes when every ratio is
// below kResidualThreshold = 30, the threshold LAPACK's test programs use for
// ratios of this kind (LAPACK TESTING/dtest.in and stest.in, THRESH = 30.0,
// applied to e.g. ||L L^T - A|| / (N ||A|| eps) in xPOT01 and
// ||A - Q R|| / (M ||A|| eps), ||I - Q^T Q|| / (M eps) in xQRT01), with
// their eps: the unit roundoff of the run's precision (base/numerics.hpp).
#include <cmath>
#include <string_view>
#include <vector>

#include "algorithms/qr.hpp"
#include "base/numerics.hpp"
#include "base/tile_matrix.hpp"

namespace tessera {

inline constexpr double kResidualThreshold = 30.0;

// A further measure of a factorization's result besides the factor
// residual: QR's orthogonality. `name` is its key in the summary line,
// `json` in the result JSON; a `checked` one must stay below the threshold
// (one that is only reported, such as a growth factor, need not).
struct ResidualRatio {
  const char* name;
  const char* json;
  double value;
  bool checked = true;
};

struct Residuals {
  double factor = 0;  // ||A - LL^T||_1 / (N ||A||_1 eps)  or  ||A - QR||_1 / (max(m,n) ||A||_1 eps)
  // QR: orth = ||I - Q^T Q||_1 / (m eps).
  std::vector<ResidualRatio> more;
  bool passed() const {
    for (const ResidualRatio& r : more)
      if (r.checked && !(r.value < kResidualThreshold)) return false;
    return factor < kResidualThreshold;
  }
  // The measure named `name` (0 when the factorization has none).
  double value(std::string_view name) const {
    for (const ResidualRatio& r : more)
      if (name == r.name) return r.value;
    return 0;
  }
};

// max(best, v) that keeps a NaN once met (std::max drops one in second
// place), so a NaN in the factors fails the check instead of vanishing.
inline double max_nan(double best, double v) { return std::isnan(v) || v > best ? v : best; }
// The largest of [first, last) by max_nan (0 for none).
template <class It>
double max_nan_of(It first, It last) {
  double best = 0;
  for (; first != last; ++first) best = max_nan(best, *first);
  return best;
}

// `a` is the original matrix (column-major, m×n, only its lower triangle is
// used for Cholesky); `factored` holds the factorization's output.
template <class T>
Residuals cholesky_residual(const std::vector<T>& a, const TileMatrix<T>& factored);

// `q` is the thin m×n Q (column-major), formed from the factorization.
template <class T>
Residuals qr_residual(const std::vector<T>& a, const TileMatrix<T>& factored, const std::vector<T>& q);

}  // namespace tessera
