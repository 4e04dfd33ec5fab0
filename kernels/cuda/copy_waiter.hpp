#pragma once
// Reports the end of each copy queued on one CUDA stream, in stream order,
// from a thread of its own that waits on an event recorded after the copy.
//
// Why not a stream callback (cudaStreamAddCallback, cudaLaunchHostFunc): a
// host function holds back every later operation of its stream until it has
// run (CUDA Runtime API, "Stream Management"), so with two copies queued per
// stream the second could start only after the driver's callback thread had
// woken up and returned, and the link idled for that time after every copy;
// the callback's end time also carried that wake-up into the copy time the
// runtime reports (bytes_in / copy_in_s against the link's bandwidth, issue
// 15 point 1). An event does not hold back its stream: the second copy
// starts as the first ends, and this thread's wake-up only delays the
// report.
//
// The events are created with cudaEventBlockingSync, so the thread sleeps
// while it waits instead of spinning on a core the compute threads use.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_raii.hpp"

namespace tessera::cuda {

class CopyWaiter {
 public:
  using Done = std::function<void(std::exception_ptr)>;

  // A waiter for streams of CUDA device `ordinal`; `what` names them in errors
  // ("GPU 1 (..., cuda:0) copy stream 0").
  CopyWaiter(int ordinal, std::string what);
  // Reports the copies still queued (waiting for them), then stops.
  ~CopyWaiter();
  CopyWaiter(const CopyWaiter&) = delete;
  CopyWaiter& operator=(const CopyWaiter&) = delete;

  // Calls done(nullptr) once the work queued on `stream` so far has ended,
  // done(error) if it failed; after the reports of the streams' earlier
  // watch() calls, on this waiter's thread. done must not throw.
  void watch(cudaStream_t stream, Done done);

 private:
  struct Item {
    Event event;
    Done done;
  };
  void loop();
  Event take_event();  // with the lock held

  int ordinal_;
  std::string what_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::vector<Event> spare_;  // events whose report is done, for reuse
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace tessera::cuda
