#pragma once
// Device memory for set-up work outside a run (a calibration's measurement,
// a run's GPU warm-up: experiments/gpu_warmup.hpp): buffers uploaded from
// host vectors and released together, and a device's kernels of one
// precision.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/tile_kernels_api.hpp"
#include "platform/device.hpp"

namespace tessera::kernels {

// Device buffers, released when it is destroyed.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(platform::Device& dev) : dev_(dev) {}
  ~DeviceBuffers() {
    // Never throws: after a device error, freeing may fail too, and the first error is the one to report.
    for (const auto& [p, bytes] : held_) try {
        dev_.release(p, bytes);
      } catch (...) {
      }
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  // A device copy of `host` (nullptr for an empty one).
  template <class T>
  T* upload(std::vector<T>& host) {
    if (host.empty()) return nullptr;
    const std::size_t bytes = host.size() * sizeof(T);
    held_.reserve(held_.size() + 1);
    std::byte* p = dev_.allocate(bytes);
    held_.emplace_back(p, bytes);
    const platform::HostRange r{reinterpret_cast<std::byte*>(host.data()), bytes};
    dev_.copy(0, p, &r, 1, true);
    return reinterpret_cast<T*>(p);
  }

 private:
  platform::Device& dev_;
  std::vector<std::pair<std::byte*, std::size_t>> held_;
};

template <class T>
TileKernels<T>& kernels_of(platform::Device& dev) {
  if constexpr (std::is_same_v<T, float>) return dev.kernels_s();
  else return dev.kernels_d();
}

}  // namespace tessera::kernels
