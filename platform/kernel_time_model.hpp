#pragma once
// The kernel time model interface: the modeled duration of one kernel call
// from its kernel, precision and shape. models/ implements it (from machine
// files and calibrations); a simulated platform lets that much simulated
// time pass per kernel.
#include <cstdint>

#include "base/task.hpp"

namespace tessera {

class KernelTimeModel {
 public:
  virtual ~KernelTimeModel() = default;
  virtual double seconds(const KernelShape& s) const = 0;
  // The duration of a call that starts at `now` (seconds on the platform's
  // clock): seconds(s), unless the model depends on what ran before
  // (models/cold_start.hpp adds start-up costs). The runtime calls this one.
  virtual double seconds_at(const KernelShape& s, double /*now*/) const { return seconds(s); }
  // Extra time of the first calls of a kernel in a precision in a process
  // (BLAS/LAPACK initialize per routine on first use): models/cold_start.hpp
  // adds it to every call of the kernel that starts before the first one has ended.
  virtual double first_call_s(std::uint16_t /*kernel*/, char /*precision*/) const { return 0; }
  // Time from a run's start to its first kernel (starting and waking threads);
  // models/cold_start.hpp adds it to a run's first task.
  virtual double start_s() const { return 0; }
  // The runtime's own time per task on a compute thread, beside the kernel:
  // releasing the task's successors, taking the next task from the queue,
  // the hand-offs between them. A native run spends it between one task's
  // end and the next one's start (medians of 0.4-0.65 us on the 2-core
  // development VM, 2026-11-27); a simulated compute thread spends it after
  // each task.
  virtual double task_s() const { return 0; }
};

}  // namespace tessera
