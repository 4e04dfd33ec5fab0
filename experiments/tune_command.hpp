#pragma once
// `tessera tune`: chooses B, s and b for one run (experiments/tune.hpp),
// prints what it measured and writes the choice as JSON for
// `tessera run --tuned FILE`.
#include <CLI/CLI.hpp>

#include <string>

#include "experiments/apply_tuning.hpp"
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
  std::string gpu_streams_, gpu_memory_, eviction_;  // as given: every child run gets them
  std::string gpu_qr_panel_;                         // as given: every real child run gets it
  bool quiet_ = false;
};

}  // namespace tessera
