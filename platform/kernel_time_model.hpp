#pragma once
// The kernel time model interface: the modeled duration of one kernel call
// from its kernel, precision and shape. models/ implements it (from machine
// files and calibrations); a simulated platform lets that much simulated
// time pass per kernel.
#include <algorithm>
#include <cstdint>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/task.hpp"

namespace tessera {

class KernelTimeModel {
 public:
  virtual ~KernelTimeModel() = default;
  virtual double seconds(const KernelShape& s) const = 0;
  // The duration of a call that starts at `now` (seconds on the platform's
  // clock): seconds(s), unless the model depends on what ran before
  // (models/cold_start.hpp adds start-up costs).
  virtual double seconds_at(const KernelShape& s, double /*now*/) const { return seconds(s); }
  // The duration of the call of the task whose base/task.hpp task_key is
  // `task`: seconds_at(s, now), unless the model draws a per-task variation
  // (models/kernel_noise.hpp). The runtime calls this one.
  virtual double seconds_for(const KernelShape& s, double now, std::uint64_t /*task*/) const {
    return seconds_at(s, now);
  }
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

// The share of its device's throughput a call takes while it runs, for a
// simulated device that runs several tasks' kernels side by side (several
// compute streams: platform/device.hpp model_kernels): the call's rate in the
// model over the same model's GEMM (GSMM) rate at the call's dimensions (k =
// n for a kernel without k), at most 1, at least kMinDeviceShare. The
// assumption, stated: a kernel that reaches a fraction of GEMM's rate on its
// own leaves the rest of the device idle (a panel's column-by-column steps,
// a triangular solve's dependent blocks), and another stream's kernels can
// use that rest; a kernel without a flop count (copies, pivots) is taken to
// fill the device, and so is one whose model has no GEMM at its dimensions
// (a file calibrated without GSMM in that precision). Two GEMM-rate kernels
// side by side then share it half and half, and a 5%-rate panel beside a
// GEMM slows the GEMM by 5%.
inline constexpr double kMinDeviceShare = 0.01;
inline double device_share(const KernelTimeModel& model, const KernelShape& s) {
  const double flops = kernel_flops(s);
  if (!(flops > 0) || s.kernel == kGsmm) return 1.0;
  const KernelShape gemm{kGsmm, s.precision, s.m, s.n, s.k > 0 ? s.k : s.n, 0};
  double t_gemm = 0;
  try {
    t_gemm = model.seconds(gemm);
  } catch (const InputError&) {
    return 1.0;
  }
  const double t = model.seconds(s), gemm_flops = kernel_flops(gemm);
  if (!(t > 0) || !(t_gemm > 0) || !(gemm_flops > 0)) return 1.0;
  return std::clamp((flops / t) / (gemm_flops / t_gemm), kMinDeviceShare, 1.0);
}

}  // namespace tessera
