#pragma once
// Host/GPU load balance of the hybrid tile layout (000 App. A.1, 001 §4.2):
// of each top-level B×B tile, the host gets B_h columns (s-1 narrow columns
// of width b) and a GPU the remaining B_g = B - B_h, chosen so that the G
// GPUs' share and the host's take the same time:
//   T(B×B_g) / f_gpu = G·T(B×B_h) / (f_core·cores)
//   =>  B_h = B · f_core·cores / (f_core·cores + f_gpu·G)
// with f the speed of the algorithm's dominant kernel (GSMM for Cholesky,
// SSRFB for QR) on a core and on a GPU.
#include <cstdint>

#include "platform/kernel_time_model.hpp"

namespace tessera::models {

// B_h of the formula (real-valued).
double host_share_width(double B, double f_core, int cores, double f_gpu, int gpus);

// b for s-1 narrow columns: B_h / (s-1) rounded to the nearest multiple of
// `granularity` (001 §4.2 tunes in steps of 64 in double precision and 96 in
// single, where GPU kernels run best), at least 1, at most what leaves the
// GPU column one element wide. Throws InputError when s < 2 or a speed is not positive.
std::int64_t auto_narrow_width(std::int64_t B, int s, double f_core, int cores, double f_gpu, int gpus,
                               std::int64_t granularity);

// Speed (flop/s) of `model` on `kernel` (a factorization's dominant one:
// Factorization::dominant_kernel) for B×B×B tiles in `precision`.
double dominant_kernel_speed(const KernelTimeModel& model, std::uint16_t kernel, char precision, std::int64_t B);

}  // namespace tessera::models
