#pragma once
// The harness of the CUDA kernel tests (test_cuda_kernels.cpp,
// test_cuda_lu_kernels.cpp): random input, the rounding-error comparison of
// a GPU result with the CPU's, and a fixture that holds one CUDA device and
// the buffers a test uploaded. Every test skips where no GPU is present,
// saying why (make_cuda_device's own message).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"

namespace tessera::cuda_test {

using kernels::index_t;

// Why the GPU tests cannot run here.
inline std::string no_gpu_reason() {
  try {
    kernels::make_cuda_device(1, 0, 0);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "a CUDA device is present";
}

#define TESSERA_SKIP_WITHOUT_GPU() \
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no GPU to test on: " << ::tessera::cuda_test::no_gpu_reason()

template <class T>
std::vector<T> random_matrix(index_t rows, index_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> a(static_cast<std::size_t>(rows * cols));
  for (T& x : a) x = u(gen);
  return a;
}

// An m×n POTF2' panel: n×n symmetric positive definite on top
// (A0 A0^T + n I), random rows below, times below_scale (30 makes L2's
// entries of order 1, well above the tolerance in single precision too).
template <class T>
std::vector<T> spd_panel(index_t m, index_t n, unsigned seed, T below_scale = T(1)) {
  std::vector<T> a = random_matrix<T>(m, n, seed);
  const std::vector<T> a0 = random_matrix<T>(n, n, seed + 1);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      T s = i == j ? T(n) : T(0);
      for (index_t p = 0; p < n; ++p) s += a0[i + p * n] * a0[j + p * n];
      a[i + j * m] = s;
    }
    for (index_t i = n; i < m; ++i) a[i + j * m] *= below_scale;
  }
  return a;
}

// A TRSM A = A L^{-T} (L n×n, A m×n) whose result checks something in
// single precision: L's diagonal n/4, so that its off-diagonal part changes
// the solution by about 15%, and A scaled so that the solution's entries
// are of order 1 (not 1e-3 under a tolerance of 1e-3).
template <class T>
struct TrsmOperands {
  std::vector<T> l, a;
};
template <class T>
TrsmOperands<T> trsm_operands(index_t m, index_t n, unsigned seed) {
  TrsmOperands<T> o{random_matrix<T>(n, n, seed), random_matrix<T>(m, n, seed + 1)};
  for (index_t i = 0; i < n; ++i) o.l[i + i * n] = T(n / 4);
  for (T& x : o.a) x *= T(n / 4);
  return o;
}

// Which entries of a rows×cols matrix (leading dimension rows) to compare.
using Mask = bool (*)(index_t i, index_t j, index_t ib);
inline bool all(index_t, index_t, index_t) { return true; }
inline bool lower(index_t i, index_t j, index_t) { return i >= j; }
// The upper triangles of a T factor's ib×ib blocks: all that LAPACK writes
// and reads of it.
inline bool t_blocks(index_t i, index_t j, index_t ib) { return i <= j % ib; }

// max |got - want| over the masked entries must be below a rounding error
// bound: 30 eps * depth * max(1, max |want|), depth the length of the
// longest dot product or reflector behind an entry.
template <class T>
void expect_close(const std::vector<T>& want, const std::vector<T>& got, index_t rows, index_t cols, index_t depth,
                  const char* what, Mask mask = all, index_t ib = 1) {
  ASSERT_EQ(want.size(), got.size()) << what;
  double err = 0, scale = 1;
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      if (!mask(i, j, ib)) continue;
      const std::size_t p = static_cast<std::size_t>(i + j * rows);
      err = std::max(err, std::abs(double(want[p]) - double(got[p])));
      scale = std::max(scale, std::abs(double(want[p])));
      if (!std::isfinite(double(got[p]))) err = std::numeric_limits<double>::infinity();
    }
  const double tol = 30.0 * std::numeric_limits<T>::epsilon() * double(depth) * scale;
  EXPECT_LE(err, tol) << what << ": max |GPU - CPU| = " << err << " over " << rows << "x" << cols << " (scale " << scale
                      << ")";
}

template <class T>
kernels::TileKernels<T>& kernels_of(platform::Device& d) {
  if constexpr (std::is_same_v<T, double>) return d.kernels_d();
  else return d.kernels_s();
}

// One CUDA device and the device copies of host arrays a test made,
// released at the end of the test; every test skips without a GPU.
template <class T>
class CudaTilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSERA_SKIP_WITHOUT_GPU();
    dev_ = kernels::make_cuda_device(1, 0, 0);
  }
  void TearDown() override {
    if (!dev_) return;
    dev_->synchronize();
    for (auto [p, bytes] : buffers_) dev_->release(p, bytes);
    buffers_.clear();
  }
  // The device again with other kernel options (its uploads released).
  void reopen(kernels::CudaKernelOptions options) {
    TearDown();
    dev_.reset();
    dev_ = kernels::make_cuda_device(1, 0, 0, options);
  }

  template <class U>
  U* upload(const std::vector<U>& h) {
    const std::size_t bytes = h.size() * sizeof(U);
    std::byte* d = dev_->allocate(bytes);
    buffers_.emplace_back(d, bytes);
    const platform::HostRange r{reinterpret_cast<std::byte*>(const_cast<U*>(h.data())), bytes};
    dev_->copy(0, d, &r, 1, true);
    return reinterpret_cast<U*>(d);
  }
  // Waits for the kernels, then copies back.
  std::vector<T> download(const T* d, std::size_t n) {
    dev_->synchronize();
    std::vector<T> h(n);
    const platform::HostRange r{reinterpret_cast<std::byte*>(h.data()), n * sizeof(T)};
    dev_->copy(1, reinterpret_cast<std::byte*>(const_cast<T*>(d)), &r, 1, false);
    return h;
  }

  kernels::TileKernels<T>& gpu() { return kernels_of<T>(*dev_); }
  kernels::CpuTileKernels<T> cpu_;
  std::unique_ptr<platform::Device> dev_;
  std::vector<std::pair<std::byte*, std::size_t>> buffers_;
};

}  // namespace tessera::cuda_test
