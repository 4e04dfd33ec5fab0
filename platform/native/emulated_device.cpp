#include "platform/native/emulated_device.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "base/error.hpp"
#include "platform/native/start_thread.hpp"

namespace tessera::platform {

EmulatedDevice::EmulatedDevice(int index, EmulatedDeviceOptions options)
    : HostMemoryDevice(index, options.memory_bytes, true), o_(options) {
  if (options.memory_bytes == 0) throw InputError("--gpu-memory 0: an emulated GPU needs memory");
  // A copy sleeps latency + bytes / bandwidth: below 1 MB/s or above a
  // second of latency a run of default tiles would sleep for hours, and an
  // infinite value is no link at all.
  if (!(options.bandwidth_Bps > 0))
    throw InputError("--gpu-bandwidth " + std::to_string(options.bandwidth_Bps) + " must be > 0 (bytes per second)");
  if (!(options.bandwidth_Bps >= 1e6 && options.bandwidth_Bps <= 1e15))
    throw InputError("--gpu-bandwidth " + std::to_string(options.bandwidth_Bps) +
                     " must be from 1e6 to 1e15 (bytes per second)");
  if (!(options.latency_s >= 0 && options.latency_s <= 1))
    throw InputError("--gpu-latency " + std::to_string(options.latency_s) + " must be from 0 to 1 (seconds)");
  if (options.copy_depth < 1)
    throw InputError("emulated GPU copy depth " + std::to_string(options.copy_depth) + " must be >= 1");
}

EmulatedDevice::~EmulatedDevice() {
  for (Engine& e : engines_) {
    {
      std::lock_guard lk(e.m);
      e.stop = true;
    }
    e.cv.notify_all();
    if (e.thread.joinable()) e.thread.join();
  }
}

void EmulatedDevice::launch(int stream, std::function<void()> job) {
  Engine& e = engines_[stream & 1];
  {
    std::lock_guard lk(e.m);
    // The engine's thread first: one that cannot start leaves no job behind.
    if (!e.thread.joinable())
      e.thread = start_thread(name() + " copy engine " + std::to_string(stream & 1), "", [&e] {
        std::unique_lock lk(e.m);
        for (;;) {
          e.cv.wait(lk, [&] { return e.stop || !e.jobs.empty(); });
          if (e.jobs.empty()) return;  // stopping
          std::function<void()> j = std::move(e.jobs.front());
          e.jobs.pop_front();
          lk.unlock();
          j();
          lk.lock();
        }
      });
    e.jobs.push_back(std::move(job));
  }
  e.cv.notify_one();
}

void EmulatedDevice::transfer(int /*stream*/, std::size_t bytes, bool /*to_device*/, double copied_s) {
  // The memcpy took part of the modeled time; the stream's copy engine sleeps the rest.
  const double rest = o_.latency_s + static_cast<double>(bytes) / o_.bandwidth_Bps - copied_s;
  if (rest > 0) std::this_thread::sleep_for(std::chrono::duration<double>(rest));
}

}  // namespace tessera::platform
