#include "experiments/tune_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "experiments/driver.hpp"
#include "experiments/output_path.hpp"

namespace tessera {

TuneCommand::TuneCommand(CLI::App& app) {
  tune_ = app.add_subcommand(
      "tune",
      "choose B, s and b for a run (000 App. A.1, 001 §4.2): the dominant kernel's plateau, then every candidate "
      "simulated on --machine, then the best few run for real; writes the choice for tessera run --tuned FILE");
  tune_->add_option("--algo", req_.algo, "the factorization")->required();
  tune_->add_option("--n", req_.n, "columns (and rows unless --m)")->required();
  tune_->add_option("--m", req_.m, "rows; default n");
  tune_->add_option("--precision", precision_, "d | s; default d");
  tune_->add_option("--threads", req_.threads, "compute threads of the run; default 1");
  tune_->add_option("--gpus", req_.gpus, "GPUs of the run (their speed from --machine); default 0");
  tune_->add_option("--ib", req_.ib, "QR inner blocking; default 32");
  tune_->add_option("--pivot", req_.pivot,
                    "LU: partial | tournament | none, for every run of the tuning; default the run's");
  tune_->add_option("--machine", req_.machine,
                    "machine file whose kernel model ranks the candidates by simulation (for a native run: this "
                    "machine's calibration, made with the same OpenBLAS kernels); without it a native run is "
                    "ranked by real runs alone");
  tune_->add_option("--device", req_.device,
                    "a native run's GPUs (with --gpus): cuda | emulated, the --device of its real runs, which run "
                    "each candidate with the narrow width its simulation resolved");
  tune_->add_option("--gpu-streams", gpu_streams_, "the run's compute streams per GPU, for every child run");
  tune_->add_option("--gpu-qr-panel", gpu_qr_panel_,
                    "--device cuda, QR: the run's panels (householder | cholqr), for every real child run");
  tune_->add_option("--dist", req_.dist,
                    "with --gpus: multi-level (square tiles, narrow columns on the host) or gpu-columns (every "
                    "column on the GPUs, one tile row) only; default both, for a square Cholesky or QR");
  tune_->add_option("--gpu-memory", gpu_memory_,
                    "the run's bytes of memory per GPU (its --gpu-memory), for every child run: which tiles fit");
  tune_->add_option("--eviction", eviction_, "the run's GPU eviction (next-use | lru), for every child run");
  tune_->add_option("--backend", backend_,
                    "native (the run to tune is real: finish with real runs) | sim (it is simulated: the "
                    "simulations decide); default native");
  tune_->add_option(
      "--B-range", range_,
      "MIN:MAX:STEP of step 1's search; default 128:640:64, with --gpus 256:2048:64 (000 App. A.1), or up to "
      "the largest square tile a calibrated GPU model measured the dominant kernel at, where larger; sizes above "
      "the matrix's order are no candidates (a MIN above it is refused)");
  tune_->add_option("--plateau", req_.plateau_fraction,
                    "the plateau: the smallest B whose speed reaches this fraction of the best; default 0.95");
  tune_->add_option("--sizes", req_.sizes,
                    "candidate B: the plateau and the next sizes of the range, this many (0: all of them), and as many "
                    "widths of every column on the GPUs, narrowest first; default 0");
  tune_->add_option("--max-s", req_.max_s, "candidates have s = 1..MAX; default 3");
  tune_->add_option("--real-top", req_.real_top,
                    "real runs of at most this many candidates in the first pass (0: as many as 60% of the budget "
                    "allows); default 0");
  tune_->add_option("--real-reps", req_.real_reps,
                    "then the first pass's three fastest again, in turn, up to this many runs each while the budget "
                    "lasts, keeping their best time; default 3");
  tune_->add_option("--budget", req_.budget_s,
                    "seconds the real runs may take, process and matrix set-up included (0: none); default 60");
  tune_->add_option("--out", out_, "write the choice (and everything measured) as JSON to FILE");
  tune_->add_flag("--quiet", quiet_, "print only the choice");
  req_.B_min = req_.B_max = req_.B_step = 0;  // 0: the default range for the run's devices
}

int TuneCommand::run() {
  if (precision_ != "d" && precision_ != "s") throw InputError("--precision '" + precision_ + "' is not one of: d, s");
  req_.precision = precision_[0];
  if (backend_ != "native" && backend_ != "sim")
    throw InputError("--backend '" + backend_ + "' is not one of: native, sim");
  req_.simulated = backend_ == "sim";
  if (!range_.empty()) {
    long long a = 0, b = 0, c = 0;
    char tail = 0;
    if (std::sscanf(range_.c_str(), "%lld:%lld:%lld%c", &a, &b, &c, &tail) != 3)
      throw InputError("--B-range '" + range_ + "' is not MIN:MAX:STEP");
    // Given values are >= 1: 0 would read as "the default" in the request.
    if (a < 1 || b < a || c < 1)
      throw InputError("--B-range '" + range_ + "' is not MIN:MAX:STEP with 1 <= MIN <= MAX, STEP >= 1");
    // A size above the matrix's order is no tile of it: such sizes are skipped, and a range of nothing else
    // (its MIN above the order) measured sizes only to fall back on the order itself.
    const bool by_m = req_.m > 0 && req_.m < req_.n;
    const long long order = by_m ? req_.m : req_.n;
    if (order >= 1 && a > order)
      throw InputError("--B-range '" + range_ + "': every size exceeds " + (by_m ? "--m " : "--n ") +
                       std::to_string(order) + " (a tile is at most the matrix): give MIN <= " + std::to_string(order));
    req_.B_min = a;
    req_.B_max = b;
    req_.B_step = c;
  }
  for (const auto& [name, value] : {std::pair{"--gpu-streams", &gpu_streams_}, std::pair{"--gpu-memory", &gpu_memory_},
                                    std::pair{"--eviction", &eviction_}})
    if (tune_->get_option(name)->count() > 0) {
      if (req_.gpus < 1) throw InputError(std::string(name) + " " + *value + " describes the run's GPUs: add --gpus G");
      req_.graph_args.insert(req_.graph_args.end(), {name, *value});
    }
  // Their values, before a pass of simulations whose every child would refuse them.
  if (!gpu_memory_.empty() && parse_count("--gpu-memory", gpu_memory_) < 1)
    throw InputError("--gpu-memory " + gpu_memory_ + " must be >= 1 byte");
  if (!eviction_.empty()) (void)parse_eviction(eviction_);
  if (!gpu_streams_.empty()) {
    const std::uint64_t s = parse_count("--gpu-streams", gpu_streams_);
    if (s < 1) throw InputError("--gpu-streams " + gpu_streams_ + " must be >= 1");
    if (s > 1 && backend_ == "native" && req_.device != "cuda")
      throw InputError("--gpu-streams " + gpu_streams_ +
                       ": only CUDA GPUs (--device cuda) and simulated ones (--backend sim) have compute streams");
  }
  if (!gpu_qr_panel_.empty()) {
    (void)parse_qr_panel(gpu_qr_panel_);  // InputError naming it and the value
    if (req_.algo != "qr" || req_.device != "cuda" || req_.gpus < 1)
      throw InputError(
          "--gpu-qr-panel " + gpu_qr_panel_ + " sets the QR kernels of CUDA GPUs: " +
          (req_.algo != "qr" ? "the tuning is --algo " + req_.algo : std::string("add --gpus G --device cuda")));
    req_.real_args.insert(req_.real_args.end(), {"--gpu-qr-panel", gpu_qr_panel_});
  }
  if (req_.algo != "qr" && tune_->get_option("--ib")->count() > 0)
    throw InputError("--ib " + std::to_string(req_.ib) + " sets QR's kernels, and the tuning is --algo " + req_.algo);
  if (tune_->get_option("--out")->count() > 0 && out_.empty()) throw InputError("--out '': give a file");
  // Checked now, written once there is a choice (experiments/output_path.hpp).
  const NamedPath out{"--out", out_};
  check_distinct_paths({out}, {{"--machine", req_.machine}});
  check_output_path(out);
  if (!quiet_) req_.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  const TuneResult t = tune(req_);
  if (!quiet_) std::cout << tune_report(t);
  const TuneCandidate& c = t.choice();
  std::cout << fmt::format("tuned: {} (decided by {}, {:.1f} s; OpenBLAS kernels {})", tuned_args(c), t.decided_by,
                           t.seconds, t.blas_core)
            << std::endl;
  if (!out_.empty()) write_output({"--out", out_}, [&](std::ostream& f) { f << tune_json(t).dump(1) << '\n'; });
  return 0;
}

}  // namespace tessera
