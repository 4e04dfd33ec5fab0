#pragma once
// The emulated device (--device emulated): a GPU for machines without one.
// Not a mock: its memory is separate host memory with a capacity, every copy
// to or from it moves the bytes and then takes latency + bytes / bandwidth
// of wall time on its stream's copy-engine thread, and its kernels run on the CPU core
// of its manager thread. It exercises every GPU path of the runtime
// (managers, mailboxes, copies, device tile tables, Release_Tile) with real
// data.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "platform/native/host_memory_device.hpp"

namespace tessera::platform {

struct EmulatedDeviceOptions {
  std::size_t memory_bytes = std::size_t{4} << 30;
  double bandwidth_Bps = 12e9;  // per direction (PCIe 3.0 x16 measures ~12 GB/s)
  double latency_s = 10e-6;     // per copy
  int copy_depth = 1;           // copies queued per stream (Device::copy_depth)
};

class EmulatedDevice final : public HostMemoryDevice {
 public:
  ~EmulatedDevice() override;
  // `index`: 1-based GPU number on its node. Throws InputError for a
  // non-positive capacity or bandwidth or a negative latency.
  EmulatedDevice(int index, EmulatedDeviceOptions options);
  std::string name() const override { return "GPU " + std::to_string(index()) + " (emulated)"; }
  int copy_depth() const override { return o_.copy_depth; }

 protected:
  void transfer(int stream, std::size_t bytes, bool to_device, double copied_s) override;
  void launch(int stream, std::function<void()> job) override;

 private:
  // One thread per stream stands for the GPU's copy engine.
  struct Engine {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stop = false;
    std::thread thread;
  };
  EmulatedDeviceOptions o_;
  Engine engines_[2];
};

}  // namespace tessera::platform
