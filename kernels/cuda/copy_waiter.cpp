#include "kernels/cuda/copy_waiter.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "kernels/cuda/cuda_api.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "platform/native/start_thread.hpp"

namespace tessera::cuda {

CopyWaiter::CopyWaiter(int ordinal, std::string what)
    : ordinal_(ordinal), what_(std::move(what)),
      thread_(platform::start_thread(what_, " (its copy waiter)", [this] { loop(); })) {}

CopyWaiter::~CopyWaiter() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

Event CopyWaiter::take_event() {
  if (spare_.empty()) return Event::create(cudaEventDisableTiming | cudaEventBlockingSync);
  Event e = std::move(spare_.back());
  spare_.pop_back();
  return e;
}

void CopyWaiter::watch(cudaStream_t stream, Done done) {
  std::unique_lock<std::mutex> lk(m_);
  Event e = take_event();
  e.record(stream);  // throws CudaError if the stream cannot take it: nothing queued then
  queue_.push_back(Item{std::move(e), std::move(done)});
  lk.unlock();
  cv_.notify_one();
}

void CopyWaiter::loop() {
  // Events belong to the device current where they were made; waiting needs
  // no current device, but an error's text is fetched here.
  (void)cudaSetDevice(ordinal_);
  std::unique_lock<std::mutex> lk(m_);
  for (;;) {
    cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every copy reported
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    // The stream reaches the event once the copies queued before it ended
    // (they complete in stream order, so the queue's order is theirs).
    const cudaError_t status = cudaEventSynchronize(item.event.get());
    std::exception_ptr error;
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      error =
          std::make_exception_ptr(platform::CudaError(what_ +
                                                      ": a copy failed (cudaMemcpyAsync or an earlier call "
                                                      "on the device): " +
                                                      cudaGetErrorName(status) + ": " + cudaGetErrorString(status)));
    }
    try {
      item.done(error);
    } catch (const std::exception& x) {
      // The runtime's report cannot fail; if it did, nobody would hear of the copy again.
      std::fprintf(stderr, "tessera: error: a GPU copy's completion failed: %s\n", x.what());
      std::abort();
    } catch (...) {
      std::fputs("tessera: error: a GPU copy's completion failed\n", stderr);
      std::abort();
    }
    lk.lock();
    spare_.push_back(std::move(item.event));
  }
}

}  // namespace tessera::cuda
