#pragma once
// The seam between the runtime and the world it runs in (see DESIGN.md).
//
// The runtime only ever blocks through these interfaces, so the same node
// runtime runs on OS threads (platform/native) or, later, as SimGrid actors.
// Short critical sections that never block (per-tile task lists) use a
// spinlock instead: a simulated node runs its actors one at a time and never
// yields inside one, so such a lock can not be held across a context switch.
#include <functional>
#include <memory>
#include <string>

namespace tessera {
class Executor;
class WorkerContext;
struct TaskDesc;
}  // namespace tessera

namespace tessera::platform {

class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
};

class Condition {
 public:
  virtual ~Condition() = default;
  // Atomically releases `m` (locked by the caller), waits, and re-locks it.
  virtual void wait(Mutex& m) = 0;
  virtual void notify_one() = 0;
  virtual void notify_all() = 0;
};

// RAII lock for a platform mutex.
class Lock {
 public:
  explicit Lock(Mutex& m) : m_(m) { m_.lock(); }
  ~Lock() { m_.unlock(); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  Mutex& m_;
};

// Threads, synchronization and time for the threads of one node.
class Platform {
 public:
  virtual ~Platform() = default;
  virtual std::unique_ptr<Mutex> make_mutex() = 0;
  virtual std::unique_ptr<Condition> make_condition() = 0;
  // Starts a thread of this node running `body`; `name` shows in traces.
  virtual void spawn(const std::string& name, std::function<void()> body) = 0;
  // Waits for every thread started with spawn().
  virtual void join_all() = 0;
  // Seconds since an arbitrary origin fixed for the platform's lifetime.
  virtual double now() const = 0;
  // Runs one task's kernel on the calling thread. The native platform calls
  // it; a simulated platform lets `modeled_s` seconds of simulated time pass
  // and calls the real kernel only when asked to compute on real data.
  virtual void run_kernel(Executor& e, const TaskDesc& t, WorkerContext& w, double modeled_s) = 0;
  // Short name for outputs: "native", "sim".
  virtual const char* backend_name() const = 0;
};

}  // namespace tessera::platform
