// The `tessera` command line.
//   tessera run --algo cholesky|qr --n N [--m M] [--B B] [--s S] [--b b] [--precision d|s]
//               [--threads T] [--check] [--json FILE] [--seed K] [--input FILE.mtx] ...
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "experiments/driver.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/error.hpp"

namespace {

int run_command(tessera::RunConfig cfg, const std::string& json_path, const std::string& policy) {
  using namespace tessera;
  if (policy == "priority") cfg.policy = ReadyPolicy::Priority;
  else if (policy == "fifo") cfg.policy = ReadyPolicy::Fifo;
  else if (policy == "random") cfg.policy = ReadyPolicy::Random;
  else throw InputError("--policy '" + policy + "' is not one of: priority, fifo, random");
  // Fail on an unwritable --json before spending time on the factorization.
  std::ofstream json;
  if (!json_path.empty()) {
    json.open(json_path);
    if (!json) throw InputError("--json " + json_path + ": cannot open for writing");
  }
  platform::NativePlatform native;
  const RunResult r = run_factorization(cfg, native);
  std::cout << summary_line(r, native.backend_name()) << std::endl;
  if (json.is_open()) {
    json << result_json(r, native.backend_name()) << '\n';
    if (!json) throw InputError("--json " + json_path + ": write failed");
  }
  return r.residuals && !r.residuals->passed() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera: task-based dense linear algebra on multicore + multi-GPU clusters"};
  app.require_subcommand(1);

  tessera::RunConfig cfg;
  std::string precision = "d", json_path, policy = "priority";
  auto* run = app.add_subcommand("run", "factor one matrix and report time, GFlop/s and (with --check) the scaled residual");
  run->add_option("--algo", cfg.algo, "cholesky | qr")->required();
  run->add_option("--n", cfg.n, "columns (and rows unless --m); taken from the file with --input");
  run->add_option("--m", cfg.m, "rows (QR of a tall matrix); default n");
  run->add_option("--B", cfg.B, "top-level tile size B; default chosen from n and threads");
  run->add_option("--s", cfg.s, "tile columns per top-level tile (s-1 narrow ones of width b, one remainder); default 1");
  run->add_option("--b", cfg.b, "width of the narrow tile columns; default B/(2s)");
  run->add_option("--ib", cfg.ib, "QR inner blocking; default 32");
  run->add_option("--precision", precision, "d | s");
  run->add_option("--threads", cfg.threads, "compute threads (cores used); default 1");
  run->add_flag("--check", cfg.check, "compute the scaled residuals and fail above the threshold (30)");
  run->add_option("--json", json_path, "write the result as JSON to FILE");
  run->add_option("--seed", cfg.seed, "seed of the generated matrix; default 1");
  run->add_option("--input", cfg.input, "read a dense Matrix Market file instead of generating a matrix");
  run->add_option("--impl", cfg.impl, "tile (tessera) | lapack (LAPACKE on the dense matrix, the peer for benchmarks)");
  run->add_option("--window", cfg.window, "task window capacity (unfinished tasks); default 16384");
  run->add_option("--policy", policy, "ready-queue order: priority | fifo | random");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (precision.size() != 1) throw tessera::InputError("--precision '" + precision + "' is not one of: d, s");
    cfg.precision = precision[0];
    if (*run) return run_command(cfg, json_path, policy);
  } catch (const tessera::InputError& e) {
    std::cerr << "tessera: error: " << e.what() << std::endl;
    return 2;
  } catch (const tessera::NotPositiveDefinite& e) {
    std::cerr << "tessera: error: " << e.what() << std::endl;
    return 3;
  } catch (const std::bad_alloc&) {
    const double m = static_cast<double>(cfg.m == tessera::kUnsetSize ? cfg.n : cfg.m), n = static_cast<double>(cfg.n);
    std::cerr << fmt::format("tessera: error: out of memory: the {} x {} matrix (--m {} --n {}, precision {}) needs {:.1f} GiB",
                             m, n, m, n, cfg.precision, m * n * (cfg.precision == 's' ? 4 : 8) / 1073741824.0)
              << std::endl;
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "tessera: internal error: " << e.what() << std::endl;
    return 5;
  }
  return 0;
}
