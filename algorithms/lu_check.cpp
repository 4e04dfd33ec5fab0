#include "algorithms/lu_check.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "base/error.hpp"

namespace tessera {
namespace {

// An inconsistent call is the program's fault: exit status 5.
[[noreturn]] void bad_call(const std::string& why) { throw Error("lu_residual: " + why, 5); }

// x := L^{-1} x (unit lower) or U^{-1} x (upper), the leading n×n triangle of a.
inline void trsv(CBLAS_UPLO uplo, CBLAS_DIAG diag, index_t n, const double* a, index_t lda, double* x) {
  cblas_dtrsv(CblasColMajor, uplo, CblasNoTrans, diag, n, a, lda, x, 1);
}
inline void trsv(CBLAS_UPLO uplo, CBLAS_DIAG diag, index_t n, const float* a, index_t lda, float* x) {
  cblas_strsv(CblasColMajor, uplo, CblasNoTrans, diag, n, a, lda, x, 1);
}

// One-norm (max column sum) and infinity norm (max row sum) of an m×n
// matrix given by an accessor, in double.
template <class F>
double norm1(index_t m, index_t n, F&& at) {
  double best = 0;
  for (index_t c = 0; c < n; ++c) {
    double s = 0;
    for (index_t r = 0; r < m; ++r) s += std::abs(static_cast<double>(at(r, c)));
    best = max_nan(best, s);
  }
  return best;
}
template <class F>
double norm_inf(index_t m, index_t n, F&& at) {
  std::vector<double> rows(static_cast<std::size_t>(m), 0.0);
  for (index_t c = 0; c < n; ++c)
    for (index_t r = 0; r < m; ++r) rows[r] += std::abs(static_cast<double>(at(r, c)));
  double best = 0;
  for (double s : rows) best = max_nan(best, s);
  return best;
}

void check_permutation(index_t m, const std::vector<index_t>& perm) {
  if (static_cast<index_t>(perm.size()) != m)
    bad_call("perm has " + std::to_string(perm.size()) + " entries, the matrix " + std::to_string(m) + " rows");
  std::vector<bool> seen(static_cast<std::size_t>(m), false);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const index_t r = perm[i];
    if (r < 0 || r >= m || seen[r])
      bad_call("perm[" + std::to_string(i) + "] = " + std::to_string(r) + " is out of [0, " + std::to_string(m) +
               ") or repeated: not a permutation");
    seen[r] = true;
  }
}

}  // namespace

std::vector<index_t> lu_permutation_from_ipiv(index_t m, const std::vector<index_t>& ipiv) {
  if (m < 0) throw Error("lu_permutation_from_ipiv: m = " + std::to_string(m) + " < 0", 5);
  const index_t k = static_cast<index_t>(ipiv.size());
  if (k > m)
    throw Error("lu_permutation_from_ipiv: " + std::to_string(k) + " pivots for " + std::to_string(m) + " rows", 5);
  std::vector<index_t> perm(static_cast<std::size_t>(m));
  for (index_t i = 0; i < m; ++i) perm[i] = i;
  for (index_t i = 0; i < k; ++i) {
    if (ipiv[i] < 0 || ipiv[i] >= m)
      throw Error("lu_permutation_from_ipiv: ipiv[" + std::to_string(i) + "] = " + std::to_string(ipiv[i]) +
                      " is outside [0, " + std::to_string(m) + ")",
                  5);
    std::swap(perm[i], perm[ipiv[i]]);
  }
  return perm;
}

template <class T>
Residuals lu_residual(const std::vector<T>& a, const TileMatrix<T>& f, const std::vector<index_t>& perm,
                      std::uint64_t seed) {
  const index_t m = f.layout().m(), n = f.layout().n();
  if (m < n) bad_call("needs m >= n: m = " + std::to_string(m) + ", n = " + std::to_string(n));
  if (static_cast<index_t>(a.size()) != m * n)
    bad_call("a has " + std::to_string(a.size()) + " entries, the factors are " + std::to_string(m) + "x" +
             std::to_string(n));
  check_permutation(m, perm);
  const double eps = unit_roundoff<T>();
  const std::vector<T> full = f.to_dense();  // m×n, leading dimension m
  auto pa = [&](index_t i, index_t j) { return a[perm[i] + j * m]; };

  // LU = L U in double: L m×n unit lower trapezoidal, U n×n upper.
  std::vector<double> lu(static_cast<std::size_t>(m * n), 0.0), u(static_cast<std::size_t>(n * n), 0.0);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i <= j; ++i) u[i + j * n] = static_cast<double>(full[i + j * m]);
    lu[j + j * m] = 1.0;
    for (index_t i = j + 1; i < m; ++i) lu[i + j * m] = static_cast<double>(full[i + j * m]);
  }
  cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0, u.data(), n, lu.data(), m);
  const double anorm = norm1(m, n, [&](index_t i, index_t j) { return a[i + j * m]; });
  const double resid = norm1(m, n, [&](index_t i, index_t j) { return static_cast<double>(pa(i, j)) - lu[i + j * m]; });
  Residuals out{scaled_ratio(resid, anorm, static_cast<double>(n), eps), {}};

  if (m == n && n > 0) {
    // b uniform in [-1, 1]; x = U^{-1} L^{-1} (P b), in precision T.
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    std::vector<T> b(static_cast<std::size_t>(n)), x(static_cast<std::size_t>(n));
    for (T& v : b) v = static_cast<T>(uni(gen));
    for (index_t i = 0; i < n; ++i) x[i] = b[perm[i]];
    trsv(CblasLower, CblasUnit, n, full.data(), m, x.data());
    trsv(CblasUpper, CblasNonUnit, n, full.data(), m, x.data());
    // ||A x - b||_inf in double.
    std::vector<double> r(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) r[i] = -static_cast<double>(b[i]);
    for (index_t j = 0; j < n; ++j) {
      const double xj = static_cast<double>(x[j]);
      for (index_t i = 0; i < n; ++i) r[i] += static_cast<double>(a[i + j * m]) * xj;
    }
    double rnorm = 0, xnorm = 0;
    for (index_t i = 0; i < n; ++i) {
      rnorm = max_nan(rnorm, std::abs(r[i]));
      xnorm = max_nan(xnorm, std::abs(static_cast<double>(x[i])));
    }
    const double ainf = norm_inf(m, n, [&](index_t i, index_t j) { return a[i + j * m]; });
    // A NaN or infinity in x (a singular U) must fail the check, not pass it.
    double ratio = std::numeric_limits<double>::infinity();
    if (std::isfinite(rnorm) && std::isfinite(xnorm))
      ratio = scaled_ratio(rnorm, ainf * xnorm, static_cast<double>(n), eps);
    out.more.push_back({"solve", "solve_residual", ratio, true});
  }

  // Growth factor max|U| / max|A|.
  double umax = 0, amax = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) umax = max_nan(umax, std::abs(static_cast<double>(full[i + j * m])));
  for (const T& v : a) amax = max_nan(amax, std::abs(static_cast<double>(v)));
  double growth = umax / amax;  // NaN when either is
  if (amax == 0 && !std::isnan(umax)) growth = umax > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  out.more.push_back({"growth", "growth_factor", growth, false});
  return out;
}

template Residuals lu_residual<float>(const std::vector<float>&, const TileMatrix<float>&, const std::vector<index_t>&,
                                      std::uint64_t);
template Residuals lu_residual<double>(const std::vector<double>&, const TileMatrix<double>&,
                                       const std::vector<index_t>&, std::uint64_t);

}  // namespace tessera
