#include "experiments/calibrate_overlap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "base/kernel_table.hpp"
#include "experiments/calibrate.hpp"

namespace tessera::kernels {

OverlapMeasurement overlap_from_times(OverlapMeasurement m) {
  if (m.gemm_calls < 1 || !(m.panel_s > 0) || !(m.gemms_s > 0) || !(m.together_s > 0))
    throw std::logic_error("overlap_from_times: times and GEMM calls must be positive");
  const KernelShape gemm{kGsmm, m.panel.precision, m.panel.m, m.panel.n, m.panel.k > 0 ? m.panel.k : m.panel.n, 0};
  const double panel_rate = kernel_flops(m.panel) / m.panel_s;
  const double gemm_rate = m.gemm_calls * kernel_flops(gemm) / m.gemms_s;
  m.share = panel_rate / gemm_rate;
  if (!(m.share < 1) || m.gemms_s < m.panel_s) {
    m.used = 1;
    m.overlap = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  m.used = std::clamp((m.together_s - m.gemms_s) / m.panel_s, m.share, 1.0);
  m.overlap = std::clamp((1 - m.used) / (1 - m.share), 0.0, 1.0);
  return m;
}

double median_overlap(const std::vector<OverlapMeasurement>& m) {
  std::vector<double> v;
  for (const OverlapMeasurement& x : m)
    if (!std::isnan(x.overlap) && x.share <= kMaxShareForOverlap) v.push_back(x.overlap);
  if (v.empty())
    throw std::runtime_error(
        "stream overlap: no measured kernel at most half of GEMM's rate beside GEMMs that outlast it");
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

std::vector<KernelShape> overlap_panels(const std::vector<KernelShape>& shapes, std::int64_t max_order) {
  std::map<std::pair<std::uint16_t, char>, KernelShape> largest;
  for (const KernelShape& s : shapes) {
    if (!panel_kernel(s.kernel) || !(kernel_flops(s) > 0) || s.m > max_order || s.n > max_order) continue;
    auto [it, fresh] = largest.try_emplace({s.kernel, s.precision}, s);
    if (!fresh && s.m * s.n > it->second.m * it->second.n) it->second = s;
  }
  std::vector<KernelShape> out;
  for (const auto& [key, s] : largest) out.push_back(s);
  return out;
}

}  // namespace tessera::kernels
