// Host pinning on a real CUDA device (issue 15 point 1): HostPinning's
// spans become page-locked host memory the driver knows (cudaHostRegister),
// copies from and to them are correct, and they are pageable again once
// unpinned. Skips where no CUDA device is present.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <future>
#include <numeric>
#include <vector>

#include "experiments/host_pinning.hpp"
#include "kernels/cuda/cuda_api.hpp"

namespace tessera {
namespace {

#if TESSERA_HAVE_CUDA

// Whether the driver holds the page of `p` registered: registering it again
// is then refused as already registered (pin_host returns false); if it is
// accepted, it is undone.
bool registered(platform::Device& dev, const void* p) {
  const auto pg = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto* page = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(p) / pg * pg);
  if (!dev.pin_host(page, pg)) return true;
  dev.unpin_host(page);
  return false;
}

TEST(CudaPinning, PinsCopiesAndUnpins) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device to test on";
  auto dev = kernels::make_cuda_device(1, 0, 0);
  // Two "tiles" of 3 MB + 17 doubles, one sharing a page with the other's end.
  const std::size_t n = (3u << 20) / sizeof(double) + 17;
  std::vector<double> store(2 * n + 5);
  std::iota(store.begin(), store.end(), 1.0);
  double* t0 = store.data();
  double* t1 = store.data() + n + 5;
  const platform::HostRange r0{reinterpret_cast<std::byte*>(t0), n * sizeof(double)};
  const platform::HostRange r1{reinterpret_cast<std::byte*>(t1), n * sizeof(double)};
  ASSERT_FALSE(registered(*dev, t0));
  {
    driver::HostPinning pin(*dev, {r0, r1});
    EXPECT_GE(pin.bytes(), 2 * n * sizeof(double));
    EXPECT_TRUE(registered(*dev, t0));
    EXPECT_TRUE(registered(*dev, t1 + n - 1));
    // To the device and back into the other tile, asynchronously.
    std::byte* d = dev->allocate(r0.bytes);
    std::promise<void> in, out;
    dev->copy_async(0, d, &r0, 1, true, [&](std::exception_ptr e) { e ? in.set_exception(e) : in.set_value(); });
    in.get_future().get();
    dev->copy_async(1, d, &r1, 1, false, [&](std::exception_ptr e) { e ? out.set_exception(e) : out.set_value(); });
    out.get_future().get();
    dev->release(d, r0.bytes);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(t1[i], double(i + 1)) << "element " << i;
  }
  EXPECT_FALSE(registered(*dev, t0));
  EXPECT_FALSE(registered(*dev, t1));
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera
