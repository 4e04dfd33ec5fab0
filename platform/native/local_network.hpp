#pragma once
// An in-process cluster: N nodes in one process, each with a communication
// thread that hands the messages queued for it to its runtime. Messages are
// moved, never copied. Used by tests (several node runtimes, each on its own
// NativePlatform, in one process) and by the command line for --nodes runs
// on one machine without MPI.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "platform/network.hpp"

namespace tessera::platform {

class LocalCluster {
 public:
  explicit LocalCluster(int nodes);
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  int nodes() const { return static_cast<int>(endpoints_.size()); }
  NodeNetwork& node(int i);

 private:
  class Endpoint;
  friend class Endpoint;
  // allreduce: the sum is built under the lock, round by round.
  std::mutex reduce_mutex_;
  std::condition_variable reduce_cond_;
  std::vector<double> reduce_sum_;
  int reduce_arrived_ = 0, reduce_left_ = 0;
  std::uint64_t reduce_round_ = 0;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace tessera::platform
