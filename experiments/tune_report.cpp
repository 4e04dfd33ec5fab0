// The table `tessera tune` prints (experiments/tune_command.cpp): the
// dominant kernel's curve and plateau, every candidate with its simulated and
// real times, and the choice marked.
#include <fmt/format.h>

#include <string>

#include "base/kernel_table.hpp"
#include "experiments/tune.hpp"

namespace tessera {

std::string tune_report(const TuneResult& t) {
  const TuneRequest& r = t.request;
  std::string s = fmt::format("{} ({}), B = {}..{}:", kernel_name(t.kernel), t.curve_source, r.B_min, r.B_max);
  for (const KernelSpeed& k : t.curve) s += fmt::format(" {}:{:.1f}", k.B, k.gflops);
  s += fmt::format(" GFlop/s\nplateau B = {} ({:.0f}% of the best)\n", t.plateau, 100 * r.plateau_fraction);
  s += fmt::format("{:>11} {:>6} {:>3} {:>7} {:>13} {:>10}\n", "dist", "B", "s", "b", "simulated s", "real s");
  for (std::size_t i = 0; i < t.candidates.size(); ++i) {
    const TuneCandidate& c = t.candidates[i];
    s += fmt::format(
        "{:>11} {:>6} {:>3} {:>7} {:>13} {:>10}{}{}\n", c.gpu_columns ? "gpu-columns" : "multi-level", c.B, c.s,
        c.auto_b        ? "auto"
        : c.gpu_columns ? std::to_string(c.b)
                        : "default",
        c.predicted_s ? fmt::format("{:.4f}", *c.predicted_s) : "-", c.real_s ? fmt::format("{:.4f}", *c.real_s) : "-",
        i == t.chosen ? "  <- chosen" : "", c.failed.empty() ? "" : "  (" + c.failed + ")");
  }
  return s;
}

}  // namespace tessera
