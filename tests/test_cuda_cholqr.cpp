// The CUDA GEQRT and TSQRT with Cholesky QR panels (CudaKernelOptions::
// cholqr_panels, kernels/cuda/cholqr_panel.hpp): written on 2026-11-27
// without a GPU, so this is their first check on one. Their factors differ
// from the CPU's by the signs of R's rows (and V and T with them), so the
// check is what the factors do, applied by the CPU's own kernels: the CPU's
// LARFB with the GPU's V and T takes A to the GPU's R with zeros below it,
// the CPU's SSRFB takes [triu(R); A] to [R'; 0], R's rows equal the CPU's up
// to sign (R^T R = A^T A besides), and R's strict lower triangle is left
// alone; TTQRT's the same way through the CPU's TTMQR. Also tiles whose first
// panel is past what the panels factor (condition 1e20): they are factored
// again with GEQRF panels, and counted. The whole factorization through the
// driver with --check is CudaComputeStreams'. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_api.hpp"
#include "tests/cuda_test_util.hpp"
#include "tests/graded_matrix.hpp"

namespace tessera {
namespace {

using kernels::index_t;
using namespace cuda_test;

struct Shape {
  index_t m, n, ib;
};

template <class T>
std::vector<T> upper_of(const std::vector<T>& a, index_t ld, index_t rows, index_t cols) {
  std::vector<T> u(static_cast<std::size_t>(rows * cols), T(0));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i <= j && i < rows; ++i) u[i + j * rows] = a[i + j * ld];
  return u;
}

// X^T X (cols × cols) of the rows × cols block of x (leading dimension ld), in double.
template <class T>
std::vector<T> gram(const std::vector<T>& x, index_t ld, index_t rows, index_t cols) {
  std::vector<T> g(static_cast<std::size_t>(cols * cols));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < cols; ++i) {
      double sum = 0;
      for (index_t k = 0; k < rows; ++k) sum += double(x[k + i * ld]) * double(x[k + j * ld]);
      g[i + j * cols] = T(sum);
    }
  return g;
}

template <class T>
std::vector<T> magnitudes(std::vector<T> a) {
  for (T& x : a) x = std::abs(x);
  return a;
}

template <class T>
class CudaCholqrTest : public cuda_test::CudaTilesTest<T> {
 protected:
  void SetUp() override {
    cuda_test::CudaTilesTest<T>::SetUp();
    if (this->dev_) {
      kernels::CudaKernelOptions o;
      o.cholqr_panels = true;
      this->reopen(o);
    }
  }
  // GEQRT's V, T and R from the GPU, checked by the CPU: Q^T A = [R; 0],
  // R^T R = A^T A, and (compare_r) R's rows the CPU's up to sign.
  void expect_geqrt_factors(const std::vector<T>& a0, const Shape& s, bool compare_r = true) {
    std::vector<T> t(static_cast<std::size_t>(s.ib * s.n), T(7));
    T* da = this->upload(a0);
    T* dt = this->upload(t);
    this->gpu().geqrt(s.m, s.n, s.ib, da, s.m, dt, s.ib);
    const std::vector<T> got = this->download(da, a0.size()), t_gpu = this->download(dt, t.size());
    std::vector<T> qta = a0;
    this->cpu_.larfb(true, s.m, s.n, std::min(s.m, s.n), s.ib, got.data(), s.m, t_gpu.data(), s.ib, qta.data(), s.m);
    expect_close(upper_of(got, s.m, s.m, s.n), qta, s.m, s.n, s.m, "Q^T A against [R; 0]");
    expect_close(gram(a0, s.m, s.m, s.n), gram(upper_of(got, s.m, s.m, s.n), s.m, s.m, s.n), s.n, s.n, s.m,
                 "R^T R against A^T A");
    if (!compare_r) return;
    std::vector<T> cpu = a0, t_cpu(t.size());
    this->cpu_.geqrt(s.m, s.n, s.ib, cpu.data(), s.m, t_cpu.data(), s.ib);
    expect_close(magnitudes(upper_of(cpu, s.m, s.m, s.n)), magnitudes(upper_of(got, s.m, s.m, s.n)), s.m, s.n, s.m,
                 "|R| against the CPU's");
  }
  // Every shape's GEQRT and TSQRT checked on a device whose Cholesky QR
  // panels sum their Grams from blocks of `rows` rows (0: SYRK); the tiles
  // that fell back to GEQRF.
  std::uint64_t fallbacks_with_gram_rows(int rows);
  // TSQRT's V, T and R from the GPU, checked by the CPU: the CPU's SSRFB with
  // them takes [triu(R0); A0] to [R; 0], R's rows are the CPU's up to sign,
  // and R's strict lower triangle is left alone.
  void expect_tsqrt_factors(const Shape& s) {
    const index_t ldr = s.n + 3;
    std::vector<T> r0(static_cast<std::size_t>(ldr * s.n)), a0 = random_matrix<T>(s.m, s.n, 42);
    const std::vector<T> base = random_matrix<T>(ldr, s.n, 43);
    for (index_t j = 0; j < s.n; ++j)
      for (index_t i = 0; i < ldr; ++i) r0[i + j * ldr] = base[i + j * ldr] + (i == j ? T(j % 2 ? 3 : -3) : T(0));
    std::vector<T> t(static_cast<std::size_t>(s.ib * s.n), T(7));
    T* dr = this->upload(r0);
    T* da = this->upload(a0);
    T* dt = this->upload(t);
    this->gpu().tsqrt(s.m, s.n, s.ib, dr, ldr, da, s.m, dt, s.ib);
    const std::vector<T> r = this->download(dr, r0.size()), v = this->download(da, a0.size());
    const std::vector<T> t_gpu = this->download(dt, t.size());
    for (index_t j = 0; j < s.n; ++j)
      for (index_t i = j + 1; i < ldr; ++i)
        ASSERT_EQ(r[i + j * ldr], r0[i + j * ldr]) << "tsqrt wrote below R's diagonal at (" << i << "," << j << ")";
    // [triu(R0); A0] through the CPU's SSRFB with the GPU's V and T
    std::vector<T> a1 = upper_of(r0, ldr, s.n, s.n), a2 = a0;
    this->cpu_.ssrfb(true, s.m, s.n, s.n, s.ib, v.data(), s.m, t_gpu.data(), s.ib, a1.data(), s.n, a2.data(), s.m);
    expect_close(upper_of(r, ldr, s.n, s.n), a1, s.n, s.n, s.m + s.n, "Q^T [R0; A0], top, against R");
    expect_close(std::vector<T>(a2.size(), T(0)), a2, s.m, s.n, s.m + s.n, "Q^T [R0; A0], bottom, against 0");
    std::vector<T> r_cpu = r0, a_cpu = a0, t_cpu(t.size());
    this->cpu_.tsqrt(s.m, s.n, s.ib, r_cpu.data(), ldr, a_cpu.data(), s.m, t_cpu.data(), s.ib);
    expect_close(magnitudes(upper_of(r_cpu, ldr, s.n, s.n)), magnitudes(upper_of(r, ldr, s.n, s.n)), s.n, s.n,
                 s.m + s.n, "|R| against the CPU's");
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaCholqrTest, Precisions);

// ib divides n or not, one panel, square and tall, a group wider than 256,
// and panels of 192 columns, whose signed LU in double is too large for
// shared memory (288 KB: lu_sign_kernel in global memory; float's 144 KB
// fits an H100's 227 KB: lu_sign_shared_kernel, as every other shape).
const Shape kShapes[] = {{200, 150, 32}, {96, 96, 32}, {64, 50, 50}, {130, 70, 16}, {600, 560, 64}, {420, 384, 192}};

template <class T>
std::uint64_t CudaCholqrTest<T>::fallbacks_with_gram_rows(int rows) {
  kernels::CudaKernelOptions o;
  o.cholqr_panels = true;
  o.cholqr_gram_rows = rows;
  this->reopen(o);
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "gram rows " << rows << " m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    expect_geqrt_factors(random_matrix<T>(s.m, s.n, 41), s);
    expect_tsqrt_factors(s);
  }
  return this->dev_->kernel_fallbacks();
}

TYPED_TEST(CudaCholqrTest, GeqrtFactorsTakeATileToItsR) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    this->expect_geqrt_factors(random_matrix<TypeParam>(s.m, s.n, 41), s);
  }
}

TYPED_TEST(CudaCholqrTest, TsqrtFactorsTakeTheStackToItsR) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    this->expect_tsqrt_factors(s);
  }
}

// The Gram matrices as sums over blocks of rows (CudaKernelOptions::
// cholqr_gram_rows): blocks of 256 and 300 rows split the tall panels of
// kShapes (600 and 420 rows, TSQRT's stacks of up to 664) into batches,
// most with a short last block; 4096, more rows than any panel has, one
// GEMM for every panel. The factors pass the same checks as SYRK's, and no
// more tiles fall back to GEQRF than with SYRK's Grams (a wrong Gram fails
// the orthogonality check, and the fallback's factors would pass the checks
// all the same). Blocks below kMinCholqrGramRows are refused.
TYPED_TEST(CudaCholqrTest, GramsSummedFromBlocksOfRowsGiveTheSameFactors) {
  if (!this->dev_) GTEST_SKIP() << "no CUDA device";
  const std::uint64_t syrk = this->fallbacks_with_gram_rows(0);
  if (std::is_same_v<TypeParam, double>) EXPECT_EQ(syrk, 0u) << "random tiles are well within sCholQR3's reach";
  for (const int rows : {256, 300, 4096}) EXPECT_EQ(this->fallbacks_with_gram_rows(rows), syrk) << "gram rows " << rows;
  kernels::CudaKernelOptions o;
  o.cholqr_panels = true;
  o.cholqr_gram_rows = 255;
  EXPECT_THROW(this->reopen(o), std::logic_error);
}

// Profiled panels (CudaKernelOptions::profile_panels) time each operation
// of each panel, cholqr_panel.hpp's names and counts: a 200 x 150 tile at
// ib 32 has 5 panels, each with 4 Grams, 3 POTRFs, 3 solves and 3 R
// updates, one of the others; and the factors are still right.
TYPED_TEST(CudaCholqrTest, ProfiledPanelsTimeEachOperation) {
  if (!this->dev_) GTEST_SKIP() << "no CUDA device";
  kernels::CudaKernelOptions o;
  o.cholqr_panels = true;
  o.profile_panels = true;
  this->reopen(o);
  EXPECT_TRUE(this->dev_->kernel_phases().empty());
  const Shape s{200, 150, 32};
  this->expect_geqrt_factors(random_matrix<TypeParam>(s.m, s.n, 41), s);
  EXPECT_EQ(this->dev_->kernel_fallbacks(), 0u) << "the factors checked must be the Cholesky QR panels'";
  std::map<std::string, std::uint64_t> calls;
  for (const platform::Device::KernelPhase& p : this->dev_->kernel_phases()) {
    calls[p.name] = p.calls;
    EXPECT_GT(p.seconds, 0) << p.name;
  }
  const std::map<std::string, std::uint64_t> want = {{"check", 5},     {"gram", 20},   {"identity", 5}, {"lu_sign", 5},
                                                     {"mul_lt", 15},   {"potrf", 15},  {"r_out", 5},    {"shift", 5},
                                                     {"solve_lt", 15}, {"solve_u", 5}, {"t_from", 5}};
  EXPECT_EQ(calls, want);
}

// A first panel of condition 1e20 (singular values 1 .. 1e-20), past what
// sCholQR3 factors in double (tests/test_cholqr_panel.cpp asserts that the
// CPU instance raises the flag on such a panel): the tile is factored again
// with GEQRF panels, counted in the device's kernel_fallbacks, and must still
// be right. Its R is not compared with the CPU's: rows past the panel's
// numerical rank are rounding noise, different in each implementation.
TYPED_TEST(CudaCholqrTest, AnIllConditionedTileIsFactoredAgainWithGeqrf) {
  if constexpr (std::is_same_v<TypeParam, double>) {
    const Shape s{300, 200, 32};
    std::vector<double> a = random_matrix<double>(s.m, s.n, 44);
    const std::vector<double> panel = test::graded_matrix(s.m, s.ib, 1e20, 45);
    std::copy(panel.begin(), panel.end(), a.begin());
    const std::uint64_t before = this->dev_->kernel_fallbacks();
    this->expect_geqrt_factors(a, s, false);
    EXPECT_EQ(this->dev_->kernel_fallbacks(), before + 1);
  }
}

// An exactly zero column in the first panel: pass 1 keeps it an exact zero
// (its shift keeps POTRF alive), and pass 2's POTRF meets an exactly zero
// pivot, whose status raises the flag whatever the rounding: a certain
// fallback. (GEQRF handles the column: its reflector is the identity.)
TYPED_TEST(CudaCholqrTest, AZeroColumnFailsAPotrfAndIsFactoredAgain) {
  using T = TypeParam;
  const Shape s{260, 160, 32};
  std::vector<T> a = random_matrix<T>(s.m, s.n, 50);
  for (index_t i = 0; i < s.m; ++i) a[i + 7 * s.m] = T(0);
  const std::uint64_t before = this->dev_->kernel_fallbacks();
  this->expect_geqrt_factors(a, s);
  EXPECT_EQ(this->dev_->kernel_fallbacks(), before + 1);
}

// The same for TSQRT: [triu(R0); A0] with R0 = 1e-30 I and A0's first panel
// graded to 1e20.
TYPED_TEST(CudaCholqrTest, AnIllConditionedStackIsFactoredAgainWithGeqrf) {
  if constexpr (std::is_same_v<TypeParam, double>) {
    const index_t m = 240, n = 96, ib = 32;
    std::vector<double> r0(static_cast<std::size_t>(n * n), 0.0), a0 = random_matrix<double>(m, n, 46);
    for (index_t j = 0; j < n; ++j) r0[j + j * n] = 1e-30;
    const std::vector<double> panel = test::graded_matrix(m, ib, 1e20, 47);
    std::copy(panel.begin(), panel.end(), a0.begin());
    std::vector<double> t(static_cast<std::size_t>(ib * n), 7.0);
    double* dr = this->upload(r0);
    double* da = this->upload(a0);
    double* dt = this->upload(t);
    const std::uint64_t before = this->dev_->kernel_fallbacks();
    this->gpu().tsqrt(m, n, ib, dr, n, da, m, dt, ib);
    const std::vector<double> r = this->download(dr, r0.size()), v = this->download(da, a0.size());
    const std::vector<double> t_gpu = this->download(dt, t.size());
    EXPECT_EQ(this->dev_->kernel_fallbacks(), before + 1);
    std::vector<double> a1 = r0, a2 = a0;
    this->cpu_.ssrfb(true, m, n, n, ib, v.data(), m, t_gpu.data(), ib, a1.data(), n, a2.data(), m);
    expect_close(upper_of(r, n, n, n), a1, n, n, m + n, "Q^T [R0; A0], top, against R");
    expect_close(std::vector<double>(a2.size(), 0.0), a2, m, n, m + n, "Q^T [R0; A0], bottom, against 0");
  }
}

// TTQRT (TSQRT on a triangle, the binary tree's merge): Q^T [triu(R0);
// triu(A0)] through the CPU's TTMQR is [R; 0], and A's strict lower triangle
// (another GEQRT's reflectors in a tiled QR) is left alone.
TYPED_TEST(CudaCholqrTest, TtqrtFactorsTakeTheTrianglesToTheirR) {
  using T = TypeParam;
  for (const Shape& s : kShapes)
    for (const index_t m : {s.n, std::max<index_t>(1, s.n / 2)}) {  // square, and a trapezoid (m < n)
      const index_t n = s.n, ib = s.ib;
      SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n << " ib=" << ib);
      std::vector<T> r0 = random_matrix<T>(n, n, 48), a0 = random_matrix<T>(m, n, 49);
      for (index_t j = 0; j < n; ++j) r0[j + j * n] += T(j % 2 ? 3 : -3);
      std::vector<T> t(static_cast<std::size_t>(ib * n), T(7));
      T* dr = this->upload(r0);
      T* da = this->upload(a0);
      T* dt = this->upload(t);
      this->gpu().ttqrt(m, n, ib, dr, n, da, m, dt, ib);
      const std::vector<T> r = this->download(dr, r0.size()), v = this->download(da, a0.size());
      const std::vector<T> t_gpu = this->download(dt, t.size());
      for (index_t j = 0; j < n; ++j)
        for (index_t i = j + 1; i < m; ++i)
          ASSERT_EQ(v[i + j * m], a0[i + j * m]) << "ttqrt wrote below A's diagonal at (" << i << "," << j << ")";
      std::vector<T> a1 = upper_of(r0, n, n, n), a2 = upper_of(a0, m, m, n);
      this->cpu_.ttmqr(true, m, n, n, ib, v.data(), m, t_gpu.data(), ib, a1.data(), n, a2.data(), m);
      expect_close(upper_of(r, n, n, n), a1, n, n, m + n, "Q^T [R0; A0], top, against R");
      expect_close(std::vector<T>(a2.size(), T(0)), a2, m, n, m + n, "Q^T [R0; A0], bottom, against 0");
    }
}

}  // namespace
}  // namespace tessera
