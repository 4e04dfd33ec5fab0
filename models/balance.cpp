#include "models/balance.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "models/kernel_model.hpp"

namespace tessera::models {

double host_share_width(double B, double f_core, int cores, double f_gpu, int gpus) {
  const double host = f_core * cores, gpu = f_gpu * gpus;
  return B * host / (host + gpu);
}

std::int64_t auto_narrow_width(std::int64_t B, int s, double f_core, int cores, double f_gpu, int gpus,
                               std::int64_t granularity) {
  if (s < 2)
    throw InputError("--b auto needs --s >= 2 (s-1 narrow host columns per top-level tile), got --s " +
                     std::to_string(s));
  if (!(f_core > 0) || !(f_gpu > 0) || cores < 1 || gpus < 1)
    throw InputError("--b auto needs positive core and GPU speeds, at least one core and one GPU");
  const double b = host_share_width(static_cast<double>(B), f_core, cores, f_gpu, gpus) / (s - 1);
  std::int64_t r =
      granularity > 1 && b >= granularity / 2.0 ? std::llround(b / granularity) * granularity : std::llround(b);
  const std::int64_t most = (B - 1) / (s - 1);
  return std::clamp<std::int64_t>(r, 1, std::max<std::int64_t>(1, most));
}

double dominant_kernel_speed(const KernelTimeModel& model, std::uint16_t kernel, char precision, std::int64_t B) {
  KernelShape sh{kernel, precision, B, B, B, 32};
  const double t = model.seconds(sh);
  return t > 0 ? kernel_flops(sh) / t : 0.0;
}

}  // namespace tessera::models
