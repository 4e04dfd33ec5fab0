#pragma once
// Native backend: std::thread, std::mutex, std::condition_variable, steady clock.
#include <chrono>
#include <thread>
#include <vector>

#include "platform/platform.hpp"

namespace tessera::platform {

// Waits, polling every millisecond, until no other thread of the process is
// running or runnable (Linux: state R in /proc/self/task/*/stat), at most
// max_s; returns the seconds waited, at once where /proc is not there. What
// Platform::settle does on this platform, for code that times kernels
// without a platform (calibration, the tuner's speed curve).
double settle_process(double max_s);

class NativePlatform final : public Platform {
 public:
  NativePlatform();
  ~NativePlatform() override;
  std::unique_ptr<Mutex> make_mutex() override;
  std::unique_ptr<Condition> make_condition() override;
  void spawn(ThreadRole role, const std::string& name, std::function<void()> body) override;
  void join_all() override;
  double now() const override;
  void run_kernel(double modeled_s, FunctionRef<void()> kernel) override;
  kernels::KernelPair core_kernels() override;
  const char* backend_name() const override { return "native"; }
  // settle_process(kSettleMax_s).
  double settle() override;
  static constexpr double kSettleMax_s = 1.0;

  // Compute threads started from now on run `levels` nice levels below the
  // thread that starts them (at most 19, Linux's lowest; 0: the same).
  // Where a node has fewer cores than threads, its service threads
  // (generator, GPU managers, device and network communication) then win a
  // shared core whenever they have work, instead of waiting for the
  // scheduler to rotate the compute threads out. Measured on the 2-core VM,
  // QR at N = 8192 on 1x2, 1 compute thread per rank (its MPI thread shares
  // the core), B = 640:
  // - with Open MPI's single copy off (tiles move in fragments, each needing
  //   a progress call on both sides, as on the lent 16-core machine): a
  //   tile's transit median / p90 7.5-9.4 / 11-13 ms at 0 levels, 5.8-6.0 /
  //   6.5-6.9 ms at 10 (2 runs each);
  // - with it (the VM's default), B = 320: 3 alternated pairs gave medians of
  //   QR 64.6 / 66.0 GFlop/s and Cholesky 64.7 / 65.1 at 0 / 10, but single
  //   pairs as far apart as 73.2 / 66.6.
  // So it stays off unless asked for (--compute-nice), until a machine
  // whose ranks starve measures it.
  void set_compute_nice(int levels);
  int compute_nice() const { return compute_nice_; }

 private:
  std::chrono::steady_clock::time_point origin_;
  int compute_nice_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace tessera::platform
