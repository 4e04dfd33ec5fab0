// The tile-size tuner (experiments/tune.hpp, `tessera tune`, `tessera run
// --B auto | --tuned FILE`) as a whole: on a synthetic machine whose dominant
// kernel reaches its plateau at a B known by construction, with children that
// report scripted times, and its refusals (its pure steps:
// test_tune_steps.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "cli_json.hpp"
#include "experiments/driver.hpp"
#include "experiments/tune.hpp"
#include "experiments/tune_command.hpp"

namespace tessera::test {
namespace {

using cli::expect_rejected;
using cli::kInvalidInput;
using cli::read_json;
using cli::run_ok;
using cli::run_tessera;
using ::testing::HasSubstr;

// A stand-in for the tuner's children (TuneRequest::program): shell script `body`, executable, in `dir`.
std::string child_script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.write(name, "#!/bin/sh\n" + body);
  EXPECT_EQ(::chmod(path.c_str(), 0755), 0) << path;
  return path;
}

// A child that appends its arguments to `log` and writes `json` as its run's JSON (--json FILE).
std::string logging_child(const TempDir& dir, const std::string& log, const std::string& json) {
  return child_script(dir, "child.sh",
                      "echo \"$@\" >> " + log + "\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && printf '" + json +
                          "' > \"$2\"; shift; done\n");
}

// One node of 4 cores whose every kernel runs at 10 GFlop/s times an
// efficiency of the tile size that reaches 0.9 at 448 and 1.0 at 512: with
// the plateau at 95%, step 1 must find B = 512 (the range steps by 64).
const char* kPlateauMachine = R"({
 "name": "tune-plateau", "nodes": 1,
 "node": {"cores": {"count": 4, "model": "core"}},
 "network": {"topology": "star", "bandwidth_Bps": 1e10, "latency_s": 1e-6},
 "kernel_models": {"core": {"type": "peak-efficiency", "peak_gflops": {"default": {"d": 10, "s": 20}},
   "efficiency": {"d": [[64, 0.2], [128, 0.4], [256, 0.7], [448, 0.9], [512, 1.0]],
                  "s": [[64, 0.2], [128, 0.4], [256, 0.7], [448, 0.9], [512, 1.0]]}}}
})";

TEST(TuneCli, FindsThePlateauBuiltIntoTheMachineAndTheSimulationsDecide) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  TempDir dir;
  const std::string machine = dir.write("m.json", kPlateauMachine), out = dir.path() + "/tuned.json";
  const Outcome o =
      run_tessera({"tune", "--algo", "cholesky", "--n", "3072", "--threads", "4", "--backend", "sim", "--machine",
                   machine, "--B-range", "128:768:64", "--sizes", "3", "--quiet", "--out", out});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_EQ(o.err, "") << o;
  EXPECT_THAT(o.out, HasSubstr("tuned: --B ")) << o;
  const nlohmann::json t = read_json(out);
  EXPECT_EQ(t["dominant_kernel"]["source"], "model");
  EXPECT_EQ(t["dominant_kernel"]["plateau_B"], 512);
  ASSERT_EQ(t["candidates"].size(), 9u);  // 512, 576, 640 x s = 1..3
  double best = 1e300;
  for (const auto& c : t["candidates"]) {
    EXPECT_GE(c["B"].get<int>(), 512);
    EXPECT_FALSE(c.contains("failed")) << "its simulation succeeded: " << c;
    ASSERT_TRUE(c["predicted_s"].is_number()) << c;
    EXPECT_TRUE(c["real_s"].is_null()) << "a simulated run is not run for real: " << c;
    best = std::min(best, c["predicted_s"].get<double>());
  }
  EXPECT_EQ(t["choice"]["decided_by"], "simulation");
  const int B = t["choice"]["B"], s = t["choice"]["s"];
  // The same simulation run from the file reproduces the chosen prediction exactly (simulations are deterministic).
  const nlohmann::json r = run_ok(dir,
                                  {"run", "--algo", "cholesky", "--n", "3072", "--threads", "4", "--backend", "sim",
                                   "--machine", machine, "--tuned", out},
                                  2);
  EXPECT_EQ(r["B"], B);
  EXPECT_EQ(r["s"], s);
  EXPECT_EQ(r["time_s"].get<double>(), best);
  EXPECT_EQ(r["tiles_from"], "--tuned " + out);
}

TEST(TuneCli, BAutoTunesInlineAndSaysSo) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  TempDir dir;
  const std::string machine = dir.write("m.json", kPlateauMachine);
  std::string out;
  const nlohmann::json r = run_ok(
      dir,
      {"run", "--algo", "qr", "--n", "1536", "--threads", "4", "--backend", "sim", "--machine", machine, "--B", "auto"},
      3, &out);
  EXPECT_THAT(out, ::testing::StartsWith("tuned: --B ")) << out;
  EXPECT_GE(r["B"].get<int>(), 512);
  EXPECT_EQ(r["tiles_from"], "--B auto: simulation");
}

// With --gpus the search ends at 2048 (000 App. A.1), or at the largest
// square tile a calibrated GPU model measured the dominant kernel at: the
// lent H100's file measured GEMM and SSRFB up to 4096, where Cholesky and QR
// ran fastest on it (2026-11-27); Keeneland's peak-efficiency model keeps the
// papers' range, and a range given is the range searched.
TEST(TuneCli, AGpuCalibratedOnLargerTilesIsSearchedUpToThem) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  TempDir dir;
  const std::string machines = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/";
  const auto last_B = [&](const std::string& algo, const std::string& machine, std::vector<std::string> more) {
    const std::string out = dir.path() + "/t.json";
    std::vector<std::string> a{"tune",
                               "--algo",
                               algo,
                               "--n",
                               "8192",
                               "--gpus",
                               "1",
                               "--threads",
                               "2",
                               "--backend",
                               "sim",
                               "--machine",
                               machines + machine,
                               "--sizes",
                               "1",
                               "--max-s",
                               "1",
                               "--quiet",
                               "--out",
                               out};
    a.insert(a.end(), more.begin(), more.end());
    const Outcome o = run_tessera(a);
    EXPECT_TRUE(o.exited && o.status == 0) << o;
    const nlohmann::json t = read_json(out);
    return t["dominant_kernel"]["curve"].back()["B"].get<int>();
  };
  EXPECT_EQ(last_B("cholesky", "lent-h100-node.json", {}), 4096);
  EXPECT_EQ(last_B("qr", "lent-h100-node.json", {}), 4096);
  EXPECT_EQ(last_B("cholesky", "keeneland.json", {}), 2048);
  EXPECT_EQ(last_B("cholesky", "lent-h100-node.json", {"--B-range", "256:2048:64"}), 2048);
}

// With GPUs the tuner also tries every column on them (--dist gpu-columns),
// Cholesky and QR alike: columns of 512 to 4096 at N = 8192 on the H100's
// file, each candidate's simulation runs (its arguments are a valid run), and
// the JSON names them; LU's --d places its columns: none there. `tune --dist`
// keeps one distribution; a choice of every column, the tuner's own, gives
// `run --tuned` the distribution and the width, with the column count for
// the run's order, and is refused on a grid or with another --dist.
TEST(TuneCli, GpusAlsoTryEveryColumnOnThemAndRunTunedTakesIt) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  TempDir dir;
  const std::string machine = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/lent-h100-node.json";
  const std::string out = dir.path() + "/t.json";
  const auto tune = [&](const std::string& algo, std::vector<std::string> more, std::string* stdout_text = nullptr) {
    std::vector<std::string> a{"tune",  "--algo",    algo, "--n",       "8192",  "--gpus",
                               "1",     "--threads", "2",  "--backend", "sim",   "--machine",
                               machine, "--max-s",   "1",  "--quiet",   "--out", out};
    a.insert(a.end(), more.begin(), more.end());
    const Outcome o = run_tessera(a);
    EXPECT_TRUE(o.exited && o.status == 0) << o;
    if (stdout_text) *stdout_text = o.out;
    return read_json(out);
  };
  const auto widths = [](const nlohmann::json& t) {
    std::vector<int> w;
    for (const nlohmann::json& c : t["candidates"]) {
      EXPECT_FALSE(c.contains("failed")) << c;
      if (c.value("dist", "") != "gpu-columns") continue;
      EXPECT_EQ(c["B"], 8192);
      EXPECT_EQ(c["b"], "given");
      EXPECT_EQ(c["s"].get<int>(), 8192 / c["b_width"].get<int>());
      EXPECT_TRUE(c["predicted_s"].is_number()) << c;
      w.push_back(c["b_width"].get<int>());
    }
    std::sort(w.begin(), w.end());  // (the candidates are in predicted order)
    return w;
  };
  const std::vector<int> ladder{512, 1024, 2048, 4096};
  EXPECT_EQ(widths(tune("cholesky", {})), ladder);
  EXPECT_EQ(widths(tune("qr", {})), ladder);
  EXPECT_TRUE(widths(tune("lu", {})).empty());
  EXPECT_TRUE(widths(tune("qr", {"--dist", "multi-level"})).empty());
  std::string said;
  const nlohmann::json only = tune("qr", {"--dist", "gpu-columns"}, &said);
  EXPECT_EQ(only["candidates"].size(), ladder.size());
  EXPECT_EQ(only["dist"], "gpu-columns");
  const nlohmann::json& choice = only["choice"];
  EXPECT_EQ(choice["dist"], "gpu-columns");
  EXPECT_EQ(choice["b"], choice["b_width"]);
  EXPECT_THAT(said, HasSubstr("tuned: --dist gpu-columns --B 8192 --s " + std::to_string(choice["s"].get<int>()) +
                              " --b " + std::to_string(choice["b"].get<int>())));
  expect_rejected(kInvalidInput,
                  {"tune", "--algo", "lu", "--n", "8192", "--gpus", "1", "--backend", "sim", "--machine", machine,
                   "--dist", "gpu-columns"},
                  {"--dist gpu-columns", "--algo lu places its columns by --d"});
  expect_rejected(kInvalidInput,
                  {"tune", "--algo", "qr", "--n", "1000", "--gpus", "1", "--backend", "sim", "--machine", machine,
                   "--dist", "gpu-columns"},
                  {"--dist gpu-columns: --n 1000 holds fewer than two columns of 512"});
  expect_rejected(kInvalidInput,
                  {"tune", "--algo", "qr", "--n", "8192", "--gpus", "1", "--backend", "sim", "--machine", machine,
                   "--gpu-qr-panel", "cholqr"},
                  {"--gpu-qr-panel cholqr", "add --gpus G --device cuda"});
  // `run --tuned` with a tuned choice of columns of 2048.
  nlohmann::json t = only;
  t["choice"]["s"] = 4;
  t["choice"]["b"] = 2048;
  t["choice"]["b_width"] = 2048;
  const std::string file = dir.write("columns.json", t.dump());
  const auto run = [&](const std::string& n, std::vector<std::string> more) {
    std::vector<std::string> a{"run",  "--algo", "qr",        "--n", n,           "--gpus", "1",       "--threads", "2",
                               "--ib", "32",     "--backend", "sim", "--machine", machine,  "--tuned", file};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  nlohmann::json r = run_ok(dir, run("8192", {}), 2);
  EXPECT_EQ(r["dist"], "gpu-columns");
  EXPECT_EQ(r["B"], 8192);
  EXPECT_EQ(r["s"], 4);
  EXPECT_EQ(r["b"], 2048);
  // Another order: one tile row of it, in columns of 2048 and the rest (and a note that it was tuned for 8192).
  std::vector<std::string> other_n = run("5000", {});
  other_n.insert(other_n.end(), {"--json", dir.path() + "/n5000.json"});
  const Outcome o = run_tessera(other_n);
  EXPECT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_THAT(o.err, HasSubstr("was tuned for --n 8192"));
  r = read_json(dir.path() + "/n5000.json");
  EXPECT_EQ(r["B"], 5000);
  EXPECT_EQ(r["s"], 3);
  EXPECT_EQ(r["b"], 2048);
  expect_rejected(kInvalidInput, run("8192", {"--dist", "multi-level"}),
                  {"--tuned", "chose --dist gpu-columns", "--dist multi-level"});
  expect_rejected(kInvalidInput, run("8192", {"--grid", "1x2"}), {"--tuned", "a one-node map", "--grid 1x2"});
  expect_rejected(kInvalidInput, run("2000", {}), {"--tuned", "fewer than two"});
  t["choice"]["s"] = 5;  // 4 columns of 2048 fill 8192: no fifth
  const std::string bad = dir.write("bad.json", t.dump());
  std::vector<std::string> bad_run = run("8192", {});
  bad_run.back() = bad;
  expect_rejected(kInvalidInput, bad_run, {"--tuned", "is not a tiling"});
}

// A native tuning with GPUs runs its real candidates on the device it names,
// each with the narrow width its simulation resolved: a native CUDA run has no
// model of its GPUs to resolve --b auto by (it refuses it), so before, every
// real run of an s > 1 candidate on a CUDA node failed, and without --device
// the real runs timed emulated GPUs, the cores' kernels. The children here are
// a script that logs its arguments and reports b = 96, so what each child is
// asked to run is checked exactly; then `run --tuned` on a CUDA device takes
// that width.
TEST(TuneCli, NativeGpuCandidatesRunOnTheNamedDeviceWithTheSimulatedWidth) {
  TempDir dir;
  const std::string with_gpu = std::string(kPlateauMachine)
                                   .replace(std::string(kPlateauMachine).find("\"cores\""), 0,
                                            "\"gpus\": {\"count\": 1, \"memory_bytes\": 1e9, \"pcie\": "
                                            "{\"bandwidth_Bps\": 1e10, \"latency_s\": 1e-6}, \"model\": \"core\"}, ");
  const std::string machine = dir.write("gpu.json", with_gpu), log = dir.path() + "/children.log";
  const std::string child = logging_child(dir, log, R"({"time_s": 0.5, "b": 96})");
  TuneRequest r;
  r.algo = "cholesky";
  r.n = 1024;
  r.threads = 2;
  r.gpus = 1;
  r.device = "cuda";
  r.machine = machine;
  r.B_min = 128;
  r.B_max = 256;
  r.B_step = 64;
  r.max_s = 2;
  r.budget_s = 30;
  r.program = child;
  r.real_args = {"--compute-nice", "7"};  // (what run --B auto --compute-nice 7 passes)
  const TuneResult t = tune(r);
  int simulated = 0, real = 0, real_narrow = 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const bool sim = line.find("--backend sim") != std::string::npos;
    const bool narrow = line.find("--s 2") != std::string::npos;
    (sim ? simulated : real) += 1;
    EXPECT_EQ(line.find("--device cuda") != std::string::npos, !sim) << line;
    EXPECT_EQ(line.find("--compute-nice 7") != std::string::npos, !sim) << line;
    if (narrow) EXPECT_THAT(line, HasSubstr(sim ? "--b auto" : "--b 96")) << line;
    real_narrow += !sim && narrow;
  }
  EXPECT_EQ(simulated, static_cast<int>(t.candidates.size()));
  EXPECT_GT(real_narrow, 0) << "no s = 2 candidate ran for real";
  EXPECT_GE(real, simulated);
  for (const TuneCandidate& c : t.candidates) {
    EXPECT_FALSE(c.gpu_columns) << "columns of 512 and more, past the range's end (256)";
    EXPECT_EQ(c.b, c.auto_b ? 96 : 0) << c.B << " s=" << c.s;
    EXPECT_EQ(c.failed, "") << c.B << " s=" << c.s;
  }

  // Real runs that all fail (here: a node without a CUDA device) fail the tuning with their status, rather than
  // let the simulations choose for a run that cannot run.
  const std::string broken =
      child_script(dir, "broken.sh",
                   "case \"$*\" in *'--backend sim'*) ;; *) echo 'tessera: error: no CUDA device' >&2; "
                   "exit 2 ;; esac\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && printf '{\"time_s\": 0.5, \"b\": "
                   "96}' > \"$2\"; shift; done\n");
  TuneRequest no_gpu = r;
  no_gpu.program = broken;
  try {
    (void)tune(no_gpu);
    ADD_FAILURE() << "a tuning whose every real run failed chose";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_status(), 2);
    EXPECT_THAT(e.what(), HasSubstr("every real run failed"));
    EXPECT_THAT(e.what(), HasSubstr("no CUDA device"));
  }

  // The choice keeps the width; a native run of --tuned takes it, on CUDA or emulated GPUs, as its real runs did.
  nlohmann::json j = tune_json(t);
  j["choice"]["b"] = "auto";
  j["choice"]["s"] = 2;
  j["choice"]["b_width"] = 96;
  const std::string tuned = dir.write("tuned.json", j.dump());
  RunConfig cfg;
  cfg.algo = "cholesky";
  cfg.n = 1024;
  cfg.threads = 2;
  cfg.gpus = 1;
  cfg.device = DeviceKind::Cuda;
  TuningOptions o;
  o.tuned = tuned;
  apply_tuning(cfg, o);
  EXPECT_FALSE(cfg.auto_b);
  EXPECT_EQ(cfg.b, 96);
  RunConfig emulated = cfg;
  emulated.device = DeviceKind::Emulated;
  emulated.b = kUnsetSize;
  apply_tuning(emulated, o);
  EXPECT_FALSE(emulated.auto_b);
  EXPECT_EQ(emulated.b, 96);
  j["choice"].erase("b_width");
  const std::string old = dir.write("old.json", j.dump());
  RunConfig cuda_again = cfg;
  cuda_again.b = kUnsetSize;
  o.tuned = old;
  EXPECT_THROW(apply_tuning(cuda_again, o), InputError);

  // What the command refuses.
  const std::vector<std::string> base{"tune", "--algo", "cholesky", "--n", "512", "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, with({"--gpus", "1", "--machine", machine}), {"--gpus 1", "--device cuda"});
  expect_rejected(kInvalidInput, with({"--gpus", "1", "--machine", machine, "--device", "nope"}), {"--device 'nope'"});
  // The run's GPU options, checked before any child runs (each would refuse them).
  const std::vector<std::string> gpu{"--gpus", "1", "--machine", machine, "--device", "emulated"};
  auto gpu_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = with(gpu);
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, gpu_with({"--gpu-streams", "2"}), {"--gpu-streams 2", "--device cuda"});
  expect_rejected(kInvalidInput, gpu_with({"--gpu-streams", "0"}), {"--gpu-streams 0"});
  expect_rejected(kInvalidInput, gpu_with({"--gpu-memory", "0"}), {"--gpu-memory 0"});
  expect_rejected(kInvalidInput, gpu_with({"--eviction", "fifo"}), {"--eviction", "fifo"});
  expect_rejected(kInvalidInput, with({"--gpu-memory", "1000000"}), {"--gpu-memory 1000000", "--gpus"});
  expect_rejected(kInvalidInput, with({"--device", "cuda"}), {"--device cuda", "no GPUs"});
  expect_rejected(kInvalidInput, with({"--gpus", "1", "--machine", machine, "--device", "cuda", "--backend", "sim"}),
                  {"--device cuda", "machine file"});
}

// The command lines of the child runs that `run --B auto` of `cfg` starts on a simulated `machine`, each child
// the script `child` appending its arguments to `log` (emptied first). At least one is expected.
std::vector<std::string> b_auto_children(RunConfig cfg, const std::string& machine, const std::string& child,
                                         const std::string& log, bool dist_given = false) {
  std::remove(log.c_str());
  TuningOptions o;
  o.B = "auto";
  o.simulated = true;
  o.machine = machine;
  o.dist_given = dist_given;
  o.program = child;
  apply_tuning(cfg, o);
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_FALSE(lines.empty()) << "no child run";
  return lines;
}

RunConfig cholesky(index_t n) {
  RunConfig cfg;
  cfg.algo = "cholesky";
  cfg.n = n;
  cfg.threads = 2;
  return cfg;
}

// On this machine, no model: the candidates run for real (tiny sizes).
// `run --B auto --dist D` ranks its candidates with child runs of that
// distribution (they were run as multi-level, the default); without --dist
// the children get none, and every column on the GPUs is among the
// candidates only then; on a grid they run a node's share of the order.
// The children are a script that logs its arguments.
TEST(TuneCli, BAutoChildrenRunTheRunsOwnDistribution) {
  TempDir dir;
  const std::string machine = dir.write("m.json", kPlateauMachine), log = dir.path() + "/children.log";
  const std::string child = logging_child(dir, log, R"({"time_s": 0.5})");
  for (const bool given : {true, false}) {
    SCOPED_TRACE(given ? "--dist column-cyclic" : "no --dist");
    RunConfig cfg = cholesky(1024);
    if (given) cfg.dist = kDistColumnCyclic;
    for (const std::string& line : b_auto_children(cfg, machine, child, log, given))
      EXPECT_EQ(line.find("--dist column-cyclic") != std::string::npos, given) << line;
  }
  // On a 2x4 grid a node factors its 1/max(Pr, Pc) share of the order (000
  // §7.1): N = 2048 is tuned as 512 (not 2048/8 = 256).
  RunConfig grid = cholesky(2048);
  grid.pr = 2;
  grid.pc = 4;
  for (const std::string& line : b_auto_children(grid, machine, child, log)) EXPECT_THAT(line, HasSubstr("--n 512 "));
}

// A child run's JSON is a temporary file in $TMPDIR where that is a
// directory (a batch system's scratch, where /tmp may be small or shared),
// else in /tmp.
TEST(TuneCli, ChildJsonGoesToTmpdir) {
  TempDir dir;
  const std::string machine = dir.write("m.json", kPlateauMachine), log = dir.path() + "/children.log";
  const std::string child = logging_child(dir, log, R"({"time_s": 0.5})");
  const char* saved = std::getenv("TMPDIR");
  const std::string before = saved ? saved : "";
  for (const std::string& tmpdir : {dir.path(), dir.path() + "/missing"}) {
    SCOPED_TRACE("TMPDIR=" + tmpdir);
    ASSERT_EQ(setenv("TMPDIR", tmpdir.c_str(), 1), 0);
    const std::string where = (tmpdir == dir.path() ? dir.path() : std::string("/tmp")) + "/tessera-tune-";
    for (const std::string& line : b_auto_children(cholesky(1024), machine, child, log))
      EXPECT_THAT(line, HasSubstr("--json " + where));
  }
  if (saved) setenv("TMPDIR", before.c_str(), 1);
  else unsetenv("TMPDIR");
}

TEST(TuneCli, WithoutAModelRealRunsDecide) {
  TempDir dir;
  const std::string out = dir.path() + "/t.json";
  const Outcome o = run_tessera({"tune", "--algo", "cholesky", "--n", "256", "--B-range", "64:128:64", "--max-s", "2",
                                 "--budget", "60", "--quiet", "--out", out});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  const nlohmann::json t = read_json(out);
  EXPECT_EQ(t["dominant_kernel"]["source"], "measured");
  EXPECT_EQ(t["choice"]["decided_by"], "real runs");
  double best = 1e300;
  std::size_t thrice = 0;
  for (const auto& c : t["candidates"]) {
    ASSERT_TRUE(c["real_s"].is_number()) << "within the budget every candidate runs: " << c;
    const int runs = c["real_runs"];
    EXPECT_TRUE(runs == 1 || runs == 3) << c;
    thrice += runs == 3;
    best = std::min(best, c["real_s"].get<double>());
  }
  // Runs this short fit the budget: the first pass's three fastest run three times.
  EXPECT_EQ(thrice, std::min<std::size_t>(3, t["candidates"].size()));
  for (const auto& c : t["candidates"])
    if (c["B"] == t["choice"]["B"] && c["s"] == t["choice"]["s"]) EXPECT_EQ(c["real_s"].get<double>(), best);
  // A budget the first run already spends: that run alone, once.
  const Outcome tight = run_tessera({"tune", "--algo", "cholesky", "--n", "256", "--B-range", "64:128:64", "--max-s",
                                     "2", "--budget", "1e-9", "--quiet", "--out", out});
  ASSERT_TRUE(tight.exited && tight.status == 0) << tight;
  int ran = 0;
  const nlohmann::json t2 = read_json(out);
  for (const auto& c : t2["candidates"]) {
    ran += c["real_s"].is_number();
    EXPECT_EQ(c["real_runs"], c["real_s"].is_number() ? 1 : 0) << c;
  }
  EXPECT_EQ(ran, 1);
}

// The real runs' two passes, with children that report scripted times: every
// candidate once (B = 64 0.4 s, 128 0.1, 192 0.3, 256 0.2), then the three
// fastest of that pass (128, 256, 192) twice more; a candidate's time is the
// best of its runs (128's later 0.35 s runs do not replace its 0.1), and the
// choice the best of those (256's third run, 0.05 s).
TEST(TuneCli, RealRunsRepeatTheFastestAndKeepEachOnesBest) {
  TempDir dir;
  const std::map<int, std::string> times = {
      {64, "0.4"}, {128, "0.1\n0.35\n0.35"}, {192, "0.3\n0.3\n0.3"}, {256, "0.2\n0.2\n0.05"}};
  for (const auto& [B, lines] : times) dir.write("times_" + std::to_string(B), lines + "\n");
  const std::string d = dir.path();
  const std::string child =
      child_script(dir, "child.sh",
                   "B=; J=\nwhile [ $# -gt 0 ]; do case \"$1\" in --B) B=$2 ;; --json) J=$2 ;; esac; "
                   "shift; done\necho x >> " +
                       d + "/calls_$B\nn=$(wc -l < " + d + "/calls_$B)\nt=$(sed -n \"${n}p\" " + d +
                       "/times_$B)\nprintf '{\"time_s\": %s}' \"$t\" > \"$J\"\n");
  TuneRequest r;
  r.algo = "cholesky";
  r.n = 512;
  r.threads = 1;
  r.B_min = 64;
  r.B_max = 256;
  r.B_step = 64;
  r.max_s = 1;
  r.plateau_fraction = 1e-9;  // every size of the range is a candidate
  r.budget_s = 60;
  r.program = child;
  const TuneResult t = tune(r);
  EXPECT_EQ(t.decided_by, "real runs");
  std::map<std::int64_t, std::pair<double, int>> got;  // B -> best time, runs
  for (const TuneCandidate& c : t.candidates) {
    ASSERT_TRUE(c.real_s) << c.B << ": " << c.failed;
    got[c.B] = {*c.real_s, c.real_runs};
  }
  const std::map<std::int64_t, std::pair<double, int>> want = {
      {64, {0.4, 1}}, {128, {0.1, 3}}, {192, {0.3, 3}}, {256, {0.05, 3}}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(t.choice().B, 256);
  // The table marks that row, the last, alone as chosen.
  std::istringstream table(tune_report(t));
  std::vector<std::string> marked;
  for (std::string line; std::getline(table, line);)
    if (line.find("<- chosen") != std::string::npos) marked.push_back(line);
  ASSERT_EQ(marked.size(), 1u) << tune_report(t);
  EXPECT_THAT(marked[0], ::testing::MatchesRegex(" *multi-level +256 +1 .*")) << tune_report(t);
}

TEST(TuneCli, BadInputExitsTwoNamingIt) {
  TempDir dir;
  const std::string machine = dir.write("m.json", kPlateauMachine);
  const std::string other = dir.write(
      "other.json", std::string(kPlateauMachine).replace(1, 0, "\"calibration\": {\"blas_core\": \"NoSuchCore\"},"));
  const std::vector<std::string> t{"tune", "--algo", "cholesky", "--n", "512"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = t;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, {"tune", "--algo", "nope", "--n", "512"}, {"nope"});
  expect_rejected(kInvalidInput, with({"--B-range", "640:128:64"}), {"--B-range", "640:128:64"});
  expect_rejected(kInvalidInput, with({"--B-range", "1:2"}), {"--B-range", "1:2"});
  expect_rejected(kInvalidInput, with({"--backend", "sim"}), {"--machine"});
  expect_rejected(kInvalidInput, with({"--precision", "q"}), {"--precision", "q"});
  expect_rejected(kInvalidInput, with({"--plateau", "1.5"}), {"--plateau", "1.5"});
  expect_rejected(kInvalidInput, with({"--machine", other}), {"NoSuchCore", other});
  expect_rejected(kInvalidInput, with({"--machine", machine, "--threads", "9"}), {"--threads 9", "4 cores"});
  expect_rejected(kInvalidInput, with({"--pivot", "tournament"}), {"--pivot tournament", "--algo lu"});
  expect_rejected(kInvalidInput, {"tune", "--algo", "lu", "--n", "512", "--pivot", "rook"}, {"--pivot 'rook'"});
  // A range of sizes above the order only (it measured them, then fell back on B = n), and one at int64's
  // end, whose B += STEP wrapped and looped until memory ran out (exit 4 under 2 GiB).
  expect_rejected(kInvalidInput, with({"--B-range", "1024:2048:64"}), {"--B-range '1024:2048:64'", "--n 512"});
  expect_rejected(
      kInvalidInput,
      with({"--backend", "sim", "--machine", machine, "--B-range", "9223372036854775000:9223372036854775807:512"}),
      {"--B-range", "exceeds --n 512", "MIN <= 512"}, rlim_t{2} << 30);
  // tessera run's side, on a choice simulated on the machine (built without SimGrid: one real run decides).
  const std::string tuned = dir.path() + "/t.json";
  const std::vector<std::string> how = TESSERA_HAVE_SIMGRID
                                           ? std::vector<std::string>{"--backend", "sim", "--machine", machine}
                                           : std::vector<std::string>{"--B-range", "64:128:64", "--budget", "1e-9"};
  std::vector<std::string> tune = with(how);
  for (const char* a : {"--quiet", "--out"}) tune.push_back(a);
  tune.push_back(tuned);
  ASSERT_EQ(run_tessera(tune).status, 0);
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--tuned", dir.path() + "/none.json"}),
                  {"--tuned", "none.json"});
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--tuned", machine}), {"--tuned", "tessera tune"});
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--tuned", tuned}, "qr"), {"--algo cholesky", "--algo qr"});
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--tuned", tuned, "--B", "128"}), {"--tuned", "--B 128"});
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--B", "auto", "--s", "2"}), {"--B auto", "--s"});
  expect_rejected(kInvalidInput, cli::base({"--n", "512", "--B", "12x"}), {"--B '12x'"});
}

// --B-range's sizes end at MAX and never step past int64's end.
TEST(Tune, RangeSizesStopAtMaxAndAtInt64sEnd) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(range_sizes(128, 640, 64).size(), 9u);
  EXPECT_EQ(range_sizes(128, 600, 64).back(), 576);
  EXPECT_EQ(range_sizes(kMax - 807, kMax, 512), (std::vector<std::int64_t>{kMax - 807, kMax - 295}));
  EXPECT_EQ(range_sizes(kMax, kMax, 1), std::vector<std::int64_t>{kMax});
  EXPECT_EQ(range_sizes(1, kMax, kMax), std::vector<std::int64_t>{1});
}

}  // namespace
}  // namespace tessera::test
