#pragma once
// `tessera run --backend sim`: the options of a simulated run and the run
// itself, one node or a cluster of node runtimes in this process over the
// machine file's SimGrid platform.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/driver.hpp"
#include "models/kernel_noise.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "runtime/trace.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tessera {

struct BackendOptions {
  Backend backend = Backend::Native;
  std::string machine;
  bool sim_data = false;
  int nodes = 0;                             // simulated nodes; 0: the grid's
  std::size_t gpu_memory = 0;                // simulated GPUs' memory in bytes (--gpu-memory); 0: the machine file's
  bool threads_from_cores = false;           // --threads not given with --gpus: from the node's cores
  std::optional<platform::SimFailure> fail;  // --fail: a host or link turned off in the simulation
  models::KernelNoise noise;                 // --kernel-noise, --node-noise, --noise-seed
};

// 000 §5.3: n - g - 2 compute threads on a node of n cores with g GPUs (at least one).
inline int default_threads(int cores, int gpus) { return std::max(1, cores - gpus - 2); }

// The variation options of a simulated run (models/kernel_noise.hpp), as given.
struct NoiseArgs {
  std::string kernel;  // --kernel-noise: a sigma or "auto"
  std::string node;    // --node-noise: a sigma
  std::string seed;    // --noise-seed
  // Whether each was given (an empty value given is refused, not ignored).
  const CLI::Option* kernel_opt = nullptr;
  const CLI::Option* node_opt = nullptr;
  const CLI::Option* seed_opt = nullptr;
};
void add_noise_options(CLI::App& run, NoiseArgs& args);
// Throws InputError naming the option and its value: a sigma that is not a
// number from 0 to kMaxNoiseSigma (--kernel-noise also takes auto), a seed
// that is not a decimal integer below 2^64, or any of them without
// --backend sim.
inline constexpr double kMaxNoiseSigma = 2.0;
models::KernelNoise parse_noise(const NoiseArgs& args, Backend backend);

// The run on the machine file's simulated platform. A cluster's node 0
// result is returned; with a trace (cfg.observer, node 0's), `node_traces`
// gets one recorder for each other node; with --fail, `fail_note` a line for
// a run the failure did not end.
RunResult run_simulated(RunConfig cfg, const BackendOptions& b, std::string& backend_name,
                        std::vector<std::unique_ptr<TraceRecorder>>* node_traces, std::string* fail_note);

}  // namespace tessera
