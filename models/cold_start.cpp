#include "models/cold_start.hpp"

#include <mutex>

namespace tessera::models {

double ColdStartState::extra(const KernelTimeModel& m, const KernelShape& sh, double now, double base, int domain,
                             bool warm, bool warmed) {
  std::lock_guard lk(lock_);
  double extra = 0;
  if (started_.insert(domain).second && !warmed) extra += m.start_s();
  const double fc = warm ? 0.0 : m.first_call_s(sh.kernel, sh.precision);
  if (fc > 0) {
    const auto [it, first] = warm_after_.try_emplace({domain, sh.kernel, sh.precision}, 0.0);
    if (first || now < it->second) {
      extra += fc;
      if (first) it->second = now + base + extra;
    }
  }
  return extra;
}

}  // namespace tessera::models
