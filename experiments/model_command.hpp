#pragma once
// `tessera model comm`: prints the communication-cost model of 000 App. A.2
// and Table 1 for one configuration (models/comm_model.hpp).
// `tessera model kernels`: how well a machine file's calibrated kernel
// models predict their own measurements, each left out in turn, with each
// interpolation (models/kernel_model.hpp).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tessera {

// Registers `model` (with its subcommand `comm`) on the application. CLI11
// binds options to members, so the object stays where main() constructs it.
class ModelCommand {
 public:
  explicit ModelCommand(CLI::App& app);
  ModelCommand(const ModelCommand&) = delete;
  ModelCommand& operator=(const ModelCommand&) = delete;

  // True when the command line chose `tessera model ...`.
  bool chosen() const { return model_->parsed(); }
  // Prints the table (and writes --json); throws InputError on bad input.
  int run() const;

 private:
  CLI::App* model_ = nullptr;
  CLI::App* kernels_ = nullptr;
  CLI::App* comm_ = nullptr;
  std::string machine_, model_name_;
  int run_kernels() const;
  std::string algo_, grid_, json_path_;
  std::int64_t n_ = 0, B_ = 0;
  int s_ = 1;
  std::optional<double> v_;
  std::optional<std::int64_t> nb_, ib_;
  std::string qr_tree_ = "flat";
};

}  // namespace tessera
