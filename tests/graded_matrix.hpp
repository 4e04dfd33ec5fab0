#pragma once
// A rows×cols matrix of a chosen condition number, for the Cholesky QR
// panel's tests on the CPU and on a GPU (tests/test_cholqr_panel.cpp,
// tests/test_cuda_cholqr.cpp): U diag(σ) V^T with U, V orthonormal (LAPACK's
// QR of random matrices) and σ from 1 down to 1/cond, geometrically.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/test_helpers.hpp"

namespace tessera::test {

inline std::vector<double> graded_matrix(std::int64_t rows, std::int64_t cols, double cond, std::uint64_t seed) {
  std::vector<double> u = uniform_matrix(rows, cols, seed), v = uniform_matrix(cols, cols, seed + 1);
  std::vector<double> tau(static_cast<std::size_t>(cols));
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, int(rows), int(cols), u.data(), int(rows), tau.data());
  LAPACKE_dorgqr(LAPACK_COL_MAJOR, int(rows), int(cols), int(cols), u.data(), int(rows), tau.data());
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, int(cols), int(cols), v.data(), int(cols), tau.data());
  LAPACKE_dorgqr(LAPACK_COL_MAJOR, int(cols), int(cols), int(cols), v.data(), int(cols), tau.data());
  for (std::int64_t j = 0; j < cols; ++j) {
    const double sigma = std::pow(cond, -double(j) / double(std::max<std::int64_t>(cols - 1, 1)));
    for (std::int64_t i = 0; i < rows; ++i) u[i + j * rows] *= sigma;
  }
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(rows), int(cols), int(cols), 1.0, u.data(), int(rows),
              v.data(), int(cols), 0.0, x.data(), int(rows));
  return x;
}

}  // namespace tessera::test
