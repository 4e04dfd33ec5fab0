#include "kernels/cuda/cuda_device.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "kernels/cuda/cuda_api.hpp"
#include "platform/kernel_lanes.hpp"

namespace tessera::platform {

CudaDevice::CudaDevice(int gpu_index, int ordinal, std::size_t memory_cap, kernels::CudaKernelOptions options)
    : ordinal_(cuda::set_device(ordinal)), copy_streams_{cuda::Stream::create(), cuda::Stream::create()} {
  if (options.compute_streams < 1)
    throw std::invalid_argument("GPU " + std::to_string(gpu_index) + ": " + std::to_string(options.compute_streams) +
                                " compute streams (at least 1)");
  // With several streams the first has the device's greatest priority and
  // takes the panels (begin_kernels).
  int least = 0, greatest = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (int i = 0; i < options.compute_streams; ++i) {
    Lane l{
        i == 0 && options.compute_streams > 1 ? cuda::Stream::create_with_priority(greatest) : cuda::Stream::create(),
        nullptr, nullptr};
    l.d = std::make_unique<kernels::CudaTileKernels<double>>(ordinal, l.stream.get(), options);
    l.s = std::make_unique<kernels::CudaTileKernels<float>>(ordinal, l.stream.get(), options);
    lanes_.push_back(std::move(l));
  }
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  name_ = "GPU " + std::to_string(gpu_index) + " (" + prop.name + ", cuda:" + std::to_string(ordinal) + ")";
  // Measured after the context, streams and library handles exist, so that
  // what they took is already gone from `free`.
  std::size_t free = 0, total = 0;
  TESSERA_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::size_t reserve = kernels::cuda_stream_reserve(options.cholqr_panels) * lanes_.size();
  capacity_ = free > reserve ? free - reserve : 0;
  if (memory_cap > 0) capacity_ = std::min(capacity_, memory_cap);
  for (int i = 0; i <= kernel_depth(); ++i) {
    spans_.push_back(Span{cuda::Event::create(0), cuda::Event::create(0)});
    free_spans_.push_back(spans_.size() - 1);
  }
  for (int i = 0; i < 2; ++i)
    waiters_[i] = std::make_unique<cuda::CopyWaiter>(ordinal_, name_ + " copy stream " + std::to_string(i));
}

CudaDevice::~CudaDevice() {
  // Kernels and copies still queued must not outlive their handles and
  // buffers, nor a copy's report the runtime state it goes to
  // (cudaStreamDestroy returns at once on a busy stream).
  if (cudaSetDevice(ordinal_) != cudaSuccess) return;
  for (auto& s : copy_streams_) (void)cudaStreamSynchronize(s.get());
  for (auto& l : lanes_) (void)cudaStreamSynchronize(l.stream.get());
  // The waiters report what is left now, while what their reports use lives.
  for (auto& w : waiters_) w.reset();
  for (auto& [bytes, list] : kept_)
    for (std::byte* p : list) (void)cudaFree(p);
}

void CudaDevice::out_of_memory(std::size_t bytes, std::size_t in_use, const std::string& why) const {
  throw DeviceOutOfMemory(name_ + ": out of device memory: cannot allocate " + std::to_string(bytes) + " bytes with " +
                          std::to_string(in_use) + " bytes in use of a capacity of " + std::to_string(capacity_) +
                          " bytes" + why);
}

std::byte* CudaDevice::allocate(std::size_t bytes) {
  cuda::set_device(ordinal_);
  // Claim the bytes first, so that two threads cannot both pass the check.
  std::size_t used = in_use_.load(std::memory_order_relaxed);
  do {
    if (bytes > capacity_ - std::min(used, capacity_)) out_of_memory(bytes, used, "");
  } while (!in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));

  void* p = nullptr;
  cudaError_t e = cudaSuccess;
  // Freeing a kept buffer can fail (a sticky CUDA error): the claim goes back.
  struct Claim {
    std::atomic<std::size_t>& in_use;
    std::size_t bytes;
    bool kept = false;
    ~Claim() {
      if (!kept) in_use.fetch_sub(bytes, std::memory_order_relaxed);
    }
  } claim{in_use_, bytes};
  if (bytes > 0) {
    std::lock_guard<std::mutex> lk(kept_mutex_);
    // A kept buffer of this size, else a new one, once the kept ones that
    // would not fit beside it are freed (largest first).
    if (auto it = kept_.find(bytes); it != kept_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      kept_bytes_ -= bytes;
    } else {
      while (kept_bytes_ > 0 && in_use_.load(std::memory_order_relaxed) + kept_bytes_ > capacity_) free_kept_largest();
      e = cudaMalloc(&p, bytes);
      if (e == cudaErrorMemoryAllocation && kept_bytes_ > 0) {
        // The capacity is an estimate: give back every kept buffer and try again.
        (void)cudaGetLastError();
        while (kept_bytes_ > 0) free_kept_largest();
        e = cudaMalloc(&p, bytes);
      }
    }
  }
  if (e != cudaSuccess) {
    // (the claim goes back as `claim` goes)
    // The capacity is an estimate; the driver has the last word.
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      out_of_memory(bytes, used, " (cudaMalloc: out of memory)");
    }
    cuda::detail::check_cuda(e, "cudaMalloc(&p, bytes)", __FILE__, __LINE__);
  }
  claim.kept = true;
  std::size_t peak = peak_.load(std::memory_order_relaxed);
  while (used + bytes > peak && !peak_.compare_exchange_weak(peak, used + bytes, std::memory_order_relaxed)) {
  }
  // An empty datum's buffer is never dereferenced, but the runtime reads a
  // null buffer as none (it would wait for an allocation turn never planned).
  if (bytes == 0) return reinterpret_cast<std::byte*>(alignof(std::max_align_t));
  return static_cast<std::byte*>(p);
}

// Kept for the next buffer of its size instead of freed: cudaFree waits until
// the whole device is idle, so each release would stall the next task's
// kernels the manager thread has queued (kernel_depth), and the thread that
// released. The runtime releases a buffer only once no queued work uses it,
// so a kept one can be handed out again at once.
void CudaDevice::release(std::byte* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0) return;
  std::lock_guard<std::mutex> lk(kept_mutex_);
  kept_[bytes].push_back(p);
  kept_bytes_ += bytes;
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

void CudaDevice::free_kept_largest() {
  auto it = kept_.end();
  while (it != kept_.begin() && std::prev(it)->second.empty()) --it;
  if (it == kept_.begin()) return;
  --it;
  cuda::set_device(ordinal_);
  TESSERA_CUDA_CHECK(cudaFree(it->second.back()));
  it->second.pop_back();
  kept_bytes_ -= it->first;
}

void CudaDevice::free_kept() {
  std::lock_guard<std::mutex> lk(kept_mutex_);
  while (kept_bytes_ > 0) free_kept_largest();
}

// Portable: pinned for every CUDA context of the process, so one
// registration serves all of a node's GPUs.
bool CudaDevice::pin_host(std::byte* p, std::size_t bytes) {
  cuda::set_device(ordinal_);
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  if (e == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();
    return false;
  }
  cuda::detail::check_cuda(e, "cudaHostRegister(p, bytes, cudaHostRegisterPortable)", __FILE__, __LINE__);
  return true;
}

void CudaDevice::unpin_host(std::byte* p) {
  cuda::set_device(ordinal_);
  TESSERA_CUDA_CHECK(cudaHostUnregister(p));
}

// Queues the copies of one datum's ranges on copy stream `stream`.
// Host memory need not be pinned (pin_host pins the tiles of a run). From
// pageable memory cudaMemcpyAsync is staged through a pinned buffer by the
// driver and returns only once the source may be reused (host -> device) or
// the copy is done (device -> host): it is then synchronous with respect to
// the host and does not overlap with the other copy stream as well as pinned
// memory does.
cudaStream_t CudaDevice::enqueue_copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) {
  if (stream != 0 && stream != 1)
    throw std::invalid_argument(name_ + ": copy stream " + std::to_string(stream) + " does not exist (0 or 1)");
  cuda::set_device(ordinal_);
  cudaStream_t s = copy_streams_[stream].get();
  std::size_t offset = 0;
  try {
    for (int i = 0; i < n; ++i) {
      const HostRange& r = host[i];
      if (r.bytes == 0) continue;
      if (to_device) TESSERA_CUDA_CHECK(cudaMemcpyAsync(dev + offset, r.ptr, r.bytes, cudaMemcpyHostToDevice, s));
      else TESSERA_CUDA_CHECK(cudaMemcpyAsync(r.ptr, dev + offset, r.bytes, cudaMemcpyDeviceToHost, s));
      offset += r.bytes;
    }
  } catch (...) {
    // The ranges queued before the failed one still move: the copy is reported done (failed) only once they have,
    // since its buffer and host pages may then be reused, unpinned or freed.
    if (offset > 0) (void)cudaStreamSynchronize(s);
    throw;
  }
  return s;
}

void CudaDevice::copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) {
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(enqueue_copy(stream, dev, host, n, to_device)));
}

void CudaDevice::copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) {
  cudaStream_t s = enqueue_copy(stream, dev, host, n, to_device);
  // Reported from the stream's waiter once the stream has passed this point.
  // A waiter that cannot take it (its event not created or recorded, no
  // memory for its queue) leaves the copy queued: the caller reports it done
  // (failed), so it must have ended first (as in enqueue_copy).
  try {
    waiters_[stream]->watch(s, std::move(done));
  } catch (...) {
    (void)cudaStreamSynchronize(s);
    throw;
  }
}

void CudaDevice::open_span(bool panel) {
  if (free_spans_.empty())
    throw std::logic_error(name_ + ": more than " + std::to_string(kernel_depth()) + " tasks' kernels queued at once");
  // The lane (platform/kernel_lanes.hpp): a panel on the high-priority one.
  std::vector<int> busy(lanes_.size(), 0);
  for (const auto& [mark, slot] : outstanding_) ++busy[spans_[slot].lane];
  lane_ = choose_lane(panel, busy, next_mark_);
  open_span_ = free_spans_.back();
  free_spans_.pop_back();
  Span& sp = spans_[open_span_];
  sp.lane = lane_;
  // (Timing events: 0 flags; their waits spin or yield as the stream's would.)
  sp.begin.record(lanes_[lane_].stream.get());
  span_open_ = true;
}

void CudaDevice::begin_kernels(bool panel) {
  cuda::set_device(ordinal_);
  if (span_open_) {  // a task queued nothing it ended (it failed): its span starts again here
    spans_[open_span_].begin.record(lanes_[spans_[open_span_].lane].stream.get());
    return;
  }
  open_span(panel);
}

std::uint64_t CudaDevice::end_kernels() {
  cuda::set_device(ordinal_);
  // At most kernel_depth() outstanding.
  if (outstanding_.size() >= static_cast<std::size_t>(kernel_depth()))
    throw std::logic_error(name_ + ": more than " + std::to_string(kernel_depth()) + " tasks' kernels queued at once");
  if (!span_open_) open_span(false);  // nothing since the last mark: an empty span
  Span& sp = spans_[open_span_];
  sp.end.record(lanes_[sp.lane].stream.get());  // (before any state changes: it may throw)
  span_open_ = false;
  outstanding_.emplace(next_mark_, open_span_);
  return next_mark_++;
}

std::map<std::uint64_t, std::size_t>::const_iterator CudaDevice::find_outstanding(std::uint64_t mark,
                                                                                  const char* what) const {
  const auto it = outstanding_.find(mark);
  if (it == outstanding_.end())
    throw std::logic_error(name_ + ": " + what + " for mark " + std::to_string(mark) + ", which is not outstanding");
  return it;
}

void CudaDevice::wait_kernels(std::uint64_t mark) {
  cuda::set_device(ordinal_);
  const auto it = find_outstanding(mark, "kernels waited");
  const Span& sp = spans_[it->second];
  // The mark is no longer outstanding, whatever the wait finds (a kernel's
  // error is reported once; its slot is free again).
  free_spans_.push_back(it->second);
  outstanding_.erase(it);
  // Everything queued on the task's compute stream before the mark has ended.
  sp.end.synchronize();
  float ms = 0;
  TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, sp.begin.get(), sp.end.get()));
  kernel_span_s_ += 1e-3 * ms;
}

bool CudaDevice::kernels_ended(std::uint64_t mark) {
  cuda::set_device(ordinal_);
  const cudaError_t e = cudaEventQuery(spans_[find_outstanding(mark, "kernels asked")->second].end.get());
  if (e == cudaErrorNotReady) return false;
  TESSERA_CUDA_CHECK(e);  // a kernel's error shows here as at a wait
  return true;
}

std::optional<std::uint64_t> CudaDevice::wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) {
  if (marks.empty()) throw std::logic_error(name_ + ": wait_any_kernels of no marks");
  if (marks.size() == 1 && !std::isfinite(timeout_s)) {
    spans_[find_outstanding(marks.front(), "kernels waited")->second].end.synchronize();
    return marks.front();
  }
  // The manager thread has a core of its own (000 §5.3): it polls, yielding,
  // for the first 100 us (a sleep would oversleep by the timer slack, 50 us,
  // against tile kernels of 40 us and more), then sleeps between polls.
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    for (const std::uint64_t m : marks)
      if (kernels_ended(m)) return m;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited >= timeout_s) return std::nullopt;
    if (waited < 1e-4) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::vector<Device::KernelPhase> CudaDevice::kernel_phases() const {
  std::map<std::string, KernelPhase> sum;
  const auto add = [&](const auto& phases) {
    for (const auto& [name, p] : phases) {
      KernelPhase& s = sum[name];
      s.name = name;
      s.calls += p.calls;
      s.seconds += p.seconds;
    }
  };
  for (const Lane& l : lanes_) {
    add(l.d->panel_phases());
    add(l.s->panel_phases());
  }
  std::vector<KernelPhase> out;
  for (auto& [name, p] : sum) out.push_back(std::move(p));
  return out;
}

void CudaDevice::synchronize() {
  cuda::set_device(ordinal_);
  if (span_open_) {
    wait_kernels(end_kernels());
    return;
  }
  for (const auto& l : lanes_) l.stream.synchronize();
}

}  // namespace tessera::platform

namespace tessera::kernels {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<platform::Device> make_cuda_device(int gpu_index, int ordinal, std::size_t memory_cap,
                                                   CudaKernelOptions options) {
  int n = 0;
  // Without a driver (or with one but no GPU) this fails rather than
  // reporting 0; both mean the same to the user.
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw platform::CudaError("GPU " + std::to_string(gpu_index) + ": no CUDA device is present (cudaGetDeviceCount: " +
                              cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")");
  }
  if (n == 0) throw platform::CudaError("GPU " + std::to_string(gpu_index) + ": no CUDA device is present");
  if (ordinal < 0 || ordinal >= n)
    throw platform::CudaError("GPU " + std::to_string(gpu_index) + ": CUDA device cuda:" + std::to_string(ordinal) +
                              " does not exist (" + std::to_string(n) +
                              " present: cuda:0 to cuda:" + std::to_string(n - 1) + ")");
  if (options.recursion_leaf < 0 || options.reflector_group < 0 || options.trsm_inverse_leaf < 0)
    throw std::invalid_argument("GPU " + std::to_string(gpu_index) + ": recursion leaf " +
                                std::to_string(options.recursion_leaf) + ", reflector group " +
                                std::to_string(options.reflector_group) + " or TRSM inverse leaf " +
                                std::to_string(options.trsm_inverse_leaf) + " is negative");
  return std::make_unique<platform::CudaDevice>(gpu_index, ordinal, memory_cap, options);
}

}  // namespace tessera::kernels
