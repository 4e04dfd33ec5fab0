#include "experiments/calibrate_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "base/cpu_count.hpp"
#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate.hpp"
#include "experiments/calibrate_device.hpp"
#include "experiments/calibrate_from_traces.hpp"
#include "experiments/output_path.hpp"
#include "experiments/preflight.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "kernels/cuda/host_waits.hpp"
#include "models/machine.hpp"
#include "platform/native/emulated_device.hpp"

namespace tessera {

namespace {

void list_shapes(const std::vector<KernelShape>& shapes) {
  for (const auto& s : shapes)
    std::cout << fmt::format("{:<9} {} m={} n={} k={} ib={}", kernel_name(s.kernel), s.precision, s.m, s.n, s.k, s.ib)
              << '\n';
}

// --out is checked for writing before a calibration of minutes (check_output_path), but written only after it
// (write_output: beside it, then renamed over it): a failed or interrupted calibration leaves an existing file (say,
// the --base it extends) as it was.
void write_file(const std::string& path, const std::string& text) {
  write_output({"--out", path}, [&](std::ostream& f) { f << text; });
}

// Progress lines: on a terminal each over the last; into a file or a pipe one line each, written at once, so that
// the log of a calibration stopped by a step's time limit (gpu_node.sh) says how far it got and what each shape took.
std::function<void(const std::string&)> progress_line() {
  return [tty = isatty(fileno(stderr)) != 0](const std::string& line) {
    if (tty) std::cerr << "\r\033[K" << line << std::flush;
    else std::cerr << line << std::endl;
  };
}
void clear_progress_line() {
  if (isatty(fileno(stderr))) std::cerr << "\r\033[K";
}

// --list with --in-run: the real runs it would make.
void list_runs(const kernels::InRunOptions& r) {
  std::size_t count = 0;
  for (const int t : r.threads)
    for (const std::string& algo : kernels::in_run_algos(r))
      for (const char p : r.precisions)
        for (const auto n : r.n)
          for (const int s : r.s) {
            std::cout << fmt::format("in-run x{} {} {} N={} s={}", t, algo, p, n, s) << '\n';
            ++count;
          }
  std::cout << count << " real runs x " << r.passes << " pass(es)" << std::endl;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

}  // namespace

CalibrateCommand::CalibrateCommand(CLI::App& app) {
  calibrate_ = app.add_subcommand(
      "calibrate", "time every tile kernel on this machine and write a machine file with a calibrated kernel model");
  calibrate_->add_option("--out", out_, "machine file to write; default local.json");
  name_opt_ = calibrate_->add_option(
      "--name", name_, "machine name in the file; default local (with --device: the base file's name and -gpu)");
  calibrate_->add_option("--threads", threads_,
                         "measure with 1..T threads running kernels concurrently (one model per T); default 1");
  calibrate_->add_option("--precision", precisions_, "precisions, comma-separated; default d,s");
  calibrate_->add_flag("--quick", quick_,
                       "fewer square sizes (128, 256, 384; with --device 256, 512) and shorter timing");
  calibrate_
      ->add_option("--kernels", kernels_,
                   "only these kernels (comma-separated: " + kernel_keys_text(KernelKeys::kCalibrated) + ")")
      ->delimiter(',');
  sizes_opt_ =
      calibrate_
          ->add_option("--sizes", sizes_,
                       "square tile sizes B; default 64,128,192,256,320,384,512 (with --device 512,1024,2048,4096)")
          ->delimiter(',');
  for_n_opt_ = calibrate_
                   ->add_option("--for-n", for_n_,
                                "also every tile shape the runtime's default tiles give for these N; default "
                                "2048,4096,8192 (with --device none); 0: none")
                   ->delimiter(',');
  for_s_opt_ =
      calibrate_
          ->add_option(
              "--for-s", for_s_,
              "with --for-n: the tiles of these s too (s-1 narrow columns of width B/(2s), or --for-narrow's); "
              "default 1")
          ->delimiter(',');
  ib_opt_ = calibrate_
                ->add_option("--ib", ib_,
                             "QR's inner blocking the QR kernels are measured with; default 32 (run's --ib); "
                             "a list (32,128) measures them at each, and a simulated run takes the nearest")
                ->delimiter(',');
  calibrate_->add_flag("--list", list_, "print the shapes that would be measured and exit");
  calibrate_->add_option("--passes", passes_,
                         "measure every shape this many times, one pass after another, and keep each shape's fastest "
                         "pass (a neighbour's interference only slows kernels); default 1");
  calibrate_->add_option("--device", device_,
                         "calibrate a GPU instead of the cores: cuda (GPU 0) or emulated; adds it to --base");
  calibrate_->add_option("--base", base_,
                         "with --device: the machine file of this node's cores (written by tessera calibrate) that "
                         "the GPU is added to");
  calibrate_->add_option("--gpus", gpus_, "with --device: GPUs per node in the written file; default 1");
  calibrate_->add_flag("--stream-overlap", stream_overlap_,
                       "with --device cuda: also measure how much of the GPU its panel kernels leave to GEMMs on a "
                       "second compute stream (the machine file's node.gpus.stream_overlap, which simulated GPUs with "
                       "--gpu-streams use; experiments/calibrate_overlap.hpp)");
  calibrate_->add_option("--gpu-qr-panel", qr_panel_,
                         "with --device cuda: the QR kernels' panels, as tessera run's option: householder (default) "
                         "| cholqr");
  calibrate_->add_option("--gpu-cholqr-gram", cholqr_gram_,
                         "with --gpu-qr-panel cholqr: the panels' Gram matrices from blocks of R rows, as tessera "
                         "run's option; default 0, SYRK");
  calibrate_
      ->add_option("--for-b", for_b_,
                   "with --for-n: these top-level tile sizes B instead of the default tiles' (GPU runs use larger)")
      ->delimiter(',');
  calibrate_
      ->add_option("--for-narrow", for_narrow_,
                   "with --for-n and --for-s S > 1: narrow columns of these widths instead of B/(2s) (--dist "
                   "gpu-columns runs S equal columns: B/S)")
      ->delimiter(',');
  calibrate_->add_flag("--flush-restored", flush_restored_,
                       "warm operands, but every input a kernel destroys (TRSM's, POTF2''s, GEQRT's, TSQRT's, LU's "
                       "panel and triangle tiles) flushed from the caches after its restore, as in a run another task "
                       "wrote it");
  calibrate_->add_flag("--in-run", in_run_,
                       "then time the kernels inside real Cholesky and QR runs on this machine (orders --in-run-n, "
                       "the tiles of --for-s, 1..--threads threads, --passes passes) and model them with those "
                       "times (experiments/calibrate_in_run.hpp); with --base FILE: add them to that calibrated file "
                       "instead of calibrating in isolation first");
  in_run_n_opt_ =
      calibrate_->add_option("--in-run-n", in_run_n_, "with --in-run: the runs' orders N; default 4096,8192")
          ->delimiter(',');
  calibrate_
      ->add_option(
          "--from-traces", from_traces_,
          "instead of timing kernels: the GPU tasks' own device times (gpu_span_us) in these traces of real "
          "runs (tessera run --gpus G --trace FILE), merged into --base's GPU model as --in-run merges the "
          "cores', and cold runs' first calls as its first_call_s (experiments/calibrate_from_traces.hpp); with "
          "--base and --out only")
      ->delimiter(',');
  calibrate_->add_flag("--cold", cold_,
                       "cold operands: copies spanning 128 MiB, restored right after each call, so no call finds its "
                       "operands in a cache (as a run's tasks mostly do not); with --device, 64 MiB copied on the GPU "
                       "before each call evicts its cache");
}

int CalibrateCommand::run(int argc, char** argv) const {
  std::string command = "tessera";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  if (!from_traces_.empty()) return run_from_traces(command);
  kernels::CalibrationOptions o;
  o.cold = cold_;
  o.flush_restored = flush_restored_;
  if (cold_ && flush_restored_) throw InputError("--flush-restored and --cold: choose one (--cold flushes everything)");
  const QrPanel qr_panel = parse_qr_panel(qr_panel_);
  if (qr_panel == QrPanel::CholQr && device_ != "cuda")
    throw InputError("--gpu-qr-panel cholqr needs --device cuda (the CUDA kernels' panels)");
  check_cholqr_gram(cholqr_gram_, qr_panel);
  if (stream_overlap_ && device_ != "cuda")
    throw InputError("--stream-overlap needs --device cuda (" +
                     (device_.empty() ? std::string("the cores have no compute streams")
                                      : "the " + device_ + " GPU has one compute stream") +
                     ")");
  if (ib_.empty()) throw InputError("--ib names no inner blocking");
  for (const std::int64_t ib : ib_)
    if (ib < 1) throw InputError("--ib " + std::to_string(ib) + " must be >= 1");
  if (std::set<std::int64_t>(ib_.begin(), ib_.end()).size() != ib_.size())
    throw InputError("--ib names an inner blocking twice");
  o.ib = ib_.front();
  o.more_ib.assign(ib_.begin() + 1, ib_.end());
  if (passes_ < 1) throw InputError("--passes " + std::to_string(passes_) + " must be >= 1");
  o.passes = passes_;
  if (threads_ < 1) throw InputError("--threads " + std::to_string(threads_) + " must be >= 1");
  // Each concurrency 1..T is timed with T copies of a kernel at once: beyond
  // the threads a run may have (experiments/preflight.hpp) it says nothing.
  if (const int limit = preflight::thread_limit(preflight::cores_found()); threads_ > limit)
    throw InputError("--threads " + std::to_string(threads_) + " is more than a run may have on this machine (" +
                     std::to_string(limit) + ")");
  o.concurrency.clear();
  for (int t = 1; t <= threads_; ++t) o.concurrency.push_back(t);
  o.precisions.clear();
  for (const std::string& p : split(precisions_)) {
    if (p != "d" && p != "s") throw InputError("--precision '" + p + "' is not one of: d, s");
    o.precisions.push_back(p[0]);
  }
  if (o.precisions.empty()) throw InputError("--precision '" + precisions_ + "' names no precision (d, s)");
  for (const std::string& k : kernels_)
    for (const std::string& name : split(k)) o.kernels.push_back(kernels::calibration_kernel_from_key(name));
  if (quick_) {
    // Fewer square sizes, shorter timing: about 20 s for d,s at 1 and 2 threads on the development VM.
    o.sizes = {128, 256, 384};
    o.min_reps = 5;
    o.min_time_s = 0.025;
    o.max_time_s = 0.3;
  }
  if (!device_.empty()) {
    // A GPU's runs use larger tiles than the cores' default tiles (README: B = 1024-4096 on an H100).
    o.sizes = quick_ ? std::vector<std::int64_t>{256, 512} : std::vector<std::int64_t>{512, 1024, 2048, 4096};
    o.for_n.clear();
  }
  if (sizes_opt_->count() > 0) {
    o.sizes.clear();
    for (const auto b : sizes_) {
      if (b < 1) throw InputError("--sizes " + std::to_string(b) + " must be >= 1");
      o.sizes.push_back(b);
    }
  }
  if (for_s_opt_->count() > 0) {
    o.for_s.clear();
    for (const int s : for_s_) {
      if (s < 1) throw InputError("--for-s " + std::to_string(s) + " must be >= 1");
      o.for_s.push_back(s);
    }
  }
  if (for_n_opt_->count() > 0) {
    o.for_n.clear();
    for (const auto n : for_n_) {
      if (n < 0) throw InputError("--for-n " + std::to_string(n) + " must be >= 1 (0: none)");
      if (n > 0) o.for_n.push_back(n);  // --for-n 0: none
    }
  }
  if (!for_b_.empty() && o.for_n.empty()) throw InputError("--for-b needs --for-n (the orders whose tiles it sizes)");
  if (device_.empty() && gpus_ != 1)
    throw InputError("--gpus " + std::to_string(gpus_) + " is used only with --device");
#if !(defined(__x86_64__) || defined(__i386__))
  if (flush_restored_) throw InputError("--flush-restored: this build has no cache flush instruction (x86 only)");
#endif
  for (const auto b : for_b_) {
    if (b < 1) throw InputError("--for-b " + std::to_string(b) + " must be >= 1");
    o.for_b.push_back(b);
  }
  if (!for_narrow_.empty() && o.for_n.empty())
    throw InputError("--for-narrow needs --for-n (the orders whose tiles it sizes)");
  if (!for_narrow_.empty() && std::none_of(o.for_s.begin(), o.for_s.end(), [](int s) { return s > 1; }))
    throw InputError("--for-narrow needs --for-s S > 1 (tiles with narrow columns)");
  for (const auto b : for_narrow_) {
    if (b < 1) throw InputError("--for-narrow " + std::to_string(b) + " must be >= 1");
    o.for_narrow.push_back(b);
  }
  if (in_run_n_opt_->count() > 0 && !in_run_) throw InputError("--in-run-n is used only with --in-run");
  for (const auto n : in_run_n_)
    if (n < 1) throw InputError("--in-run-n " + std::to_string(n) + " must be >= 1");
  if (in_run_ && !device_.empty())
    throw InputError("--in-run times the cores' kernels inside real runs; it does not go with --device " + device_);
  if (!device_.empty()) return run_device(o, command, qr_panel);
  if (!base_.empty() && !in_run_) throw InputError("--base " + base_ + " is used only with --device or --in-run");
  if (in_run_ && !base_.empty()) return run_in_run_only(o, command);
  const auto shapes = kernels::calibration_shapes(o);
  if (shapes.empty()) throw InputError("nothing to calibrate: the kernels, sizes and --for-n select no tile shape");
  const std::optional<kernels::InRunOptions> runs =
      in_run_ ? std::optional<kernels::InRunOptions>(in_run_options(o)) : std::nullopt;
  if (list_) {
    list_shapes(shapes);
    std::cout << shapes.size() << " shapes x " << o.concurrency.size() << " concurrency level(s)" << std::endl;
    if (runs) list_runs(*runs);
    return 0;
  }
  check_output_path({"--out", out_});
  preflight::check_calibration_fits(shapes, threads_, o.sizes);
  o.progress = progress_line();
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = kernels::calibrate(o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  clear_progress_line();
  const int cores = std::max<int>(threads_, static_cast<int>(usable_cpus()));
  std::string text = kernels::calibration_machine_file(result, o, name_, cores, command, seconds);
  std::cout << fmt::format("calibrated {} kernel shapes x {} concurrency level(s) in {:.1f} s", shapes.size(),
                           o.concurrency.size(), seconds)
            << std::endl;
  // Written before the runs too: a failed in-run phase keeps minutes of calibration.
  write_file(out_, text);
  if (runs) write_file(out_, add_in_run(*runs, text, out_, command));
  std::cout << "-> " << out_ << std::endl;
  // The file is only good for runs with the same kernel set (it records it).
  std::cout << "OpenBLAS kernels: " << kernels::blas_core() << std::endl;
  if (const std::string advice = kernels::blas_core_advice(); !advice.empty())
    std::cout << "note: " << advice << std::endl;
  return 0;
}

kernels::InRunOptions CalibrateCommand::in_run_options(const kernels::CalibrationOptions& o) const {
  kernels::InRunOptions r;
  r.precisions = o.precisions;
  r.n = in_run_n_;
  r.s = o.for_s;
  r.threads = o.concurrency;
  r.kernels = o.kernels;
  r.ib = o.ib;
  r.passes = o.passes;
  if (kernels::in_run_algos(r).empty())
    throw InputError("--in-run: none of the --kernels runs in a Cholesky or QR factorization");
  return r;
}

std::string CalibrateCommand::add_in_run(const kernels::InRunOptions& r, const std::string& text,
                                         const std::string& origin, const std::string& command) const {
  kernels::InRunOptions o = r;
  o.progress = progress_line();
  const auto t0 = std::chrono::steady_clock::now();
  const kernels::InRunMeasurement measured = kernels::measure_in_run(o);
  const std::vector<kernels::InRunShape>& shapes = measured.shapes;
  const std::vector<kernels::InRunRun>& runs = measured.runs;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  clear_progress_line();
  nlohmann::ordered_json record;
  record["command"] = command;
  record["date"] = kernels::utc_now();
  record["blas_core"] = kernels::blas_core();
  record["seconds"] = std::round(seconds * 10) / 10;
  record["algos"] = kernels::in_run_algos(o);
  std::vector<std::string> precisions;
  for (const char p : o.precisions) precisions.emplace_back(1, p);
  record["precisions"] = precisions;
  record["n"] = o.n;
  record["s"] = o.s;
  record["ib"] = o.ib;  // QR's inner blocking in the runs: the base's (their times are merged onto its entries)
  record["threads"] = o.threads;
  record["passes"] = o.passes;
  record["min_calls"] = o.min_calls;
  record["shapes"] = shapes.size();
  // Each configuration's fastest run: references for a later check that the
  // machine still runs at this speed (validate_prediction's drift check).
  record["runs"] = nlohmann::ordered_json::array();
  for (const kernels::InRunRun& x : runs)
    record["runs"].push_back({{"algo", x.algo},
                              {"precision", std::string(1, x.precision)},
                              {"n", x.n},
                              {"s", x.s},
                              {"threads", x.threads},
                              {"time_s", x.time_s}});
  record["method"] =
      "each configuration (default tiles, native backend, generated matrix) run once per pass and thread count; "
      "every task's wall time around its kernel kept under its shape, but each run's first call of each kernel; "
      "per thread count and shape the median and interquartile range of one pass's calls (shapes with min_calls "
      "calls or more), the pass with the smallest median kept";
  std::string merged = kernels::merge_in_run(text, origin, shapes, record.dump(), measured.task_s);
  (void)platform::Machine::parse(merged, out_);  // what is written loads
  std::cout << fmt::format("in-run: {} kernel shapes timed inside {} real runs in {:.1f} s", shapes.size(),
                           static_cast<std::size_t>(o.passes) * o.threads.size() * kernels::in_run_algos(o).size() *
                               o.precisions.size() * o.n.size() * o.s.size(),
                           seconds)
            << std::endl;
  return merged;
}

int CalibrateCommand::run_in_run_only(const kernels::CalibrationOptions& o, const std::string& command) const {
  const std::string base = read_text_file("--base", base_);
  (void)platform::Machine::parse(base, base_);  // a bad base is refused before anything runs
  // What only an isolated calibration uses has no effect here: refused, not ignored.
  for (const auto& [given, name] :
       {std::pair{cold_, "--cold"}, std::pair{flush_restored_, "--flush-restored"}, std::pair{quick_, "--quick"},
        std::pair{sizes_opt_->count() > 0, "--sizes"}, std::pair{for_n_opt_->count() > 0, "--for-n"},
        std::pair{!for_b_.empty(), "--for-b"}, std::pair{!for_narrow_.empty(), "--for-narrow"},
        std::pair{name_opt_->count() > 0, "--name"}})
    if (given)
      throw InputError(std::string(name) + " is for a calibration in isolation; --in-run --base " + base_ +
                       " only runs factorizations and adds their times to it");
  kernels::InRunOptions runs = in_run_options(o);
  // QR's kernels run with the inner blocking the base measured them with.
  const auto doc = nlohmann::json::parse(base);
  if (doc.contains("calibration") && doc["calibration"].contains("qr_ib")) {
    const std::int64_t base_ib = doc["calibration"]["qr_ib"].get<std::int64_t>();
    if (ib_opt_->count() > 0 && (ib_.size() != 1 || ib_.front() != base_ib))
      throw InputError(fmt::format("--ib {}: --base {} measured QR's kernels with ib = {} (--in-run runs one)",
                                   fmt::join(ib_, ","), base_, base_ib));
    runs.ib = base_ib;
  }
  kernels::check_in_run_target(base, base_, runs.threads);
  if (list_) {
    list_runs(runs);
    return 0;
  }
  check_output_path({"--out", out_});
  write_file(out_, add_in_run(runs, base, base_, command));
  std::cout << "-> " << out_ << std::endl;
  return 0;
}

int CalibrateCommand::run_from_traces(const std::string& command) const {
  // It times nothing: every option of a calibration that does is refused, not ignored.
  for (const CLI::Option* opt : calibrate_->get_options())
    if (opt->count() > 0 && opt->get_name() != "--from-traces" && opt->get_name() != "--base" &&
        opt->get_name() != "--out")
      throw InputError(opt->get_name() +
                       " is for a calibration that times kernels; --from-traces takes their times from the traces "
                       "(with --base FILE and --out only)");
  if (base_.empty())
    throw InputError(
        "--from-traces needs --base FILE: the node's GPU calibration (tessera calibrate --device cuda) "
        "the traced times are merged into");
  if (calibrate_->get_option("--out")->count() == 0)
    throw InputError("--from-traces needs --out FILE: the merged machine file (--base " + base_ + " stays as it is)");
  const std::string base = read_text_file("--base", base_);
  (void)platform::Machine::parse(base, base_);
  kernels::check_in_run_target(base, base_, {kernels::kGpuInRun});
  std::vector<NamedPath> inputs{{"--base", base_}};
  for (const std::string& t : from_traces_) inputs.push_back({"--from-traces", t});
  check_distinct_paths({NamedPath{"--out", out_}}, inputs);
  check_output_path({"--out", out_});
  const kernels::GpuInRunTraces traced = kernels::gpu_in_run_shapes(from_traces_, 1);
  // The traced QR panels must be those the base's GEQRT and TSQRT were timed with.
  const auto doc = nlohmann::json::parse(base);
  const std::string base_panel = doc.value("/calibration/gpu/qr_panel"_json_pointer, std::string());
  if (!traced.qr_panel.empty() && !base_panel.empty() && traced.qr_panel != base_panel)
    throw InputError("--from-traces: the traced QR runs factored panels by " + traced.qr_panel + ", and --base " +
                     base_ + " timed " + base_panel + " panels (calibrate the GPU with --gpu-qr-panel " +
                     traced.qr_panel + ")");
  const int base_gram = doc.value("/calibration/gpu/cholqr_gram"_json_pointer, 0);
  if (traced.qr_panel == "cholqr" && base_panel == "cholqr" && traced.cholqr_gram != base_gram)
    throw InputError(fmt::format(
        "--from-traces: the traced QR runs formed their Cholesky QR Grams with --gpu-cholqr-gram {}, and --base {} "
        "timed panels with --gpu-cholqr-gram {} (calibrate the GPU with --gpu-cholqr-gram {})",
        traced.cholqr_gram, base_, base_gram, traced.cholqr_gram));
  nlohmann::ordered_json record;
  record["command"] = command;
  record["date"] = kernels::utc_now();
  record["traces"] = from_traces_;
  if (!traced.qr_panel.empty()) record["qr_panel"] = traced.qr_panel;
  if (traced.qr_panel == "cholqr") record["cholqr_gram"] = traced.cholqr_gram;
  record["min_calls"] = 1;
  record["shapes"] = traced.shapes.size();
  record["note"] =
      traced.shapes.empty()
          ? "first calls only (the traces have no device spans): each GPU lane's first call of each kernel in the "
            "cold runs' traces, against its shape's other calls"
          : "each GPU task's device span (gpu_span_us) in the traces, each trace lane's first call of each kernel "
            "left out; the cold runs' first calls as the GPU model's first_call_s";
  record["cold_traces"] = traced.cold_traces;
  record["first_calls"] = traced.first_calls;
  // (Traces without spans give first calls only: the base's shapes stay.)
  const std::string text = kernels::set_first_calls(
      traced.shapes.empty() ? base : kernels::merge_in_run(base, base_, traced.shapes, record.dump()), out_,
      kernels::kGpuInRun, traced.first_call_s,
      fmt::format("calibration.gpu_in_run: each GPU lane's first call of each kernel in {} trace(s) of cold runs "
                  "(gpu_warmup off), its device span (in a trace without spans, its interval) less the median of "
                  "its shape's other calls in the same trace; median of {} such calls",
                  traced.cold_traces, traced.first_calls),
      traced.shapes.empty() ? record.dump() : std::string());
  (void)platform::Machine::parse(text, out_);  // what is written loads
  write_file(out_, text);
  std::cout << fmt::format("{} GPU kernel shapes from {} trace(s) merged into {} -> {}", traced.shapes.size(),
                           from_traces_.size(), base_, out_)
            << std::endl;
  if (!traced.first_call_s.empty())
    std::cout << fmt::format(
                     "first calls of {} GPU kernel(s) from {} cold trace(s): the simulator charges them with "
                     "--gpu-warmup off",
                     traced.first_call_s.size(), traced.cold_traces)
              << std::endl;
  return 0;
}

int CalibrateCommand::run_device(kernels::CalibrationOptions o, const std::string& command, QrPanel qr_panel) const {
  if (device_ != "emulated" && device_ != "cuda")  // before --list, which would otherwise list for no device
    throw InputError("--device '" + device_ + "' is not one of: cuda, emulated");
  if (threads_ != 1) throw InputError("--threads " + std::to_string(threads_) + " is for the cores, not with --device");
  if (flush_restored_)
    throw InputError("--flush-restored is for the cores; a GPU's counterpart is --device with --cold");
  if (gpus_ < 1) throw InputError("--gpus " + std::to_string(gpus_) + " must be >= 1");
  if (base_.empty())
    throw InputError("--device " + device_ +
                     " needs --base FILE: the machine file of this node's cores (written by tessera calibrate) that "
                     "the GPU is added to");
  const std::string base = read_text_file("--base", base_);
  (void)platform::Machine::parse(base, base_);  // a bad base is refused before the device is timed
  o.kernels.erase(std::remove_if(o.kernels.begin(), o.kernels.end(),
                                 [this](std::uint16_t k) {
                                   if (!kernels::runs_on_device(k))
                                     throw InputError(std::string("--kernels ") + kernel_key(k) +
                                                      " runs on CPU cores only, not on a GPU (--device " + device_ +
                                                      ")");
                                   return false;
                                 }),
                  o.kernels.end());
  std::vector<KernelShape> shapes;
  for (const KernelShape& s : kernels::calibration_shapes(o))
    if (kernels::runs_on_device(s.kernel)) shapes.push_back(s);
  if (shapes.empty()) throw InputError("nothing to calibrate: the kernels, sizes and --for-n select no GPU tile shape");
  if (list_) {
    list_shapes(shapes);
    std::cout << shapes.size() << " shapes on the device" << std::endl;
    return 0;
  }
  preflight::check_calibration_fits(shapes, 1, o.sizes);  // the host's copies of a device's operands
  // GPU 0 with the kernels' panels chosen and `streams` compute streams.
  const auto cuda_device = [&](int streams) {
    kernels::CudaKernelOptions options;
    options.cholqr_panels = qr_panel == QrPanel::CholQr;
    options.cholqr_gram_rows = cholqr_gram_;
    options.compute_streams = streams;
    return kernels::make_cuda_device(1, 0, 0, options);
  };
  std::unique_ptr<platform::Device> dev;
  if (device_ == "emulated") dev = std::make_unique<platform::EmulatedDevice>(1, platform::EmulatedDeviceOptions{});
  else if (device_ == "cuda") {
    if (!TESSERA_HAVE_CUDA) throw NotCompiled("CUDA");
    if (kernels::cuda_device_count() < 1) {  // no GPU or no driver: the user's machine, not an internal error
      const std::string why = kernels::cuda_backend_unavailable();
      throw InputError("--device cuda: no CUDA device is present" + (why.empty() ? "" : " (" + why + ")"));
    }
    dev = cuda_device(1);
  } else throw InputError("--device '" + device_ + "' is not one of: cuda, emulated");
  // Copies of every size from 4 KiB (latency) to the largest tile measured (at least 4 MiB).
  std::size_t largest = std::size_t{4} << 20;
  for (const KernelShape& s : shapes)  // (the shapes fit this process: m * n * 8 is far within size_t)
    largest = std::max(largest, static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n) *
                                    static_cast<std::size_t>(s.precision == 's' ? 4 : 8));
  std::vector<std::size_t> link_bytes = {4096};
  for (std::size_t b = std::size_t{1} << 20; b < largest; b *= 4) link_bytes.push_back(b);
  link_bytes.push_back(largest);
  check_output_path({"--out", out_});
  o.progress = progress_line();
  const auto t0 = std::chrono::steady_clock::now();
  auto result = kernels::calibrate_device(*dev, o, link_bytes);
  if (device_ == "cuda") {
    result.host_waits = kernels::cuda_host_waiting_kernels(qr_panel == QrPanel::CholQr);
    result.stream_reserve = kernels::cuda_stream_reserve(qr_panel == QrPanel::CholQr);
    result.qr_panel = qr_panel == QrPanel::CholQr ? "cholqr" : "householder";
    result.cholqr_gram = cholqr_gram_;
  }
  if (stream_overlap_) {
    // On a device of its own with two compute streams (the one above keeps the one-stream capacity it recorded).
    dev.reset();
    dev = cuda_device(2);
    kernels::measure_overlaps(*dev, shapes, o, result);
    dev.reset();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  clear_progress_line();
  if (!result.overlap_error.empty())
    std::cout << "stream overlap: stopped: " << result.overlap_error << " (the file keeps what was measured)"
              << std::endl;
  const std::string name = name_ == "local" ? platform::Machine::parse(base, base_).name + "-gpu" : name_;
  const std::string text = kernels::device_machine_file(base, base_, result, o, gpus_, name, command, seconds);
  (void)platform::Machine::parse(text, out_);  // what is written loads
  write_file(out_, text);
  std::cout << fmt::format(
                   "calibrated {} kernel shapes on {} in {:.1f} s; link to it {:.2f} GB/s + {:.1f} us, from it {:.2f} "
                   "GB/s + {:.1f} us -> {}",
                   shapes.size(), result.device, seconds, result.to_device.bandwidth_Bps / 1e9,
                   result.to_device.latency_s * 1e6, result.from_device.bandwidth_Bps / 1e9,
                   result.from_device.latency_s * 1e6, out_)
            << std::endl;
  return 0;
}

}  // namespace tessera
