#pragma once
// `tessera run --B auto | --tuned FILE` (experiments/tune.hpp chooses the
// tiles; `tessera tune` writes FILE): what the run's configuration takes
// from them.
#include <string>
#include <vector>

#include "experiments/driver.hpp"

namespace tessera {

// `tessera run`'s --B (a size or auto) and --tuned FILE: sets cfg.B, and
// with auto or a file also cfg.s and cfg.auto_b. --B auto tunes inline (on
// `machine`'s model when the run is simulated, by real runs otherwise).
struct TuningOptions {
  std::string B, tuned, machine;
  bool s_given = false, simulated = false;
  // --dist given: the tuning keeps it (no gpu-columns candidates; a tuned
  // file that chose another distribution is refused).
  bool dist_given = false;
  // --threads not given with --gpus: the run takes the node's cores less its
  // GPUs' threads (default_threads), and so does the tuning of --B auto.
  bool threads_from_cores = false;
  std::string window;  // --window as given (empty: not given)
  // The run's GPU options as given (--gpu-streams, --gpu-memory, --eviction,
  // --keep-tiles, --gpu-kernel-depth), for every child run of --B auto: they
  // decide which tiles fit a GPU and how fast its kernels run beside each other.
  std::vector<std::string> gpu_args;
  // The tessera binary --B auto's child runs run (TuneRequest::program; empty: this one).
  std::string program;
};
void apply_tuning(RunConfig& cfg, const TuningOptions& o);

}  // namespace tessera
