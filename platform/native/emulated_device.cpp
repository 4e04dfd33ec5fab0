#include "platform/native/emulated_device.hpp"

#include <chrono>
#include <thread>

#include "runtime/error.hpp"

namespace tessera::platform {

EmulatedDevice::EmulatedDevice(int index, EmulatedDeviceOptions options)
    : HostMemoryDevice(index, options.memory_bytes, true), o_(options) {
  if (options.memory_bytes == 0) throw InputError("--gpu-memory 0: an emulated GPU needs memory");
  if (!(options.bandwidth_Bps > 0))
    throw InputError("--gpu-bandwidth " + std::to_string(options.bandwidth_Bps) + " must be > 0 (bytes per second)");
  if (!(options.latency_s >= 0)) throw InputError("--gpu-latency " + std::to_string(options.latency_s) + " must be >= 0 (seconds)");
}

void EmulatedDevice::transfer(int /*stream*/, std::size_t bytes, bool /*to_device*/, double copied_s) {
  // The memcpy took part of the modeled time; the stream's thread sleeps the rest.
  const double rest = o_.latency_s + static_cast<double>(bytes) / o_.bandwidth_Bps - copied_s;
  if (rest > 0) std::this_thread::sleep_for(std::chrono::duration<double>(rest));
}

}  // namespace tessera::platform
