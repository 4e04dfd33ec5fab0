// The Cholesky QR panel behind the CUDA backend's `--gpu-qr-panel cholqr`
// (kernels/cuda/cholqr_panel.hpp), run here with the CPU's BLAS and LAPACK as
// its operations so that it is checked on every machine. A GEQRT panel and a
// TSQRT panel ([triu(R); A]) must come out in LAPACK's layout: Y unit lower
// trapezoidal (for TSQRT exactly the identity on top, as xTPQRT stores it),
// T upper triangular, I - Y T Y^T orthogonal, (I - Y T Y^T) [R; 0] equal to
// the panel, and R equal to LAPACK's xGEQRF / xTPQRT R up to the signs of its
// rows (the QR factorization is unique up to them), each to a scaled rounding
// tolerance. A panel beyond what shifted Cholesky QR can factor raises the
// flag instead of answering wrong. (tests/test_cuda_cholqr.cpp checks the
// CUDA instance with the CPU kernels on a lent GPU.)
#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cholqr_panel.hpp"
#include "tests/graded_matrix.hpp"
#include "tests/test_helpers.hpp"

namespace tessera::kernels::cholqr {
namespace {

using Mat = std::vector<double>;

// The panel's operations with the CPU's BLAS and LAPACK, in double; T values
// are rounded to T after each step, so that the float instance sees float
// arithmetic's errors (the BLAS calls are double: the tolerances below are
// the float ones all the same).
template <class T>
struct CpuOps {
  bool flag = false;
  int potrf_info[3] = {0, 0, 0};

  static void round(index_t m, index_t n, double* x, index_t ld) {
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) x[i + j * ld] = static_cast<double>(static_cast<T>(x[i + j * ld]));
  }
  void gram(index_t n, index_t b, const double* x, index_t ldx, double* g) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, int(b), int(n), 1.0, x, int(ldx), 0.0, g, int(b));
    round(b, b, g, b);
  }
  void shift(index_t b, double* g, double c) {
    double tr = 0;
    for (index_t i = 0; i < b; ++i) tr += g[i + i * b];
    for (index_t i = 0; i < b; ++i) g[i + i * b] += c * tr;
    round(b, b, g, b);
  }
  void potrf(index_t b, double* g, int pass) {
    potrf_info[pass] = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', int(b), g, int(b));
  }
  void solve_lt(index_t n, index_t b, const double* g, double* x, index_t ldx) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, int(n), int(b), 1.0, g, int(b), x,
                int(ldx));
    round(n, b, x, ldx);
  }
  void identity(index_t b, double* r) {
    for (index_t j = 0; j < b; ++j)
      for (index_t i = 0; i < b; ++i) r[i + j * b] = i == j ? 1 : 0;
  }
  void mul_lt(index_t b, const double* g, double* r) {
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(b), int(b), 1.0, g, int(b), r,
                int(b));
    round(b, b, r, b);
  }
  void check(index_t b, const double* g, double tol) {
    for (index_t j = 0; j < b; ++j)
      for (index_t i = j; i < b; ++i)
        if (!(std::abs(g[i + j * b] - (i == j ? 1.0 : 0.0)) <= tol)) flag = true;  // (a NaN too)
    for (const int info : potrf_info)
      if (info != 0) flag = true;
  }
  void lu_sign(index_t b, double* x, index_t ldx, double* s, bool upper) {
    if (upper) {
      for (index_t j = 0; j < b; ++j) {
        s[j] = x[j + j * ldx] >= 0 ? -1.0 : 1.0;
        x[j + j * ldx] = static_cast<double>(static_cast<T>(x[j + j * ldx] - s[j]));
      }
      return;
    }
    for (index_t j = 0; j < b; ++j) {
      double& d = x[j + j * ldx];
      s[j] = d >= 0 ? -1.0 : 1.0;
      d -= s[j];
      for (index_t i = j + 1; i < b; ++i) x[i + j * ldx] /= d;
      for (index_t k = j + 1; k < b; ++k)
        for (index_t i = j + 1; i < b; ++i) x[i + k * ldx] -= x[i + j * ldx] * x[j + k * ldx];
    }
    round(b, b, x, ldx);
  }
  void solve_u(index_t m, index_t b, const double* u, index_t ldu, double* x, index_t ldx) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, int(m), int(b), 1.0, u, int(ldu), x,
                int(ldx));
    round(m, b, x, ldx);
  }
  void t_from(index_t b, const double* x, index_t ldx, const double* s, double* t, index_t ldt) {
    for (index_t j = 0; j < b; ++j)
      for (index_t i = 0; i < b; ++i) t[i + j * ldt] = i <= j ? -x[i + j * ldx] * s[j] : 0.0;
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, int(b), int(b), 1.0, x, int(ldx), t,
                int(ldt));
    round(b, b, t, ldt);
  }
  void r_out(index_t b, const double* r, const double* s, double* x, index_t ldx) {
    for (index_t j = 0; j < b; ++j)
      for (index_t i = 0; i <= j; ++i) x[i + j * ldx] = s[i] * r[i + j * b];
  }
};

template <class T>
struct Panel {
  Mat x, t;
  bool flag = false;
};

// factor() on a copy of the n x b panel x0.
template <class T, class Ops = CpuOps<T>>
Panel<T> run(index_t n, index_t b, const Mat& x0, bool top_upper = false) {
  Panel<T> p;
  p.x = x0;
  CpuOps<T>::round(n, b, p.x.data(), n);
  p.t.assign(static_cast<std::size_t>(b * b), 7.0);  // (overwritten entirely)
  Mat g(static_cast<std::size_t>(b * b)), r(static_cast<std::size_t>(b * b)), s(static_cast<std::size_t>(b));
  Ops ops;
  factor<T>(n, b, p.x.data(), n, p.t.data(), b, g.data(), r.data(), s.data(), ops, top_upper);
  p.flag = ops.flag;
  return p;
}

double frobenius(const Mat& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

// Q = I - Y T Y^T (n x n) from a factored panel.
Mat explicit_q(index_t n, index_t b, const Mat& x, const Mat& t) {
  Mat y(static_cast<std::size_t>(n * b), 0.0), yt(static_cast<std::size_t>(n * b)),
      q(static_cast<std::size_t>(n * n), 0.0);
  for (index_t j = 0; j < b; ++j)
    for (index_t i = j; i < n; ++i) y[i + j * n] = i == j ? 1.0 : x[i + j * n];
  // YT = Y T
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(n), int(b), int(b), 1.0, y.data(), int(n), t.data(),
              int(b), 0.0, yt.data(), int(n));
  for (index_t i = 0; i < n; ++i) q[i + i * n] = 1.0;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(n), int(n), int(b), -1.0, yt.data(), int(n), y.data(),
              int(n), 1.0, q.data(), int(n));
  return q;
}

struct Quality {
  double orthogonality;  // ||Q^T Q - I||_F / (n u)
  double residual;       // ||Q [R; 0] - X0||_F / (||X0||_F n u)
  bool t_upper, r_upper_only;
};

template <class T>
Quality quality(index_t n, index_t b, const Mat& x0, const Panel<T>& p) {
  const double u = unit_roundoff<T>();
  const Mat q = explicit_q(n, b, p.x, p.t);
  Mat qtq(static_cast<std::size_t>(n * n));
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(n), int(n), int(n), 1.0, q.data(), int(n), q.data(), int(n),
              0.0, qtq.data(), int(n));
  for (index_t i = 0; i < n; ++i) qtq[i + i * n] -= 1.0;
  Mat r(static_cast<std::size_t>(n * b), 0.0), qr(static_cast<std::size_t>(n * b));
  for (index_t j = 0; j < b; ++j)
    for (index_t i = 0; i <= j; ++i) r[i + j * n] = p.x[i + j * n];
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(n), int(b), int(n), 1.0, q.data(), int(n), r.data(),
              int(n), 0.0, qr.data(), int(n));
  for (std::size_t i = 0; i < qr.size(); ++i) qr[i] -= x0[i];
  Quality out{frobenius(qtq) / (double(n) * u), frobenius(qr) / (frobenius(x0) * double(n) * u), true, true};
  for (index_t j = 0; j < b; ++j)
    for (index_t i = j + 1; i < b; ++i) out.t_upper = out.t_upper && p.t[i + j * b] == 0.0;
  return out;
}

// Rows of R equal up to sign: max over rows of min(|r - l|, |r + l|) / (max |l| n u).
double r_difference(index_t b, const Mat& x, index_t ldx, const Mat& lapack, index_t ldl, index_t n, double u) {
  double diff = 0, scale = 0;
  for (index_t i = 0; i < b; ++i) {
    double plus = 0, minus = 0;
    for (index_t j = i; j < b; ++j) {
      plus = std::max(plus, std::abs(x[i + j * ldx] - lapack[i + j * ldl]));
      minus = std::max(minus, std::abs(x[i + j * ldx] + lapack[i + j * ldl]));
      scale = std::max(scale, std::abs(lapack[i + j * ldl]));
    }
    diff = std::max(diff, std::min(plus, minus));
  }
  return diff / (scale * double(n) * u);
}

// Scaled errors below this pass (LAPACK's testing uses 30 for its QR ratios,
// which divide by n eps = 2 n u: 60 here, per u).
constexpr double kThreshold = 60;

template <class T>
void expect_geqrt_panel(index_t n, index_t b, const Mat& x0, const char* what) {
  SCOPED_TRACE(what);
  Mat x = x0;
  CpuOps<T>::round(n, b, x.data(), n);
  const Panel<T> p = run<T>(n, b, x);
  ASSERT_FALSE(p.flag) << "a well-conditioned panel raised the flag";
  const Quality q = quality<T>(n, b, x, p);
  EXPECT_LT(q.orthogonality, kThreshold);
  EXPECT_LT(q.residual, kThreshold);
  EXPECT_TRUE(q.t_upper);
  Mat lapack = x, tau(static_cast<std::size_t>(b));
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, int(n), int(b), lapack.data(), int(n), tau.data());
  EXPECT_LT(r_difference(b, p.x, n, lapack, n, n, unit_roundoff<T>()), kThreshold);
}

TEST(CholqrPanel, GeqrtPanelIsLapacksUpToSigns) {
  expect_geqrt_panel<double>(300, 32, test::uniform_matrix(300, 32, 11), "300 x 32 uniform");
  expect_geqrt_panel<double>(64, 64, test::uniform_matrix(64, 64, 12), "square 64");
  expect_geqrt_panel<double>(257, 1, test::uniform_matrix(257, 1, 13), "one column");
  expect_geqrt_panel<double>(400, 48, test::graded_matrix(400, 48, 1e10, 14), "condition 1e10");
  expect_geqrt_panel<float>(300, 32, test::uniform_matrix(300, 32, 15), "float 300 x 32");
}

// TSQRT's panel: S = [triu(R0); A], zeros below R0's diagonal. Y's top must
// be exactly I (TSQRT keeps only Y's lower rows, in A), and R and the T it
// makes equal what LAPACK's xTPQRT makes (R up to its rows' signs).
template <class T>
void expect_tsqrt_panel(index_t m, index_t b, std::uint64_t seed, double cond) {
  const index_t n = b + m;
  Mat s = cond > 0 ? test::graded_matrix(n, b, cond, seed) : test::uniform_matrix(n, b, seed);
  for (index_t j = 0; j < b; ++j)
    for (index_t i = j + 1; i < b; ++i) s[i + j * n] = 0;
  CpuOps<T>::round(n, b, s.data(), n);
  const Panel<T> p = run<T>(n, b, s, true);
  ASSERT_FALSE(p.flag);
  // The general LU's multipliers are exact zeros on this stack: the same bits.
  const Panel<T> general = run<T>(n, b, s, false);
  EXPECT_EQ(general.x, p.x);
  EXPECT_EQ(general.t, p.t);
  for (index_t j = 0; j < b; ++j)
    for (index_t i = j + 1; i < b; ++i) ASSERT_EQ(p.x[i + j * n], 0.0) << "Y1 below the diagonal at " << i << ", " << j;
  const Quality q = quality<T>(n, b, s, p);
  EXPECT_LT(q.orthogonality, kThreshold);
  EXPECT_LT(q.residual, kThreshold);
  EXPECT_TRUE(q.t_upper);
  Mat r(static_cast<std::size_t>(b * b)), a(static_cast<std::size_t>(m * b)), t(static_cast<std::size_t>(b * b));
  for (index_t j = 0; j < b; ++j) {
    for (index_t i = 0; i < b; ++i) r[i + j * b] = s[i + j * n];
    for (index_t i = 0; i < m; ++i) a[i + j * m] = s[b + i + j * n];
  }
  ASSERT_EQ(
      LAPACKE_dtpqrt(LAPACK_COL_MAJOR, int(m), int(b), 0, int(b), r.data(), int(b), a.data(), int(m), t.data(), int(b)),
      0);
  EXPECT_LT(r_difference(b, p.x, n, r, b, n, unit_roundoff<T>()), kThreshold);
}

TEST(CholqrPanel, TsqrtPanelHasAnIdentityOnTopAndLapacksR) {
  expect_tsqrt_panel<double>(200, 32, 21, 0);
  expect_tsqrt_panel<double>(64, 64, 22, 0);
  expect_tsqrt_panel<double>(300, 40, 23, 1e8);
  expect_tsqrt_panel<float>(200, 32, 24, 0);
}

// A panel with a NaN raises the flag. Beyond sCholQR3's reach (rank
// deficient, condition numbers past about 1e12 here) the flag may or may not
// be raised; wherever it is not, the answer must be right: orthogonal and a
// small residual. Up to 1e11 sCholQR3 factors the panel (Fukaya et al. 2020:
// up to about 1 / (u sqrt(11 (n b + b (b + 1))))).
TEST(CholqrPanel, APanelItCannotFactorRaisesTheFlagAndNoneIsWrongUnflagged) {
  const index_t n = 200, b = 24;
  Mat nan = test::uniform_matrix(n, b, 32);
  nan[17 + 3 * n] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(run<double>(n, b, nan).flag) << "a NaN";
  std::vector<std::pair<std::string, Mat>> hard;
  Mat deficient = test::uniform_matrix(n, b, 31);
  for (index_t i = 0; i < n; ++i) deficient[i + 5 * n] = deficient[i + 2 * n];  // column 5 = column 2
  hard.emplace_back("rank deficient", deficient);
  for (const int e : {4, 8, 11, 13, 15, 17, 20})
    hard.emplace_back("condition 1e" + std::to_string(e), test::graded_matrix(n, b, std::pow(10.0, e), 33));
  for (const auto& [what, x] : hard) {
    const Panel<double> p = run<double>(n, b, x);
    if (p.flag) continue;
    const Quality q = quality<double>(n, b, x, p);
    EXPECT_LT(q.orthogonality, kThreshold) << what << ", unflagged";
    EXPECT_LT(q.residual, kThreshold) << what << ", unflagged";
  }
  for (const int e : {4, 8, 11})
    EXPECT_FALSE(run<double>(n, b, test::graded_matrix(n, b, std::pow(10.0, e), 34)).flag) << "condition 1e" << e;
  // Far past it the flag is raised (tests/test_cuda_cholqr.cpp's fallback tiles are graded to 1e20).
  EXPECT_TRUE(run<double>(n, b, test::graded_matrix(n, b, 1e20, 34)).flag) << "condition 1e20";
  // An exactly zero column survives pass 1 (the shift keeps its POTRF alive)
  // as an exact zero, and pass 2's POTRF meets an exactly zero pivot.
  Mat zero = test::uniform_matrix(n, b, 36);
  for (index_t i = 0; i < n; ++i) zero[i + 7 * n] = 0;
  EXPECT_TRUE(run<double>(n, b, zero).flag) << "a zero column";
}

// A POTRF that failed raises the flag even where Q came out orthogonal.
struct FailingPotrf : CpuOps<double> {
  void potrf(index_t b, double* g, int pass) {
    CpuOps<double>::potrf(b, g, pass);
    if (pass == 1) potrf_info[pass] = 3;
  }
};

TEST(CholqrPanel, AFailedPotrfRaisesTheFlag) {
  const Mat x = test::uniform_matrix(120, 16, 35);
  EXPECT_FALSE(run<double>(120, 16, x).flag);
  EXPECT_TRUE((run<double, FailingPotrf>(120, 16, x).flag));
}

// Marked (the CUDA kernels' profile of a panel's operations) forwards every
// operation unchanged and names each before it runs, in factor()'s order:
// three passes of Gram, POTRF, solve and R update (the first with its
// shift), the check, then the Householder vectors' reconstruction.
TEST(CholqrPanel, MarkedOpsNameEachOperationAndChangeNothing) {
  const index_t n = 90, b = 12;
  const Mat x = test::uniform_matrix(n, b, 41);
  const Panel<double> plain = run<double>(n, b, x);
  Mat xm = x, t(static_cast<std::size_t>(b * b)), g(static_cast<std::size_t>(b * b)),
      r(static_cast<std::size_t>(b * b)), s(static_cast<std::size_t>(b));
  CpuOps<double> inner;
  std::vector<std::string> names;
  auto mark = [&](const char* name) { names.emplace_back(name); };
  Marked<CpuOps<double>, decltype(mark)> ops{inner, mark};
  factor<double>(n, b, xm.data(), n, t.data(), b, g.data(), r.data(), s.data(), ops);
  EXPECT_EQ(xm, plain.x);
  EXPECT_EQ(t, plain.t);
  EXPECT_FALSE(inner.flag);
  const std::vector<std::string> pass = {"gram", "potrf", "solve_lt", "mul_lt"};
  std::vector<std::string> want = {"identity", "gram", "shift", "potrf", "solve_lt", "mul_lt"};
  for (int k = 1; k < 3; ++k) want.insert(want.end(), pass.begin(), pass.end());
  want.insert(want.end(), {"gram", "check", "lu_sign", "solve_u", "t_from", "r_out"});
  EXPECT_EQ(names, want);
}

TEST(CholqrPanel, BadSizesAreRefused) {
  Mat x(100), t(100), g(100), r(100), s(10);
  CpuOps<double> ops;
  EXPECT_THROW(factor<double>(5, 10, x.data(), 5, t.data(), 10, g.data(), r.data(), s.data(), ops), std::logic_error);
  EXPECT_THROW(factor<double>(10, 0, x.data(), 10, t.data(), 10, g.data(), r.data(), s.data(), ops), std::logic_error);
}

}  // namespace
}  // namespace tessera::kernels::cholqr
