#include "models/cold_start.hpp"

#include <mutex>

namespace tessera::models {
namespace {
constexpr double kSlack_s = 1e-9;
}  // namespace

double ColdStartState::extra(const KernelTimeModel& m, const KernelShape& sh, double now, double base, int domain,
                             bool warm, bool warmed) {
  std::lock_guard lk(lock_);
  double extra = 0;
  if (started_.insert(domain).second && !warmed) extra += m.start_s();
  const double fc = warm ? 0.0 : m.first_call_s(sh.kernel, sh.precision);
  if (fc > 0) {
    // A call that starts while the first one runs waits for it and pays as
    // well; one that starts as it ends (the next task of its lane, whose
    // start the simulator computed as the first's start plus its duration,
    // perhaps rounded otherwise) does not: 1 ns of slack.
    const auto [it, first] = warm_after_.try_emplace({domain, sh.kernel, sh.precision}, 0.0);
    if (first || now < it->second - kSlack_s) {
      extra += fc;
      if (first) it->second = now + (base + extra);
    }
  }
  return extra;
}

}  // namespace tessera::models
