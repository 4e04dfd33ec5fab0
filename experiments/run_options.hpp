#pragma once
// The `tessera run` options that would change nothing in the run they are
// given with: each is refused with one line naming it and its value, never
// silently ignored.
#include <string>

#include <CLI/CLI.hpp>

#include "experiments/driver.hpp"

namespace tessera {

// Throws InputError for the first option of `run` (the parsed subcommand)
// that the configuration makes idle: a GPU option without --gpus, a tile
// option with a dense peer (--impl lapack | cusolver, named by impl_name),
// --pageable with GPUs that are not CUDA ones, --compute-nice above 0 in a
// simulated run or with a dense peer, QR's kernel options with another
// factorization.
void refuse_idle_options(const CLI::App& run, const RunConfig& cfg, Backend backend, const std::string& impl_name);

}  // namespace tessera
