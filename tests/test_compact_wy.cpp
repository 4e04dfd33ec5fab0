// The merge of blocked T factors behind the CUDA backend's grouped LARFB and
// SSRFB (kernels/cuda/compact_wy.hpp), run here with the CPU's BLAS as its
// operations so that it is checked on every machine: T factors of ib-column
// blocks merged over a group must equal the T LAPACK computes for the whole
// group at once (xLARFT over all of a GEQRT's reflectors; xTPQRT with
// nb = the group for a TSQRT's), to a scaled rounding tolerance.
#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/compact_wy.hpp"
#include "tests/test_helpers.hpp"

namespace tessera::kernels::compact_wy {
namespace {

using test::uniform_matrix;

// merge_t with the CPU's BLAS.
void merge_on_cpu(index_t g, index_t ib, const double* t, index_t ldt, double* out, index_t ldo) {
  auto copy = [](index_t rows, index_t cols, const double* s, index_t lds, double* d, index_t ldd) {
    for (index_t j = 0; j < cols; ++j) std::copy(s + j * lds, s + j * lds + rows, d + j * ldd);
  };
  auto trmm_right = [](index_t rows, index_t cols, const double* tri, index_t ldtri, double* x, index_t ldx) {
    cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, int(rows), int(cols), 1.0, tri,
                int(ldtri), x, int(ldx));
  };
  auto trmm_left_neg = [](index_t rows, index_t cols, const double* tri, index_t ldtri, double* x, index_t ldx) {
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, int(rows), int(cols), -1.0, tri,
                int(ldtri), x, int(ldx));
  };
  merge_t(g, ib, t, ldt, out, ldo, copy, trmm_right, trmm_left_neg);
}

// max |upper(x) - upper(y)| / (max |upper(y)| · m · eps).
double upper_difference(const std::vector<double>& x, const std::vector<double>& y, index_t g, index_t m) {
  double diff = 0, scale = 0;
  for (index_t j = 0; j < g; ++j)
    for (index_t i = 0; i <= j; ++i) {
      diff = std::max(diff, std::abs(x[i + j * g] - y[i + j * g]));
      scale = std::max(scale, std::abs(y[i + j * g]));
    }
  return diff / (scale * double(m) * std::numeric_limits<double>::epsilon());
}

TEST(CompactWy, GroupWidthIsAMultipleOfIbWithinK) {
  EXPECT_EQ(group_width(256, 32, 4096), 256);
  EXPECT_EQ(group_width(300, 32, 4096), 288);
  EXPECT_EQ(group_width(256, 48, 4096), 240);
  EXPECT_EQ(group_width(16, 32, 4096), 32);  // never below ib
  EXPECT_EQ(group_width(0, 32, 4096), 32);   // 0: one block at a time
  EXPECT_EQ(group_width(256, 32, 100), 100);
  EXPECT_THROW(group_width(256, 0, 100), std::logic_error);
}

// A GEQRT tile's reflectors: V unit lower trapezoidal, G = V^T V.
TEST(CompactWy, MergedBlocksOfAGeqrtEqualLarftOnTheWholeGroup) {
  for (const index_t ib : {1, 4, 7, 16})
    for (const index_t g : {1, 16, 45, 64}) {
      const index_t m = g + 37;
      std::vector<double> a = uniform_matrix(m, g, 100 + std::uint64_t(ib * g));
      std::vector<double> tau(static_cast<std::size_t>(g));
      ASSERT_EQ(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, int(m), int(g), a.data(), int(m), tau.data()), 0);
      // The whole group's T, and each block's into LAPACK's ib×g layout.
      std::vector<double> want(static_cast<std::size_t>(g * g)), blocks(static_cast<std::size_t>(ib * g));
      ASSERT_EQ(
          LAPACKE_dlarft(LAPACK_COL_MAJOR, 'F', 'C', int(m), int(g), a.data(), int(m), tau.data(), want.data(), int(g)),
          0);
      for (index_t c = 0; c < g; c += ib) {
        const index_t b = std::min(ib, g - c);
        ASSERT_EQ(LAPACKE_dlarft(LAPACK_COL_MAJOR, 'F', 'C', int(m - c), int(b), a.data() + c + c * m, int(m),
                                 tau.data() + c, blocks.data() + c * ib, int(ib)),
                  0);
      }
      // V explicit, G = V^T V (upper), merged into T in place.
      std::vector<double> v(static_cast<std::size_t>(m * g), 0.0), gram(static_cast<std::size_t>(g * g), 0.0);
      for (index_t j = 0; j < g; ++j)
        for (index_t i = j; i < m; ++i) v[i + j * m] = i == j ? 1.0 : a[i + j * m];
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, int(g), int(m), 1.0, v.data(), int(m), 0.0, gram.data(),
                  int(g));
      merge_on_cpu(g, ib, blocks.data(), ib, gram.data(), g);
      const std::vector<double>& got = gram;
      EXPECT_LT(upper_difference(got, want, g, m), 10.0) << "ib " << ib << " g " << g;
    }
}

// A TSQRT tile's reflectors [e_j; v_j]: G = V^T V over the square tile's rows.
TEST(CompactWy, MergedBlocksOfATsqrtEqualTpqrtWithTheGroupAsItsBlock) {
  for (const index_t ib : {2, 8, 16})
    for (const index_t g : {16, 40, 64}) {
      const index_t m = 50;
      std::vector<double> r = uniform_matrix(g, g, 200 + std::uint64_t(g));
      for (index_t j = 0; j < g; ++j)
        for (index_t i = j + 1; i < g; ++i) r[i + j * g] = 0;
      const std::vector<double> a0 = uniform_matrix(m, g, 300 + std::uint64_t(ib));
      std::vector<double> r1 = r, a1 = a0, r2 = r, a2 = a0;
      std::vector<double> blocks(static_cast<std::size_t>(ib * g)), want(static_cast<std::size_t>(g * g));
      ASSERT_EQ(LAPACKE_dtpqrt(LAPACK_COL_MAJOR, int(m), int(g), 0, int(ib), r1.data(), int(g), a1.data(), int(m),
                               blocks.data(), int(ib)),
                0);
      ASSERT_EQ(LAPACKE_dtpqrt(LAPACK_COL_MAJOR, int(m), int(g), 0, int(g), r2.data(), int(g), a2.data(), int(m),
                               want.data(), int(g)),
                0);
      std::vector<double> got(static_cast<std::size_t>(g * g), 0.0);
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, int(g), int(m), 1.0, a1.data(), int(m), 0.0, got.data(),
                  int(g));
      merge_on_cpu(g, ib, blocks.data(), ib, got.data(), g);
      EXPECT_LT(upper_difference(got, want, g, m), 10.0) << "ib " << ib << " g " << g;
    }
}

}  // namespace
}  // namespace tessera::kernels::compact_wy
