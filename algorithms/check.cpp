#include "algorithms/check.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera {
namespace {

inline void trmm_right(CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, index_t m, index_t n, const double* a, index_t lda,
                       double* b, index_t ldb) {
  cblas_dtrmm(CblasColMajor, CblasRight, uplo, tr, CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
}
inline void trmm_right(CBLAS_UPLO uplo, CBLAS_TRANSPOSE tr, index_t m, index_t n, const float* a, index_t lda, float* b,
                       index_t ldb) {
  cblas_strmm(CblasColMajor, CblasRight, uplo, tr, CblasNonUnit, m, n, 1.0f, a, lda, b, ldb);
}
// C = I - A^T A (upper triangle)
inline void syrk_identity(index_t n, index_t k, const double* a, index_t lda, double* c) {
  cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, k, -1.0, a, lda, 1.0, c, n);
}
inline void syrk_identity(index_t n, index_t k, const float* a, index_t lda, float* c) {
  cblas_ssyrk(CblasColMajor, CblasUpper, CblasTrans, n, k, -1.0f, a, lda, 1.0f, c, n);
}

// One-norm (max column sum) of an m×n column-major matrix given by an accessor.
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

}  // namespace

template <class T>
Residuals cholesky_residual(const std::vector<T>& a, const TileMatrix<T>& f) {
  const index_t n = f.layout().n();
  const double eps = unit_roundoff<T>();
  // C = L, then C = L L^T.
  std::vector<T> c = f.to_dense();
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < j; ++i) c[i + j * n] = T(0);
  std::vector<T> l = c;
  trmm_right(CblasLower, CblasTrans, n, n, l.data(), n, c.data(), n);
  auto sym = [&](index_t r, index_t col) { return r >= col ? a[r + col * n] : a[col + r * n]; };
  const double anorm = norm1(n, n, sym);
  const double resid = norm1(n, n, [&](index_t r, index_t col) {
    return static_cast<double>(c[r + col * n]) - static_cast<double>(sym(r, col));
  });
  return {scaled_ratio(resid, anorm, static_cast<double>(n), eps), {}};
}

template <class T>
Residuals qr_residual(const std::vector<T>& a, const TileMatrix<T>& f, const std::vector<T>& q) {
  const index_t m = f.layout().m(), n = f.layout().n();
  const double eps = unit_roundoff<T>();
  // R: the upper triangle of the first n rows.
  const std::vector<T> full = f.to_dense();
  std::vector<T> r(static_cast<std::size_t>(n * n), T(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) r[i + j * n] = full[i + j * m];
  // QR = Q R
  std::vector<T> qr = q;
  trmm_right(CblasUpper, CblasNoTrans, m, n, r.data(), n, qr.data(), m);
  const double anorm = norm1(m, n, [&](index_t i, index_t j) { return a[i + j * m]; });
  const double resid = norm1(m, n, [&](index_t i, index_t j) {
    return static_cast<double>(a[i + j * m]) - static_cast<double>(qr[i + j * m]);
  });
  // I - Q^T Q (upper triangle, symmetric)
  std::vector<T> g(static_cast<std::size_t>(n * n), T(0));
  for (index_t j = 0; j < n; ++j) g[j + j * n] = T(1);
  syrk_identity(n, m, q.data(), m, g.data());
  const double onorm = norm1(n, n, [&](index_t i, index_t j) { return i <= j ? g[i + j * n] : g[j + i * n]; });
  return {scaled_ratio(resid, anorm, static_cast<double>(std::max(m, n)), eps),
          {{"orth", "orthogonality", onorm / (static_cast<double>(m) * eps)}}};
}

template Residuals cholesky_residual<float>(const std::vector<float>&, const TileMatrix<float>&);
template Residuals cholesky_residual<double>(const std::vector<double>&, const TileMatrix<double>&);
template Residuals qr_residual<float>(const std::vector<float>&, const TileMatrix<float>&, const std::vector<float>&);
template Residuals qr_residual<double>(const std::vector<double>&, const TileMatrix<double>&,
                                       const std::vector<double>&);

}  // namespace tessera
