#include "models/lu_split.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera::models {
namespace {

std::string show(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

void check_speed(const char* name, double v) {
  if (!std::isfinite(v) || !(v > 0))
    throw std::invalid_argument(std::string("LU split (002 eq. 1): ") + name + " = " + show(v) +
                                " must be a finite number > 0");
}

void check_cores(int cores) {
  if (cores < 1)
    throw std::invalid_argument("LU split (002 eq. 1): P (CPU cores) = " + std::to_string(cores) + " must be >= 1");
}

}  // namespace

double cpu_column_fraction(int cores, double g1, double g2) {
  check_cores(cores);
  check_speed("g1 (one core's speed)", g1);
  check_speed("g2 (the GPU's speed)", g2);
  const double cpu = static_cast<double>(cores) * g1;
  return cpu / (cpu + g2);
}

std::int64_t cpu_block_columns(std::int64_t n_k, int cores, double g1, double g2) {
  if (n_k < 1)
    throw std::invalid_argument("LU split (002 eq. 1): N_K (block columns) = " + std::to_string(n_k) + " must be >= 1");
  const double exact = static_cast<double>(n_k) * cpu_column_fraction(cores, g1, g2);
  // Down, but an integer in exact arithmetic stays that integer.
  const auto d = static_cast<std::int64_t>(std::floor(exact * (1 + 1e-9)));
  if (n_k == 1) return 1;
  return std::clamp<std::int64_t>(d, 1, n_k - 1);
}

std::int64_t cpu_block_columns_from_peaks(std::int64_t n_k, int cores, double core_peak, double gpu_peak) {
  check_speed("one core's peak", core_peak);
  check_speed("the GPU's peak", gpu_peak);
  return cpu_block_columns(n_k, cores, kCpuPeakFraction * core_peak, kGpuPeakFraction * gpu_peak);
}

std::int64_t cpu_block_columns_whole_run(std::int64_t p, std::int64_t q, int cores, double g1, double g2) {
  check_cores(cores);
  check_speed("g1 (one core's speed)", g1);
  check_speed("g2 (the GPU's speed)", g2);
  if (q < 1 || p < q)
    throw std::invalid_argument("LU split (whole run): " + std::to_string(p) + " x " + std::to_string(q) +
                                " tiles: needs q >= 1 block columns and p >= q tile rows");
  if (q == 1) return 1;
  // Per step k: the panel, then trailing columns j = k+1..q-1, the first
  // d - 1 of them the CPUs'. Sums over k in closed form per d would do; q
  // is at most a few thousand, so an O(q^2) table is simpler.
  std::int64_t best_d = 1;
  double best_t = 0;
  for (std::int64_t d = 1; d < q; ++d) {
    double cpu = 0, gpu = 0;
    for (std::int64_t k = 0; k < q; ++k) {
      const double mk = static_cast<double>(p - k), update = 1.0 + 2.0 * (mk - 1);
      cpu += mk - 1.0 / 3.0;
      const std::int64_t trailing = q - 1 - k, on_cpu = std::min(trailing, d - 1);
      cpu += static_cast<double>(on_cpu) * update;
      gpu += static_cast<double>(trailing - on_cpu) * update;
    }
    const double t = std::max(cpu / (static_cast<double>(cores) * g1), gpu / g2);
    if (d == 1 || t < best_t) {
      best_t = t;
      best_d = d;
    }
  }
  return best_d;
}

}  // namespace tessera::models
