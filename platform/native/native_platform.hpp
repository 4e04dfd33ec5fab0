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
  void spawn(const std::string& name, std::function<void()> body) override;
  void join_all() override;
  double now() const override;
  void run_kernel(double modeled_s, FunctionRef<void()> kernel) override;
  kernels::KernelPair core_kernels() override;
  const char* backend_name() const override { return "native"; }
  // settle_process(kSettleMax_s).
  double settle() override;
  static constexpr double kSettleMax_s = 1.0;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<std::thread> threads_;
};

}  // namespace tessera::platform
