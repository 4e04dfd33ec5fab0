#include "experiments/calibrate_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace tessera {

namespace {

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
  calibrate_->add_option("--name", name_, "machine name in the file; default local");
  calibrate_->add_option("--threads", threads_,
                         "measure with 1..T threads running kernels concurrently (one model per T); default 1");
  calibrate_->add_option("--precision", precisions_, "precisions, comma-separated; default d,s");
  calibrate_->add_flag("--quick", quick_, "fewer square sizes (128, 256, 384) and shorter timing");
  calibrate_
      ->add_option("--kernels", kernels_,
                   "only these kernels (comma-separated: " + kernel_keys_text(KernelKeys::kCalibrated) + ")")
      ->delimiter(',');
  sizes_opt_ = calibrate_->add_option("--sizes", sizes_, "square tile sizes B; default 64,128,192,256,320,384,512")
                   ->delimiter(',');
  for_n_opt_ = calibrate_
                   ->add_option("--for-n", for_n_,
                                "also every tile shape the runtime's default tiles give for these N; default "
                                "2048,4096,8192; 0: none")
                   ->delimiter(',');
  for_s_opt_ =
      calibrate_
          ->add_option("--for-s", for_s_,
                       "with --for-n: the tiles of these s too (s-1 narrow columns of width B/(2s)); default 1")
          ->delimiter(',');
  calibrate_->add_flag("--list", list_, "print the shapes that would be measured and exit");
  calibrate_->add_option("--passes", passes_,
                         "measure every shape this many times, one pass after another, and keep each shape's fastest "
                         "pass (a neighbour's interference only slows kernels); default 1");
  calibrate_->add_flag("--cold", cold_,
                       "cold operands: copies spanning 128 MiB, restored right after each call, so no call finds its "
                       "operands in a cache (as a run's tasks mostly do not)");
}

int CalibrateCommand::run(int argc, char** argv) const {
  std::string command = "tessera";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  kernels::CalibrationOptions o;
  o.cold = cold_;
  if (passes_ < 1) throw InputError("--passes " + std::to_string(passes_) + " must be >= 1");
  o.passes = passes_;
  if (threads_ < 1) throw InputError("--threads " + std::to_string(threads_) + " must be >= 1");
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
    for (const auto n : for_n_)
      if (n > 0) o.for_n.push_back(n);  // --for-n 0: none
  }
  const auto shapes = kernels::calibration_shapes(o);
  if (shapes.empty()) throw InputError("nothing to calibrate: the kernels, sizes and --for-n select no tile shape");
  if (list_) {
    for (const auto& s : shapes)
      std::cout << fmt::format("{:<9} {} m={} n={} k={} ib={}", kernel_name(s.kernel), s.precision, s.m, s.n, s.k, s.ib)
                << '\n';
    std::cout << shapes.size() << " shapes x " << o.concurrency.size() << " concurrency level(s)" << std::endl;
    return 0;
  }
  std::ofstream out(out_);
  if (!out) throw InputError("--out " + out_ + ": cannot open for writing");
  const bool tty = isatty(fileno(stderr));
  o.progress = [tty](const std::string& line) {
    if (tty) std::cerr << "\r\033[K" << line << std::flush;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = kernels::calibrate(o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty) std::cerr << "\r\033[K";
  const int cores = std::max<int>(threads_, static_cast<int>(std::thread::hardware_concurrency()));
  out << kernels::calibration_machine_file(result, o, name_, cores, command, seconds);
  out.flush();
  if (!out) throw InputError("--out " + out_ + ": write failed");
  std::cout << fmt::format("calibrated {} kernel shapes x {} concurrency level(s) in {:.1f} s -> {}", shapes.size(),
                           o.concurrency.size(), seconds, out_)
            << std::endl;
  // The file is only good for runs with the same kernel set (it records it).
  std::cout << "OpenBLAS kernels: " << kernels::blas_core() << std::endl;
  if (const std::string advice = kernels::blas_core_advice(); !advice.empty())
    std::cout << "note: " << advice << std::endl;
  return 0;
}

}  // namespace tessera
