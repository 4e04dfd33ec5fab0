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

// Throws InputError naming the first option of `app` or its subcommands given
// a whole number outside int64: CLI11 reads one as int64's bound, so that
// --n 99999999999999999999 went on as --n 9223372036854775807 and the
// refusal that followed named a value the user never gave.
void refuse_saturated_integers(const CLI::App& app);

}  // namespace tessera
