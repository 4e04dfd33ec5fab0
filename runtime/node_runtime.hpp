#pragma once
// One node's runtime: a task-generation thread runs a serial algorithm that
// APPENDs into the task window; compute threads pop ready tasks, run their
// kernel and FIRE their successors.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "platform/platform.hpp"
#include "runtime/ready_queue.hpp"
#include "runtime/task.hpp"

namespace tessera {

// Per-worker state handed to kernels: its index and a reusable scratch buffer.
class WorkerContext {
 public:
  explicit WorkerContext(int id) : id_(id) {}
  int id() const { return id_; }
  // Scratch space for at least `count` elements of T, 64-byte aligned, valid until the next call.
  template <class T>
  T* scratch(std::size_t count) {
    const std::size_t bytes = count * sizeof(T) + 64;
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    auto p = reinterpret_cast<std::uintptr_t>(scratch_.data());
    return reinterpret_cast<T*>((p + 63) & ~std::uintptr_t{63});
  }

 private:
  int id_;
  std::vector<unsigned char> scratch_;
};

// Runs the kernel of a task. Implemented by each algorithm for its data.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void execute(const TaskDesc& t, WorkerContext& w) = 0;
  // The call's dimensions, for kernel models (simulated runs, traces).
  virtual KernelShape shape(const TaskDesc& t) const { return KernelShape{t.kernel}; }
};

// Modeled duration of a kernel call (models/ implements it; simulated runs use it).
class KernelTimeModel {
 public:
  virtual ~KernelTimeModel() = default;
  virtual double seconds(const KernelShape& s) const = 0;
  // Extra time of the first calls of a kernel in a precision in a process
  // (BLAS/LAPACK initialize per routine on first use): a simulated run adds it
  // to every call of the kernel that starts before the first one has ended.
  virtual double first_call_s(std::uint16_t /*kernel*/, char /*precision*/) const { return 0; }
  // Time from a run's start to its first kernel (starting and waking threads);
  // a simulated run adds it to its first task.
  virtual double start_s() const { return 0; }
};

// Hooks called around every kernel (tracing, statistics). on_task_start and
// on_task_end run on the worker that runs the task, concurrently on a native
// platform; on_run_start runs before any worker starts, on_run_end after all
// have ended.
class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;
  // `executor` stays valid until on_run_end (its shape() names a task's dimensions).
  virtual void on_run_start(int /*threads*/, const Executor& /*executor*/, double /*now*/) {}
  virtual void on_run_end(double /*now*/) {}
  virtual void on_task_start(int /*worker*/, const TaskDesc& /*t*/, double /*now*/) {}
  virtual void on_task_end(int /*worker*/, const TaskDesc& /*t*/, double /*now*/) {}
};

struct RuntimeOptions {
  int threads = 1;                      // compute threads
  std::size_t window_capacity = 16384;  // unfinished tasks held at most
  ReadyPolicy policy = ReadyPolicy::Priority;
  std::uint64_t seed = 1;               // for ReadyPolicy::Random
  RuntimeObserver* observer = nullptr;
  // When set, every kernel's modeled duration is handed to the platform
  // (a simulated platform advances its clock by it).
  const KernelTimeModel* model = nullptr;
};

struct RunStats {
  std::uint64_t tasks = 0;
  double elapsed_s = 0;
  std::vector<double> busy_s;  // per compute thread: time spent in kernels
};

using Generator = std::function<void(TaskSink&)>;

class NodeRuntime {
 public:
  NodeRuntime(platform::Platform& platform, RuntimeOptions options);

  // Runs `generate` on the task-generation thread and every task it inserts on
  // the compute threads; returns when all have finished. The first exception a
  // kernel throws cancels the remaining kernels and is rethrown here.
  RunStats run(std::size_t n_data, const Generator& generate, Executor& executor);

 private:
  platform::Platform& platform_;
  RuntimeOptions options_;
};

// Runs the tasks one after the other in serial order on the calling thread:
// the reference every parallel execution must reproduce.
class SequentialSink final : public TaskSink {
 public:
  explicit SequentialSink(Executor& e) : executor_(e), worker_(0) {}
  void insert(const TaskDesc& t) override { executor_.execute(t, worker_); }

 private:
  Executor& executor_;
  WorkerContext worker_;
};

}  // namespace tessera
