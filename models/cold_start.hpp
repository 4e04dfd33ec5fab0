#pragma once
// Start-up costs as a decorator of a kernel time model: a run's first task
// pays the model's start_s (starting and waking threads), and every call of a
// kernel in a precision that starts before that kernel's first call has
// ended pays first_call_s (BLAS/LAPACK initialize per routine on first use,
// and concurrent first calls all wait for it). The models of one node's host
// and GPUs share one ColdStartState: the process initializes once.
//
// One state per node and run (the driver makes them): a simulated cluster
// runs many nodes in one process, each with its own.
#include <map>
#include <memory>
#include <utility>

#include "base/spinlock.hpp"
#include "platform/kernel_time_model.hpp"

namespace tessera::models {

class ColdStartState {
 public:
  // The extra seconds of a call of `sh` starting at `now` whose warm duration is `base`.
  double extra(const KernelTimeModel& m, const KernelShape& sh, double now, double base);

 private:
  SpinLock lock_;
  bool started_ = false;
  // (kernel, precision) -> when its first call ends.
  std::map<std::pair<std::uint16_t, char>, double> warm_after_;
};

class ColdStartModel final : public KernelTimeModel {
 public:
  ColdStartModel(const KernelTimeModel& inner, std::shared_ptr<ColdStartState> state)
      : inner_(inner), state_(std::move(state)) {}
  double seconds(const KernelShape& s) const override { return inner_.seconds(s); }
  double seconds_at(const KernelShape& s, double now) const override {
    const double base = inner_.seconds(s);
    return base + state_->extra(inner_, s, now, base);
  }
  // The inner model's time for the task (with its variation, if it draws
  // one), plus the start-up costs.
  double seconds_for(const KernelShape& s, double now, std::uint64_t task) const override {
    const double base = inner_.seconds_for(s, now, task);
    return base + state_->extra(inner_, s, now, base);
  }
  double first_call_s(std::uint16_t kernel, char precision) const override {
    return inner_.first_call_s(kernel, precision);
  }
  double start_s() const override { return inner_.start_s(); }
  double task_s() const override { return inner_.task_s(); }

 private:
  const KernelTimeModel& inner_;
  std::shared_ptr<ColdStartState> state_;
};

}  // namespace tessera::models
