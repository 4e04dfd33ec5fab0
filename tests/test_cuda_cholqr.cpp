// The CUDA GEQRT and TSQRT with Cholesky QR panels (CudaKernelOptions::
// cholqr_panels, kernels/cuda/cholqr_panel.hpp): written on 2026-11-27
// without a GPU, so this is their first check on one. Their factors differ
// from the CPU's by the signs of R's rows (and V and T with them), so the
// check is what the factors do, applied by the CPU's own kernels: the CPU's
// LARFB with the GPU's V and T takes A to the GPU's R with zeros below it,
// the CPU's SSRFB takes [triu(R); A] to [R'; 0], R's rows equal the CPU's up
// to sign, and R's strict lower triangle is left alone. Also a tile with two
// almost equal columns (condition about 1e15, past what the panels factor:
// the tile is factored again with GEQRF panels); the whole factorization
// through the driver with --check is CudaComputeStreams'. Every test skips
// without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_api.hpp"
#include "tests/cuda_test_util.hpp"

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
  // GEQRT's V, T and R from the GPU, checked by the CPU: Q^T A = [R; 0].
  void expect_geqrt_factors(const std::vector<T>& a0, const Shape& s) {
    std::vector<T> t(static_cast<std::size_t>(s.ib * s.n), T(7));
    T* da = this->upload(a0);
    T* dt = this->upload(t);
    this->gpu().geqrt(s.m, s.n, s.ib, da, s.m, dt, s.ib);
    const std::vector<T> got = this->download(da, a0.size()), t_gpu = this->download(dt, t.size());
    std::vector<T> qta = a0;
    this->cpu_.larfb(true, s.m, s.n, std::min(s.m, s.n), s.ib, got.data(), s.m, t_gpu.data(), s.ib, qta.data(), s.m);
    expect_close(upper_of(got, s.m, s.m, s.n), qta, s.m, s.n, s.m, "Q^T A against [R; 0]");
    std::vector<T> cpu = a0, t_cpu(t.size());
    this->cpu_.geqrt(s.m, s.n, s.ib, cpu.data(), s.m, t_cpu.data(), s.ib);
    expect_close(magnitudes(upper_of(cpu, s.m, s.m, s.n)), magnitudes(upper_of(got, s.m, s.m, s.n)), s.m, s.n, s.m,
                 "|R| against the CPU's");
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaCholqrTest, Precisions);

// ib divides n or not, one panel, square and tall, a group wider than 256.
const Shape kShapes[] = {{200, 150, 32}, {96, 96, 32}, {64, 50, 50}, {130, 70, 16}, {600, 560, 64}};

TYPED_TEST(CudaCholqrTest, GeqrtFactorsTakeATileToItsR) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    this->expect_geqrt_factors(random_matrix<TypeParam>(s.m, s.n, 41), s);
  }
}

TYPED_TEST(CudaCholqrTest, TsqrtFactorsTakeTheStackToItsR) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
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
}

// Column 3 = column 2 (1 + 1e-15 noise): a panel sCholQR3 cannot factor in
// double (tests/test_cholqr_panel.cpp: flagged from about 1e15); the tile is
// factored again with GEQRF and must still be right.
TYPED_TEST(CudaCholqrTest, AnIllConditionedTileIsStillFactored) {
  if constexpr (std::is_same_v<TypeParam, double>) {
    const Shape s{300, 200, 32};
    std::vector<double> a = random_matrix<double>(s.m, s.n, 44);
    const std::vector<double> noise = random_matrix<double>(s.m, 1, 45);
    for (index_t i = 0; i < s.m; ++i) a[i + 3 * s.m] = a[i + 2 * s.m] * (1 + 1e-15 * noise[i]);
    this->expect_geqrt_factors(a, s);
  }
}

}  // namespace
}  // namespace tessera
