#include "experiments/tune.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "algorithms/factorization.hpp"
#include "algorithms/lu.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/kernel_table.hpp"
#include "base/tile_layout.hpp"
#include "experiments/calibrate.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "models/balance.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"
#include "platform/native/native_platform.hpp"

namespace tessera {

std::int64_t plateau_size(const std::vector<KernelSpeed>& curve, double fraction) {
  double best = 0;
  for (const KernelSpeed& k : curve) best = std::max(best, k.gflops);
  if (curve.empty() || !(best > 0)) throw InputError("the dominant kernel's speed curve has no positive speed");
  for (const KernelSpeed& k : curve)
    if (k.gflops >= fraction * best) return k.B;
  return curve.back().B;  // not reached: the maximum itself qualifies
}

std::vector<std::int64_t> range_sizes(std::int64_t min, std::int64_t max, std::int64_t step) {
  std::vector<std::int64_t> out;
  for (std::int64_t B = min; B <= max; B += step) {
    out.push_back(B);
    if (B > max - step) break;  // B + step would pass max, or int64's end (B += step wrapped and looped forever)
  }
  return out;
}

std::vector<TuneCandidate> tune_candidates(const std::vector<KernelSpeed>& curve, std::int64_t plateau, int sizes,
                                           int max_s, int gpus, std::int64_t max_B) {
  std::vector<TuneCandidate> out;
  const auto add = [&](std::int64_t B, int s) {
    TuneCandidate c;
    c.B = B;
    c.s = s;
    c.auto_b = gpus > 0 && s >= 2;
    out.push_back(c);
  };
  int taken = 0;
  for (const KernelSpeed& k : curve) {
    if (k.B < plateau || k.B > max_B || (sizes > 0 && taken == sizes)) continue;
    ++taken;
    for (int s = 1; s <= max_s; ++s) add(k.B, s);
  }
  // A matrix narrower than the plateau: its own order is the one tile size left.
  if (out.empty() && max_B >= 1)
    for (int s = 1; s <= max_s; ++s) add(max_B, s);
  return out;
}

std::vector<TuneCandidate> tall_candidates(std::int64_t m, std::int64_t n, int threads, int gpus, std::int64_t above) {
  std::vector<TuneCandidate> out;
  if (gpus > 0 || n < 1 || m < 8 * n) return out;
  for (const std::int64_t f : {32, 16, 8}) {
    const std::int64_t B = m / (f * std::max(1, threads)) / 64 * 64;
    const std::int64_t s = B / 256;
    if (B <= above || s < 1 || B / s > n) continue;
    TuneCandidate c;
    c.B = B;
    c.s = static_cast<int>(s);
    out.push_back(c);
  }
  return out;
}

std::vector<TuneCandidate> gpu_column_candidates(std::int64_t widest, int sizes, std::int64_t n, int gpus) {
  std::vector<TuneCandidate> out;
  if (gpus < 1) return out;
  for (std::int64_t w = 512; w <= widest && 2 * w <= n; w *= 2) {
    if (sizes > 0 && static_cast<int>(out.size()) == sizes) break;
    const std::int64_t s = ceil_div(n, w);  // (s - 1) w < n: the last column is n - (s - 1) w wide
    TuneCandidate c;
    c.gpu_columns = true;
    c.B = n;
    c.s = static_cast<int>(s);
    c.b = w;
    out.push_back(c);
  }
  return out;
}

namespace {

// The largest square tile (a multiple of 64) at which a calibrated GPU model
// measured `kernel` in `precision`; 0 for a model of another kind (a
// peak-efficiency model's curve is an assumption beyond 000 App. A.1's
// range, and rises forever). The lent H100's GEMM kept gaining past 2048:
// Cholesky at B = 4096 ran at 0.88x cuSOLVER's dpotrf, at 2048 0.77x
// (2026-11-27), and B = 2048, the old end of the range, was the tuner's choice.
std::int64_t largest_calibrated_tile(const platform::Machine& machine, std::uint16_t kernel, char precision) {
  const auto* cal = dynamic_cast<const models::CalibratedModel*>(&machine.model(machine.node.gpus.model));
  std::int64_t largest = 0;
  if (cal)
    for (const models::CalibratedModel::Entry& e : cal->entries())
      if (e.kernel == kernel && e.precision == precision && e.m == e.n && e.m % 64 == 0)
        largest = std::max(largest, e.m);
  return largest;
}

// Step 1: the dominant kernel's speed at each B of the range.
std::vector<KernelSpeed> kernel_curve(const TuneRequest& r, std::uint16_t kernel, const platform::Machine* machine,
                                      std::string& source) {
  const std::vector<std::int64_t> sizes = range_sizes(r.B_min, r.B_max, r.B_step);
  std::vector<KernelSpeed> curve;
  if (machine) {
    // A simulated run's kernels, or a node's GPUs: what the machine file says they do.
    source = "model";
    const KernelTimeModel& m = r.gpus > 0 ? machine->model(machine->node.gpus.model) : machine->core_model(r.threads);
    for (const std::int64_t B : sizes)
      curve.push_back({B, models::dominant_kernel_speed(m, kernel, r.precision, B) / 1e9});
    return curve;
  }
  // This machine's cores, `threads` of them running the kernel at once as a run's workers do.
  source = "measured";
  kernels::CalibrationOptions o;
  o.precisions = {r.precision};
  o.kernels = {kernel};
  o.sizes = sizes;
  o.for_n = {};
  o.concurrency = {r.threads};
  o.ib = r.ib;
  o.startup = false;
  o.min_reps = 5;
  o.min_time_s = 0.03;
  o.max_time_s = 0.3;
  // The measuring threads get the cores to themselves (a fresh process's BLAS pool spins for ~0.1 s).
  platform::settle_process(platform::NativePlatform::kSettleMax_s);
  for (const KernelShape& sh : kernels::calibration_shapes(o)) {
    const kernels::KernelMeasurement k = kernels::measure_kernel(sh, r.threads, o);
    curve.push_back({sh.m, kernel_flops(sh) / k.median_s / 1e9});
    if (r.progress)
      r.progress(fmt::format("  {} B={}: {:.1f} GFlop/s per core", kernel_name(kernel), sh.m, curve.back().gflops));
  }
  std::sort(curve.begin(), curve.end(), [](const KernelSpeed& a, const KernelSpeed& b) { return a.B < b.B; });
  return curve;
}

// A child run of candidate c: simulated (the caller adds --backend sim and
// the machine) or real (a native run's GPUs: its --device, and the width the
// candidate's simulation resolved where it has --b auto).
std::vector<std::string> child_args(const TuneRequest& r, const TuneCandidate& c, bool real) {
  std::vector<std::string> a{"--algo",      r.algo,
                             "--precision", std::string(1, r.precision),
                             "--n",         std::to_string(r.n),
                             "--m",         std::to_string(r.m),
                             "--threads",   std::to_string(r.threads),
                             "--B",         std::to_string(c.B),
                             "--s",         std::to_string(c.s)};
  if (r.algo == "qr") a.insert(a.end(), {"--ib", std::to_string(r.ib)});  // run refuses it with another
  if (r.gpus > 0) a.insert(a.end(), {"--gpus", std::to_string(r.gpus)});
  if (real && r.gpus > 0) a.insert(a.end(), {"--device", r.device});
  if (c.auto_b) a.insert(a.end(), {"--b", real && c.b > 0 ? std::to_string(c.b) : "auto"});
  if (c.gpu_columns) a.insert(a.end(), {"--b", std::to_string(c.b), "--dist", "gpu-columns"});
  if (!r.pivot.empty()) a.insert(a.end(), {"--pivot", r.pivot});
  a.insert(a.end(), r.graph_args.begin(), r.graph_args.end());
  if (real) a.insert(a.end(), r.real_args.begin(), r.real_args.end());
  return a;
}

// A failed child's status where it is one of the documented errors (2 input, 3 pivot, 4 memory), else internal.
int failure_status(const TuneCandidate& c) {
  return c.failed_status >= 2 && c.failed_status <= 4 ? c.failed_status : 5;
}

std::string label(const TuneCandidate& c) {
  if (c.gpu_columns) return fmt::format("gpu-columns B={} s={} b={}", c.B, c.s, c.b);
  return fmt::format("B={} s={}{}", c.B, c.s, c.auto_b ? " b=auto" : "");
}

}  // namespace

TuneResult tune(const TuneRequest& req) {
  const auto t0 = std::chrono::steady_clock::now();
  TuneResult t;
  t.request = req;
  TuneRequest& r = t.request;
  const Factorization& F = factorization(r.algo);  // InputError for an unknown one
  if (r.n < 1) throw InputError(fmt::format("--n {} must be >= 1", r.n));
  if (r.m == 0) r.m = r.n;
  if (r.m < 1) throw InputError(fmt::format("--m {} must be >= 1", r.m));
  F.check_shape(r.m, r.n);
  if (r.precision != 'd' && r.precision != 's')
    throw InputError(fmt::format("--precision '{}' is not one of: d, s", r.precision));
  if (r.threads < 1) throw InputError(fmt::format("--threads {} must be >= 1", r.threads));
  if (r.gpus < 0) throw InputError(fmt::format("--gpus {} must be >= 0", r.gpus));
  if (r.max_s < 1) throw InputError(fmt::format("--max-s {} must be >= 1", r.max_s));
  if (r.sizes < 0)
    throw InputError(fmt::format("--sizes {} must be >= 0 (0: every size from the plateau on)", r.sizes));
  if (r.real_top < 0) throw InputError(fmt::format("--real-top {} must be >= 0", r.real_top));
  if (r.real_reps < 1) throw InputError(fmt::format("--real-reps {} must be >= 1", r.real_reps));
  if (!(r.plateau_fraction > 0 && r.plateau_fraction <= 1))
    throw InputError(fmt::format("--plateau {} must be in (0, 1]", r.plateau_fraction));
  if (!(r.budget_s >= 0) || !std::isfinite(r.budget_s))
    throw InputError(fmt::format("--budget {} must be a finite number of seconds >= 0", r.budget_s));
  if (r.ib < 1) throw InputError(fmt::format("--ib {} must be >= 1", r.ib));
  if (!r.pivot.empty()) {
    if (r.algo != "lu") throw InputError(fmt::format("--pivot {}: pivoting is an option of --algo lu only", r.pivot));
    parse_lu_pivot(r.pivot);  // InputError naming --pivot and the value
  }
  // The papers' search: 256..2048 for a GPU's kernel (000 App. A.1), in
  // steps of 64; a CPU core's kernels reach their plateau far earlier. A GPU
  // calibrated on larger tiles may search up to them (below, once the
  // machine file is read).
  const bool default_max = r.B_max == 0;
  if (r.B_min == 0) r.B_min = r.gpus > 0 ? 256 : 128;
  if (r.B_max == 0) r.B_max = r.gpus > 0 ? 2048 : 640;
  if (r.B_step == 0) r.B_step = 64;
  if (r.B_min < 1 || r.B_max < r.B_min || r.B_step < 1)
    throw InputError(fmt::format("--B-range {}:{}:{} is not MIN:MAX:STEP with 1 <= MIN <= MAX, STEP >= 1", r.B_min,
                                 r.B_max, r.B_step));
  // Each candidate is a simulation or a run: a search of thousands is a
  // mistake, not a tuning (the default is 9 sizes x 3).
  if (const double sizes = std::floor(double(r.B_max - r.B_min) / double(r.B_step)) + 1;
      sizes * r.max_s > kMaxTuneCandidates)
    throw InputError(fmt::format("--B-range {}:{}:{} and --max-s {} make {:.0f} candidates, more than {}: narrow them",
                                 r.B_min, r.B_max, r.B_step, r.max_s, sizes * r.max_s, kMaxTuneCandidates));
  if (!r.dist.empty() && r.dist != "multi-level" && r.dist != "gpu-columns")
    throw InputError(fmt::format("--dist '{}' is not one of: multi-level, gpu-columns", r.dist));
  // Every column on the GPUs: one node's GPUs, a square matrix, a factorization whose columns no --d places.
  const bool columns_fit = r.gpus > 0 && r.m == r.n && !F.splits_columns();
  if (r.dist == "gpu-columns" && !columns_fit)
    throw InputError(fmt::format("--dist gpu-columns puts every column of a square Cholesky or QR on the GPUs: {}",
                                 r.gpus < 1   ? "add --gpus G"
                                 : r.m != r.n ? "the matrix is not square"
                                              : "--algo " + r.algo + " places its columns by --d"));
  if (!r.device.empty() && r.device != "cuda" && r.device != "emulated")
    throw InputError(fmt::format("--device '{}' is not one of: cuda, emulated", r.device));
  if (!r.device.empty() && (r.simulated || r.gpus == 0))
    throw InputError(fmt::format("--device {}: {}", r.device,
                                 r.simulated ? "a simulated run's GPUs are the machine file's (leave it out)"
                                             : "the run has no GPUs (add --gpus G)"));
  if (!r.simulated && r.gpus > 0 && r.device.empty())
    throw InputError(fmt::format(
        "--gpus {} on a native run: give --device cuda (the node's CUDA GPUs) or --device emulated, the GPUs its "
        "real runs are to use",
        r.gpus));
  if ((r.simulated || r.gpus > 0) && r.machine.empty())
    throw InputError(r.simulated ? "tuning a simulated run needs --machine FILE"
                                 : "tuning a run with --gpus needs --machine FILE (the GPUs' kernel model)");
  if (r.program.empty()) r.program = "/proc/self/exe";
  t.blas_core = kernels::blas_core();
  std::optional<platform::Machine> machine;
  if (!r.machine.empty()) {
    machine = platform::Machine::load(r.machine);
    // What the machine cannot run first: it holds whatever kernels run.
    if (r.threads > machine->node.cores)
      throw InputError(
          fmt::format("--threads {} exceeds the {} cores per node of {}", r.threads, machine->node.cores, r.machine));
    if (r.gpus > machine->node.gpus.count)
      throw InputError(fmt::format("--gpus {} asks for more GPUs than the {} per node of {}", r.gpus,
                                   machine->node.gpus.count, r.machine));
    // A native run ranked on a model of other kernels would be ranked wrong.
    const std::string& cal = machine->blas_core;
    if (!r.simulated && !cal.empty() && cal != t.blas_core)
      throw InputError(fmt::format(
          "--machine {} was calibrated with OpenBLAS's {} kernels, but this process runs the {} kernels "
          "(OPENBLAS_CORETYPE): calibrate a machine file with these (tessera calibrate) or set OPENBLAS_CORETYPE={}",
          r.machine, cal, t.blas_core, cal));
  }
  t.kernel = F.dominant_kernel();
  if (default_max && r.gpus > 0) {
    const std::int64_t most = r.B_min + r.B_step * (kMaxTuneCandidates / r.max_s - 1);  // within the bound above
    r.B_max = std::max(r.B_max, std::min(most, largest_calibrated_tile(*machine, t.kernel, r.precision)));
  }
  if (r.dist == "gpu-columns" && gpu_column_candidates(r.B_max, r.sizes, r.n, r.gpus).empty())
    throw InputError(
        fmt::format("--dist gpu-columns: --n {} holds fewer than two columns of 512 (or --B-range ends "
                    "below 512, at {})",
                    r.n, r.B_max));
  if (r.progress)
    r.progress(fmt::format("step 1: {} speed, B = {}..{} step {}", kernel_name(t.kernel), r.B_min, r.B_max, r.B_step));
  const bool curve_from_model = r.simulated || r.gpus > 0;
  t.curve = kernel_curve(r, t.kernel, curve_from_model ? &*machine : nullptr, t.curve_source);
  t.plateau = plateau_size(t.curve, r.plateau_fraction);
  t.candidates = tune_candidates(t.curve, t.plateau, r.sizes, r.max_s, r.gpus, std::min(r.m, r.n));
  std::int64_t largest = 0;
  for (const TuneCandidate& c : t.candidates) largest = std::max(largest, c.B);
  for (const TuneCandidate& c : tall_candidates(r.m, r.n, r.threads, r.gpus, largest)) t.candidates.push_back(c);
  if (r.dist == "gpu-columns") t.candidates.clear();
  if (r.dist != "multi-level" && columns_fit)
    for (const TuneCandidate& c : gpu_column_candidates(r.B_max, r.sizes, r.n, r.gpus)) t.candidates.push_back(c);
  if (r.progress)
    r.progress(fmt::format("step 2: plateau B = {} ({:.0f}% of the best speed); {} candidates", t.plateau,
                           100 * r.plateau_fraction, t.candidates.size()));

  // Step 3a: simulate every candidate on the machine file's model.
  if (machine) {
    for (TuneCandidate& c : t.candidates) {
      std::vector<std::string> a = child_args(r, c, false);
      a.insert(a.end(), {"--backend", "sim", "--machine", r.machine});
      const ChildRun run = run_child(r.program, a);
      if (run.time_s) {
        c.predicted_s = run.time_s;
        if (c.auto_b) c.b = run.b.value_or(0);
      } else {
        c.failed = fmt::format("simulation: exit {}: {}", run.status, run.error);
        c.failed_status = run.status;
      }
      if (r.progress)
        r.progress(c.predicted_s ? fmt::format("  simulated {}: {:.4f} s", label(c), *c.predicted_s)
                                 : fmt::format("  simulated {}: {}", label(c), c.failed));
    }
    std::stable_sort(t.candidates.begin(), t.candidates.end(), [](const TuneCandidate& a, const TuneCandidate& b) {
      return a.predicted_s.value_or(1e300) < b.predicted_s.value_or(1e300);
    });
  }

  // Step 3b: real runs while the budget lasts. First pass, one run each
  // (with a model: the best-predicted candidate of each s first, since the
  // model's errors are largest between tile shapes, then the rest in
  // predicted order; without one: every candidate, smallest B first), until
  // 60% of the budget is spent or `real_top` (0: no limit) have run; then the
  // first pass's three fastest again, in turn, up to `real_reps` runs each,
  // while the budget lasts (one run of a short factorization is a few percent
  // noisy on a shared machine). Each keeps its best time.
  if (!r.simulated && r.budget_s > 0) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < t.candidates.size(); ++i)
      if (!machine || t.candidates[i].predicted_s) order.push_back(i);
    if (machine) {
      std::vector<std::size_t> firsts, rest;
      std::vector<std::pair<bool, int>> seen;  // (every column on the GPUs, s): a family of tile shapes
      for (const std::size_t i : order) {
        const std::pair<bool, int> family{t.candidates[i].gpu_columns,
                                          t.candidates[i].gpu_columns ? 0 : t.candidates[i].s};
        const bool first = std::find(seen.begin(), seen.end(), family) == seen.end();
        if (first) seen.push_back(family);
        (first ? firsts : rest).push_back(i);
      }
      // Every column on the GPUs second, whatever its prediction: the model's
      // errors are largest between distributions (2026-11-27: the H100's
      // calibration predicted that QR 34-60% slow).
      const auto columns =
          std::find_if(firsts.begin(), firsts.end(), [&](std::size_t i) { return t.candidates[i].gpu_columns; });
      if (columns != firsts.end() && columns != firsts.begin() && columns != firsts.begin() + 1)
        std::rotate(firsts.begin() + 1, columns, columns + 1);
      order = firsts;
      order.insert(order.end(), rest.begin(), rest.end());
    }
    if (r.real_top > 0) order.resize(std::min(order.size(), static_cast<std::size_t>(r.real_top)));
    double spent = 0;
    std::vector<double> wall_of(t.candidates.size(), 0);  // each candidate's last run, process and setup included
    // One real run of candidate i; its time is the best of its runs.
    const auto run_real = [&](std::size_t i) {
      TuneCandidate& c = t.candidates[i];
      const std::vector<std::string> a = child_args(r, c, true);
      const auto w0 = std::chrono::steady_clock::now();
      const ChildRun run = run_child(r.program, a);
      wall_of[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      spent += wall_of[i];
      if (run.time_s) {
        c.real_s = c.real_s ? std::min(*c.real_s, *run.time_s) : *run.time_s;
        ++c.real_runs;
      } else {
        c.failed = fmt::format("real run: exit {}: {}", run.status, run.error);
        c.failed_status = run.status;
      }
      if (r.progress)
        r.progress(run.time_s ? fmt::format("  ran {}: {:.4f} s", label(c), *run.time_s)
                              : fmt::format("  ran {}: {}", label(c), c.failed));
    };
    const double first_pass_s = r.real_reps > 1 ? 0.6 * r.budget_s : r.budget_s;
    std::vector<std::size_t> ran;
    double wall_per_predicted = 0;  // a run's wall time over its predicted time, from the runs so far
    for (const std::size_t i : order) {
      const TuneCandidate& c = t.candidates[i];
      if (!ran.empty()) {
        // The next run's cost: its prediction scaled as the runs so far were, else the slowest run so far.
        const double slowest = *std::max_element(wall_of.begin(), wall_of.end());
        const double expect = c.predicted_s && wall_per_predicted > 0 ? *c.predicted_s * wall_per_predicted : slowest;
        if (spent + expect > first_pass_s) break;
      }
      run_real(i);
      if (t.candidates[i].real_s) {
        ran.push_back(i);
        if (c.predicted_s && *c.predicted_s > 0)
          wall_per_predicted = std::max(wall_per_predicted, wall_of[i] / *c.predicted_s);
      }
    }
    // Every real run failed: the run being tuned would too (no CUDA device, no
    // memory for any tile), and a choice by simulation would hide it.
    if (ran.empty()) {
      const auto f = std::find_if(t.candidates.begin(), t.candidates.end(),
                                  [](const TuneCandidate& c) { return c.failed.starts_with("real run"); });
      if (f != t.candidates.end()) {
        throw Error(fmt::format("every real run failed; the first, {}: {}", label(*f), f->failed), failure_status(*f));
      }
    }
    std::sort(ran.begin(), ran.end(),
              [&](std::size_t a, std::size_t b) { return *t.candidates[a].real_s < *t.candidates[b].real_s; });
    ran.resize(std::min<std::size_t>(ran.size(), 3));
    for (int rep = 1; rep < r.real_reps; ++rep)
      for (const std::size_t i : ran)
        if (spent + wall_of[i] <= r.budget_s) run_real(i);
  }

  // The decision: the fastest real run, else the best prediction, else the plateau with s = 1.
  const auto best_by = [&](auto get) -> std::optional<std::size_t> {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < t.candidates.size(); ++i)
      if (get(t.candidates[i]) && (!best || *get(t.candidates[i]) < *get(t.candidates[*best]))) best = i;
    return best;
  };
  if (const auto i = best_by([](const TuneCandidate& c) { return c.real_s; })) {
    t.chosen = *i;
    t.decided_by = "real runs";
  } else if (const auto j = best_by([](const TuneCandidate& c) { return c.predicted_s; })) {
    t.chosen = *j;
    t.decided_by = "simulation";
  } else if (const auto f = std::find_if(t.candidates.begin(), t.candidates.end(),
                                         [](const TuneCandidate& c) { return !c.failed.empty(); });
             f != t.candidates.end()) {
    // Every candidate that was simulated or run failed: no choice stands on a measurement.
    throw Error(fmt::format("every candidate failed; the first, {}: {}", label(*f), f->failed), failure_status(*f));
  } else if (!t.candidates.empty()) {
    t.chosen = 0;
    t.decided_by = "kernel plateau";
  } else {
    throw InputError("no tile size to tune: the matrix has no column");
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

std::string tuned_args(const TuneCandidate& c) {
  if (c.gpu_columns) return fmt::format("--dist gpu-columns --B {} --s {} --b {}", c.B, c.s, c.b);
  return fmt::format("--B {} --s {}{}", c.B, c.s, c.auto_b ? " --b auto" : "");
}

nlohmann::json tune_json(const TuneResult& t) {
  const TuneRequest& r = t.request;
  const TuneCandidate& c = t.choice();
  nlohmann::json j;
  j["tessera_tuned"] = 1;
  j["algo"] = r.algo;
  j["precision"] = std::string(1, r.precision);
  j["m"] = r.m;
  j["n"] = r.n;
  j["threads"] = r.threads;
  j["gpus"] = r.gpus;
  j["machine"] = r.machine;
  j["simulated"] = r.simulated;
  if (!r.device.empty()) j["device"] = r.device;
  j["child_args"] = r.graph_args;  // what every child run got besides its tiles (the run's own options)
  if (!r.real_args.empty()) j["real_child_args"] = r.real_args;  // and the real ones besides
  if (!r.dist.empty()) j["dist"] = r.dist;                       // the one distribution asked for
  j["blas_core"] = t.blas_core;
  j["choice"] = {{"B", c.B},
                 {"s", c.s},
                 {"b", c.auto_b        ? nlohmann::json("auto")
                       : c.gpu_columns ? nlohmann::json(c.b)
                                       : nlohmann::json(nullptr)},
                 {"decided_by", t.decided_by}};
  if ((c.auto_b || c.gpu_columns) && c.b > 0)
    j["choice"]["b_width"] = c.b;  // auto's in its simulation, or the columns'
  if (c.gpu_columns) j["choice"]["dist"] = "gpu-columns";
  nlohmann::json curve = nlohmann::json::array();
  for (const KernelSpeed& k : t.curve) curve.push_back({{"B", k.B}, {"gflops", k.gflops}});
  j["dominant_kernel"] = {{"name", kernel_name(t.kernel)},
                          {"source", t.curve_source},
                          {"curve", curve},
                          {"plateau_B", t.plateau},
                          {"plateau_fraction", r.plateau_fraction}};
  nlohmann::json cands = nlohmann::json::array();
  for (const TuneCandidate& k : t.candidates) {
    nlohmann::json x{{"B", k.B}, {"s", k.s}, {"b", k.auto_b ? "auto" : k.gpu_columns ? "given" : "default"}};
    if ((k.auto_b || k.gpu_columns) && k.b > 0) x["b_width"] = k.b;
    if (k.gpu_columns) x["dist"] = "gpu-columns";
    x["predicted_s"] = k.predicted_s ? nlohmann::json(*k.predicted_s) : nlohmann::json(nullptr);
    x["real_s"] = k.real_s ? nlohmann::json(*k.real_s) : nlohmann::json(nullptr);
    x["real_runs"] = k.real_runs;
    if (!k.failed.empty()) x["failed"] = k.failed;
    cands.push_back(x);
  }
  j["candidates"] = cands;
  j["budget_s"] = r.budget_s;
  j["seconds"] = t.seconds;
  return j;
}

TunedChoice read_tuned(const std::string& path) {
  require_regular_file("--tuned", path);
  std::ifstream in(path);
  if (!in) throw InputError("--tuned " + path + ": cannot open");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tessera_tuned"))
    throw InputError("--tuned " + path + ": not a file `tessera tune --out` wrote");
  TunedChoice c;
  try {
    c.algo = j.at("algo").get<std::string>();
    c.precision = j.at("precision").get<std::string>().at(0);
    c.n = j.at("n").get<std::int64_t>();
    c.threads = j.at("threads").get<int>();
    c.gpus = j.at("gpus").get<int>();
    const nlohmann::json& ch = j.at("choice");
    c.B = ch.at("B").get<std::int64_t>();
    c.s = ch.at("s").get<int>();
    c.auto_b = ch.at("b").is_string();
    c.b = ch.value("b_width", std::int64_t{0});
    const std::string dist = ch.value("dist", std::string("multi-level"));
    if (dist != "multi-level" && dist != "gpu-columns")
      throw InputError("choice.dist '" + dist + "' is not one of: multi-level, gpu-columns");
    c.gpu_columns = dist == "gpu-columns";
    if (c.gpu_columns && c.auto_b)
      throw InputError("choice.b 'auto' with choice.dist gpu-columns (whose host has no columns to balance)");
  } catch (const std::exception& e) {
    throw InputError("--tuned " + path + ": " + e.what());
  }
  if (c.B < 1 || c.s < 1) throw InputError(fmt::format("--tuned {}: choice B={} s={} is not a tiling", path, c.B, c.s));
  if (c.gpu_columns && (c.b < 1 || c.s < 2 || (c.s - 1) * c.b >= c.B))
    throw InputError(
        fmt::format("--tuned {}: choice gpu-columns B={} s={} b_width={} is not a tiling", path, c.B, c.s, c.b));
  return c;
}

}  // namespace tessera
