#include "models/kernel_noise.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "base/error.hpp"
#include "base/task.hpp"
#include "models/kernel_model.hpp"

namespace tessera::models {

double standard_normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t h = mix64(mix64(mix64(seed) ^ a) ^ b);
  // Two uniforms in (0, 1) from 53 bits each; never 0, so the log is finite.
  const double u1 = (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = (static_cast<double>(mix64(h) >> 11) + 0.5) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::map<std::pair<std::uint16_t, char>, double> measured_sigmas(const KernelTimeModel& model,
                                                                 const std::string& what) {
  const auto* cal = dynamic_cast<const CalibratedModel*>(&model);
  if (!cal)
    throw InputError(what +
                     ": the machine file's model has no measured spreads (it is not a calibration): give a number");
  // Per (kernel, precision): the entries' sigmas, in-run ones apart.
  std::map<std::pair<std::uint16_t, char>, std::pair<std::vector<double>, std::vector<double>>> found;
  constexpr double kQuartileSpan = 2 * 0.6744897501960817;  // z(3/4) - z(1/4)
  for (const CalibratedModel::Entry& e : cal->entries()) {
    if (!(e.median_s > 0) || !(e.spread_s > 0) || e.spread_s >= 2 * e.median_s) continue;
    const double sigma = std::log((e.median_s + e.spread_s / 2) / (e.median_s - e.spread_s / 2)) / kQuartileSpan;
    auto& [in_run, alone] = found[{e.kernel, e.precision}];
    (e.in_run ? in_run : alone).push_back(sigma);
  }
  if (found.empty())
    throw InputError(what + ": the calibration records no spread (spread_s) for any kernel: give a number");
  std::map<std::pair<std::uint16_t, char>, double> out;
  for (auto& [key, lists] : found) {
    std::vector<double>& v = lists.first.empty() ? lists.second : lists.first;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    out[key] = v[v.size() / 2];
  }
  return out;
}

void take_measured_sigmas(KernelNoise& noise, const KernelTimeModel& core, const KernelTimeModel* gpu) {
  if (!noise.sigma_from_model) return;
  noise.core_sigmas = measured_sigmas(core, "--kernel-noise auto (the cores' model)");
  if (gpu) noise.gpu_sigmas = measured_sigmas(*gpu, "--kernel-noise auto (the GPUs' model)");
}

NoisyModel::NoisyModel(const KernelTimeModel& inner, const KernelNoise& noise, int node, int device)
    : inner_(inner), noise_(noise), device_(device),
      stream_(mix64(mix64(noise.seed) ^ mix64(static_cast<std::uint64_t>(node) + 1)) ^
              static_cast<std::uint64_t>(device)) {
  if (!(noise.sigma >= 0) || !(noise.node_sigma >= 0) || !std::isfinite(noise.sigma) ||
      !std::isfinite(noise.node_sigma))
    throw std::logic_error("NoisyModel: sigma " + std::to_string(noise.sigma) + ", node sigma " +
                           std::to_string(noise.node_sigma));
  // One factor per node (the host's and its GPUs' alike: the same draw for device 0 and 1).
  if (noise.node_sigma > 0)
    node_factor_ = std::exp(noise.node_sigma *
                            standard_normal(noise.seed, 0x6E6F6465ull /* "node" */, static_cast<std::uint64_t>(node)));
  if (noise.sigma_from_model && sigmas().empty())
    throw std::logic_error("NoisyModel: --kernel-noise auto without the model's sigmas (take_measured_sigmas)");
}

double NoisyModel::sigma(std::uint16_t kernel, char precision) const {
  if (!noise_.sigma_from_model) return noise_.sigma;
  const auto it = sigmas().find({kernel, precision});
  return it == sigmas().end() ? 0.0 : it->second;
}

double NoisyModel::seconds_for(const KernelShape& s, double now, std::uint64_t task) const {
  const double base = inner_.seconds_for(s, now, task) * node_factor_;
  const double sg = sigma(s.kernel, s.precision);
  if (!(sg > 0)) return base;
  return base * std::exp(sg * standard_normal(stream_, task, s.kernel));
}

}  // namespace tessera::models
