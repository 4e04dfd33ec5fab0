// LU's tile kernels on a CUDA device against the CPU's (paper 002's trailing
// update: TRSM of the block row and column, GEMM, and the row interchanges
// that a panel's pivots apply to its trailing columns). Same random input
// through CpuTileKernels and CudaTileKernels, in both precisions; results
// must agree to a scaled rounding tolerance, and the permutations, which do
// no arithmetic, must agree exactly. The panels (lu_getrf, lu_getrf_nopiv)
// run on the GPU with --d 0; the tournament's candidate selection
// (lu_select) runs on CPU cores by design, so the GPU must refuse it.
//
// Where no CUDA device is present every test skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "tests/cuda_test_util.hpp"

namespace tessera {
namespace {

using kernels::index_t;
using cuda_test::random_matrix;

#if TESSERA_HAVE_CUDA

// A triangle that is well conditioned (diagonal of n + 1 dominates), so a
// triangular solve's rounding stays near eps * n.
template <class T>
std::vector<T> dominant(index_t n, unsigned seed) {
  std::vector<T> a = random_matrix<T>(n, n, seed);
  for (index_t i = 0; i < n; ++i) a[i + i * n] = T(n + 1);
  return a;
}

template <class T>
class CudaLuKernelsTest : public cuda_test::CudaTilesTest<T> {};

// The whole of two arrays, compared as test_cuda_kernels.cpp compares tiles.
template <class T>
void expect_close(const std::vector<T>& want, const std::vector<T>& got, index_t depth, const char* what) {
  cuda_test::expect_close(want, got, static_cast<index_t>(want.size()), 1, depth, what);
}

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaLuKernelsTest, Precisions);

// The block row's and block column's solves, with leading dimensions larger
// than the blocks (tiles inside a taller stored column).
TYPED_TEST(CudaLuKernelsTest, TrsmsMatchCpu) {
  using T = TypeParam;
  const index_t m = 230, n = 170, ld = 260;
  const std::vector<T> u = dominant<T>(n, 1), l = dominant<T>(m, 2);
  std::vector<T> a = random_matrix<T>(ld, n, 3), b = random_matrix<T>(ld, n, 4);
  const T* du = this->upload(u);
  const T* dl = this->upload(l);
  T* da = this->upload(a);
  T* db = this->upload(b);
  this->cpu_.lu_trsm_l(m, n, u.data(), n, a.data(), ld);
  this->gpu().lu_trsm_l(m, n, du, n, da, ld);
  expect_close(a, this->download(da, a.size()), n, "lu_trsm_l (A U^-1)");
  this->cpu_.lu_trsm_u(m, n, l.data(), m, b.data(), ld);
  this->gpu().lu_trsm_u(m, n, dl, m, db, ld);
  expect_close(b, this->download(db, b.size()), m, "lu_trsm_u (L^-1 A)");
}

TYPED_TEST(CudaLuKernelsTest, GemmMatchesCpu) {
  using T = TypeParam;
  const index_t m = 210, n = 190, k = 96;
  const std::vector<T> a = random_matrix<T>(m, k, 5), b = random_matrix<T>(k, n, 6);
  std::vector<T> c = random_matrix<T>(m + 7, n, 7);
  const T* dA = this->upload(a);
  const T* dB = this->upload(b);
  T* dC = this->upload(c);
  this->cpu_.lu_gemm(m, n, k, a.data(), m, b.data(), k, c.data(), m + 7);
  this->gpu().lu_gemm(m, n, k, dA, m, dB, k, dC, m + 7);
  expect_close(c, this->download(dC, c.size()), k, "lu_gemm (C -= A B)");
}

// Permutations move values and do no arithmetic: the GPU's result is the
// CPU's bit for bit.
TYPED_TEST(CudaLuKernelsTest, PermuteAndExchangeMatchCpuExactly) {
  using T = TypeParam;
  const index_t rows = 300, cols = 70, lda = 310;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(rows));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(8));
  std::vector<T> a = random_matrix<T>(lda, cols, 9);
  T* da = this->upload(a);
  this->cpu_.lu_permute(rows, cols, a.data(), lda, perm.data());
  this->gpu().lu_permute(rows, cols, da, lda, this->upload(perm));
  EXPECT_TRUE(a == this->download(da, a.size())) << "lu_permute";

  // A panel of w = 40 pivot rows: those with lo <= xch[r] < hi trade with
  // A's row xch[r] - lo; the rest belong to another tile and stay.
  const index_t w = 40, lo = 500, hi = lo + rows;
  std::vector<std::int64_t> xch(static_cast<std::size_t>(w));
  std::mt19937 gen(10);
  std::vector<std::int64_t> targets(static_cast<std::size_t>(rows));
  std::iota(targets.begin(), targets.end(), lo);
  std::shuffle(targets.begin(), targets.end(), gen);
  for (index_t r = 0; r < w; ++r) xch[r] = r % 3 == 0 ? r : targets[r];  // r % 3 == 0: outside [lo, hi)
  std::vector<T> top = random_matrix<T>(w + 5, cols, 11), b = random_matrix<T>(lda, cols, 12);
  T* dtop = this->upload(top);
  T* db = this->upload(b);
  this->cpu_.lu_exchange(w, cols, top.data(), w + 5, b.data(), lda, xch.data(), lo, hi);
  this->gpu().lu_exchange(w, cols, dtop, w + 5, db, lda, this->upload(xch), lo, hi);
  EXPECT_TRUE(top == this->download(dtop, top.size())) << "lu_exchange's top rows";
  EXPECT_TRUE(b == this->download(db, b.size())) << "lu_exchange's tile rows";
}

// The largest |P A - L U| of the m×n factors f (ld) and 0-based swaps ipiv
// of the m×n matrix a (ld), over the largest |A|.
template <class T>
double plu_error(index_t m, index_t n, const std::vector<T>& a, const std::vector<T>& f, index_t ld,
                 const std::vector<index_t>& ipiv) {
  std::vector<double> pa(static_cast<std::size_t>(m * n));
  double amax = 0;
  for (index_t c = 0; c < n; ++c)
    for (index_t r = 0; r < m; ++r) {
      pa[r + c * m] = a[r + c * ld];
      amax = std::max(amax, std::abs(pa[r + c * m]));
    }
  for (index_t i = 0; i < n; ++i)
    for (index_t c = 0; c < n; ++c) std::swap(pa[i + c * m], pa[ipiv[i] + c * m]);
  double err = 0;
  for (index_t c = 0; c < n; ++c)
    for (index_t r = 0; r < m; ++r) {
      double lu = 0;
      for (index_t x = 0; x <= std::min(r, c); ++x)
        lu += (x == r ? 1.0 : static_cast<double>(f[r + x * ld])) * static_cast<double>(f[x + c * ld]);
      err = std::max(err, std::abs(pa[r + c * m] - lu));
    }
  return err / amax;
}

// The panel with partial pivoting (--d 0 runs it on the GPU): cuSOLVER's
// GEPP factors P A = L U to rounding and chooses GEPP's first pivot, the
// largest entry of the first column; in double precision every pivot is
// LAPACK's (a random panel has no near ties at that precision; in single,
// rounding may break one differently).
TYPED_TEST(CudaLuKernelsTest, PanelGetrfMatchesCpu) {
  using T = TypeParam;
  const index_t m = 700, n = 96, lda = 710;
  const std::vector<T> a = random_matrix<T>(lda, n, 13);
  std::vector<T> cpu = a;
  T* da = this->upload(a);
  std::vector<index_t> want(n), got(n);
  EXPECT_EQ(this->cpu_.lu_getrf(m, n, cpu.data(), lda, want.data()), 0);
  EXPECT_EQ(this->gpu().lu_getrf(m, n, da, lda, got.data()), 0);
  EXPECT_EQ(want[0], got[0]) << "GEPP's first pivot";
  if (sizeof(T) == 8) EXPECT_EQ(want, got) << "GEPP's pivots";
  const double eps = std::numeric_limits<T>::epsilon();
  EXPECT_LT(plu_error(m, n, a, this->download(da, a.size()), lda, got), 30 * n * eps) << "|P A - L U| / |A|";
}

// The diagonal block without pivots (the tournament's DIAG), on a
// diagonally dominant block so that no pivot is needed, and a zero leading
// entry reported as column 1, as on the CPU.
TYPED_TEST(CudaLuKernelsTest, NoPivotGetrfMatchesCpu) {
  using T = TypeParam;
  const index_t m = 150, n = 100;
  std::vector<T> a = random_matrix<T>(m, n, 14);
  for (index_t i = 0; i < n; ++i) a[i + i * m] = T(m + 1);
  T* da = this->upload(a);
  EXPECT_EQ(this->cpu_.lu_getrf_nopiv(m, n, a.data(), m), 0);
  EXPECT_EQ(this->gpu().lu_getrf_nopiv(m, n, da, m), 0);
  expect_close(a, this->download(da, a.size()), n, "lu_getrf_nopiv (L U)");
  std::vector<T> z = random_matrix<T>(8, 8, 15);
  z[0] = T(0);
  EXPECT_EQ(this->gpu().lu_getrf_nopiv(8, 8, this->upload(z), 8), 1) << "zero leading entry";
}

// Host data through the device's kernels: a permutation held by the host,
// and bytes copied in. Exact, as every move.
TYPED_TEST(CudaLuKernelsTest, HostPermutationAndBytesMatchCpuExactly) {
  using T = TypeParam;
  const index_t rows = 300, cols = 50, lda = 305;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(rows));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(16));
  std::vector<T> a = random_matrix<T>(lda, cols, 17);
  T* da = this->upload(a);
  this->cpu_.lu_permute_from_host(rows, cols, a.data(), lda, perm.data());
  this->gpu().lu_permute_from_host(rows, cols, da, lda, perm.data());
  EXPECT_TRUE(a == this->download(da, a.size())) << "lu_permute_from_host";
  // A panel's rows below its diagonal block: tall enough that the rows are
  // gathered a block of columns at a time.
  const index_t tall = 100000, narrow = 50;
  std::vector<std::int64_t> tall_perm(static_cast<std::size_t>(tall));
  std::iota(tall_perm.begin(), tall_perm.end(), 0);
  std::shuffle(tall_perm.begin(), tall_perm.end(), std::mt19937(20));
  std::vector<T> p = random_matrix<T>(tall + 3, narrow, 21);
  T* dp = this->upload(p);
  this->cpu_.lu_permute_from_host(tall, narrow, p.data(), tall + 3, tall_perm.data());
  this->gpu().lu_permute_from_host(tall, narrow, dp, tall + 3, tall_perm.data());
  EXPECT_TRUE(p == this->download(dp, p.size())) << "lu_permute_from_host, column blocks";
  const std::vector<T> src = random_matrix<T>(123, 1, 18);
  T* dst = this->upload(std::vector<T>(src.size(), T(0)));
  this->gpu().from_host(dst, src.data(), src.size() * sizeof(T));
  EXPECT_TRUE(src == this->download(dst, src.size())) << "from_host";
}

// The tournament's candidate selection runs on the cores only.
TYPED_TEST(CudaLuKernelsTest, CandidateSelectionStaysOnTheCpu) {
  using T = TypeParam;
  std::vector<T> a = random_matrix<T>(8, 8, 19);
  std::vector<index_t> rows(8);
  EXPECT_THROW(this->gpu().lu_select(8, 8, this->upload(a), 8, rows.data()), std::logic_error);
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera
