#include "platform/native/native_platform.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "base/error.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "platform/native/start_thread.hpp"

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

void NativePlatform::set_compute_nice(int levels) {
  if (levels < 0 || levels > 19)
    throw InputError("compute threads' nice levels " + std::to_string(levels) + " must be within 0..19");
  compute_nice_ = levels;
}

namespace {

// Lowers the calling thread's priority by `levels` nice levels (Linux: a
// thread's nice value is its own; lowering one's priority needs no
// privilege, so a failure is not expected and the thread runs on as it is).
void lower_this_thread(int levels) {
#if defined(__linux__)
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  if (errno == 0) (void)setpriority(PRIO_PROCESS, tid, std::min(19, now + levels));
#else
  (void)levels;
#endif
}

}  // namespace

void NativePlatform::spawn(ThreadRole role, const std::string& name, std::function<void()> body) {
  // The preflight check counts the stacks; start_thread names what it could not foresee.
  const std::string context = " (" + std::to_string(threads_.size()) + " of this node's threads run already)";
  threads_.reserve(threads_.size() + 1);  // (before the thread starts: a push_back that throws would end a running one)
  if (role == ThreadRole::Compute && compute_nice_ > 0) {
    threads_.push_back(start_thread(name, context, [levels = compute_nice_, body = std::move(body)] {
      lower_this_thread(levels);
      body();
    }));
  } else {
    threads_.push_back(start_thread(name, context, std::move(body)));
  }
}

void NativePlatform::join_all() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void NativePlatform::run_kernel(double /*modeled_s*/, FunctionRef<void()> kernel) { kernel(); }

kernels::KernelPair NativePlatform::core_kernels() { return kernels::cpu_kernel_pair(); }

namespace {

// Other threads of this process that are running or runnable now; -1 where
// the system does not say (no /proc).
int others_running() {
#if defined(__linux__)
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it("/proc/self/task", ec);
  if (ec) return -1;
  const std::string self = std::to_string(static_cast<long>(::syscall(SYS_gettid)));
  int running = 0;
  for (const fs::directory_entry& task : it) {
    if (task.path().filename() == self) continue;
    std::ifstream in(task.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // the thread ended meanwhile
    // "tid (name) S ...": the name may hold spaces and parentheses, the state follows the last ')'.
    const std::size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++running;
  }
  return running;
#else
  return -1;
#endif
}

}  // namespace

double settle_process(double max_s) {
  const auto start = std::chrono::steady_clock::now();
  const auto waited = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (others_running() > 0 && waited() < max_s) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return waited();
}

double NativePlatform::settle() { return settle_process(kSettleMax_s); }

double NativePlatform::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

}  // namespace tessera::platform
