#pragma once
// Start-up costs as a decorator of a kernel time model: a run's first task
// on a domain pays the model's start_s (starting and waking threads), and
// every call of a kernel in a precision on a domain that starts before that
// kernel's first call there has ended pays first_call_s (BLAS/LAPACK
// initialize per routine on first use, and concurrent first calls all wait
// for it). A domain is what initializes once: the node's host (0), or one
// GPU (g >= 1), whose CUDA context loads a kernel's module on its first
// launch (since CUDA 12.2, "Lazy Loading" in the CUDA C++ Programming Guide)
// and whose library handles size their workspaces on first use, apart from
// the host's and from the other GPUs'. The models of one node's host and
// GPUs share one ColdStartState.
//
// `warm`: kernels called before the run's clock starts (a GPU's warm-up,
// experiments/gpu_warmup.hpp), which pay no first-call cost; a kernel the
// warm-up cannot call still pays its own. A warmed domain (`warm` not
// empty) has started before the clock too: it pays no start_s.
//
// One state per node and run (the driver makes them): a simulated cluster
// runs many nodes in one process, each with its own.
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "base/spinlock.hpp"
#include "platform/kernel_time_model.hpp"

namespace tessera::models {

class ColdStartState {
 public:
  // The extra seconds of a call of `sh` on `domain` starting at `now` whose
  // warm duration is `base` (`warm`: the kernel was called before the clock;
  // `warmed`: the domain was, so its start-up is paid already).
  double extra(const KernelTimeModel& m, const KernelShape& sh, double now, double base, int domain = 0,
               bool warm = false, bool warmed = false);

 private:
  SpinLock lock_;
  std::set<int> started_;  // domains whose first task has started
  // (domain, kernel, precision) -> when its first call ends.
  std::map<std::tuple<int, std::uint16_t, char>, double> warm_after_;
};

class ColdStartModel final : public KernelTimeModel {
 public:
  ColdStartModel(const KernelTimeModel& inner, std::shared_ptr<ColdStartState> state, int domain = 0,
                 std::set<std::uint16_t> warm = {})
      : inner_(inner), state_(std::move(state)), domain_(domain), warm_(std::move(warm)) {}
  double seconds(const KernelShape& s) const override { return inner_.seconds(s); }
  double seconds_at(const KernelShape& s, double now) const override {
    const double base = inner_.seconds(s);
    return base + state_->extra(inner_, s, now, base, domain_, warm_.count(s.kernel) > 0, !warm_.empty());
  }
  // The inner model's time for the task (with its variation, if it draws
  // one), plus the start-up costs.
  double seconds_for(const KernelShape& s, double now, std::uint64_t task) const override {
    const double base = inner_.seconds_for(s, now, task);
    return base + state_->extra(inner_, s, now, base, domain_, warm_.count(s.kernel) > 0, !warm_.empty());
  }
  double first_call_s(std::uint16_t kernel, char precision) const override {
    return inner_.first_call_s(kernel, precision);
  }
  double start_s() const override { return inner_.start_s(); }
  double task_s() const override { return inner_.task_s(); }

 private:
  const KernelTimeModel& inner_;
  std::shared_ptr<ColdStartState> state_;
  int domain_;
  std::set<std::uint16_t> warm_;
};

}  // namespace tessera::models
