#pragma once
// CUDA streams, events, library handles and device buffers as move-only
// owners. Each is created on the device current on the calling thread and
// must be destroyed with that device current (the owners in this folder set
// it first). Destructors never throw: a failure there (the driver shutting
// down at process exit) leaves nothing to recover.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace tessera::cuda {

// Makes `ordinal` the calling thread's current device (cheap when it already
// is); returns it. Threads that share a device each call this first.
inline int set_device(int ordinal) {
  TESSERA_CUDA_CHECK(cudaSetDevice(ordinal));
  return ordinal;
}

// Owns one handle `H`; `destroy` releases it. The base of the types below;
// each also adopts a handle created elsewhere.
template <class H, auto destroy>
class Owner {
 public:
  Owner() = default;
  explicit Owner(H h) : h_(h) {}
  ~Owner() { reset(); }
  Owner(Owner&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  Owner& operator=(Owner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }

 private:
  void reset() noexcept {
    if (h_ != H{}) (void)destroy(std::exchange(h_, H{}));
  }
  H h_{};
};

// A stream that does not synchronize with the legacy default stream, so that
// a cudaMalloc or cudaMemcpy elsewhere does not serialize it.
class Stream : public Owner<cudaStream_t, cudaStreamDestroy> {
 public:
  using Owner::Owner;  // adopts a handle
  static Stream create() {
    cudaStream_t s = nullptr;
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
  }
  // A stream whose kernels' blocks the GPU starts ahead of lower-priority
  // streams' pending ones (`priority` within cudaDeviceGetStreamPriorityRange;
  // lower numbers are higher priorities).
  static Stream create_with_priority(int priority) {
    cudaStream_t s = nullptr;
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    return Stream(s);
  }
  void synchronize() const { TESSERA_CUDA_CHECK(cudaStreamSynchronize(get())); }
};

// An event without timing, for ordering one stream after another (flags:
// cudaEventCreateWithFlags's, e.g. cudaEventBlockingSync added for a thread
// that sleeps in synchronize()).
class Event : public Owner<cudaEvent_t, cudaEventDestroy> {
 public:
  using Owner::Owner;  // adopts a handle
  static Event create(unsigned flags = cudaEventDisableTiming) {
    cudaEvent_t e = nullptr;
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return Event(e);
  }
  void record(cudaStream_t s) const { TESSERA_CUDA_CHECK(cudaEventRecord(get(), s)); }
  // Work queued on `s` after this waits for the recorded work.
  void wait_on(cudaStream_t s) const { TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s, get(), 0)); }
  void synchronize() const { TESSERA_CUDA_CHECK(cudaEventSynchronize(get())); }
};

class CublasHandle : public Owner<cublasHandle_t, cublasDestroy> {
 public:
  using Owner::Owner;  // adopts a handle
  // A handle whose calls run on `stream`.
  static CublasHandle create(cudaStream_t stream) {
    cublasHandle_t h = nullptr;
    TESSERA_CUBLAS_CHECK(cublasCreate(&h));
    CublasHandle owned(h);
    TESSERA_CUBLAS_CHECK(cublasSetStream(h, stream));
    return owned;
  }
};

class CusolverHandle : public Owner<cusolverDnHandle_t, cusolverDnDestroy> {
 public:
  using Owner::Owner;  // adopts a handle
  // A handle whose calls run on `stream`.
  static CusolverHandle create(cudaStream_t stream) {
    cusolverDnHandle_t h = nullptr;
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&h));
    CusolverHandle owned(h);
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(h, stream));
    return owned;
  }
};

// `bytes` of device memory from cudaMalloc.
class DeviceBuffer : public Owner<void*, cudaFree> {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(void* p, std::size_t bytes) : Owner(p), bytes_(bytes) {}  // adopts p
  static DeviceBuffer create(std::size_t bytes) {
    void* p = nullptr;
    if (bytes > 0) TESSERA_CUDA_CHECK(cudaMalloc(&p, bytes));
    return DeviceBuffer(p, bytes);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : Owner(std::move(o)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    Owner::operator=(std::move(o));
    bytes_ = std::exchange(o.bytes_, 0);
    return *this;
  }
  std::byte* data() const { return static_cast<std::byte*>(get()); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};

}  // namespace tessera::cuda
