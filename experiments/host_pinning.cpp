#include "experiments/host_pinning.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "experiments/driver_parts.hpp"

namespace tessera::driver {

std::vector<platform::HostRange> page_spans(std::vector<platform::HostRange> ranges, std::size_t page) {
  struct Span {
    std::uintptr_t begin, end;
  };
  std::vector<Span> spans;
  for (const platform::HostRange& r : ranges) {
    if (r.bytes == 0) continue;
    const auto a = reinterpret_cast<std::uintptr_t>(r.ptr);
    spans.push_back({a / page * page, (a + r.bytes + page - 1) / page * page});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, s.end);
    else merged.push_back(s);
  }
  std::vector<platform::HostRange> out;
  for (const Span& s : merged) out.push_back({reinterpret_cast<std::byte*>(s.begin), s.end - s.begin});
  return out;
}

HostPinning::HostPinning(platform::Device& device, std::vector<platform::HostRange> ranges) : device_(device) {
  if (!device_.pins_host()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  try {
    for (const platform::HostRange& s : page_spans(std::move(ranges), page)) {
      if (!device_.pin_host(s.ptr, s.bytes)) continue;  // locked already, by its owner
      pinned_.push_back(s.ptr);
      bytes_ += s.bytes;
    }
  } catch (const std::exception& e) {
    warn(std::string("host memory left pageable (copies to and from the GPUs slower): ") + e.what());
    unpin();
    bytes_ = 0;
  }
  pin_s_ = seconds_since(t0);
}

double HostPinning::unpin() {
  // Nothing pinned (a simulated or emulated GPU, pageable memory, or unpinned already) takes no time: not a reading of
  // the clock around an empty loop, which would put wall time into a simulated run's JSON.
  if (pinned_.empty()) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::byte* p : pinned_) {
    try {
      device_.unpin_host(p);
    } catch (const std::exception& e) {
      if (warning_.empty()) warn(std::string("host memory left page-locked: ") + e.what());
    }
  }
  pinned_.clear();
  return seconds_since(t0);
}

HostPinning::~HostPinning() { unpin(); }

void HostPinning::warn(std::string why) {
  warning_ = std::move(why);
  std::fprintf(stderr, "tessera: warning: %s\n", warning_.c_str());
}

}  // namespace tessera::driver
