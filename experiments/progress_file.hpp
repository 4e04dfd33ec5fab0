#pragma once
// --progress-file FILE: a marker for scripts and tests that must act while a
// run factors (tests/mpi_rank_killed.sh kills a rank on it rather than after
// a fixed sleep). The node creates FILE, empty, when its first factorization
// task has finished; under mpirun every rank does, the first one creates it.
// It observes the factorization only (the checks run without observers) and
// forwards every event to the observer it wraps (a trace), if any.
#include <atomic>
#include <string>

#include "runtime/node_runtime.hpp"

namespace tessera {

class ProgressFile final : public RuntimeObserver {
 public:
  // Throws InputError when FILE exists already (it would mark nothing) or
  // its directory is not writable.
  ProgressFile(std::string path, RuntimeObserver* inner);

  void on_run_start(int threads, const Executor& executor, double now) override;
  void on_run_end(double now) override;
  void on_task_start(int worker, const TaskDesc& t, double now) override;
  void on_task_end(int worker, const TaskDesc& t, double now) override;
  void on_copy(int gpu, bool to_device, DataId d, std::size_t bytes, double start, double end) override;
  void on_message(int from, int to, DataId d, std::size_t bytes, double start, double end) override;

 private:
  std::string path_;
  RuntimeObserver* inner_;
  std::atomic<bool> marked_{false};
};

}  // namespace tessera
