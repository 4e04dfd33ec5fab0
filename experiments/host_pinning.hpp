#pragma once
// Page-locked host tiles for runs on CUDA GPUs (issue 15 point 1). Copies
// between pageable host memory and a GPU are staged by the driver through
// its own pinned buffer: about 9 GB/s on the lent H100's PCIe link, one copy
// at a time per direction, and each returns only when done. Copies from
// page-locked memory run at the link's rate and overlap each other and the
// kernels. So before the factorization starts, the node's host data (its
// tiles with their T factors) are registered with the device
// (cudaHostRegister), and unregistered when the run is over; the cost of
// both is measured and reported (JSON `pin_s`, `unpin_s`, `pinned_bytes`),
// outside the factorization's time, as the cuSOLVER peer's host matrix is
// made outside its own.
#include <cstddef>
#include <string>
#include <vector>

#include "platform/device.hpp"

namespace tessera::driver {

// The pages that hold `ranges`, as few disjoint [begin, end) spans as
// possible: each range widened to whole pages of `page` bytes, then spans
// that overlap or touch merged (two tiles may share a page, and a page can
// be registered only once). Sorted by address; empty ranges dropped.
std::vector<platform::HostRange> page_spans(std::vector<platform::HostRange> ranges, std::size_t page);

// Pins `ranges` through `device` for its lifetime. Nothing is pinned where
// the device does not pin (Device::pins_host), and pinning is an
// optimisation: if the device cannot lock a span (page-locked memory is
// limited), what was pinned is unpinned, the run goes on pageable, and
// warning() says why; a span locked by someone else already is left alone.
class HostPinning {
 public:
  HostPinning(platform::Device& device, std::vector<platform::HostRange> ranges);
  ~HostPinning();
  HostPinning(const HostPinning&) = delete;
  HostPinning& operator=(const HostPinning&) = delete;

  std::size_t bytes() const { return bytes_; }
  double pin_s() const { return pin_s_; }
  // Unpins now (the destructor does it otherwise); returns the seconds it
  // took. A span that cannot be unpinned is reported in warning().
  double unpin();
  // Why memory was left pageable or locked, or empty (printed to stderr as
  // a warning when it happened).
  const std::string& warning() const { return warning_; }

 private:
  platform::Device& device_;
  std::vector<std::byte*> pinned_;
  std::size_t bytes_ = 0;
  double pin_s_ = 0;
  std::string warning_;
  void warn(std::string why);
};

}  // namespace tessera::driver
