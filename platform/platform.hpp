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

#include "base/function_ref.hpp"
#include "kernels/tile_kernels_api.hpp"

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

// What a thread started by Platform::spawn does for its node (000 §5.1's
// thread roles; the network's own communication thread is the network's).
// A platform may treat them differently: the native one can run the compute
// threads at a lower priority (NativePlatform::set_compute_nice), so that
// the others, which wait mostly and then have latency-critical work, get a
// shared core at once.
enum class ThreadRole { Generator, Compute, GpuManager, DeviceComm };

// Threads, synchronization and time for the threads of one node.
class Platform {
 public:
  virtual ~Platform() = default;
  virtual std::unique_ptr<Mutex> make_mutex() = 0;
  virtual std::unique_ptr<Condition> make_condition() = 0;
  // Starts a thread of this node running `body`; `name` shows in traces.
  virtual void spawn(ThreadRole role, const std::string& name, std::function<void()> body) = 0;
  // Waits for every thread started with spawn().
  virtual void join_all() = 0;
  // Seconds since an arbitrary origin fixed for the platform's lifetime.
  virtual double now() const = 0;
  // Runs one task's kernel, `kernel`, on the calling thread. The native
  // platform calls it; a simulated platform lets `modeled_s` seconds of
  // simulated time pass and calls the real kernel only when asked to compute
  // on real data.
  virtual void run_kernel(double modeled_s, FunctionRef<void()> kernel) = 0;
  // Kernels for one of this node's cores, owned by the compute thread that
  // runs them (they hold workspace).
  virtual kernels::KernelPair core_kernels() = 0;
  // Short name for outputs: "native", "sim".
  virtual const char* backend_name() const = 0;
  // Called before a timed run, with no thread of the run started yet: lets
  // what the process left running stop first, so that the run's threads
  // have the cores to themselves, and returns the seconds it waited. The
  // native platform waits until no other thread of the process is running
  // (a BLAS library's idle pool threads spin for a while after the library
  // starts and after each parallel call: OpenBLAS's for 2^28 cycles, about
  // 0.1 s); a simulated platform has nothing to wait for.
  virtual double settle() { return 0; }
};

}  // namespace tessera::platform
