#pragma once
// A GPU's kernels timed inside real runs, from their traces
// (`tessera calibrate --from-traces T1,T2 --base node.json --out F`).
//
// Why: on the lent H100 the simulator, calibrated on each kernel alone,
// predicted Cholesky 19-32% fast in every lease while the GPU was busy
// through each run (2026-11-25 to 2026-11-27): the GPU's own span of each
// task's kernels, summed, was the run's time, so the kernels themselves took
// longer inside the runs than alone. The CPU's in-run calibration
// (experiments/calibrate_in_run.hpp) models kernels by their times inside
// real runs; a GPU's real runs are on a lent machine, minutes at a time, so
// their times come from the traces those runs write: each GPU task's
// gpu_span_us, the device's own time from its first kernel's start to its
// last one's end (CUDA events), which leaves out the host's launches before
// it and the wait for its inputs.
//
// Per (kernel, precision, m, n, k): the median and interquartile range of the
// spans over all traces, each trace's first call of each kernel left out
// (its one-time library set-up), shapes called fewer than min_calls times
// dropped. They are merged into the base file's GPU model as the CPU's are
// (merge_in_run with kGpuInRun): a traced shape takes its median, the
// kernel's other shapes the in-run / isolated ratio of the nearest traced
// shape; the file records it under calibration.gpu_in_run. A prediction made
// with it for a traced run is no test of the model; one for another
// configuration is.
//
// The first calls themselves, in traces of cold runs (otherData.gpu_warmup
// "off"; or none in a native trace: written before GPUs were warmed,
// 2026-11-28; never an emulated GPU's, whose kernels are the CPU's), give
// the GPU model's first_call_s (models/cold_start.hpp): per kernel and
// precision, the median over GPU lanes and traces of each first call's time
// less the median of the other calls of its shape in the same trace (none
// below 0; a first call whose shape has no other call counts for nothing).
// On the lent H200 (2026-11-25) each kernel's first call, tens of
// milliseconds of module loading and library set-up, held all of
// Cholesky's 19-32% prediction error; with them the simulator predicts a
// cold run (`tessera run --backend sim --gpu-warmup off`). A trace without
// device spans (before 2026-11-27; a simulated GPU with one stream) gives
// its GPU tasks' intervals for this, and first calls only; a merge of first
// calls alone is recorded as calibration.gpu_first_calls, which leaves the
// file open to a later merge of spans.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "experiments/calibrate_in_run.hpp"

namespace tessera::kernels {

struct GpuInRunTraces {
  std::vector<InRunShape> shapes;  // threads = kGpuInRun
  // How the traced QR runs' GPUs factored panels (the traces' gpu_qr_panel:
  // "householder", "cholqr"); empty where no trace records one.
  std::string qr_panel;
  // With qr_panel "cholqr": the traces' gpu_cholqr_gram (0: SYRK Grams).
  int cholqr_gram = 0;
  // (kernel, precision) -> seconds of a GPU's first call over a warm one (see above).
  std::map<std::pair<std::uint16_t, char>, double> first_call_s;
  int cold_traces = 0;  // traces whose first calls were read
  int first_calls = 0;  // first calls that counted
};

// The GPU tasks' shapes of the traces (tessera run --trace FILE, format
// tessera-trace), and the cold ones' first calls. Each GPU's (trace lane's)
// first call of each kernel is left out of the shapes. Throws InputError
// naming a file that is not such a trace, has no GPU task with a span (a
// cold run's trace: no GPU task) or is given twice, a shape the traces ran at two
// effective inner blockings, traces of different QR panels, and traces of
// Cholesky QR panels whose Grams were formed differently (--gpu-cholqr-gram).
GpuInRunTraces gpu_in_run_shapes(const std::vector<std::string>& traces, int min_calls);

}  // namespace tessera::kernels
