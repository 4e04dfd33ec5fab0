#include "platform/native/native_platform.hpp"

#include <condition_variable>
#include <mutex>
#include <string>
#include <system_error>

#include "base/error.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"

namespace tessera::platform {
namespace {

class NativeMutex final : public Mutex {
 public:
  void lock() override { m_.lock(); }
  void unlock() override { m_.unlock(); }
  std::mutex& raw() { return m_; }

 private:
  std::mutex m_;
};

class NativeCondition final : public Condition {
 public:
  void wait(Mutex& m) override {
    // The caller holds the mutex; adopt it for the wait and hand it back locked.
    std::unique_lock<std::mutex> lk(static_cast<NativeMutex&>(m).raw(), std::adopt_lock);
    cv_.wait(lk);
    lk.release();
  }
  void notify_one() override { cv_.notify_one(); }
  void notify_all() override { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace

NativePlatform::NativePlatform() : origin_(std::chrono::steady_clock::now()) {}
NativePlatform::~NativePlatform() { join_all(); }

std::unique_ptr<Mutex> NativePlatform::make_mutex() { return std::make_unique<NativeMutex>(); }
std::unique_ptr<Condition> NativePlatform::make_condition() { return std::make_unique<NativeCondition>(); }

void NativePlatform::spawn(const std::string& name, std::function<void()> body) {
  try {
    threads_.emplace_back(std::move(body));
  } catch (const std::system_error& e) {
    // EAGAIN: no room for the thread's stack (an address-space limit) or a
    // process or thread limit reached. The preflight check counts the
    // stacks; this names what it could not foresee.
    throw OutOfMemory("cannot start the thread '" + name + "' (" + std::to_string(threads_.size()) +
                      " of this node's threads run already): " + e.what() +
                      " (an address-space limit, ulimit -v, or a limit on processes, ulimit -u)");
  }
}

void NativePlatform::join_all() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void NativePlatform::run_kernel(double /*modeled_s*/, FunctionRef<void()> kernel) { kernel(); }

kernels::KernelPair NativePlatform::core_kernels() { return kernels::cpu_kernel_pair(); }

double NativePlatform::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

}  // namespace tessera::platform
