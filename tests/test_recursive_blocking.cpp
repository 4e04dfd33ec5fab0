// The recursion behind the CUDA backend's POTF2' and TRSM
// (kernels/recursive_blocking.hpp), run here with the CPU's BLAS and
// LAPACK as its leaf and update operations, so it is checked on every machine,
// GPU or not: the split points, one status slot per POTRF leaf, and results
// equal to LAPACK's unrecursed DPOTRF / DTRSM to a scaled rounding tolerance,
// including the first failing column of a matrix that is not positive
// definite. (tests/test_cuda_kernels.cpp runs the cuBLAS instance against
// the CPU kernels on a lent GPU.)
#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "kernels/recursive_blocking.hpp"
#include "tests/test_helpers.hpp"

namespace tessera::kernels::recursive {
namespace {

using test::uniform_matrix;

// n x n symmetric positive definite: G G^T + n I.
std::vector<double> spd(index_t n, std::uint64_t seed) {
  const std::vector<double> g = uniform_matrix(n, n, seed);
  std::vector<double> a(static_cast<std::size_t>(n * n));
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, int(n), int(n), 1.0, g.data(), int(n), 0.0, a.data(), int(n));
  for (index_t i = 0; i < n; ++i) a[i + i * n] += double(n);
  return a;
}

// The CPU's operations in the roles recursive_blocking.hpp names, with the
// POTRF leaves' statuses kept per slot as a device keeps them, and the
// origin of each leaf recorded.
struct CpuOps {
  const double* origin = nullptr;  // the whole matrix's first element
  index_t ld = 0;
  std::vector<int> status;
  std::vector<index_t> leaf_columns;

  void leaf_trsm(index_t m, index_t n, const double* l, index_t ldl, double* a, index_t lda) {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, int(m), int(n), 1.0, l, int(ldl), a,
                int(lda));
  }
  void gemm_nt(index_t m, index_t n, index_t k, const double* a, index_t lda, const double* b, index_t ldb, double* c,
               index_t ldc) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), -1.0, a, int(lda), b, int(ldb), 1.0, c,
                int(ldc));
  }
  void syrk_ln(index_t n, index_t k, const double* a, index_t lda, double* c, index_t ldc) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, int(n), int(k), -1.0, a, int(lda), 1.0, c, int(ldc));
  }
  void leaf_potrf(index_t n, double* a, index_t lda, index_t slot) {
    const index_t col = (a - origin) / ld;  // on the diagonal: row = column
    EXPECT_EQ(a - origin, col + col * ld) << "a POTRF leaf off the diagonal";
    leaf_columns.push_back(col);
    ASSERT_LT(slot, static_cast<index_t>(status.size()));
    status[static_cast<std::size_t>(slot)] = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', int(n), a, int(lda));
  }

  // Runs recursive::potrf_l on the n x n a and returns the first failing
  // column (1-based) as a caller of a device would find it, or 0.
  int potrf(index_t n, double* a, index_t leaf) {
    origin = a, ld = n;
    status.assign(static_cast<std::size_t>(leaves(n, leaf)), -999);
    leaf_columns.clear();
    auto lp = [this](auto... x) { leaf_potrf(x...); };
    auto sy = [this](auto... x) { syrk_ln(x...); };
    auto lt = [this](auto... x) { leaf_trsm(x...); };
    auto gm = [this](auto... x) { gemm_nt(x...); };
    potrf_l(n, a, n, leaf, lp, sy, lt, gm);
    for (std::size_t i = 0; i < status.size(); ++i) {
      EXPECT_NE(status[i], -999) << "slot " << i << " was never written";
      if (status[i] != 0) return int(index_t(i) * leaf + status[i]);
    }
    return 0;
  }
};

// |x - y| / (max|y| n eps): the recursion reorders the sums of the leaves'
// and updates' results, so the two agree to a few units of rounding times
// the order, as two BLAS with different blockings do.
double scaled_difference(const std::vector<double>& x, const std::vector<double>& y, index_t n) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return diff / (scale * double(n) * std::numeric_limits<double>::epsilon());
}

TEST(RecursiveBlocking, SplitIsAMultipleOfTheLeafStrictlyInside) {
  for (index_t leaf = 1; leaf <= 40; ++leaf)
    for (index_t n = leaf + 1; n <= 600; ++n) {
      const index_t n1 = split(n, leaf);
      ASSERT_GT(n1, 0) << n << " " << leaf;
      ASSERT_LT(n1, n) << n << " " << leaf;
      ASSERT_EQ(n1 % leaf, 0) << n << " " << leaf;
      // About half: never more than a leaf past n/2.
      ASSERT_LT(n1, n / 2 + leaf) << n << " " << leaf;
    }
  EXPECT_EQ(split(2048, 256), 1024);
  EXPECT_EQ(split(300, 256), 256);
  EXPECT_THROW(split(256, 256), std::logic_error);
  EXPECT_THROW(split(10, 0), std::logic_error);
}

TEST(RecursiveBlocking, TrsmMatchesLapacksUnrecursedSolve) {
  CpuOps ops;
  auto lt = [&](auto... x) { ops.leaf_trsm(x...); };
  int calls = 0;
  auto gm = [&](auto... x) {
    ++calls;
    ops.gemm_nt(x...);
  };
  for (const index_t leaf : {8, 32})
    for (const index_t n : {1, 7, 8, 9, 31, 33, 64, 97, 130}) {
      for (const index_t m : {1, 5, 120}) {
        std::vector<double> l = uniform_matrix(n, n, 10 + std::uint64_t(n));
        for (index_t i = 0; i < n; ++i) l[i + i * n] = double(n);  // well conditioned
        const std::vector<double> a = uniform_matrix(m, n, 20 + std::uint64_t(m));
        std::vector<double> want = a, got = a;
        ops.leaf_trsm(m, n, l.data(), n, want.data(), m);
        calls = 0;
        trsm_rlt(m, n, l.data(), n, got.data(), m, leaf, lt, gm);
        EXPECT_LT(scaled_difference(got, want, n), 10.0) << "m " << m << " n " << n << " leaf " << leaf;
        // Above the leaf the solve is not the library's: GEMMs do the rest.
        if (n > leaf) EXPECT_GT(calls, 0) << "n " << n << " leaf " << leaf;
        else EXPECT_EQ(calls, 0);
      }
    }
}

// The same solve with every leaf multiplied by its diagonal block's inverse:
// the inverses are made once for all leaves, each leaf finds its own (also
// the short last one), and no substitution is left.
TEST(RecursiveBlocking, InvertedLeavesMatchLapacksSolve) {
  CpuOps ops;
  auto gm = [&](auto... x) { ops.gemm_nt(x...); };
  int inversions = 0;
  std::vector<index_t> trmm_columns;
  const double* w_base = nullptr;
  auto invert = [&](index_t n, const double* l, index_t ldl, index_t leaf, double* w) {
    ++inversions;
    for (index_t c = 0; c < n; c += leaf) {
      const index_t nl = std::min(leaf, n - c);
      for (index_t j = 0; j < nl; ++j)
        for (index_t i = 0; i < nl; ++i) w[i + (c + j) * leaf] = i >= j ? l[c + i + (c + j) * ldl] : 0.0;
      ASSERT_EQ(LAPACKE_dtrtri(LAPACK_COL_MAJOR, 'L', 'N', int(nl), w + c * leaf, int(leaf)), 0);
    }
  };
  auto trmm = [&](index_t m, index_t nl, const double* w, index_t ldw, double* a, index_t lda) {
    trmm_columns.push_back((w - w_base) / ldw);
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, int(m), int(nl), 1.0, w, int(ldw), a,
                int(lda));
  };
  for (const index_t leaf : {8, 32})
    for (const index_t n : {1, 7, 8, 9, 31, 33, 64, 97, 130})
      for (const index_t m : {1, 5, 120}) {
        std::vector<double> l = uniform_matrix(n, n, 10 + std::uint64_t(n));
        for (index_t i = 0; i < n; ++i) l[i + i * n] = double(n);  // well conditioned
        const std::vector<double> a = uniform_matrix(m, n, 20 + std::uint64_t(m));
        std::vector<double> want = a, got = a, w(static_cast<std::size_t>(leaf * n), -1.0);
        ops.leaf_trsm(m, n, l.data(), n, want.data(), m);
        inversions = 0;
        trmm_columns.clear();
        w_base = w.data();
        trsm_rlt_inverted(m, n, l.data(), n, got.data(), m, leaf, w.data(), invert, trmm, gm);
        EXPECT_LT(scaled_difference(got, want, n), 10.0) << "m " << m << " n " << n << " leaf " << leaf;
        EXPECT_EQ(inversions, 1);
        // One multiply per leaf, in order, each with the inverse at its own column.
        ASSERT_EQ(index_t(trmm_columns.size()), leaves(n, leaf)) << "n " << n << " leaf " << leaf;
        for (std::size_t i = 0; i < trmm_columns.size(); ++i) EXPECT_EQ(trmm_columns[i], index_t(i) * leaf);
      }
}

TEST(RecursiveBlocking, PotrfMatchesLapackWithOneSlotPerLeaf) {
  for (const index_t leaf : {8, 32})
    for (const index_t n : {1, 8, 9, 40, 64, 100, 257}) {
      std::vector<double> want = spd(n, 30 + std::uint64_t(n)), got = want;
      ASSERT_EQ(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', int(n), want.data(), int(n)), 0);
      CpuOps ops;
      EXPECT_EQ(ops.potrf(n, got.data(), leaf), 0);
      // Only L: the upper triangle is not the routine's.
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < j; ++i) got[i + j * n] = want[i + j * n] = 0;
      EXPECT_LT(scaled_difference(got, want, n), 10.0) << "n " << n << " leaf " << leaf;
      // Leaves tile the diagonal in order, each at a multiple of the leaf.
      const std::set<index_t> starts(ops.leaf_columns.begin(), ops.leaf_columns.end());
      EXPECT_EQ(starts.size(), ops.leaf_columns.size());
      EXPECT_EQ(index_t(ops.leaf_columns.size()), leaves(n, leaf));
      for (std::size_t i = 0; i < ops.leaf_columns.size(); ++i) EXPECT_EQ(ops.leaf_columns[i], index_t(i) * leaf);
    }
}

TEST(RecursiveBlocking, PotrfFindsTheFirstFailingColumnAsLapackDoes) {
  const index_t n = 100, leaf = 16;
  for (const index_t bad : {0, 5, 15, 16, 37, 63, 64, 99}) {
    std::vector<double> want = spd(n, 40), got;
    want[bad + bad * n] = -1e4;  // the leading minor of order bad + 1 is not positive
    got = want;
    const int lapack = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', int(n), want.data(), int(n));
    ASSERT_EQ(lapack, bad + 1);
    CpuOps ops;
    EXPECT_EQ(ops.potrf(n, got.data(), leaf), lapack) << "bad column " << bad;
  }
}

}  // namespace
}  // namespace tessera::kernels::recursive
