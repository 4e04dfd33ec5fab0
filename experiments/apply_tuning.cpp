#include "experiments/apply_tuning.hpp"

#include <fmt/format.h>

#include <cctype>
#include <iostream>

#include "base/cpu_count.hpp"
#include "base/error.hpp"
#include "experiments/driver_parts.hpp"
#include "experiments/run_simulated.hpp"
#include "experiments/tune.hpp"
#include "models/machine.hpp"

namespace tessera {

void apply_tuning(RunConfig& cfg, const TuningOptions& o) {
  bool auto_B = false;
  if (!o.B.empty()) {
    const auto B = parse_size_or_auto("--B", "a tile size", o.B);
    if (B) cfg.B = *B;
    else auto_B = true;
  }
  if (o.tuned.empty() && !auto_B) return;
  // The tuner chooses whether every column goes to the GPUs, and which
  // width they have (gpu_column_candidates): it is not told.
  if (cfg.dist == kDistGpuColumns)
    throw InputError(std::string(auto_B ? "--B auto" : "--tuned " + o.tuned) +
                     " chooses whether every column goes to the GPUs (--dist gpu-columns) and their width: leave "
                     "--dist out, or give --B and --s (--b defaults to B/s)");
  if (!o.tuned.empty() && !o.B.empty())
    throw InputError("--tuned " + o.tuned + " and --B " + o.B + " both choose the tile size: give one");
  if (o.s_given || cfg.b != kUnsetSize || cfg.auto_b)
    throw InputError(std::string(auto_B ? "--B auto" : "--tuned " + o.tuned) +
                     " chooses --s and --b too: leave them out");
  // The threads the run will have: with --gpus and no --threads, the node's
  // cores less its GPUs' threads (run_on_backend, run_simulated).
  int threads = cfg.threads;
  if (o.threads_from_cores && !(o.simulated && o.machine.empty()))
    threads = default_threads(
        o.simulated ? platform::Machine::load(o.machine).node.cores : static_cast<int>(usable_cpus()), cfg.gpus);
  if (!o.tuned.empty()) {
    const TunedChoice c = read_tuned(o.tuned);
    if (c.algo != cfg.algo || c.precision != cfg.precision)
      throw InputError(fmt::format("--tuned {} was tuned for --algo {} --precision {}, not --algo {} --precision {}",
                                   o.tuned, c.algo, c.precision, cfg.algo, cfg.precision));
    if (c.gpu_columns && o.dist_given)
      throw InputError("--tuned " + o.tuned + " chose --dist gpu-columns, and the run gives --dist " + cfg.dist +
                       ": leave --dist out");
    cfg.B = c.B;
    cfg.s = c.s;
    cfg.auto_b = c.auto_b;
    if (c.gpu_columns) {
      // One tile row of columns of the tuned width, for this run's order.
      const std::string chose = "--tuned " + o.tuned + " chose every column on the GPUs (--dist gpu-columns)";
      if (cfg.pr * cfg.pc > 1)
        throw InputError(chose + ", a one-node map, and the run has --grid " + std::to_string(cfg.pr) + "x" +
                         std::to_string(cfg.pc) + ": tune with tessera tune --dist multi-level");
      if (cfg.m != kUnsetSize && cfg.m != cfg.n)
        throw InputError(chose + " for a square matrix, and the run's is " + std::to_string(cfg.m) + " x " +
                         std::to_string(cfg.n));
      const index_t s = ceil_div(cfg.n, c.b);
      if (s < 2)
        throw InputError(chose + " with columns of " + std::to_string(c.b) + ", and --n " + std::to_string(cfg.n) +
                         " holds fewer than two of them");
      if (static_cast<double>(s) > kMaxTiles)  // (before the int below: the run's bound on its tiles)
        throw InputError(chose + " with columns of " + std::to_string(c.b) + ", and --n " + std::to_string(cfg.n) +
                         " makes " + std::to_string(s) + " of them, more than the 2^30 tiles a run can name");
      cfg.dist = kDistGpuColumns;
      cfg.B = cfg.n;
      cfg.s = static_cast<int>(s);
      cfg.b = c.b;
    }
    // (After the refusals above: a refused run says one line.)
    if (c.n != cfg.n || c.threads != threads || c.gpus != cfg.gpus)
      std::cerr << fmt::format(
                       "note: --tuned {} was tuned for --n {} --threads {} --gpus {}; this run has --n {} --threads "
                       "{} --gpus {}",
                       o.tuned, c.n, c.threads, c.gpus, cfg.n, threads, cfg.gpus)
                << std::endl;
    // A native run takes the width the tuner's simulation resolved, which its
    // real runs ran with (a native CUDA run has no model of its GPUs to
    // balance b by; emulated ones would balance at equal speeds, another width).
    if (c.auto_b && !o.simulated && c.b > 0) {
      cfg.auto_b = false;
      cfg.b = c.b;
    } else if (c.auto_b && !o.simulated && cfg.device == DeviceKind::Cuda) {
      throw InputError("--tuned " + o.tuned +
                       " chose --b auto without the width it resolved to, which a native CUDA run needs: tune "
                       "again (tessera tune --device cuda)");
    }
    cfg.tiles_from = "--tuned " + o.tuned;
    return;
  }
  if (cfg.n == kUnsetSize) throw InputError("--B auto needs --n (the size to tune for)");
  {
    RunConfig as_run = cfg;  // its machine file is set later, with the backend's
    if (o.simulated) as_run.machine = o.machine;
    driver::check_gpu_options(as_run);
  }
  // The tuner ranks GPU tiles by a machine file's model, and a native run
  // takes no --machine: say how, rather than ask for one it then refuses.
  if (!o.simulated && cfg.gpus > 0)
    throw InputError(fmt::format(
        "--B auto with --gpus {} on a native run: the tuner ranks GPU tiles by a machine file's model, which a "
        "native run does not take; tune once (tessera tune --gpus {} --device {} --machine FILE --out T) and run "
        "with --tuned T",
        cfg.gpus, cfg.gpus, cfg.device == DeviceKind::Cuda ? "cuda" : "emulated"));
  TuneRequest r;
  r.algo = cfg.algo;
  r.precision = cfg.precision;
  // A grid's node factors its 1/max(Pr, Pc) share of the order (000 §7.1's
  // weak scaling keeps it constant): the node is tuned for that.
  const int share = std::max(cfg.pr, cfg.pc);
  r.n = std::max<index_t>(1, cfg.n / share);
  r.m = cfg.m == kUnsetSize ? r.n : std::max<index_t>(1, cfg.m / share);
  r.threads = threads;
  r.gpus = cfg.gpus;
  r.ib = cfg.ib;
  r.machine = o.machine;
  r.simulated = o.simulated;
  // Every child run, simulated and real, is this run's factorization: its own
  // options (LU's pivoting, tree and CPU share), its window and its GPUs' options. (A real one
  // has no GPUs: native --B auto with --gpus is refused above.)
  r.pivot = cfg.pivot;
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"--tslu-tree", &cfg.tslu_tree}, {"--window", &o.window}})
    if (!value->empty()) r.graph_args.insert(r.graph_args.end(), {name, *value});
  // --d as a rule (auto, eq1); a count of block columns is the run's, and a
  // candidate's tiles (or one node's share) may have fewer.
  if (!cfg.d.empty() && !std::isdigit(static_cast<unsigned char>(cfg.d[0])))
    r.graph_args.insert(r.graph_args.end(), {"--d", cfg.d});
  r.graph_args.insert(r.graph_args.end(), o.gpu_args.begin(), o.gpu_args.end());
  // The real ones run at this run's priorities too (a simulated node has no threads to lower).
  if (cfg.compute_nice > 0) r.real_args = {"--compute-nice", std::to_string(cfg.compute_nice)};
  // Every column on the GPUs is a one-node map of the whole matrix, not of a grid node's share.
  if (o.dist_given || share > 1) r.dist = "multi-level";
  // ... and the run's own distribution, where it names one, for every child (they were ranked as multi-level).
  if (o.dist_given) r.graph_args.insert(r.graph_args.end(), {"--dist", cfg.dist});
  r.program = o.program;
  r.B_min = r.B_max = r.B_step = 0;
  const TuneResult t = tune(r);
  cfg.B = t.choice().B;
  cfg.s = t.choice().s;
  cfg.auto_b = t.choice().auto_b;
  if (t.choice().gpu_columns) {
    cfg.dist = kDistGpuColumns;
    cfg.b = t.choice().b;
  }
  cfg.tiles_from = "--B auto: " + t.decided_by;
  // A line of its own before the summary line, as a simulated run's cost line follows it.
  std::cout << fmt::format("tuned: {} for --n {}{} (decided by {} in {:.1f} s)", tuned_args(t.choice()), r.n,
                           share > 1 ? " (one node's share)" : "", t.decided_by, t.seconds)
            << std::endl;
}

}  // namespace tessera
