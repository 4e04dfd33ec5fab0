// The CUDA backend against the CPU one: every tile kernel, in both
// precisions, runs on the same random input through CpuTileKernels and
// through CudaTileKernels (data moved by CudaDevice::copy), and the results
// must agree to a scaled rounding tolerance; QR factors made on the GPU are
// applied on the CPU. Plus CudaDevice's memory accounting and copies.
//
// Where no CUDA device is present every test skips, saying why, except the
// one that checks that make_cuda_device then fails with a clear message (or
// with NotCompiled when CUDA was not built).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "tests/cuda_test_util.hpp"
#if TESSERA_HAVE_CUDA
#include "kernels/cuda/cuda_module.hpp"
#endif

namespace tessera {
namespace {

using ::testing::HasSubstr;
using kernels::index_t;
using namespace cuda_test;

TEST(CudaStub, MakeCudaDeviceWithoutAGpuSaysSo) {
  if (kernels::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    kernels::make_cuda_device(1, 0, 0);
    FAIL() << "make_cuda_device succeeded without a CUDA device";
  } catch (const NotCompiled& e) {
    EXPECT_FALSE(TESSERA_HAVE_CUDA) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("built without CUDA"));
  } catch (const platform::CudaError& e) {
    EXPECT_TRUE(TESSERA_HAVE_CUDA) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("GPU 1: no CUDA device is present"));
  }
}

// Built with CUDA, the backend's module is built beside tessera and loads
// (with or without a GPU); built without, the stub says why.
TEST(CudaModule, LoadsWhenBuilt) {
  const std::string why = kernels::cuda_backend_unavailable();
  if (TESSERA_HAVE_CUDA) EXPECT_EQ(why, "") << "the CUDA backend did not load";
  else EXPECT_THAT(why, HasSubstr("built without CUDA"));
}

#if TESSERA_HAVE_CUDA

TEST(CudaDevice, NamesAMissingOrdinal) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = kernels::cuda_device_count();
  try {
    kernels::make_cuda_device(3, n, 0);
    FAIL() << "cuda:" << n << " should not exist";
  } catch (const platform::CudaError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GPU 3: CUDA device cuda:" + std::to_string(n) + " does not exist"));
  }
}

TEST(CudaDevice, AccountsForItsMemory) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  EXPECT_THAT(dev->name(), ::testing::StartsWith("GPU 1 ("));
  EXPECT_THAT(dev->name(), ::testing::EndsWith(", cuda:0)"));
  EXPECT_GT(dev->capacity(), std::size_t{1} << 24);
  const std::size_t mib = std::size_t{1} << 20;
  std::byte* a = dev->allocate(mib);
  std::byte* b = dev->allocate(2 * mib);
  EXPECT_EQ(dev->in_use(), 3 * mib);
  dev->release(a, mib);
  EXPECT_EQ(dev->in_use(), 2 * mib);
  std::byte* c = dev->allocate(mib / 2);
  EXPECT_EQ(dev->in_use(), 2 * mib + mib / 2);
  EXPECT_EQ(dev->peak(), 3 * mib);
  dev->release(b, 2 * mib);
  dev->release(c, mib / 2);
  EXPECT_EQ(dev->in_use(), 0u);
  EXPECT_EQ(dev->peak(), 3 * mib);
}

TEST(CudaDevice, OutOfMemoryPastATinyCap) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::size_t cap = std::size_t{1} << 20;
  auto dev = kernels::make_cuda_device(2, 0, cap);
  EXPECT_EQ(dev->capacity(), cap);
  std::byte* a = dev->allocate(cap / 2);
  try {
    dev->allocate(cap);
    FAIL() << "allocated past the cap";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_THAT(e.what(), HasSubstr("GPU 2 ("));
    EXPECT_THAT(e.what(), HasSubstr("cannot allocate 1048576 bytes with 524288 bytes in use of a capacity of 1048576"));
  }
  EXPECT_EQ(dev->in_use(), cap / 2);
  dev->release(a, cap / 2);
  EXPECT_EQ(dev->peak(), cap / 2);
}

// Several host ranges make one device buffer, in order, and come back.
TEST(CudaDevice, CopiesRangesBothWays) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  std::vector<std::byte> x(1000), y(24), z(3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::byte(i * 7);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::byte(i + 100);
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = std::byte(200 + i);
  const platform::HostRange in[] = {{x.data(), x.size()}, {y.data(), y.size()}, {z.data(), z.size()}};
  std::byte* d = dev->allocate(x.size() + y.size() + z.size());
  dev->copy(0, d, in, 3, true);
  std::vector<std::byte> back(x.size() + y.size() + z.size());
  const platform::HostRange out[] = {{back.data(), back.size()}};
  dev->copy(1, d, out, 1, false);
  EXPECT_TRUE(std::equal(x.begin(), x.end(), back.begin()));
  EXPECT_TRUE(std::equal(y.begin(), y.end(), back.begin() + x.size()));
  EXPECT_TRUE(std::equal(z.begin(), z.end(), back.begin() + x.size() + y.size()));
  dev->release(d, back.size());
  EXPECT_THROW(dev->copy(2, d, out, 1, false), std::invalid_argument);
}

// copy_async reports completion through its done function, after the bytes moved.
TEST(CudaDevice, AsyncCopiesReportCompletion) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  std::vector<std::byte> x(1 << 20), back(1 << 20);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::byte(i * 13);
  std::byte* d = dev->allocate(x.size());
  const platform::HostRange in[] = {{x.data(), x.size()}}, out[] = {{back.data(), back.size()}};
  for (int dir = 0; dir < 2; ++dir) {
    std::promise<std::exception_ptr> p;
    auto f = p.get_future();
    dev->copy_async(dir, d, dir == 0 ? in : out, 1, dir == 0, [&p](std::exception_ptr e) { p.set_value(e); });
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_EQ(f.get(), nullptr);
  }
  EXPECT_EQ(x, back);
  dev->release(d, x.size());
}

// Copies to the device on stream 0 and from it on stream 1 at the same time,
// from two threads.
TEST(CudaDevice, CopiesOnBothStreamsConcurrently) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  const std::size_t bytes = std::size_t{1} << 22;
  std::vector<std::byte> src(bytes), dst(bytes);
  for (std::size_t i = 0; i < bytes; ++i) src[i] = std::byte(i % 251);
  std::byte* d_in = dev->allocate(bytes);
  std::byte* d_out = dev->allocate(bytes);
  const platform::HostRange s[] = {{src.data(), bytes}};
  dev->copy(0, d_out, s, 1, true);
  std::thread in([&] {
    for (int r = 0; r < 20; ++r) dev->copy(0, d_in, s, 1, true);
  });
  std::thread out([&] {
    const platform::HostRange d[] = {{dst.data(), bytes}};
    for (int r = 0; r < 20; ++r) dev->copy(1, d_out, d, 1, false);
  });
  in.join();
  out.join();
  EXPECT_TRUE(src == dst);
  std::vector<std::byte> back(bytes);
  const platform::HostRange b[] = {{back.data(), bytes}};
  dev->copy(1, d_in, b, 1, false);
  EXPECT_TRUE(src == back);
  dev->release(d_in, bytes);
  dev->release(d_out, bytes);
}

// --- kernels: CPU against GPU -------------------------------------------------

// A POTF2' that failed left A2 (rows n.. of every column of an m×n panel)
// as it was, as on the CPU.
template <class T>
void expect_a2_unchanged(const std::vector<T>& got, const std::vector<T>& before, index_t m, index_t n) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = n; i < m; ++i)
      ASSERT_EQ(got[i + j * m], before[i + j * m]) << "A2 changed at (" << i << "," << j << ")";
}

template <class T>
class CudaKernelsTest : public cuda_test::CudaTilesTest<T> {};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaKernelsTest, Precisions);

TYPED_TEST(CudaKernelsTest, Potf2pMatchesCpu) {
  using T = TypeParam;
  const index_t m = 300, n = 200;
  std::vector<T> want = spd_panel<T>(m, n, 1);
  T* d = this->upload(want);
  EXPECT_EQ(this->cpu_.potf2p(m, n, want.data(), m), 0);
  EXPECT_EQ(this->gpu().potf2p(m, n, d, m), 0);
  const std::vector<T> got = this->download(d, want.size());
  // Only L: what the upper triangle of the top block holds is not specified.
  expect_close(want, got, m, n, n, "potf2p", lower);
}

TYPED_TEST(CudaKernelsTest, Potf2pReportsTheFailingColumn) {
  using T = TypeParam;
  const index_t m = 150, n = 100;
  std::vector<T> a = spd_panel<T>(m, n, 2);
  a[36 + 36 * m] = T(-1e4);  // the leading minor of order 37 is not positive
  const std::vector<T> before = a;
  T* d = this->upload(a);
  EXPECT_EQ(this->cpu_.potf2p(m, n, a.data(), m), 37);
  EXPECT_EQ(this->gpu().potf2p(m, n, d, m), 37);
  expect_a2_unchanged(this->download(d, a.size()), before, m, n);
}

// Not positive definite, and the elimination overflows: L(3,1) is infinite
// and L(3,3) NaN, which POTRF's status does not report (it tests ajj <= 0);
// the kernels' test of the factor's diagonal names column 3 on both sides.
TYPED_TEST(CudaKernelsTest, Potf2pNamesANanPivot) {
  using T = TypeParam;
  const index_t n = 3;
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-300), huge = std::is_same_v<T, float> ? T(1e30) : T(1e200);
  std::vector<T> a = {tiny, 0, huge, 0, 1, 0, huge, 0, 1};
  T* d = this->upload(a);
  EXPECT_EQ(this->cpu_.potf2p(n, n, a.data(), n), 3);
  EXPECT_EQ(this->gpu().potf2p(n, n, d, n), 3);
}

TYPED_TEST(CudaKernelsTest, TrsmMatchesCpu) {
  using T = TypeParam;
  const index_t m = 250, n = 120;
  std::vector<T> l = random_matrix<T>(n, n, 3);
  for (index_t i = 0; i < n; ++i) l[i + i * n] = T(n);  // well conditioned
  std::vector<T> want = random_matrix<T>(m, n, 4);
  const T* dl = this->upload(l);
  T* da = this->upload(want);
  this->cpu_.trsm(m, n, l.data(), n, want.data(), m);
  this->gpu().trsm(m, n, dl, n, da, m);
  expect_close(want, this->download(da, want.size()), m, n, n, "trsm");
}

// Tiles above a recursion leaf of 256 (an option; the runtime's default is
// the libraries' whole-tile routines): POTF2' and TRSM recurse on the GPU
// (recursive_blocking.hpp), down to leaves of order 256 and a remainder.
kernels::CudaKernelOptions leaf_256() {
  kernels::CudaKernelOptions o;
  o.recursion_leaf = 256;
  return o;
}

TYPED_TEST(CudaKernelsTest, RecursivePotf2pAndTrsmMatchCpu) {
  using T = TypeParam;
  const index_t m = 700, n = 600;
  this->reopen(leaf_256());
  std::vector<T> want = spd_panel<T>(m, n, 11, T(30));
  T* d = this->upload(want);
  EXPECT_EQ(this->cpu_.potf2p(m, n, want.data(), m), 0);
  EXPECT_EQ(this->gpu().potf2p(m, n, d, m), 0);
  expect_close(want, this->download(d, want.size()), m, n, n, "recursive potf2p", lower);

  auto [l, a] = trsm_operands<T>(m, n, 12);
  const T* dl = this->upload(l);
  T* da = this->upload(a);
  this->cpu_.trsm(m, n, l.data(), n, a.data(), m);
  this->gpu().trsm(m, n, dl, n, da, m);
  expect_close(a, this->download(da, a.size()), m, n, n, "recursive trsm");
}

// A failure in a later leaf of the recursion names its column of the tile.
TYPED_TEST(CudaKernelsTest, RecursivePotf2pReportsTheFailingColumn) {
  using T = TypeParam;
  const index_t m = 650, n = 600;
  this->reopen(leaf_256());
  for (const index_t bad : {100, 300, 555}) {
    SCOPED_TRACE(testing::Message() << "bad column " << bad);
    std::vector<T> a = spd_panel<T>(m, n, 14);
    a[bad + bad * m] = T(-1e6);
    const std::vector<T> before = a;
    T* d = this->upload(a);
    EXPECT_EQ(this->cpu_.potf2p(m, n, a.data(), m), bad + 1);
    EXPECT_EQ(this->gpu().potf2p(m, n, d, m), bad + 1);
    expect_a2_unchanged(this->download(d, a.size()), before, m, n);
  }
}

TYPED_TEST(CudaKernelsTest, GsmmMatchesCpu) {
  using T = TypeParam;
  const index_t m = 210, n = 130, k = 90;
  const std::vector<T> a = random_matrix<T>(m, k, 5), b = random_matrix<T>(n, k, 6);
  std::vector<T> want = random_matrix<T>(m, n, 7);
  const T* da = this->upload(a);
  const T* db = this->upload(b);
  T* dc = this->upload(want);
  this->cpu_.gsmm(m, n, k, a.data(), m, b.data(), n, want.data(), m);
  this->gpu().gsmm(m, n, k, da, m, db, n, dc, m);
  expect_close(want, this->download(dc, want.size()), m, n, k, "gsmm");
}

TYPED_TEST(CudaKernelsTest, GsmmDiagMatchesCpu) {
  using T = TypeParam;
  const index_t m = 230, n = 110, k = 70;
  const std::vector<T> a = random_matrix<T>(m, k, 8);
  std::vector<T> want = random_matrix<T>(m, n, 9);
  const T* da = this->upload(a);
  T* dc = this->upload(want);
  this->cpu_.gsmm_diag(m, n, k, a.data(), m, want.data(), m);
  this->gpu().gsmm_diag(m, n, k, da, m, dc, m);
  // All of C: the strict upper triangle of the top block is left alone on both.
  expect_close(want, this->download(dc, want.size()), m, n, k, "gsmm_diag");
}

TYPED_TEST(CudaKernelsTest, CopyMatchesCpu) {
  using T = TypeParam;
  const index_t rows = 50, cols = 40, lda = 64, ldb = 57;
  const std::vector<T> a = random_matrix<T>(lda, cols, 10);
  std::vector<T> want = random_matrix<T>(ldb, cols, 11);
  const T* da = this->upload(a);
  T* db = this->upload(want);
  this->cpu_.copy(rows, cols, a.data() + 3, lda, want.data() + 5, ldb);
  this->gpu().copy(rows, cols, da + 3, lda, db + 5, ldb);
  EXPECT_TRUE(want == this->download(db, want.size()));
}

// Shapes of the QR tests: ib divides n or not, one block, square and tall.
struct QrShape {
  index_t m, n, ib;
};
// The last two are wider than CudaKernelOptions' reflector group (256): the
// kernels apply groups of 256 and 240 reflectors with merged T factors.
const QrShape kQrShapes[] = {{200, 150, 32}, {96, 96, 32},   {64, 50, 50},  {130, 70, 16},
                             {40, 40, 7},    {600, 560, 32}, {520, 300, 48}};

TYPED_TEST(CudaKernelsTest, GeqrtMatchesCpu) {
  using T = TypeParam;
  for (const QrShape& s : kQrShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    std::vector<T> a = random_matrix<T>(s.m, s.n, 12), t(static_cast<std::size_t>(s.ib * s.n), T(7));
    T* da = this->upload(a);
    T* dt = this->upload(t);
    this->cpu_.geqrt(s.m, s.n, s.ib, a.data(), s.m, t.data(), s.ib);
    this->gpu().geqrt(s.m, s.n, s.ib, da, s.m, dt, s.ib);
    expect_close(a, this->download(da, a.size()), s.m, s.n, s.m, "geqrt V and R");
    expect_close(t, this->download(dt, t.size()), s.ib, s.n, s.m, "geqrt T", t_blocks, s.ib);
  }
}

TYPED_TEST(CudaKernelsTest, LarfbMatchesCpu) {
  using T = TypeParam;
  for (const QrShape& s : kQrShapes) {
    for (bool trans : {true, false}) {
      SCOPED_TRACE(testing::Message() << "m=" << s.m << " k=" << s.n << " ib=" << s.ib << " trans=" << trans);
      // V and T from the CPU; both sides apply the same factors.
      std::vector<T> v = random_matrix<T>(s.m, s.n, 13), t(static_cast<std::size_t>(s.ib * s.n));
      this->cpu_.geqrt(s.m, s.n, s.ib, v.data(), s.m, t.data(), s.ib);
      const index_t n = 37;
      std::vector<T> want = random_matrix<T>(s.m, n, 14);
      const T* dv = this->upload(v);
      const T* dt = this->upload(t);
      T* dc = this->upload(want);
      this->cpu_.larfb(trans, s.m, n, s.n, s.ib, v.data(), s.m, t.data(), s.ib, want.data(), s.m);
      this->gpu().larfb(trans, s.m, n, s.n, s.ib, dv, s.m, dt, s.ib, dc, s.m);
      expect_close(want, this->download(dc, want.size()), s.m, n, s.m, "larfb");
    }
  }
}

// R n×n upper triangular on top of a leading dimension with room below,
// whose strict lower triangle holds other data (a GEQRT's V in a tiled QR)
// that TSQRT must leave alone.
template <class T>
std::vector<T> r_factor(index_t ldr, index_t n, unsigned seed) {
  std::vector<T> r = random_matrix<T>(ldr, n, seed);
  for (index_t j = 0; j < n; ++j) r[j + j * ldr] += T(j % 2 ? 3 : -3);
  return r;
}

TYPED_TEST(CudaKernelsTest, TsqrtMatchesCpu) {
  using T = TypeParam;
  for (const QrShape& s : kQrShapes) {
    SCOPED_TRACE(testing::Message() << "m=" << s.m << " n=" << s.n << " ib=" << s.ib);
    const index_t ldr = s.n + 3;
    std::vector<T> r = r_factor<T>(ldr, s.n, 15), a = random_matrix<T>(s.m, s.n, 16);
    std::vector<T> t(static_cast<std::size_t>(s.ib * s.n), T(7));
    const std::vector<T> r0 = r;
    T* dr = this->upload(r);
    T* da = this->upload(a);
    T* dt = this->upload(t);
    this->cpu_.tsqrt(s.m, s.n, s.ib, r.data(), ldr, a.data(), s.m, t.data(), s.ib);
    this->gpu().tsqrt(s.m, s.n, s.ib, dr, ldr, da, s.m, dt, s.ib);
    const std::vector<T> got_r = this->download(dr, r.size());
    expect_close(r, got_r, ldr, s.n, s.m + s.n, "tsqrt R");
    for (index_t j = 0; j < s.n; ++j)
      for (index_t i = j + 1; i < ldr; ++i)
        ASSERT_EQ(got_r[i + j * ldr], r0[i + j * ldr]) << "tsqrt wrote below R's diagonal at (" << i << "," << j << ")";
    expect_close(a, this->download(da, a.size()), s.m, s.n, s.m + s.n, "tsqrt V");
    expect_close(t, this->download(dt, t.size()), s.ib, s.n, s.m + s.n, "tsqrt T", t_blocks, s.ib);
  }
}

TYPED_TEST(CudaKernelsTest, SsrfbMatchesCpu) {
  using T = TypeParam;
  for (const QrShape& s : kQrShapes) {
    for (bool trans : {true, false}) {
      SCOPED_TRACE(testing::Message() << "m=" << s.m << " k=" << s.n << " ib=" << s.ib << " trans=" << trans);
      // V and T from a CPU TSQRT.
      std::vector<T> r = r_factor<T>(s.n, s.n, 17), v = random_matrix<T>(s.m, s.n, 18);
      std::vector<T> t(static_cast<std::size_t>(s.ib * s.n));
      this->cpu_.tsqrt(s.m, s.n, s.ib, r.data(), s.n, v.data(), s.m, t.data(), s.ib);
      const index_t n = 45;
      std::vector<T> a1 = random_matrix<T>(s.n, n, 19), a2 = random_matrix<T>(s.m, n, 20);
      const T* dv = this->upload(v);
      const T* dt = this->upload(t);
      T* da1 = this->upload(a1);
      T* da2 = this->upload(a2);
      this->cpu_.ssrfb(trans, s.m, n, s.n, s.ib, v.data(), s.m, t.data(), s.ib, a1.data(), s.n, a2.data(), s.m);
      this->gpu().ssrfb(trans, s.m, n, s.n, s.ib, dv, s.m, dt, s.ib, da1, s.n, da2, s.m);
      expect_close(a1, this->download(da1, a1.size()), s.n, n, s.m + s.n, "ssrfb A1");
      expect_close(a2, this->download(da2, a2.size()), s.m, n, s.m + s.n, "ssrfb A2");
    }
  }
}

// TTQRT and TTMQR (QR's binary tree): the GPU's, a TSQRT/SSRFB on the
// triangle copied with zeros below, must match LAPACK's tpqrt/tpmqrt with
// l = m, and neither may write (TTQRT) or read (TTMQR) below the triangle,
// where a head tile keeps its GEQRT's reflectors.
TYPED_TEST(CudaKernelsTest, TtqrtAndTtmqrMatchCpu) {
  using T = TypeParam;
  for (const QrShape& s : kQrShapes) {
    const index_t m = std::min(s.m, s.n), n = s.n, ib = s.ib;
    SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n << " ib=" << ib);
    std::vector<T> r = r_factor<T>(n, n, 21), a = random_matrix<T>(m, n, 22);
    std::vector<T> t(static_cast<std::size_t>(ib * n), T(7));
    const std::vector<T> a0 = a;
    T* dr = this->upload(r);
    T* da = this->upload(a);
    T* dt = this->upload(t);
    this->cpu_.ttqrt(m, n, ib, r.data(), n, a.data(), m, t.data(), ib);
    this->gpu().ttqrt(m, n, ib, dr, n, da, m, dt, ib);
    expect_close(r, this->download(dr, r.size()), n, n, m + n, "ttqrt R");
    const std::vector<T> got_a = this->download(da, a.size());
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j + 1; i < m; ++i)
        ASSERT_EQ(got_a[i + j * m], a0[i + j * m]) << "ttqrt wrote below A's diagonal at (" << i << "," << j << ")";
    expect_close(a, got_a, m, n, m + n, "ttqrt V");
    expect_close(t, this->download(dt, t.size()), ib, n, m + n, "ttqrt T", t_blocks, ib);
    for (bool trans : {true, false}) {
      const index_t nc = 45;
      std::vector<T> a1 = random_matrix<T>(n, nc, 23), a2 = random_matrix<T>(m, nc, 24);
      T* da1 = this->upload(a1);
      T* da2 = this->upload(a2);
      // V keeps the original strictly lower part: garbage TTMQR must not read.
      this->cpu_.ttmqr(trans, m, nc, n, ib, a.data(), m, t.data(), ib, a1.data(), n, a2.data(), m);
      this->gpu().ttmqr(trans, m, nc, n, ib, da, m, dt, ib, da1, n, da2, m);
      expect_close(a1, this->download(da1, a1.size()), n, nc, m + n, "ttmqr A1");
      expect_close(a2, this->download(da2, a2.size()), m, nc, m + n, "ttmqr A2");
    }
  }
}

// A GPU and a CPU exchange QR factors mid-factorization: V and T made by the
// GPU's GEQRT and TSQRT are applied by the CPU's LARFB and SSRFB, and must do
// what the CPU's own factors do.
TYPED_TEST(CudaKernelsTest, QrFactorsFromTheGpuWorkOnTheCpu) {
  using T = TypeParam;
  const index_t m = 180, n = 120, ib = 24, nc = 60;
  // GEQRT on the GPU, LARFB on the CPU.
  {
    std::vector<T> v_cpu = random_matrix<T>(m, n, 21), t_cpu(static_cast<std::size_t>(ib * n));
    T* dv = this->upload(v_cpu);
    T* dt = this->upload(t_cpu);
    this->gpu().geqrt(m, n, ib, dv, m, dt, ib);
    this->cpu_.geqrt(m, n, ib, v_cpu.data(), m, t_cpu.data(), ib);
    const std::vector<T> v_gpu = this->download(dv, v_cpu.size()), t_gpu = this->download(dt, t_cpu.size());
    std::vector<T> want = random_matrix<T>(m, nc, 22), got = want;
    this->cpu_.larfb(true, m, nc, n, ib, v_cpu.data(), m, t_cpu.data(), ib, want.data(), m);
    this->cpu_.larfb(true, m, nc, n, ib, v_gpu.data(), m, t_gpu.data(), ib, got.data(), m);
    expect_close(want, got, m, nc, m, "CPU LARFB with the GPU's GEQRT factors");
  }
  // TSQRT on the GPU, SSRFB on the CPU.
  {
    std::vector<T> r = r_factor<T>(n, n, 23), v_cpu = random_matrix<T>(m, n, 24);
    std::vector<T> t_cpu(static_cast<std::size_t>(ib * n));
    T* dr = this->upload(r);
    T* dv = this->upload(v_cpu);
    T* dt = this->upload(t_cpu);
    this->gpu().tsqrt(m, n, ib, dr, n, dv, m, dt, ib);
    this->cpu_.tsqrt(m, n, ib, r.data(), n, v_cpu.data(), m, t_cpu.data(), ib);
    const std::vector<T> v_gpu = this->download(dv, v_cpu.size()), t_gpu = this->download(dt, t_cpu.size());
    std::vector<T> a1 = random_matrix<T>(n, nc, 25), a2 = random_matrix<T>(m, nc, 26);
    std::vector<T> a1_gpu = a1, a2_gpu = a2;
    this->cpu_.ssrfb(true, m, nc, n, ib, v_cpu.data(), m, t_cpu.data(), ib, a1.data(), n, a2.data(), m);
    this->cpu_.ssrfb(true, m, nc, n, ib, v_gpu.data(), m, t_gpu.data(), ib, a1_gpu.data(), n, a2_gpu.data(), m);
    expect_close(a1, a1_gpu, n, nc, m + n, "CPU SSRFB with the GPU's TSQRT factors (A1)");
    expect_close(a2, a2_gpu, m, nc, m + n, "CPU SSRFB with the GPU's TSQRT factors (A2)");
  }
}

TYPED_TEST(CudaKernelsTest, RejectsAnInnerBlockLargerThanThePanel) {
  using T = TypeParam;
  std::vector<T> a(100), t(100);
  T* da = this->upload(a);
  T* dt = this->upload(t);
  EXPECT_THROW(this->gpu().geqrt(10, 10, 11, da, 10, dt, 11), std::logic_error);
  EXPECT_THROW(this->gpu().tsqrt(10, 10, 0, da, 10, da, 10, dt, 1), std::logic_error);
}

// --- the cuSOLVER peer (tessera run --impl cusolver) ---------------------------

// Its Cholesky factor is the CPU's (unique); its R is the CPU's up to the
// signs of its rows (Householder conventions may differ); a matrix that is
// not positive definite gives LAPACK's info.
template <class T>
void expect_cusolver_matches_cpu() {
  TESSERA_SKIP_WITHOUT_GPU();
  const index_t n = 300, m = 420;
  std::vector<T> a = spd_panel<T>(n, n, 41), want = a;
  ASSERT_EQ(kernels::potf2p<T>(n, n, want.data(), n), 0);
  const kernels::CusolverRun c =
      kernels::cusolver_factor(PeerRoutine::Potrf, 0, n, n, a.data(), static_cast<T*>(nullptr));
  EXPECT_EQ(c.info, 0);
  EXPECT_GT(c.factor_s, 0.0);
  expect_close(want, a, n, n, n, "cuSOLVER potrf against the CPU's", lower);

  std::vector<T> q = random_matrix<T>(m, n, 42), r_cpu = q, tau(static_cast<std::size_t>(n)),
                 t(static_cast<std::size_t>(32 * n));
  kernels::geqrt<T>(m, n, 32, r_cpu.data(), m, t.data(), 32, std::vector<T>(static_cast<std::size_t>(32 * n)).data());
  EXPECT_EQ(kernels::cusolver_factor(PeerRoutine::Geqrf, 0, m, n, q.data(), tau.data()).info, 0);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) {
      q[i + j * m] = std::abs(q[i + j * m]);
      r_cpu[i + j * m] = std::abs(r_cpu[i + j * m]);
    }
  expect_close(r_cpu, q, n, n, m, "|R| of cuSOLVER geqrf against the CPU's",
               [](index_t i, index_t j, index_t) { return i <= j; });

  std::vector<T> bad = spd_panel<T>(n, n, 43);
  bad[7 + 7 * n] = -T(1e6);
  EXPECT_EQ(kernels::cusolver_factor(PeerRoutine::Potrf, 0, n, n, bad.data(), static_cast<T*>(nullptr)).info, 8);
}
TEST(CusolverPeer, MatchesTheCpuInDouble) { expect_cusolver_matches_cpu<double>(); }
TEST(CusolverPeer, MatchesTheCpuInSingle) { expect_cusolver_matches_cpu<float>(); }

#endif  // TESSERA_HAVE_CUDA

TEST(CusolverPeer, WithoutAGpuSaysSo) {
  if (kernels::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  std::vector<double> a(4, 1.0), tau(2);
  try {
    kernels::cusolver_factor(PeerRoutine::Potrf, 0, 2, 2, a.data(), tau.data());
    FAIL() << "cusolver_factor succeeded without a CUDA device";
  } catch (const NotCompiled& e) {
    EXPECT_FALSE(TESSERA_HAVE_CUDA) << e.what();
  } catch (const platform::CudaError& e) {
    EXPECT_TRUE(TESSERA_HAVE_CUDA) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("cudaSetDevice"));
  }
}

}  // namespace
}  // namespace tessera
