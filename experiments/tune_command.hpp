#pragma once
// `tessera tune`: chooses B, s and b for one run (experiments/tune.hpp),
// prints what it measured and writes the choice as JSON for
// `tessera run --tuned FILE`.
#include <CLI/CLI.hpp>

#include <string>

#include "experiments/driver.hpp"
#include "experiments/tune.hpp"

namespace tessera {

class TuneCommand {
 public:
  explicit TuneCommand(CLI::App& app);
  TuneCommand(const TuneCommand&) = delete;
  TuneCommand& operator=(const TuneCommand&) = delete;

  bool chosen() const { return tune_->parsed(); }
  // Tunes, prints the table and writes --out; throws InputError on bad input.
  int run();

 private:
  CLI::App* tune_ = nullptr;
  TuneRequest req_;
  std::string precision_ = "d", backend_ = "native", range_, out_;
  bool quiet_ = false;
};

// `tessera run`'s --B (a size or auto) and --tuned FILE: sets cfg.B, and
// with auto or a file also cfg.s and cfg.auto_b. --B auto tunes inline (on
// `machine`'s model when the run is simulated, by real runs otherwise).
struct TuningOptions {
  std::string B, tuned, machine;
  bool s_given = false, simulated = false;
  // --threads not given with --gpus: the run takes the node's cores less its
  // GPUs' threads (default_threads), and so does the tuning of --B auto.
  bool threads_from_cores = false;
  std::string window;  // --window as given (empty: not given)
};
void apply_tuning(RunConfig& cfg, const TuningOptions& o);

// The table `tessera tune` prints: the kernel curve, every candidate and the choice.
std::string tune_report(const TuneResult& t);

}  // namespace tessera
