#pragma once
// platform::Device on one CUDA GPU: buffers from cudaMalloc within a capacity
// the runtime may use, two copy streams (0: host -> device, 1: device ->
// host) and compute streams (CudaKernelOptions::compute_streams, default 1),
// each with its own CudaTileKernels (library handles, workspace); a task's
// kernels all go to one of them, the tasks in turn, so that the kernels of
// tasks the manager thread has queued together can run side by side.
//
// Threads (platform/device.hpp): the node's device communication thread
// starts copies, a waiter thread per copy stream reports each done
// (copy_waiter.hpp: an event after the copy, not a stream callback, which
// would hold back the stream's next copy); the kernels and synchronize()
// belong to the manager thread. Every entry point first makes this device
// current on the calling thread.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/copy_waiter.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/cuda/cuda_tile_kernels.hpp"
#include "platform/device.hpp"

namespace tessera::platform {

class CudaDevice final : public Device {
 public:
  // GPU `gpu_index` (1-based, for the name) on CUDA device `ordinal`.
  // memory_cap: the capacity in bytes; 0: the free memory now less the
  // libraries' reserve of every compute stream (cuda_api.hpp
  // cuda_stream_reserve: their own allocations happen after the runtime's
  // buffers may have taken the rest; a cap is also held to that). options:
  // as make_cuda_device's (cuda_api.hpp).
  CudaDevice(int gpu_index, int ordinal, std::size_t memory_cap, kernels::CudaKernelOptions options);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  std::string name() const override { return name_; }
  std::size_t capacity() const override { return capacity_; }

  std::byte* allocate(std::size_t bytes) override;
  void release(std::byte* p, std::size_t bytes) override;
  std::size_t in_use() const override { return in_use_.load(std::memory_order_relaxed); }
  std::size_t peak() const override { return peak_.load(std::memory_order_relaxed); }
  void free_kept() override;

  void copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) override;
  void copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) override;
  // Two copies queued per stream (issue 15 point 3): the next is on the
  // stream before the last ends, and starts as it ends, instead of being
  // queued only after the device communication thread has heard of its end.
  int copy_depth() const override { return 2; }
  bool pins_host() const override { return true; }
  bool pin_host(std::byte* p, std::size_t bytes) override;
  void unpin_host(std::byte* p) override;

 private:
  cudaStream_t enqueue_copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device);

 public:
  // The kernels of the task being queued: its compute stream's (begin_kernels chose it).
  kernels::TileKernels<double>& kernels_d() override { return *lanes_[lane_].d; }
  kernels::TileKernels<float>& kernels_s() override { return *lanes_[lane_].s; }
  void synchronize() override;
  // Timing events around each task's kernels on its compute stream, two
  // tasks' kernels queued at once, or one per compute stream where there are
  // more (platform/device.hpp). With several streams the spans of tasks
  // that ran side by side overlap, and kernel_span_s() counts each.
  void begin_kernels(bool panel) override;
  double kernel_span_s() const override { return kernel_span_s_; }
  // Tiles whose Cholesky QR panels were factored again with GEQRF, every lane's, both precisions.
  std::uint64_t kernel_fallbacks() const override {
    std::uint64_t n = 0;
    for (const Lane& l : lanes_) n += l.d->cholqr_fallbacks() + l.s->cholqr_fallbacks();
    return n;
  }
  // The Cholesky QR panels' operations, every lane's, both precisions (CudaKernelOptions::profile_panels).
  std::vector<KernelPhase> kernel_phases() const override;
  int kernel_depth() const override { return std::max(2, static_cast<int>(lanes_.size())); }
  std::uint64_t end_kernels() override;
  // Any outstanding mark, in any order (with one stream, a later mark's end
  // implies the earlier ones').
  void wait_kernels(std::uint64_t mark) override;
  int kernel_streams() const override { return static_cast<int>(lanes_.size()); }
  bool kernels_ended(std::uint64_t mark) override;
  // Polls the marks' end events, yielding, then sleeping between rounds.
  std::optional<std::uint64_t> wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) override;

  int ordinal() const { return ordinal_; }

 private:
  [[noreturn]] void out_of_memory(std::size_t bytes, std::size_t in_use, const std::string& why) const;

  int ordinal_;
  cuda::Stream copy_streams_[2];
  // A compute stream and the kernels that queue on it.
  struct Lane {
    cuda::Stream stream;
    std::unique_ptr<kernels::CudaTileKernels<double>> d;
    std::unique_ptr<kernels::CudaTileKernels<float>> s;
  };
  std::vector<Lane> lanes_;
  std::size_t lane_ = 0;  // the task being queued goes to lanes_[lane_]
  std::string name_;
  std::size_t capacity_ = 0;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
  // The manager thread's: per task queued, events at the start and the end
  // of its kernels on its lane's stream, in kernel_depth() + 1 slots (the
  // open one and the outstanding marks'); a slot is free again once its
  // mark was waited for.
  struct Span {
    cuda::Event begin, end;
    std::size_t lane = 0;
  };
  std::vector<Span> spans_;
  std::vector<std::size_t> free_spans_;
  std::map<std::uint64_t, std::size_t> outstanding_;  // mark -> its span
  std::size_t open_span_ = 0;                         // the task being queued's, while span_open_
  std::uint64_t next_mark_ = 0;                       // marks made
  bool span_open_ = false;
  // Takes a free span for mark next_mark_, chooses its lane (a panel's: the
  // high-priority one) and records its start there.
  void open_span(bool panel);
  // The outstanding mark's entry; throws logic_error naming `what` for another.
  std::map<std::uint64_t, std::size_t>::const_iterator find_outstanding(std::uint64_t mark, const char* what) const;
  double kernel_span_s_ = 0;
  // Released buffers kept for reuse, by size (release()); kept_bytes_ of
  // them. in_use() + kept_bytes_ stays within the capacity.
  void free_kept_largest();  // with kept_mutex_ held
  std::mutex kept_mutex_;
  std::map<std::size_t, std::vector<std::byte*>> kept_;
  std::size_t kept_bytes_ = 0;
  // One per copy stream; after the streams, so that they stop (reporting
  // what is left) before the streams go.
  std::unique_ptr<cuda::CopyWaiter> waiters_[2];
};

}  // namespace tessera::platform
