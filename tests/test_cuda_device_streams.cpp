// CudaDevice's streams as the runtime uses them: a copy's report comes from
// a waiter thread and does not hold back the copies queued after it
// (kernels/cuda/copy_waiter.hpp), and the device times each task's kernels
// on its compute stream, two tasks at once (Device::begin_kernels,
// kernel_span_s, kernel_depth), and keeps released buffers. Every test
// skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <future>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "base/kernel_table.hpp"
#include "experiments/calibrate_device.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "kernels/tile_kernels_api.hpp"
#include "tests/cuda_test_util.hpp"

namespace tessera {
namespace {

// `bytes` of device memory, zeroed (operands for GEMMs whose values do not matter).
std::byte* zeroed(platform::Device& dev, std::size_t bytes) {
  std::vector<std::byte> zeros(bytes, std::byte{0});
  std::byte* d = dev.allocate(bytes);
  const platform::HostRange z[] = {{zeros.data(), bytes}};
  dev.copy(0, d, z, 1, true);
  return d;
}

// A copy's report does not hold back its stream (copy_waiter.hpp): while the
// report of one copy is still running, a later copy on the same stream ends.
// With a stream callback as the report it would wait for the callback.
TEST(CudaDevice, ACopysReportDoesNotHoldBackItsStream) {
  TESSERA_SKIP_WITHOUT_GPU();
  // (Before the device: a report still blocked when a check fails ends while
  // the device is destroyed, and must find these alive.)
  std::promise<void> reporting, release;
  std::shared_future<void> released = release.get_future().share();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  std::vector<std::byte> x(1 << 20, std::byte{7}), y(1 << 20, std::byte{9}), back(1 << 20);
  std::byte* d = dev->allocate(2 * x.size());
  const platform::HostRange in_x[] = {{x.data(), x.size()}}, in_y[] = {{y.data(), y.size()}};
  dev->copy_async(0, d, in_x, 1, true, [&](std::exception_ptr) {
    reporting.set_value();
    released.wait();
  });
  ASSERT_EQ(reporting.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto second = std::async(std::launch::async, [&] { dev->copy(0, d + x.size(), in_y, 1, true); });
  EXPECT_EQ(second.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the second copy waited for the first one's report";
  release.set_value();
  second.get();
  const platform::HostRange out[] = {{back.data(), back.size()}};
  dev->copy(1, d + x.size(), out, 1, false);
  EXPECT_EQ(back, y);
  dev->release(d, 2 * x.size());
}

// begin_kernels() .. synchronize() adds the span of the kernels between them,
// as the GPU timed it: more than nothing for a GEMM of order 1024, no more
// than the host waited for it, and nothing for a synchronize() without a
// begin_kernels().
TEST(CudaDevice, TimesTheKernelsOfATask) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  constexpr kernels::index_t n = 1024;
  const std::size_t bytes = n * n * sizeof(double);
  std::byte* d = zeroed(*dev, 3 * bytes);
  auto* a = reinterpret_cast<double*>(d);
  EXPECT_EQ(dev->kernel_span_s(), 0.0);
  const auto t0 = std::chrono::steady_clock::now();
  dev->begin_kernels(false);
  for (int rep = 0; rep < 4; ++rep) dev->kernels_d().gsmm(n, n, n, a, n, a + n * n, n, a + 2 * n * n, n);
  dev->synchronize();
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double span = dev->kernel_span_s();
  EXPECT_GT(span, 0.0);
  EXPECT_LE(span, host_s);
  dev->synchronize();
  EXPECT_EQ(dev->kernel_span_s(), span) << "a synchronize() without begin_kernels() adds nothing";
  dev->release(d, 3 * bytes);
}

// Two tasks' kernels queued at once (kernel_depth 2), as the runtime's
// manager queues them: marks waited for add their spans, a mark's slot is
// reused only after it was waited for (eight marks through three slots),
// queuing a third is refused, a mark may be waited for before an older one
// (on one stream its end implies theirs), and only once.
TEST(CudaDevice, QueuesTwoTasksKernelsAndWaitsInOrder) {
  TESSERA_SKIP_WITHOUT_GPU();
  auto dev = kernels::make_cuda_device(1, 0, 0);
  ASSERT_EQ(dev->kernel_depth(), 2);
  constexpr kernels::index_t n = 512;
  const std::size_t bytes = n * n * sizeof(double);
  std::byte* d = zeroed(*dev, 3 * bytes);
  auto* a = reinterpret_cast<double*>(d);
  const auto task = [&] {
    dev->begin_kernels(false);
    dev->kernels_d().gsmm(n, n, n, a, n, a + n * n, n, a + 2 * n * n, n);
    return dev->end_kernels();
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t outstanding = task();
  for (int k = 1; k < 8; ++k) {
    const std::uint64_t next = task();
    EXPECT_EQ(next, outstanding + 1);
    dev->wait_kernels(outstanding);
    outstanding = next;
  }
  const std::uint64_t a1 = task();
  EXPECT_THROW(task(), std::logic_error) << "a third task's kernels queued";
  dev->wait_kernels(a1);
  EXPECT_THROW(dev->wait_kernels(a1), std::logic_error) << "waited for twice";
  EXPECT_TRUE(dev->kernels_ended(outstanding)) << "one stream: an older task's kernels ended before a1's";
  dev->wait_kernels(outstanding);
  EXPECT_THROW(dev->kernels_ended(outstanding), std::logic_error) << "asked about a mark no longer outstanding";
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(dev->kernel_span_s(), 0.0);
  EXPECT_LE(dev->kernel_span_s(), host_s);
  dev->release(d, 3 * bytes);
}

// Three compute streams (--gpu-streams 3): three tasks queued at once, a
// long one and two short ones; the short ones' kernels end while the long
// one's run (they ran side by side), any of them may be waited for first,
// and each task's kernels ran on its own stream (the results are right).
TEST(CudaDevice, ThreeStreamsRunTasksSideBySideAndRetireInAnyOrder) {
  TESSERA_SKIP_WITHOUT_GPU();
  kernels::CudaKernelOptions o;
  o.compute_streams = 3;
  auto dev = kernels::make_cuda_device(1, 0, 0, o);
  ASSERT_EQ(dev->kernel_streams(), 3);
  ASSERT_EQ(dev->kernel_depth(), 3);
  constexpr kernels::index_t big = 4096, small = 64;
  const std::size_t big_bytes = big * big * sizeof(double), small_bytes = small * small * sizeof(double);
  std::byte* d = zeroed(*dev, 3 * big_bytes + 6 * small_bytes);
  auto* a = reinterpret_cast<double*>(d);
  auto* s1 = reinterpret_cast<double*>(d + 3 * big_bytes);
  auto* s2 = s1 + 3 * small * small;
  // C -= A B^T on zeros: stays zero; the small tasks' C start at 1 and get A = B = 1: C = 1 - small.
  std::vector<double> ones(static_cast<std::size_t>(3 * small * small), 1.0);
  const platform::HostRange in[] = {{reinterpret_cast<std::byte*>(ones.data()), ones.size() * sizeof(double)}};
  dev->copy(0, reinterpret_cast<std::byte*>(s1), in, 1, true);
  dev->copy(0, reinterpret_cast<std::byte*>(s2), in, 1, true);
  const auto task = [&](bool panel, kernels::index_t n, double* x, int reps) {
    dev->begin_kernels(panel);
    for (int r = 0; r < reps; ++r) dev->kernels_d().gsmm(n, n, n, x, n, x + n * n, n, x + 2 * n * n, n);
    return dev->end_kernels();
  };
  // Every kernel the timed tasks launch is loaded first. Since CUDA 12.2 modules load lazily, on a kernel's first
  // launch, and that load may wait for the work already queued on the device (the CUDA programming guide's "Lazy
  // Loading", its concurrency hazard): unwarmed, the short tasks' first GEMM of 64 waited for the 8 of 4096 on the
  // lent H100 of 2026-11-27. The warm-up leaves the small tasks' C at 1 - small; they are reset below.
  for (const auto& [panel, n, x] :
       {std::tuple{false, big, a}, std::tuple{true, small, s1}, std::tuple{false, small, s2}})
    dev->wait_kernels(task(panel, n, x, 1));
  dev->copy(0, reinterpret_cast<std::byte*>(s1), in, 1, true);
  dev->copy(0, reinterpret_cast<std::byte*>(s2), in, 1, true);
  const std::uint64_t slow = task(false, big, a, 8), p = task(true, small, s1, 1), q = task(false, small, s2, 1);
  const std::optional<std::uint64_t> first = dev->wait_any_kernels({slow, p, q}, 1.0);
  ASSERT_TRUE(first.has_value()) << "nothing ended within a second";
  EXPECT_NE(*first, slow) << "a short task queued after the long one ended first";
  EXPECT_FALSE(dev->wait_any_kernels({slow}, 1e-4).has_value()) << "the long task ended within 0.1 ms";
  EXPECT_FALSE(dev->kernels_ended(slow)) << "8 GEMMs of 4096 outlast two of 64";
  for (const std::uint64_t m : {p, q}) dev->wait_kernels(m);
  dev->wait_kernels(slow);
  std::vector<double> back(ones.size());
  const platform::HostRange out[] = {{reinterpret_cast<std::byte*>(back.data()), back.size() * sizeof(double)}};
  for (double* x : {s1, s2}) {
    dev->copy(1, reinterpret_cast<std::byte*>(x), out, 1, false);
    EXPECT_EQ(back[2 * small * small], 1.0 - double(small));
  }
  dev->release(d, 3 * big_bytes + 6 * small_bytes);
}

// A released buffer is kept and handed out again for the same size (no
// cudaFree, which waits for the whole device); kept buffers count against
// the capacity and are freed when a new buffer needs their room.
TEST(CudaDevice, KeepsReleasedBuffersWithinTheCapacity) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::size_t cap = std::size_t{1} << 20;
  auto dev = kernels::make_cuda_device(1, 0, cap);
  std::byte* a = dev->allocate(cap / 2);
  dev->release(a, cap / 2);
  EXPECT_EQ(dev->in_use(), 0u);
  std::byte* b = dev->allocate(cap / 2);
  EXPECT_EQ(b, a) << "the kept buffer of that size";
  dev->release(b, cap / 2);
  std::byte* c = dev->allocate(cap);  // the kept half must go first
  EXPECT_EQ(dev->in_use(), cap);
  dev->release(c, cap);
  EXPECT_EQ(dev->in_use(), 0u);
}

// `calibrate --stream-overlap` (experiments/calibrate_overlap.hpp) on the
// GPU with two compute streams, at the size GPU runs use: a TSQRT (far below
// DGEMM's rate) and a POTF2' (which waits on the host for its status: the
// GEMMs must be queued before it), each timed alone, beside DGEMMs at its
// dimensions and the DGEMMs alone. The GEMMs outlast the panel (the model's
// premise) with fewer calls than the cap; the pair takes neither less than
// the longer of the two nor much more than both. The numbers are printed:
// they are the measurement this test exists to bring back.
TEST(CudaDevice, StreamOverlapOfAPanelBesideGemms) {
  TESSERA_SKIP_WITHOUT_GPU();
  kernels::CudaKernelOptions options;
  options.compute_streams = 2;
  auto dev = kernels::make_cuda_device(1, 0, 0, options);
  kernels::CalibrationOptions o;
  o.min_reps = 5;
  for (const KernelShape& s :
       {KernelShape{kTsqrt, 'd', 4096, 4096, 0, 32}, KernelShape{kPotf2p, 'd', 4096, 4096, 0, 0}}) {
    SCOPED_TRACE(kernel_name(s.kernel));
    const auto m = kernels::measure_overlap(*dev, s, o);
    std::printf("%s 4096: panel %.3f ms, %d GEMMs %.3f ms, together %.3f ms; share %.3f, used %.3f, overlap %.3f\n",
                kernel_name(s.kernel), m.panel_s * 1e3, m.gemm_calls, m.gemms_s * 1e3, m.together_s * 1e3, m.share,
                m.used, m.overlap);
    EXPECT_GE(m.gemm_calls, 1);
    EXPECT_LT(m.gemm_calls, kernels::kMaxGemmCalls);
    EXPECT_GE(m.gemms_s, m.panel_s);
    EXPECT_GT(m.share, 0);
    EXPECT_LT(m.share, 1);
    EXPECT_FALSE(std::isnan(m.overlap));
    EXPECT_GE(m.together_s, 0.9 * std::max(m.panel_s, m.gemms_s));
    EXPECT_LE(m.together_s, 1.3 * (m.panel_s + m.gemms_s));
  }
}

}  // namespace
}  // namespace tessera
