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
  // Extra time of the first calls of a kernel in a precision in a process
  // (BLAS/LAPACK initialize per routine on first use): a simulated run adds it
  // to every call of the kernel that starts before the first one has ended.
  virtual double first_call_s(std::uint16_t /*kernel*/, char /*precision*/) const { return 0; }
  // Time from a run's start to its first kernel (starting and waking threads);
  // a simulated run adds it to its first task.
  virtual double start_s() const { return 0; }
};

}  // namespace tessera
