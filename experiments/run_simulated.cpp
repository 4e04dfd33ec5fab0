#include "experiments/run_simulated.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "base/error.hpp"
#include "experiments/driver_parts.hpp"
#include "models/machine.hpp"

namespace tessera {

void add_noise_options(CLI::App& run, NoiseArgs& args) {
  args.kernel_opt = run.add_option(
      "--kernel-noise", args.kernel,
      "simulated run: each task's modeled time times exp(SIGMA Z), Z a standard normal drawn from the task, its "
      "node, host or GPU, and the seed (a lognormal around the model's median; reproducible, "
      "models/kernel_noise.hpp), or auto: SIGMA per kernel from the spreads a calibrated machine file measured; at "
      "most 2; default none");
  args.node_opt = run.add_option("--node-noise", args.node,
                                 "simulated run: every task of a node times exp(SIGMA Z_node), one Z per node: nodes "
                                 "not equally fast; at most 2; default none");
  args.seed_opt = run.add_option("--noise-seed", args.seed,
                                 "simulated run: seed of --kernel-noise's and --node-noise's draws; default 1");
}

namespace {

// The run's handles into this function's simulation (the machine's models,
// the simulated GPUs, the cluster's network, the shared relevance cache) die
// with it: the result returned says only what the caller gave.
RunResult without_handles(RunResult r, const RunConfig& given) {
  r.config.model = nullptr;
  r.config.gpu_model = nullptr;
  r.config.gpu_model_each.clear();
  r.config.devices.clear();
  r.config.network = nullptr;
  r.config.relevance = nullptr;
  r.config.observer = given.observer;
  return r;
}

// A sigma above kMaxNoiseSigma is refused: exp(sigma Z) with the generator's
// largest |Z| (8.7) would leave double's range near sigma = 80, and factors
// of e^4 at 2 sigma already say nothing about a machine.
double parse_sigma(const std::string& option, const std::string& value) {
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(x) || x < 0 || x > kMaxNoiseSigma)
    throw InputError(fmt::format("{} '{}' is not a sigma (a number from 0 to {:g}{})", option, value, kMaxNoiseSigma,
                                 option == "--kernel-noise" ? ", or auto" : ""));
  return x;
}

bool given(const CLI::Option* o) { return o && o->count() > 0; }

}  // namespace

models::KernelNoise parse_noise(const NoiseArgs& args, Backend backend) {
  models::KernelNoise n;
  if (given(args.kernel_opt)) {
    if (args.kernel == "auto") n.sigma_from_model = true;
    else n.sigma = parse_sigma("--kernel-noise", args.kernel);
  }
  if (given(args.node_opt)) n.node_sigma = parse_sigma("--node-noise", args.node);
  if (given(args.seed_opt)) n.seed = parse_count("--noise-seed", args.seed);
  if ((given(args.kernel_opt) || given(args.node_opt) || given(args.seed_opt)) && backend != Backend::Sim)
    throw InputError(
        "--kernel-noise, --node-noise and --noise-seed vary a simulated run's kernel times: add "
        "--backend sim --machine FILE");
  return n;
}

RunResult run_simulated(RunConfig cfg, const BackendOptions& b, std::string& backend_name,
                        std::vector<std::unique_ptr<TraceRecorder>>* node_traces, std::string* fail_note) {
  cfg.noise = b.noise;
  if (b.machine.empty()) throw InputError("--backend sim needs --machine FILE (e.g. platform/machines/keeneland.json)");
  if (cfg.impl != Impl::Tile)
    throw InputError("--impl " + std::string(to_string(cfg.impl)) +
                     " cannot be simulated: only --impl tile runs as tasks");
  const platform::Machine machine = platform::Machine::load(b.machine);
  if (b.threads_from_cores) cfg.threads = default_threads(machine.node.cores, cfg.gpus);
  if (cfg.threads > machine.node.cores)
    throw InputError("--threads " + std::to_string(cfg.threads) + " exceeds the " + std::to_string(machine.node.cores) +
                     " cores per node of " + b.machine +
                     " (node.cores.count): a simulated node runs at most one "
                     "compute thread per core");
  cfg.model = &machine.core_model(cfg.threads);
  cfg.phantom = !b.sim_data;
  cfg.machine = b.machine;
  const int P = cfg.pr * cfg.pc;
  if (b.nodes != 0 && b.nodes != P)
    throw InputError(fmt::format("--nodes {} differs from the {} nodes of --grid {}x{}", b.nodes, P, cfg.pr, cfg.pc));
  if (P > machine.nodes)
    throw InputError(fmt::format("--grid {}x{} needs {} nodes, but machine file {} has {} (\"nodes\": {})", cfg.pr,
                                 cfg.pc, P, b.machine, machine.nodes, machine.nodes));
  if (cfg.gpus > machine.node.gpus.count)
    throw InputError(fmt::format("--gpus {} asks for more GPUs than the {} per node of {}", cfg.gpus,
                                 machine.node.gpus.count, b.machine));
  if (cfg.gpus > 0) cfg.gpu_model = &machine.model(machine.node.gpus.model);
  // The GPUs below are built from these options before the run resolves its
  // configuration: --gpu-streams 0 must be refused as input here, not met by
  // the simulated GPU's own check as an internal error.
  driver::check_gpu_options(cfg);
  // --kernel-noise auto: the sigmas from the calibration, once (and refused
  // here, before any simulation, where the file measured none).
  models::take_measured_sigmas(cfg.noise, *cfg.model, cfg.gpu_model);
  // One simulation per process: this one (see simgrid_platform.hpp), of the run's nodes and GPUs.
  platform::Simulation sim(machine, P, cfg.gpus);
  if (b.fail) sim.schedule_failure(*b.fail, P, cfg.gpus);
  // A run the failure did not end says what became of it.
  struct FailNote {
    const BackendOptions& b;
    platform::Simulation& sim;
    std::string* out;
    void operator()() const {
      if (!b.fail || !out) return;
      const platform::SimFailure& f = *b.fail;
      if (const auto t = sim.failure_time())
        *out = fmt::format(
            "failure: --fail {}: link {} was turned off at {:g} s of simulated time, but nothing crossed "
            "it afterwards",
            f.spec, f.name, *t);
      else
        *out = fmt::format("failure: --fail {} never happened: the run ended at {:g} s of simulated time, before it",
                           f.spec, sim.clock());
    }
  } note{b, sim, fail_note};
  // Node k's simulated GPUs.
  std::vector<std::vector<std::unique_ptr<platform::Device>>> gpus(P);
  // A GPU's memory: --gpu-memory, else the machine file's less what each
  // compute stream beyond the first keeps for its libraries (GpuSpec::stream_reserve_bytes).
  const double reserved = machine.node.gpus.stream_reserve_bytes * (cfg.gpu_streams - 1);
  if (!b.gpu_memory && cfg.gpus > 0 && reserved >= machine.node.gpus.memory_bytes)
    throw InputError(
        fmt::format("--gpu-streams {}: the machine file's GPU memory, {:g} bytes, less {:g} bytes kept per "
                    "stream beyond the first (node.gpus.stream_reserve_bytes) leaves nothing",
                    cfg.gpu_streams, machine.node.gpus.memory_bytes, machine.node.gpus.stream_reserve_bytes));
  const std::size_t gpu_memory =
      b.gpu_memory ? b.gpu_memory : static_cast<std::size_t>(machine.node.gpus.memory_bytes - reserved);
  auto with_gpus = [&](RunConfig c, int k) {
    for (int g = 1; g <= cfg.gpus; ++g) {
      gpus[k].push_back(
          platform::make_sim_gpu(sim, k, g, gpu_memory, b.sim_data,
                                 {cfg.gpu_streams, machine.node.gpus.stream_overlap, machine.node.gpus.host_waits}));
      c.devices.push_back(gpus[k].back().get());
    }
    return c;
  };
  if (P == 1) {
    platform::SimGridPlatform node0(sim, 0, b.sim_data);
    backend_name = node0.backend_name();
    RunResult r = run_factorization(with_gpus(cfg, 0), node0);
    note();
    return without_handles(std::move(r), cfg);
  }
  // P node runtimes in this process, one actor each, over the modeled network.
  platform::SimCluster cluster(sim, P);
  std::vector<std::unique_ptr<platform::SimGridPlatform>> nodes;
  for (int k = 0; k < P; ++k) nodes.push_back(std::make_unique<platform::SimGridPlatform>(sim, k, b.sim_data));
  backend_name = nodes[0]->backend_name();
  std::vector<RunResult> results(P);
  if (cfg.observer && node_traces)
    for (int k = 1; k < P; ++k) node_traces->push_back(std::make_unique<TraceRecorder>(k));
  RelevanceCache relevance;  // one pass of the generator for every node
  platform::run_on_nodes(
      sim, P,
      [&](int k) {
        RunConfig mine = with_gpus(cfg, k);
        mine.network = &cluster.node(k);
        mine.relevance = &relevance;
        if (k != 0) mine.observer = cfg.observer && node_traces ? (*node_traces)[k - 1].get() : nullptr;
        results[k] = run_factorization(mine, *nodes[k]);
      },
      &cluster);  // (a node whose set-up fails tells the others in their first collective)
  note();
  return without_handles(std::move(results[0]), cfg);
}

}  // namespace tessera
