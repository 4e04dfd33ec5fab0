// Tests of the LU checks (algorithms/lu_check.hpp): on factors straight from
// LAPACKE ?getrf every ratio passes LAPACK's threshold 30 (dtest.in / stest.in),
// a wrong factor or a wrong permutation fails it, the growth factor of a
// matrix whose growth is known comes out exactly, and the permutation built
// from LAPACK-style pivots is the one LAPACK's swaps produce.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/lu_check.hpp"
#include "base/error.hpp"
#include "base/tile_layout.hpp"
#include "base/tile_matrix.hpp"
#include "kernels/cpu/lu_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace tessera {
namespace {

template <class T>
std::vector<T> random_matrix(index_t m, index_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (auto& x : a) x = static_cast<T>(u(gen));
  return a;
}

lapack_int getrf(lapack_int m, lapack_int n, double* a, lapack_int* ipiv) {
  return LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, a, m, ipiv);
}
lapack_int getrf(lapack_int m, lapack_int n, float* a, lapack_int* ipiv) {
  return LAPACKE_sgetrf(LAPACK_COL_MAJOR, m, n, a, m, ipiv);
}

double norm1(index_t m, index_t n, const std::vector<double>& a) {
  double best = 0;
  for (index_t j = 0; j < n; ++j) {
    double s = 0;
    for (index_t i = 0; i < m; ++i) s += std::abs(a[i + j * m]);
    best = std::max(best, s);
  }
  return best;
}

// A factored by LAPACK's GEPP, copied into tiles of `layout`, with the
// 0-based pivots LAPACK returned.
template <class T>
struct Factored {
  std::vector<T> a;  // the original matrix
  TileMatrix<T> f;
  std::vector<index_t> ipiv;
};

template <class T>
Factored<T> factor_with_lapack(std::vector<T> a, const TileLayout& layout) {
  const index_t m = layout.m(), n = layout.n();
  std::vector<T> lu = a;
  std::vector<lapack_int> piv(static_cast<std::size_t>(std::min(m, n)));
  EXPECT_EQ(getrf(static_cast<lapack_int>(m), static_cast<lapack_int>(n), lu.data(), piv.data()), 0);
  Factored<T> out{std::move(a), TileMatrix<T>(layout), {}};
  out.f.from_dense(lu.data(), m);
  for (lapack_int p : piv) out.ipiv.push_back(p - 1);
  return out;
}

template <class T>
class LuCheck : public ::testing::Test {
 protected:
  void SetUp() override { kernels::set_blas_threads(1); }
  // The change of one U entry the backward error must see: 30 n eps ||A||_1
  // is the least it can flag (7e-4 ||A||_1 in float at n = 200, 1e-12 in
  // double), so float takes a larger one than double's 1e-6.
  static double perturbation() { return sizeof(T) == sizeof(double) ? 1e-6 : 1e-2; }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LuCheck, Precisions);

// Tiles of 48 rows (and a b = 16 column inside each 48-wide block): 48
// divides neither 200 nor 300 nor 120, so the last tile row and column are
// short.
TileLayout layout(index_t m, index_t n) { return TileLayout(m, n, 48, 2, 16); }

TYPED_TEST(LuCheck, SquareGeppFactorsPass) {
  using T = TypeParam;
  const index_t n = 200;
  Factored<T> x = factor_with_lapack(random_matrix<T>(n, n, 11), layout(n, n));
  const std::vector<index_t> perm = lu_permutation_from_ipiv(n, x.ipiv);
  const Residuals r = lu_residual(x.a, x.f, perm, 7);
  EXPECT_LT(r.factor, kResidualThreshold);
  ASSERT_EQ(r.more.size(), 2u);
  EXPECT_STREQ(r.more[0].name, "solve");
  EXPECT_STREQ(r.more[0].json, "solve_residual");
  EXPECT_TRUE(r.more[0].checked);
  EXPECT_LT(r.value("solve"), kResidualThreshold);
  EXPECT_STREQ(r.more[1].name, "growth");
  EXPECT_STREQ(r.more[1].json, "growth_factor");
  EXPECT_FALSE(r.more[1].checked);
  EXPECT_GE(r.value("growth"), 1.0);
  EXPECT_TRUE(std::isfinite(r.value("growth")));
  EXPECT_TRUE(r.passed());
  // The same seed gives the same right-hand side, hence the same ratio.
  EXPECT_EQ(lu_residual(x.a, x.f, perm, 7).value("solve"), r.value("solve"));
}

TYPED_TEST(LuCheck, TallGeppFactorsPassWithoutASolve) {
  using T = TypeParam;
  const index_t m = 300, n = 120;
  Factored<T> x = factor_with_lapack(random_matrix<T>(m, n, 12), layout(m, n));
  const std::vector<index_t> perm = lu_permutation_from_ipiv(m, x.ipiv);
  const Residuals r = lu_residual(x.a, x.f, perm, 7);
  EXPECT_LT(r.factor, kResidualThreshold);
  // No solve ratio for m > n: growth is the only further entry.
  ASSERT_EQ(r.more.size(), 1u);
  EXPECT_STREQ(r.more[0].name, "growth");
  EXPECT_FALSE(r.more[0].checked);
  EXPECT_GE(r.value("growth"), 1.0);
  EXPECT_TRUE(std::isfinite(r.value("growth")));
  EXPECT_TRUE(r.passed());
}

TYPED_TEST(LuCheck, PerturbedUFails) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<index_t, index_t>{200, 200}, {300, 120}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    Factored<T> x = factor_with_lapack(random_matrix<T>(m, n, 13), layout(m, n));
    const std::vector<index_t> perm = lu_permutation_from_ipiv(m, x.ipiv);
    ASSERT_TRUE(lu_residual(x.a, x.f, perm, 1).passed());
    std::vector<double> ad(x.a.begin(), x.a.end());
    const double delta = this->perturbation() * norm1(m, n, ad);
    x.f.at(5, n - 20) += static_cast<T>(delta);  // in U: row 5 <= column n-20
    const Residuals bad = lu_residual(x.a, x.f, perm, 1);
    EXPECT_GT(bad.factor, kResidualThreshold);
    EXPECT_FALSE(bad.passed());
    // The solve sees it too (by ~1e6 in double; float's 1e-2 gives only ~2x
    // the threshold on this matrix, too close to assert).
    if (m == n && sizeof(T) == sizeof(double)) EXPECT_GT(bad.value("solve"), kResidualThreshold);
  }
}

// The solve ratio is ||A x - b||_inf / (n ||A||_inf ||x||_inf eps): checked
// against a matrix A + delta I with the factors of A, whose solve leaves
// r = delta x (up to rounding, O(1) in the ratio), so the ratio must come out
// as delta / (n ||A + delta I||_inf eps), chosen at 1000, whatever b and x.
TYPED_TEST(LuCheck, SolveRatioIsTheScaledResidualOfASolve) {
  using T = TypeParam;
  const index_t n = 200;
  Factored<T> x = factor_with_lapack(random_matrix<T>(n, n, 15), layout(n, n));
  const std::vector<index_t> perm = lu_permutation_from_ipiv(n, x.ipiv);
  const auto norm_inf = [n](const std::vector<T>& a) {
    double best = 0;
    for (index_t i = 0; i < n; ++i) {
      double row = 0;
      for (index_t j = 0; j < n; ++j) row += std::abs(static_cast<double>(a[i + j * n]));
      best = std::max(best, row);
    }
    return best;
  };
  const double eps = unit_roundoff<T>(), want = 1000;
  const T delta = static_cast<T>(want * static_cast<double>(n) * norm_inf(x.a) * eps);
  std::vector<T> shifted = x.a;
  for (index_t i = 0; i < n; ++i) shifted[i + i * n] += delta;
  const double expected = static_cast<double>(delta) / (static_cast<double>(n) * norm_inf(shifted) * eps);
  for (const std::uint64_t seed : {1u, 2u}) {
    const Residuals r = lu_residual(shifted, x.f, perm, seed);
    EXPECT_NEAR(r.value("solve"), expected, 0.03 * expected) << "seed " << seed;
    EXPECT_FALSE(r.passed());
  }
}

TYPED_TEST(LuCheck, WrongPermutationFails) {
  using T = TypeParam;
  for (auto [m, n] : {std::pair<index_t, index_t>{200, 200}, {300, 120}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n);
    Factored<T> x = factor_with_lapack(random_matrix<T>(m, n, 14), layout(m, n));
    std::vector<index_t> perm = lu_permutation_from_ipiv(m, x.ipiv);
    std::swap(perm[3], perm[m - 2]);
    const Residuals bad = lu_residual(x.a, x.f, perm, 1);
    EXPECT_GT(bad.factor, kResidualThreshold);
    EXPECT_FALSE(bad.passed());
  }
}

TYPED_TEST(LuCheck, NanInTheFactorsFails) {
  using T = TypeParam;
  const index_t n = 60;
  Factored<T> x = factor_with_lapack(random_matrix<T>(n, n, 15), layout(n, n));
  const std::vector<index_t> perm = lu_permutation_from_ipiv(n, x.ipiv);
  x.f.at(40, 10) = std::numeric_limits<T>::quiet_NaN();  // in L
  const Residuals bad = lu_residual(x.a, x.f, perm, 1);
  EXPECT_FALSE(bad.factor < kResidualThreshold);
  EXPECT_FALSE(bad.value("solve") < kResidualThreshold);
  EXPECT_FALSE(bad.passed());
}

// Wilkinson's matrix: 1 on the diagonal, -1 below it, 1 in the last column.
// GEPP does not swap (every candidate pivot has magnitude 1; LAPACK takes the
// first) and the last column doubles at each step: U(j, n-1) = 2^j, so the
// growth factor is 2^(n-1) = 8 at n = 4, the bound of partial pivoting.
TYPED_TEST(LuCheck, WilkinsonGrowthIsEight) {
  using T = TypeParam;
  const index_t n = 4;
  std::vector<T> a(n * n, T(0));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) a[i + j * n] = j == n - 1 ? T(1) : i == j ? T(1) : i > j ? T(-1) : T(0);
  Factored<T> x = factor_with_lapack(a, TileLayout(n, n, 3, 1, 0));
  EXPECT_EQ(x.ipiv, (std::vector<index_t>{0, 1, 2, 3}));
  const Residuals r = lu_residual(x.a, x.f, lu_permutation_from_ipiv(n, x.ipiv), 3);
  EXPECT_EQ(r.value("growth"), 8.0);
  EXPECT_LT(r.factor, kResidualThreshold);
  EXPECT_LT(r.value("solve"), kResidualThreshold);
}

TEST(LuPermutationFromIpiv, HandExample) {
  // Rows [0 1 2 3]: swap 0<->2 gives [2 1 0 3], 1<->2 gives [2 0 1 3],
  // 2<->3 gives [2 0 3 1]: row i of P A is row perm[i] of A.
  EXPECT_EQ(lu_permutation_from_ipiv(4, {2, 2, 3}), (std::vector<index_t>{2, 0, 3, 1}));
  // Fewer pivots than rows (a wide panel's): the rest stay unless displaced.
  EXPECT_EQ(lu_permutation_from_ipiv(5, {4}), (std::vector<index_t>{4, 1, 2, 3, 0}));
  EXPECT_EQ(lu_permutation_from_ipiv(3, {}), (std::vector<index_t>{0, 1, 2}));
  EXPECT_EQ(lu_permutation_from_ipiv(3, {0, 1, 2}), (std::vector<index_t>{0, 1, 2}));
  EXPECT_THROW(lu_permutation_from_ipiv(3, {3}), Error);
  EXPECT_THROW(lu_permutation_from_ipiv(3, {-1}), Error);
  EXPECT_THROW(lu_permutation_from_ipiv(2, {0, 1, 1}), Error);
}

// The permutation agrees with the kernels' own conversion on its first k
// rows, and P A row by row is what LAPACK's LASWP makes of A.
TEST(LuPermutationFromIpiv, AgreesWithLaswpAndTheKernels) {
  const index_t m = 300, n = 120;
  const std::vector<double> a = random_matrix<double>(m, n, 21);
  std::vector<double> lu = a;
  std::vector<lapack_int> piv(n);
  ASSERT_EQ(LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, lu.data(), m, piv.data()), 0);
  std::vector<index_t> ipiv;
  for (lapack_int p : piv) ipiv.push_back(p - 1);
  const std::vector<index_t> perm = lu_permutation_from_ipiv(m, ipiv);
  std::vector<index_t> rows(n);
  kernels::pivots_to_permutation(n, ipiv.data(), rows.data());
  EXPECT_EQ(std::vector<index_t>(perm.begin(), perm.begin() + n), rows);
  std::vector<double> pa = a;
  ASSERT_EQ(LAPACKE_dlaswp(LAPACK_COL_MAJOR, n, pa.data(), m, 1, n, piv.data(), 1), 0);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) ASSERT_EQ(pa[i + j * m], a[perm[i] + j * m]) << i << "," << j;
}

TEST(LuResidual, RejectsInconsistentArguments) {
  const index_t n = 8;
  Factored<double> x = factor_with_lapack(random_matrix<double>(n, n, 31), TileLayout(n, n, 3, 1, 0));
  std::vector<index_t> perm = lu_permutation_from_ipiv(n, x.ipiv);
  std::vector<index_t> repeated = perm;
  repeated[0] = repeated[1];
  EXPECT_THROW(lu_residual(x.a, x.f, repeated, 1), Error);
  EXPECT_THROW(lu_residual(x.a, x.f, std::vector<index_t>(perm.begin(), perm.end() - 1), 1), Error);
  EXPECT_THROW(lu_residual(std::vector<double>(x.a.begin(), x.a.end() - 1), x.f, perm, 1), Error);
  TileMatrix<double> wide(TileLayout(4, 8, 3, 1, 0));
  EXPECT_THROW(lu_residual(std::vector<double>(32, 1.0), wide, {0, 1, 2, 3}, 1), Error);
}

}  // namespace
}  // namespace tessera
