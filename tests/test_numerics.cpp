// Numerical tests: factorizations through the same driver the command line
// uses, checked against LAPACK's scaled-residual threshold (check.hpp), and
// tests that the check itself rejects a wrong factorization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "experiments/driver.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "platform/native/native_platform.hpp"
#include "test_helpers.hpp"

namespace tessera {
namespace {

struct Case {
  std::string algo;
  char precision;
  int s;
  index_t m, n;
  int threads;
  index_t B = 0;  // 0: chosen from n
};

index_t tile_size(index_t n) { return n >= 500 ? 128 : 16; }

std::string case_name(const Case& c) {
  return c.algo + "_" + c.precision + "_s" + std::to_string(c.s) + "_m" + std::to_string(c.m) + "_n" +
         std::to_string(c.n) + "_t" + std::to_string(c.threads) + (c.B ? "_B" + std::to_string(c.B) : "");
}

// Readable parameters in test names and failure messages.
void PrintTo(const Case& x, std::ostream* os) { *os << case_name(x); }

RunResult run_checked(const Case& c) {
  RunConfig cfg;
  cfg.algo = c.algo;
  cfg.precision = c.precision;
  cfg.m = c.m;
  cfg.n = c.n;
  cfg.B = c.B ? c.B : tile_size(c.n);
  cfg.s = c.s;
  cfg.b = c.s > 1 ? cfg.B / 4 : 0;
  cfg.threads = c.threads;
  cfg.check = true;
  cfg.matrix = test::checked_matrix(c.algo, c.precision);
  platform::NativePlatform plat;
  return run_factorization(cfg, plat);
}

class Factorization : public ::testing::TestWithParam<Case> {};

TEST_P(Factorization, ResidualsAreBelowTheThreshold) {
  const Case c = GetParam();
  const RunResult r = run_checked(c);
  ASSERT_TRUE(r.residuals.has_value()) << "check = true produced no residuals";
  const Residuals& res = *r.residuals;
  EXPECT_TRUE(std::isfinite(res.factor)) << res.factor;
  EXPECT_TRUE(std::isfinite(res.value("orth"))) << res.value("orth");
  EXPECT_GE(res.factor, 0.0);
  EXPECT_GE(res.value("orth"), 0.0);
  EXPECT_TRUE(res.passed()) << "factor residual " << res.factor << ", orthogonality " << res.value("orth")
                            << " (threshold " << kResidualThreshold << ")";
  // The driver reports the configuration it ran.
  EXPECT_EQ(r.config.m, c.m);
  EXPECT_EQ(r.config.n, c.n);
  EXPECT_EQ(r.config.s, c.s);
  EXPECT_EQ(r.config.threads, c.threads);
  const TileLayout L(c.m, c.n, r.config.B, c.s, r.config.b);
  EXPECT_EQ(r.p, L.tile_rows());
  EXPECT_EQ(r.q, L.tile_cols());
  EXPECT_GT(r.tasks, 0u);
  EXPECT_EQ(r.busy_s.size(), static_cast<std::size_t>(c.threads));
}

std::vector<Case> grid() {
  std::vector<Case> out;
  for (const std::string algo : {"cholesky", "qr"})
    for (char prec : {'d', 's'})
      for (int s : {1, 2, 3})
        for (index_t n : {1, 37, 500, 1000})
          for (int threads : {1, 2, 3}) out.push_back({algo, prec, s, n, n, threads});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Grid, Factorization, ::testing::ValuesIn(grid()),
                         [](const ::testing::TestParamInfo<Case>& info) { return case_name(info.param); });

// Tall QR, m not a multiple of B, last top-level blocks narrower than B, n = 1.
INSTANTIATE_TEST_SUITE_P(IrregularShapes, Factorization,
                         ::testing::Values(Case{"qr", 'd', 1, 1000, 300, 2}, Case{"qr", 's', 3, 1000, 300, 3},
                                           Case{"qr", 'd', 2, 1000, 300, 1}, Case{"qr", 'd', 2, 333, 200, 2, 64},
                                           Case{"qr", 's', 1, 333, 200, 3, 64}, Case{"qr", 'd', 3, 97, 45, 2, 16},
                                           Case{"qr", 'd', 1, 700, 1, 2, 128},
                                           Case{"cholesky", 'd', 3, 333, 333, 2, 64},
                                           Case{"cholesky", 's', 2, 333, 333, 3, 64}),
                         [](const ::testing::TestParamInfo<Case>& info) { return case_name(info.param); });

// ---------------------------------------------------------------------------
// The check must fail a wrong factorization.
// ---------------------------------------------------------------------------

template <class T>
class CheckDetectsErrors : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CheckDetectsErrors, Precisions);

TYPED_TEST(CheckDetectsErrors, CorruptedCholeskyFactorFails) {
  using T = TypeParam;
  kernels::set_blas_threads(1);
  const index_t n = 200;
  const TileLayout L(n, n, 32, 2, 8);
  TileMatrix<T> a(L);
  generate(a, MatrixKind::Spd, 3);
  const std::vector<T> original = a.to_dense();
  CholeskyExecutor<T> ex(a);
  SequentialSink sink(ex, kernels::cpu_kernel_pair());
  cholesky_tasks(L, sink);
  const double good = cholesky_residual(original, a).factor;
  EXPECT_LT(good, kResidualThreshold);
  // The upper triangle is not part of L: garbage there must not matter.
  a.at(3, 150) += T(100);
  EXPECT_EQ(cholesky_residual(original, a).factor, good);
  // One wrong element of L must.
  a.at(150, 20) += T(1);
  const Residuals bad = cholesky_residual(original, a);
  EXPECT_GT(bad.factor, kResidualThreshold);
  EXPECT_FALSE(bad.passed());
  // So must a wrong diagonal element.
  a.at(150, 20) -= T(1);
  EXPECT_LT(cholesky_residual(original, a).factor, kResidualThreshold);
  a.at(0, 0) *= T(-1);
  EXPECT_GT(cholesky_residual(original, a).factor, kResidualThreshold);
}

TYPED_TEST(CheckDetectsErrors, UnfactoredMatrixFailsTheCholeskyCheck) {
  using T = TypeParam;
  const index_t n = 64;
  TileMatrix<T> a(TileLayout(n, n, 16, 1, 0));
  generate(a, MatrixKind::Spd, 5);
  const std::vector<T> original = a.to_dense();
  EXPECT_GT(cholesky_residual(original, a).factor, kResidualThreshold);
}

TYPED_TEST(CheckDetectsErrors, CorruptedQrFactorsFail) {
  using T = TypeParam;
  kernels::set_blas_threads(1);
  const index_t m = 150, n = 100;
  const TileLayout L(m, n, 32, 3, 8);
  TileMatrix<T> a(L);
  generate(a, MatrixKind::General, 9);
  const std::vector<T> original = a.to_dense();
  QrFactors<T> f(L, 8);
  QrExecutor<T> ex(a, f);
  SequentialSink sink(ex, kernels::cpu_kernel_pair());
  qr_tasks(L, sink);
  auto form_q = [&] {
    TileMatrix<T> e(L);
    for (index_t d = 0; d < n; ++d) e.at(d, d) = T(1);
    QrFormQExecutor<T> qex(a, f, e);
    SequentialSink qsink(qex, kernels::cpu_kernel_pair());
    qr_form_q_tasks(L, qsink);
    return e.to_dense();
  };
  std::vector<T> q = form_q();
  const Residuals good = qr_residual(original, a, q);
  EXPECT_TRUE(good.passed()) << good.factor << " " << good.value("orth");
  // A wrong element of R breaks A = QR but not Q^T Q = I.
  a.at(10, 60) += T(1);
  const Residuals bad_r = qr_residual(original, a, q);
  EXPECT_GT(bad_r.factor, kResidualThreshold);
  EXPECT_EQ(bad_r.value("orth"), good.value("orth"));
  EXPECT_FALSE(bad_r.passed());
  a.at(10, 60) -= T(1);
  // A wrong element of Q breaks both.
  q[120 + 30 * m] += T(1);
  const Residuals bad_q = qr_residual(original, a, q);
  EXPECT_GT(bad_q.value("orth"), kResidualThreshold);
  EXPECT_GT(bad_q.factor, kResidualThreshold);
  EXPECT_FALSE(bad_q.passed());
  // The identity is orthogonal but is not the Q of A.
  std::vector<T> eye(static_cast<std::size_t>(m * n), T(0));
  for (index_t d = 0; d < n; ++d) eye[d + d * m] = T(1);
  const Residuals wrong_q = qr_residual(original, a, eye);
  EXPECT_LT(wrong_q.value("orth"), kResidualThreshold);
  EXPECT_GT(wrong_q.factor, kResidualThreshold);
  // A NaN or an infinity in the factors fails, wherever it stands: a NaN
  // column sum must not be dropped by the largest-column search.
  for (const T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    a.at(70, 80) = bad;
    EXPECT_FALSE(qr_residual(original, a, q).passed()) << bad;
    a.at(70, 80) = T(0);
    q[5 + 50 * m] = bad;
    EXPECT_FALSE(qr_residual(original, a, q).passed()) << bad;
    q = form_q();
  }
}

// A ratio that cannot be formed (a norm that overflowed, or is NaN)
// certifies nothing: it is NaN and fails, where resid / inf would be 0.
TEST(CheckDetectsErrors, RatioOfAnOverflowedNormFails) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(scaled_ratio(1.0, inf, 10, 1e-16)));
  EXPECT_TRUE(std::isnan(scaled_ratio(inf, inf, 10, 1e-16)));
  EXPECT_TRUE(std::isnan(scaled_ratio(nan, 1.0, 10, 1e-16)));
  const Residuals overflowed{scaled_ratio(1.0, inf, 10, 1e-16), {}};
  EXPECT_FALSE(overflowed.passed());
  EXPECT_EQ(scaled_ratio(0.0, 0.0, 10, 1e-16), 0.0);  // a zero matrix factored exactly
  // A zero matrix factored into a nonzero one: the residual, which has no
  // norm of A to scale by, is taken against n eps alone, and fails.
  EXPECT_DOUBLE_EQ(scaled_ratio(1e-14, 0.0, 10, 1e-16), 10.0);
  EXPECT_FALSE((Residuals{scaled_ratio(1.0, 0.0, 10, 1e-16), {}}.passed()));
  EXPECT_DOUBLE_EQ(scaled_ratio(1e-14, 2.0, 10, 1e-16), 5.0);
  const std::vector<double> sums = {1, nan, 3};
  EXPECT_TRUE(std::isnan(max_nan_of(sums.begin(), sums.end())));
}

// The ratio is divided in steps, as LAPACK's xPOT01 does: scale * ||A||
// overflows for a finite ||A|| above DBL_MAX / n (resid / inf was 0, and a
// wrong factor of diag(2^1020), n = 20, passed), and scale * ||A|| * eps
// underflows for a subnormal one (0 / 0 failed an exact factor of the
// subnormal diag(2^-1070)). Powers of two: their square roots are exact.
TEST(CheckDetectsErrors, RatioOfNormsAtTheEndsOfTheRange) {
  const double big = std::ldexp(1.0, 1020), small = std::ldexp(1.0, -1070), u = unit_roundoff<double>();
  EXPECT_DOUBLE_EQ(scaled_ratio(big, big, 20, u), 0.05 / u);
  EXPECT_EQ(scaled_ratio(0.0, small, 4, u), 0.0);
  const index_t n = 20;
  TileMatrix<double> a(TileLayout(n, n, 4, 1, 0));
  for (index_t i = 0; i < n; ++i) a.at(i, i) = big;
  const std::vector<double> original = a.to_dense();
  for (index_t i = 0; i < n; ++i) a.at(i, i) = std::sqrt(big);
  EXPECT_TRUE(cholesky_residual(original, a).passed());
  a.at(0, 0) = 2 * a.at(0, 0) + 1;  // --test-fault corrupt-factor's change
  const Residuals wrong = cholesky_residual(original, a);
  EXPECT_DOUBLE_EQ(wrong.factor, 3.0 / 20 / u);  // L(0,0)^2 = 2^1022 against 2^1020
  TileMatrix<double> tiny(TileLayout(4, 4, 4, 1, 0));
  for (index_t i = 0; i < 4; ++i) tiny.at(i, i) = small;
  const std::vector<double> tiny_a = tiny.to_dense();
  for (index_t i = 0; i < 4; ++i) tiny.at(i, i) = std::sqrt(small);
  EXPECT_TRUE(cholesky_residual(tiny_a, tiny).passed()) << cholesky_residual(tiny_a, tiny).factor;
}

// A Cholesky factor's diagonal must be finite and positive: the first entry
// that is not (NaN, an infinity, zero, negative) names the 1-based column.
TEST(CheckDetectsErrors, FirstBadCholeskyDiagonal) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto first = [](std::vector<double> diag) {
    const long long n = static_cast<long long>(diag.size());
    std::vector<double> a(diag.size() * diag.size(), -1.0);  // off the diagonal: never looked at
    for (long long j = 0; j < n; ++j) a[j + j * n] = diag[j];
    return first_bad_cholesky_diagonal(n, a.data(), n);
  };
  EXPECT_EQ(first({4, 1e-300, 1e300}), 0);
  EXPECT_EQ(first({}), 0);
  EXPECT_EQ(first({4, nan, -1}), 2);
  EXPECT_EQ(first({4, 2, inf}), 3);
  EXPECT_EQ(first({4, 2, -inf}), 3);
  EXPECT_EQ(first({0, 2}), 1);
  EXPECT_EQ(first({3, -0.0}), 2);
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> f = {1, 0, 0, fnan};  // 2x2, lda 2
  EXPECT_EQ(first_bad_cholesky_diagonal(2, f.data(), 2), 2);
}

// The ratios divide by LAPACK's eps, the unit roundoff (2^-53, 2^-24), not
// numeric_limits' epsilon (twice that, which made the threshold 30 act as
// LAPACK's 60). A 1x1 factor L = 2 (1 + 2^-k) of A = 4 leaves L^2 - A =
// 2^(3-k) after rounding (the 2^(2-2k) term is lost), ||A|| = 4: the ratio is
// 2^(1-k) / u, 2048 at k = digits - 10.
TYPED_TEST(CheckDetectsErrors, RatiosAreInUnitsOfTheUnitRoundoff) {
  using T = TypeParam;
  const int k = std::numeric_limits<T>::digits - 10;
  TileMatrix<T> a(TileLayout(1, 1, 1, 1, 0));
  const std::vector<T> original = {T(4)};
  a.at(0, 0) = T(2) * (T(1) + std::ldexp(T(1), -k));
  EXPECT_EQ(cholesky_residual(original, a).factor, std::ldexp(1.0, 1 - k) / unit_roundoff<T>());
  EXPECT_EQ(cholesky_residual(original, a).factor, 2048.0);
}

// An inner blocking larger than every tile column is clamped per column.
// The TRSM tile kernel (a recursion of GEMMs down to inverted 16 x 16 diagonal blocks) against the
// definition: X = A L^{-T} must satisfy ||X L^T - A||_max <= c eps ||X|| ||L||
// (c = 30 n: LAPACK's threshold times the terms per entry), for widths below, at and across
// the block size and tall or short tiles.
template <class T>
class TrsmKernel : public ::testing::Test {};
TYPED_TEST_SUITE(TrsmKernel, Precisions);

TYPED_TEST(TrsmKernel, SolvesAgainstTheLowerFactorTransposed) {
  using T = TypeParam;
  const T eps = std::numeric_limits<T>::epsilon();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const auto [m, n] :
       {std::pair<int, int>{1, 1}, {5, 31}, {37, 32}, {64, 33}, {100, 97}, {320, 320}, {17, 200}, {384, 130}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    std::vector<T> l(static_cast<std::size_t>(n) * n, T(0)), a(static_cast<std::size_t>(m) * n);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i)
        l[i + static_cast<std::size_t>(j) * n] = static_cast<T>(i == j ? 2.0 + std::abs(u(rng)) : u(rng) / n);
    for (T& x : a) x = static_cast<T>(u(rng));
    std::vector<T> x = a;
    tessera::kernels::trsm<T>(m, n, l.data(), n, x.data(), m);
    double worst = 0, xmax = 0, lmax = 0;
    for (T v : x) xmax = std::max(xmax, std::abs(double(v)));
    for (T v : l) lmax = std::max(lmax, std::abs(double(v)));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double r = -double(a[i + static_cast<std::size_t>(j) * m]);
        for (int k = 0; k <= j; ++k)
          r += double(x[i + static_cast<std::size_t>(k) * m]) * double(l[j + static_cast<std::size_t>(k) * n]);
        worst = std::max(worst, std::abs(r));
      }
    EXPECT_LE(worst, 30.0 * n * double(eps) * xmax * lmax) << "residual " << worst;
    // A wrong block order or offset is not a rounding error: far above it.
    EXPECT_LE(worst, 1e-3) << "residual " << worst;
  }
}

// The TRSM kernel multiplies by inverses of L's small diagonal blocks rather
// than substituting (tile_kernels.cpp trsm_rlt). Substitution is
// componentwise backward stable, |X L^T - A| <= gamma_n |X| |L^T| (Higham,
// Accuracy and Stability of Numerical Algorithms, Thm. 8.5; gamma_n taken as
// n eps); for the inverse route that bound is not a theorem (its error grows
// with the blocks' condition), so it is held to it here, as a measured
// ceiling, where the kernel is used: on Cholesky factors of the
// well-conditioned, the graded (6 orders each way) and the ill-conditioned
// (1e12; 1e5 in single) matrices, and on triangles whose 16 x 16 diagonal
// blocks are Kahan-like, of condition up to 3e5. n = 200 ends in a partial
// leaf. (Measured: 1.3-11.5 eps on the factors, 5-15 eps on Kahan blocks.)
// max over (i, j) of |X L^T - A|_ij / (|X| |L^T|)_ij for n x n A, lower L and X (leading dimension n).
template <class T>
double componentwise_error(int n, const std::vector<T>& a, const std::vector<T>& l, const std::vector<T>& x) {
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double r = -double(a[i + static_cast<std::size_t>(j) * n]), bound = 0;
      for (int k = 0; k <= j; ++k) {
        const double p =
            double(x[i + static_cast<std::size_t>(k) * n]) * double(l[j + static_cast<std::size_t>(k) * n]);
        r += p;
        bound += std::abs(p);
      }
      if (bound > 0) worst = std::max(worst, std::abs(r) / bound);
    }
  return worst;
}

TYPED_TEST(TrsmKernel, BackwardStableOnFactorsOfGradedAndIllConditionedMatrices) {
  using T = TypeParam;
  const char precision = sizeof(T) == 8 ? 'd' : 's';
  const double eps = std::numeric_limits<T>::epsilon();
  const int n = 200, big = 2 * n;
  for (const MatrixKind kind : {MatrixKind::Spd, MatrixKind::Graded, MatrixKind::IllConditioned}) {
    SCOPED_TRACE(matrix_kind_name(kind));
    const MatrixGenerator gen(kind, 5, big, big, precision);
    std::vector<T> f(static_cast<std::size_t>(big) * big);
    for (int j = 0; j < big; ++j)
      for (int i = 0; i < big; ++i) f[i + static_cast<std::size_t>(j) * big] = static_cast<T>(gen(i, j));
    const std::vector<T> a = f;
    // L11 and the A21 it solves for, from the factor LAPACK's POTRF leaves.
    ASSERT_EQ(tessera::kernels::potf2p<T>(n, n, f.data(), big), 0);
    std::vector<T> l(static_cast<std::size_t>(n) * n, T(0)), x(static_cast<std::size_t>(n) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i >= j) l[i + static_cast<std::size_t>(j) * n] = f[i + static_cast<std::size_t>(j) * big];
        x[i + static_cast<std::size_t>(j) * n] = a[(n + i) + static_cast<std::size_t>(j) * big];
      }
    const std::vector<T> a21 = x;
    tessera::kernels::trsm<T>(n, n, l.data(), n, x.data(), n);
    const double worst = componentwise_error(n, a21, l, x);
    EXPECT_LE(worst, n * eps) << "componentwise backward error " << worst / eps << " eps";
  }
  // Kahan-like blocks (diagonal s^r, below it -c s^r in each 16-block, row r
  // of the block), small entries elsewhere: blocks of condition 1e2 to 3e5.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const double theta : {0.5, 1.0, 1.3}) {
    SCOPED_TRACE("Kahan blocks, theta " + std::to_string(theta));
    const double sn = std::sin(theta), cs = std::cos(theta);
    std::vector<T> l(static_cast<std::size_t>(n) * n, T(0)), a(static_cast<std::size_t>(n) * n);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        const double p = std::pow(sn, i % 16);
        l[i + static_cast<std::size_t>(j) * n] =
            static_cast<T>(i / 16 != j / 16 ? 0.01 * u(rng) : (i == j ? p : -cs * p));
      }
    for (T& v : a) v = static_cast<T>(u(rng));
    std::vector<T> x = a;
    tessera::kernels::trsm<T>(n, n, l.data(), n, x.data(), n);
    const double worst = componentwise_error(n, a, l, x);
    EXPECT_LE(worst, n * eps) << "componentwise backward error " << worst / eps << " eps";
  }
}

// An L with a zero on its diagonal has no inverse: the kernel substitutes, as
// LAPACK's TRSM would, without an error, and that column comes out infinite
// or NaN. (Other columns may too: products of its infinities with L's zeros
// after it, and OpenBLAS's single-precision TRSM spreads them before it.)
TYPED_TEST(TrsmKernel, AZeroOnTheDiagonalGivesWhatSubstitutionGives) {
  using T = TypeParam;
  const int m = 5, n = 40;
  for (const int zero : {0, 21, n - 1}) {  // the first, a middle and the last diagonal entry
    std::vector<T> l(static_cast<std::size_t>(n) * n, T(0)), a(static_cast<std::size_t>(m) * n, T(1));
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) l[i + static_cast<std::size_t>(j) * n] = i == j ? (j == zero ? T(0) : T(2)) : T(0);
    ASSERT_NO_THROW(tessera::kernels::trsm<T>(m, n, l.data(), n, a.data(), m));
    for (int i = 0; i < m; ++i)
      EXPECT_FALSE(std::isfinite(a[i + static_cast<std::size_t>(zero) * m])) << "zero " << zero << ", row " << i;
  }
}

TEST(Driver, QrInnerBlockingLargerThanTilesIsClamped) {
  RunConfig cfg;
  cfg.algo = "qr";
  cfg.m = 90;
  cfg.n = 70;
  cfg.B = 16;
  cfg.s = 3;
  cfg.b = 4;
  cfg.ib = 1000;
  cfg.threads = 2;
  cfg.check = true;
  platform::NativePlatform plat;
  const RunResult r = run_factorization(cfg, plat);
  ASSERT_TRUE(r.residuals);
  EXPECT_TRUE(r.residuals->passed()) << r.residuals->factor << " " << r.residuals->value("orth");
}

// With only --s given, the defaults for B and b must form a valid layout for
// any matrix size, tiny ones included.
TEST(Driver, DefaultTileSizesAreValidForEverySplit) {
  for (const std::string algo : {"cholesky", "qr"})
    for (index_t n : {1, 2, 3, 5, 37})
      for (int s = 1; s <= 5; ++s) {
        SCOPED_TRACE(algo + " n = " + std::to_string(n) + " s = " + std::to_string(s));
        RunConfig cfg;
        cfg.algo = algo;
        cfg.n = n;
        cfg.s = s;
        cfg.check = true;
        platform::NativePlatform plat;
        try {
          const RunResult r = run_factorization(cfg, plat);
          ASSERT_TRUE(r.residuals);
          EXPECT_TRUE(r.residuals->passed());
          EXPECT_GE(r.config.B, 1);
          EXPECT_EQ(r.config.s, s);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "default tiles rejected: " << e.what();
        }
      }
}

TEST(Driver, NotPositiveDefiniteNamesTheGlobalColumn) {
  // Cholesky of a generated SPD matrix whose diagonal entry at column 77
  // (1-based) is made negative: the first 76 leading minors stay positive.
  const index_t n = 100;
  for (int s : {1, 2, 3}) {
    const TileLayout L(n, n, 32, s, s > 1 ? 8 : 0);
    TileMatrix<double> a(L);
    generate(a, MatrixKind::Spd, 1);
    a.at(76, 76) = -1.0;
    CholeskyExecutor<double> ex(a);
    platform::NativePlatform plat;
    RuntimeOptions opt;
    opt.threads = 2;
    NodeRuntime rt(plat, opt);
    try {
      rt.run(
          cholesky_data_count(L), [&](TaskSink& sk) { cholesky_tasks(L, sk); }, ex);
      ADD_FAILURE() << "no NotPositiveDefinite for s = " << s;
    } catch (const NotPositiveDefinite& e) {
      EXPECT_EQ(e.column(), 77) << "s = " << s;
      EXPECT_NE(std::string(e.what()).find("77"), std::string::npos) << e.what();
    }
  }
}

TEST(Driver, FlopCounts) {
  EXPECT_DOUBLE_EQ(flop_count("cholesky", 300, 300), 300.0 * 300 * 300 / 3);
  EXPECT_DOUBLE_EQ(flop_count("qr", 1000, 300), 2.0 * 1000 * 300 * 300 - 2.0 * 300 * 300 * 300 / 3);
  // LAPACK's xGETRF: mn² - n³/3, so 2n³/3 when square.
  EXPECT_DOUBLE_EQ(flop_count("lu", 1000, 300), 1000.0 * 300 * 300 - 300.0 * 300 * 300 / 3);
  EXPECT_DOUBLE_EQ(flop_count("lu", 300, 300), 2.0 * 300 * 300 * 300 / 3);
}

}  // namespace
}  // namespace tessera
