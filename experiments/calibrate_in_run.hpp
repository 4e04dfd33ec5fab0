#pragma once
// In-run calibration (`tessera calibrate --in-run`): kernel times measured
// inside real factorizations, merged into a calibrated machine file.
//
// Why: `tessera calibrate` times each kernel shape on its own, with c-1 other
// threads running the same kernel on their own warm operands. Inside a real
// c-thread factorization a kernel is slower than that, and the difference is
// what made held-out predictions systematically fast (experiments/README.md,
// "Held-out predictions"): on the 2-core development VM, 2026-11-26, the
// 320x320x320 GSMM (d) took 1,314 us in the 2-thread calibration and
// 1,450-1,480 us inside 2-thread Cholesky runs of N = 4096-8192 (1,297-1,313 us
// inside 1-thread runs, as calibrated), where both cores stream a matrix far
// larger than their caches and run different kernels side by side. The model
// a simulated run uses should be the kernel's time in a run. StarPU's
// history-based performance models are built the same way, from the task
// durations of real executions, and drive its SimGrid simulations (Stanisic
// et al., "Faithful performance prediction of a dynamic task-based runtime
// system for heterogeneous multi-core architectures", CCPE 27(16), 2015).
//
// Method: every configuration (algorithm x precision x N x s, default tiles)
// runs once per pass and thread count on this machine's native backend; each
// task's wall time (worker clock, around the kernel) is kept under its shape,
// except each run's first call of each kernel (its one-time library set-up
// is the model's first_call_s). Per thread count and shape: the median of one
// pass's calls (and their interquartile range), the fastest pass kept, as
// `calibrate --passes` keeps the fastest (a neighbour's interference only
// slows kernels). Shapes with fewer than min_calls calls in a pass are
// dropped. Orders below 4096 run too briefly to be representative (the first
// tens of milliseconds of a process run slower), hence the default orders.
// The runs also give the runtime's own time per task (the model's task_s:
// the median gap between a thread's tasks) and each configuration's time.
//
// Merge (merge_in_run): in the model of each thread count (node.cores.
// model_by_threads), a shape measured in runs takes the run's median (entry
// field "in_run_calls"); a shape measured only in isolation is scaled by the
// ratio in-run / isolated of the nearest shape both measured, in (log m,
// log n, log k) (field "in_run_scale"), so shapes the runs never had (other
// tile sizes, for the tuner) move with their neighbours; kernels no run
// measured (LU's) stay as they were.
// Held-out configurations must not be among the runs: validate_prediction's
// held-out orders (3000, 5000, 6144) are not in the defaults.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/task.hpp"

namespace tessera::kernels {

struct InRunOptions {
  std::vector<std::string> algos = {"cholesky", "qr"};
  std::vector<char> precisions = {'d', 's'};
  std::vector<std::int64_t> n = {4096, 8192};
  std::vector<int> s = {1};
  std::vector<int> threads = {1};
  // Only these kernels are kept (empty: every kernel the runs call that
  // calibration measures, kernels::calibrated_kernels()).
  std::vector<std::uint16_t> kernels;
  std::int64_t ib = 32;  // QR's inner blocking, as the isolated calibration measured it
  int passes = 1;
  int min_calls = 5;
  // Called after each run with a line of text (progress on a terminal).
  std::function<void(const std::string&)> progress;
};

// One kernel call inside a run: its shape, the run's thread count, its seconds.
struct InRunCall {
  KernelShape shape;
  int threads = 1;
  double seconds = 0;
};

// InRunShape::threads of a GPU's kernel (experiments/calibrate_from_traces.hpp):
// its time goes into the node's GPU model, not a cores' one.
inline constexpr int kGpuInRun = 0;

struct InRunShape {
  KernelShape shape;  // kernel, precision, m, n, k
  int threads = 1;    // the cores' model of this many threads; kGpuInRun: the GPUs'
  double median_s = 0;
  double spread_s = 0;  // interquartile range
  int calls = 0;
};

// One configuration the in-run calibration ran, and its fastest run's time
// over the passes: a reference a later measurement can run again to see
// whether the machine still runs at the calibration's speed
// (validate_prediction's drift check).
struct InRunRun {
  std::string algo;
  char precision = 'd';
  std::int64_t n = 0;
  int s = 1;
  int threads = 1;
  double time_s = 0;
};

// The algorithms among o.algos that run a wanted kernel (Cholesky, QR).
std::vector<std::string> in_run_algos(const InRunOptions& o);

// Per (threads, shape) of one pass's calls: the median and interquartile
// range, for shapes with at least min_calls calls; ordered by threads, then
// kernel, precision, m, n, k.
std::vector<InRunShape> summarize_in_run(const std::vector<InRunCall>& calls, int min_calls);

struct InRunMeasurement {
  // Per (threads, shape): the pass with the smallest median.
  std::vector<InRunShape> shapes;
  // Every configuration's fastest run over the passes, in the order they ran.
  std::vector<InRunRun> runs;
  // Per thread count: the runtime's own time per task (KernelTimeModel::
  // task_s), the median gap between one task's end and the next one's start
  // on a compute thread over a pass's runs, the smallest pass's. Most gaps
  // of a busy run are that cost alone; a thread waiting for a ready task
  // makes a long one, which the median leaves out.
  std::map<int, double> task_s;
};

// Combines passes into an InRunMeasurement, each number the fastest pass's:
// per (threads, shape) the pass with the smallest median (a shape a pass
// called fewer than min_calls times is not in that pass), per configuration
// the smallest time, per thread count the smallest median gap. Every pass
// runs the same configurations in the same order.
class InRunPasses {
 public:
  explicit InRunPasses(int min_calls) : min_calls_(min_calls) {}
  // One pass: its kernel calls, its configurations' runs, and per thread
  // count the gaps between a compute thread's tasks. Throws InputError when
  // `runs` does not list the configurations of the first pass.
  void add(const std::vector<InRunCall>& calls, const std::vector<InRunRun>& runs,
           std::map<int, std::vector<double>> gaps);
  InRunMeasurement result() const;

 private:
  int min_calls_;
  int passes_ = 0;
  std::map<std::tuple<int, std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t>, InRunShape> best_;
  std::vector<InRunRun> runs_;
  std::map<int, double> task_s_;
};

// Runs every configuration of `o` for real on this machine, o.passes times.
// Throws InputError for an option out of range, and when the runs of a
// thread count called no shape min_calls times (orders too small).
InRunMeasurement measure_in_run(const InRunOptions& o);

// Throws InputError unless the machine file `text` has a calibrated model
// for runs of each of `threads` threads (merge_in_run's target) and holds no
// in-run times yet (they would be scaled again as if isolated), before
// minutes of runs are spent.
void check_in_run_target(const std::string& text, const std::string& path, const std::vector<int>& threads);

// The machine file `text` (a calibrated one; `path` names it in errors) with
// `shapes` merged into the model of each thread count (see above), each
// thread count's `task_s` set in its model (field "task_s"), and
// `calibration.in_run` set to `record` (JSON object text: how the runs were
// made). Throws InputError when a thread count has no calibrated model.
std::string merge_in_run(const std::string& text, const std::string& path, const std::vector<InRunShape>& shapes,
                         const std::string& record, const std::map<int, double>& task_s = {});

// The machine file `text` with the first-call costs of the model of
// `threads` (kGpuInRun: the GPUs') set to `first_call` (the model's
// first_call_s, models/cold_start.hpp), `source` saying where they came from;
// the model's earlier ones replaced; `record` (JSON object text), if not
// empty, set as calibration.gpu_first_calls (the GPUs'; else first_calls):
// first calls merged without any shape, which leave the file open to a
// merge of in-run times (check_in_run_target looks for those records only).
std::string set_first_calls(const std::string& text, const std::string& path, int threads,
                            const std::map<std::pair<std::uint16_t, char>, double>& first_call,
                            const std::string& source, const std::string& record = "");

}  // namespace tessera::kernels
