#pragma once
// `tessera calibrate`: times every tile kernel on this machine
// (experiments/calibrate.hpp) and writes a machine file with the calibrated
// kernel model.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/calibrate.hpp"
#include "experiments/calibrate_in_run.hpp"
#include "experiments/driver.hpp"

namespace tessera {

class CalibrateCommand {
 public:
  explicit CalibrateCommand(CLI::App& app);
  CalibrateCommand(const CalibrateCommand&) = delete;
  CalibrateCommand& operator=(const CalibrateCommand&) = delete;

  bool chosen() const { return calibrate_->parsed(); }
  // Calibrates and writes --out (the command line is recorded in it);
  // throws InputError on bad input.
  int run(int argc, char** argv) const;

 private:
  // --device: the GPU's kernels and link added to --base (experiments/calibrate_device.hpp).
  // qr_panel: the CUDA kernels' panels (--gpu-qr-panel, parsed by run()).
  int run_device(kernels::CalibrationOptions o, const std::string& command, QrPanel qr_panel) const;
  // --in-run: the options of the real runs (experiments/calibrate_in_run.hpp), from this command's.
  kernels::InRunOptions in_run_options(const kernels::CalibrationOptions& o) const;
  // --in-run: the runs' times merged into `text` (the file --out gets); the record names `command`.
  std::string add_in_run(const kernels::InRunOptions& r, const std::string& text, const std::string& origin,
                         const std::string& command) const;
  // --in-run --base FILE: the runs' times added to FILE, no isolated calibration.
  int run_in_run_only(const kernels::CalibrationOptions& o, const std::string& command) const;
  // --from-traces T1,T2 --base FILE: the GPU's kernels timed inside the traced runs, added to FILE
  // (experiments/calibrate_from_traces.hpp).
  int run_from_traces(const std::string& command) const;
  CLI::App* calibrate_ = nullptr;
  CLI::Option *sizes_opt_ = nullptr, *for_n_opt_ = nullptr, *for_s_opt_ = nullptr, *in_run_n_opt_ = nullptr,
              *name_opt_ = nullptr, *ib_opt_ = nullptr;
  std::string device_, base_;
  std::string qr_panel_ = "householder";  // with --device cuda: --gpu-qr-panel
  int cholqr_gram_ = 0;                   // with --gpu-qr-panel cholqr: --gpu-cholqr-gram
  int gpus_ = 1;
  std::vector<std::int64_t> ib_{32};  // the first: qr_ib; the rest: CalibrationOptions::more_ib
  std::vector<std::int64_t> for_b_;
  std::vector<std::int64_t> for_narrow_;
  std::string out_ = "local.json";
  std::string name_ = "local";
  int threads_ = 1, passes_ = 1;
  std::string precisions_ = "d,s";
  bool quick_ = false, list_ = false, cold_ = false, flush_restored_ = false, in_run_ = false, stream_overlap_ = false;
  std::vector<std::int64_t> in_run_n_ = {4096, 8192};
  std::vector<std::string> from_traces_;
  std::vector<std::string> kernels_;
  std::vector<std::int64_t> sizes_, for_n_;
  std::vector<int> for_s_;
};

}  // namespace tessera
