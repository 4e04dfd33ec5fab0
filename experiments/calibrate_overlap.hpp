#pragma once
// How much of a GPU a kernel below GEMM's rate leaves to the kernels of
// another compute stream: the machine file's node.gpus.stream_overlap, which
// a simulated GPU with several streams uses (platform/simgrid/sim_gpu.cpp),
// measured by `tessera calibrate --device cuda --stream-overlap` on the GPU
// with two compute streams (measure_overlap, calibrate_device.hpp).
//
// Method, per slow kernel P (a panel kernel of the calibration, at its
// largest size): g calls of GSMM at P's dimensions in one task, g chosen so
// that they take about twice P alone. Three timings, each from the first
// launch until both tasks' kernels have ended, the median of several: P
// alone on the panels' stream (t_p), the GEMMs alone on the other (t_g),
// and both started together (t_pg). In the simulated GPU's model P takes
// e = 1 - overlap (1 - s) of the GPU beside the GEMMs, s its rate over a
// GEMM's at its dimensions (platform/kernel_time_model.hpp device_share),
// and the GEMMs, which outlast P and would fill the GPU, take the rest
// throughout, so t_pg = e t_p + t_g. Hence e = (t_pg - t_g) / t_p, kept
// within [s, 1], and overlap = (1 - e) / (1 - s), within [0, 1]: 1 when
// the pair takes no longer than the GEMMs alone, 0 when it takes as long as
// one after the other. A kernel at GEMM's rate or above (s >= 1) says
// nothing about it, nor a measurement whose GEMMs did not outlast P (the
// model's premise; g is at most kMaxGemmCalls): overlap NaN. The median
// leaves out kernels above half of GEMM's rate too, whose small idle share
// makes (1 - e) / (1 - s) mostly noise.
#include <cstdint>
#include <vector>

#include "base/task.hpp"

namespace tessera::kernels {

inline constexpr int kMaxGemmCalls = 512;
inline constexpr double kMaxShareForOverlap = 0.5;

struct OverlapMeasurement {
  KernelShape panel;                                // P
  int gemm_calls = 0;                               // g
  double panel_s = 0, gemms_s = 0, together_s = 0;  // t_p, t_g, t_pg (medians)
  double share = 0;                                 // s
  double used = 0;                                  // e
  double overlap = 0;                               // (1 - e) / (1 - s); NaN when s >= 1
};

// The model's quantities from the three times (the rest of `m` as given).
OverlapMeasurement overlap_from_times(OverlapMeasurement m);

// The machine file's value: the median of the defined overlaps of the
// kernels at most kMaxShareForOverlap of GEMM's rate. Throws
// std::runtime_error when there is none.
double median_overlap(const std::vector<OverlapMeasurement>& m);

// The panel kernels of `shapes` (base/kernel_table.hpp panel_kernel) that a
// GPU runs, at the largest size measured of each kernel and precision with
// m and n at most `max_order` (the tiles GPU runs use; a QR panel of 8192
// takes a few hundred ms, and its GEMMs twice that, per timing): the ones
// measure_overlap times.
std::vector<KernelShape> overlap_panels(const std::vector<KernelShape>& shapes, std::int64_t max_order = 4096);

}  // namespace tessera::kernels
