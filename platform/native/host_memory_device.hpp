#pragma once
// A GPU whose memory is host memory: the emulated device of CPU-only
// machines and the simulated GPU share it. Its buffers are separate
// allocations accounted against a capacity, its copies are memcpy plus the
// transfer time a subclass models, its kernels run on the CPU core of the
// thread that calls them (the manager thread).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "platform/device.hpp"

namespace tessera::platform {

class HostMemoryDevice : public Device {
 public:
  // `data` false: buffers are only accounted (a simulated run without data).
  HostMemoryDevice(int index, std::size_t capacity, bool data) : index_(index), capacity_(capacity), data_(data) {}

  std::size_t capacity() const override { return capacity_; }
  bool has_data() const override { return data_; }
  int index() const { return index_; }

  std::byte* allocate(std::size_t bytes) override {
    std::size_t used = in_use_.load();
    do {
      if (bytes > capacity_ - used)
        throw DeviceOutOfMemory(name() + ": out of memory: a buffer of " + std::to_string(bytes) +
                                " bytes does not fit (" + std::to_string(used) + " of " + std::to_string(capacity_) +
                                " bytes in use)");
    } while (!in_use_.compare_exchange_weak(used, used + bytes));
    std::size_t p = peak_.load();
    while (used + bytes > p && !peak_.compare_exchange_weak(p, used + bytes)) {
    }
    // Never dereferenced (and never null, which the runtime reads as no buffer).
    if (!data_ || bytes == 0) return reinterpret_cast<std::byte*>(alignof(std::max_align_t));
    void* ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!ptr) {
      in_use_ -= bytes;
      throw DeviceOutOfMemory(name() + ": the host memory that emulates it is exhausted (" + std::to_string(bytes) +
                              " bytes)");
    }
    // A GPU's new buffer holds whatever was there: every byte NaN here, so
    // that a task reading what no copy or kernel wrote fails --check.
    std::memset(ptr, 0xFF, bytes);
    return static_cast<std::byte*>(ptr);
  }
  void release(std::byte* p, std::size_t bytes) override {
    if (data_ && bytes > 0) std::free(p);
    in_use_ -= bytes;
  }
  std::size_t in_use() const override { return in_use_.load(); }
  std::size_t peak() const override { return peak_.load(); }

  void copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t bytes = 0;
    for (int r = 0; r < n; ++r) {
      if (data_) {
        if (to_device) std::memcpy(dev + bytes, host[r].ptr, host[r].bytes);
        else std::memcpy(host[r].ptr, dev + bytes, host[r].bytes);
      }
      bytes += host[r].bytes;
    }
    transfer(stream, bytes, to_device, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  // The copy runs on the stream's copy engine (launch()), as a DMA engine
  // runs a GPU's copies while the thread that started it goes on.
  void copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) override {
    std::vector<HostRange> ranges(host, host + n);
    launch(stream, [this, stream, dev, ranges = std::move(ranges), to_device, done = std::move(done)] {
      std::exception_ptr error;
      try {
        copy(stream, dev, ranges.data(), static_cast<int>(ranges.size()), to_device);
      } catch (...) {
        error = std::current_exception();
      }
      done(error);
    });
  }

  kernels::TileKernels<double>& kernels_d() override { return d_; }
  kernels::TileKernels<float>& kernels_s() override { return s_; }

 protected:
  // Lets the modeled time of moving `bytes` pass; the data has moved
  // already, which took `copied_s` seconds of wall time.
  virtual void transfer(int stream, std::size_t bytes, bool to_device, double copied_s) = 0;
  // Runs `job` on the copy engine of `stream`, after the jobs launched there before.
  virtual void launch(int stream, std::function<void()> job) = 0;

 private:
  int index_;
  std::size_t capacity_;
  bool data_;
  std::atomic<std::size_t> in_use_{0}, peak_{0};
  kernels::CpuTileKernels<double> d_;
  kernels::CpuTileKernels<float> s_;
};

}  // namespace tessera::platform
