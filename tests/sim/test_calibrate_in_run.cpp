// `tessera calibrate --in-run` (experiments/calibrate_in_run.hpp): kernel
// times from real runs. The statistics per shape, the merge into a machine
// file (replace, scale, add, leave alone), and the command end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli_expect.hpp"
#include "../test_helpers.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate_in_run.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"

namespace {
using namespace tessera;
using kernels::InRunCall;
using kernels::InRunShape;

int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

KernelShape gsmm(std::int64_t b) { return KernelShape{kGsmm, 'd', b, b, b, 0}; }

// Per thread count and shape: the median and the interquartile range
// (linear between order statistics), only shapes with min_calls calls.
TEST(InRunCalibration, SummaryPerThreadsAndShape) {
  std::vector<InRunCall> calls;
  for (const double s : {5.0, 1.0, 3.0, 2.0, 4.0}) calls.push_back({gsmm(64), 2, s});
  for (const double s : {7.0, 9.0}) calls.push_back({gsmm(64), 1, s});
  calls.push_back({gsmm(128), 2, 8.0});
  const auto out = kernels::summarize_in_run(calls, 2);
  ASSERT_EQ(out.size(), 2u);  // gsmm 128 has one call only
  EXPECT_EQ(out[0].threads, 1);
  EXPECT_EQ(out[0].median_s, 8.0);
  EXPECT_EQ(out[0].spread_s, 1.0);  // 8.5 - 7.5
  EXPECT_EQ(out[0].calls, 2);
  EXPECT_EQ(out[1].threads, 2);
  EXPECT_EQ(out[1].shape.m, 64);
  EXPECT_EQ(out[1].median_s, 3.0);
  EXPECT_EQ(out[1].spread_s, 2.0);  // 4 - 2
  EXPECT_EQ(out[1].calls, 5);
  EXPECT_TRUE(kernels::summarize_in_run(calls, 6).empty());
}

// Passes combine number by number, each the fastest pass's: a neighbour's
// interference only slows a run, so the slower pass of a shape, of a run and
// of the task gaps is the disturbed one. Here the second pass is faster for
// gsmm 64 and the first run, the first pass for gsmm 128, the second run and
// the gaps; a shape below min_calls in a pass is not that pass's (gsmm 32's
// one fast call in pass 2 does not replace pass 1's median).
TEST(InRunCalibration, PassesKeepTheFastestOfEachNumber) {
  using kernels::InRunRun;
  const auto calls = [](double s64, double s128, int n32, double s32) {
    std::vector<InRunCall> c;
    for (const double f : {1.0, 1.1, 0.9}) c.push_back({gsmm(64), 2, s64 * f}), c.push_back({gsmm(128), 2, s128 * f});
    for (int i = 0; i < n32; ++i) c.push_back({gsmm(32), 2, s32});
    return c;
  };
  const auto runs = [](double a, double b) {
    return std::vector<InRunRun>{{"cholesky", 'd', 4096, 1, 2, a}, {"qr", 'd', 4096, 1, 2, b}};
  };
  kernels::InRunPasses passes(2);
  passes.add(calls(2.0, 8.0, 3, 0.5), runs(3.0, 5.0), {{2, {0.4, 0.1, 0.2}}});
  passes.add(calls(1.5, 9.0, 1, 0.1), runs(2.5, 6.0), {{2, {0.3, 0.5, 0.3}}});
  const kernels::InRunMeasurement m = passes.result();
  ASSERT_EQ(m.shapes.size(), 3u);  // 32, 64, 128
  EXPECT_EQ(m.shapes[0].shape.m, 32);
  EXPECT_EQ(m.shapes[0].median_s, 0.5);
  EXPECT_EQ(m.shapes[1].shape.m, 64);
  EXPECT_EQ(m.shapes[1].median_s, 1.5);
  EXPECT_EQ(m.shapes[2].shape.m, 128);
  EXPECT_EQ(m.shapes[2].median_s, 8.0);
  EXPECT_NEAR(m.shapes[2].spread_s, 0.8, 1e-12);  // pass 1's own quartiles (8.4 - 7.6), not a mix
  ASSERT_EQ(m.runs.size(), 2u);
  EXPECT_EQ(m.runs[0].algo, "cholesky");
  EXPECT_EQ(m.runs[0].time_s, 2.5);
  EXPECT_EQ(m.runs[1].time_s, 5.0);
  EXPECT_EQ(m.task_s.at(2), 0.2);
  // A pass that ran other configurations cannot be combined with the first.
  auto other = runs(1.0, 1.0);
  EXPECT_THROW(passes.add({}, {other[0]}, {}), InputError);
  other[1].n = 8192;
  EXPECT_THROW(passes.add({}, other, {}), InputError);
}

// A machine file as `tessera calibrate --threads 2` writes one: a model per
// thread count, each with measured shapes.
const char* kTwoModels = R"({
  "name": "hand-made", "nodes": 1,
  "calibration": { "command": "test" },
  "node": { "cores": { "count": 2, "model": "core-x1", "model_by_threads": { "1": "core-x1", "2": "core-x2" } } },
  "network": { "topology": "star", "bandwidth_Bps": 1e9, "latency_s": 0 },
  "kernel_models": {
    "core-x1": { "type": "calibrated", "measurements": [
      { "kernel": "gsmm", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.001 } ] },
    "core-x2": { "type": "calibrated", "source": "isolated", "measurements": [
      { "kernel": "gsmm", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.001, "min_s": 0.0009 },
      { "kernel": "gsmm", "precision": "d", "m": 128, "n": 128, "k": 128, "median_s": 0.008, "spread_s": 0.001 },
      { "kernel": "gsmm", "precision": "d", "m": 32, "n": 32, "k": 32, "median_s": 0.0002 },
      { "kernel": "trsm", "precision": "d", "m": 64, "n": 64, "median_s": 0.0005 },
      { "kernel": "gsmm", "precision": "d", "m": 16, "n": 16, "k": 16, "median_s": 0.00003 } ] } }
})";

// In the 2-thread model: the shapes the runs measured take the runs' medians,
// the kernel's other shapes the ratio of the nearest run shape in log
// dimensions (64: 1.2, 32: 1.4; so 128 takes 64's and 16 takes 32's, not
// one ratio for the kernel), a shape only the runs had is added, another
// kernel and the 1-thread model are left as they were; the file loads and
// times exactly that.
TEST(InRunCalibration, MergeReplacesScalesAndAdds) {
  InRunShape a{gsmm(64), 2, 0.0012, 0.0001, 9};
  InRunShape b{gsmm(32), 2, 0.00028, 0.00002, 12};
  InRunShape c{gsmm(96), 2, 0.004, 0.0002, 7};
  const std::string text =
      kernels::merge_in_run(kTwoModels, "two.json", {a, b, c}, R"({"passes": 2, "n": [4096]})", {{2, 4.5e-7}});
  const auto f = nlohmann::json::parse(text);
  EXPECT_EQ(f.at("calibration").at("in_run").at("passes"), 2);
  EXPECT_EQ(f.at("calibration").at("command"), "test");
  const auto& x1 = f.at("kernel_models").at("core-x1").at("measurements");
  ASSERT_EQ(x1.size(), 1u);
  EXPECT_EQ(x1[0].at("median_s"), 0.001);
  EXPECT_FALSE(x1[0].contains("in_run_scale"));
  const auto& x2 = f.at("kernel_models").at("core-x2").at("measurements");
  ASSERT_EQ(x2.size(), 6u);
  EXPECT_EQ(x2[0].at("median_s"), 0.0012);
  EXPECT_EQ(x2[0].at("in_run_calls"), 9);
  EXPECT_FALSE(x2[0].contains("min_s"));  // an isolated figure, no longer this entry's
  EXPECT_NEAR(x2[1].at("median_s").get<double>(), 0.008 * 1.2, 1e-12);
  EXPECT_NEAR(x2[1].at("spread_s").get<double>(), 0.001 * 1.2, 1e-12);
  EXPECT_EQ(x2[1].at("in_run_scale"), 1.2);
  EXPECT_EQ(x2[2].at("median_s"), 0.00028);
  EXPECT_EQ(x2[3].at("median_s"), 0.0005);  // trsm: no run measured it
  EXPECT_FALSE(x2[3].contains("in_run_scale"));
  EXPECT_NEAR(x2[4].at("median_s").get<double>(), 0.00003 * 1.4, 1e-12);  // gsmm 16: 32's ratio
  EXPECT_EQ(x2[4].at("in_run_scale"), 1.4);
  EXPECT_EQ(x2[5].at("m"), 96);
  EXPECT_EQ(x2[5].at("median_s"), 0.004);
  EXPECT_NE(f.at("kernel_models").at("core-x2").at("source").get<std::string>().find("in-run"), std::string::npos);

  const auto m = platform::Machine::parse(text, "merged.json");
  const KernelTimeModel& model = m.core_model(2);
  EXPECT_EQ(model.seconds(gsmm(64)), 0.0012);
  EXPECT_NEAR(model.seconds(gsmm(128)), 0.0096, 1e-12);
  EXPECT_NEAR(model.seconds(gsmm(16)), 0.000042, 1e-12);
  EXPECT_EQ(model.seconds(gsmm(96)), 0.004);
  EXPECT_EQ(m.core_model(1).seconds(gsmm(64)), 0.001);
  // The runtime's per-task cost: the 2-thread model's, with its source; the
  // 1-thread model had none given and keeps none.
  EXPECT_EQ(f.at("kernel_models").at("core-x2").at("task_s").at("value"), 4.5e-7);
  EXPECT_NE(f.at("kernel_models").at("core-x2").at("task_s").at("source").get<std::string>().find("2-thread"),
            std::string::npos);
  EXPECT_FALSE(f.at("kernel_models").at("core-x1").contains("task_s"));
  EXPECT_EQ(model.task_s(), 4.5e-7);
  EXPECT_EQ(m.core_model(1).task_s(), 0.0);
}

// A shape the runs did not measure, equally near two that they did (in log
// dimensions, 64 x 32 x 32 is as near 32 x 64 x 32 as 32 x 32 x 64, to the
// last bit), takes the ratio of the one first in the file (1.4), and its
// isolated min_s scales with its median.
TEST(InRunCalibration, EquallyNearRunShapesGiveTheFirstInTheFile) {
  const std::string file = R"({
  "name": "hand-made", "nodes": 1, "calibration": { "command": "test" },
  "node": { "cores": { "count": 2, "model": "core-x1", "model_by_threads": { "1": "core-x1", "2": "core-x2" } } },
  "network": { "topology": "star", "bandwidth_Bps": 1e9, "latency_s": 0 },
  "kernel_models": {
    "core-x1": { "type": "calibrated", "measurements": [
      { "kernel": "gsmm", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.001 } ] },
    "core-x2": { "type": "calibrated", "measurements": [
      { "kernel": "gsmm", "precision": "d", "m": 32, "n": 64, "k": 32, "median_s": 0.0002 },
      { "kernel": "gsmm", "precision": "d", "m": 32, "n": 32, "k": 64, "median_s": 0.008 },
      { "kernel": "gsmm", "precision": "d", "m": 64, "n": 32, "k": 32, "median_s": 0.001, "min_s": 0.0009 } ] } }
})";
  const std::string text =
      kernels::merge_in_run(file, "tie.json",
                            {InRunShape{KernelShape{kGsmm, 'd', 32, 64, 32, 0}, 2, 0.00028, 0.00002, 12},
                             InRunShape{KernelShape{kGsmm, 'd', 32, 32, 64, 0}, 2, 0.0096, 0.0002, 7}},
                            R"({"passes": 1, "n": [4096]})", {});
  const auto x2 = nlohmann::json::parse(text).at("kernel_models").at("core-x2").at("measurements");
  ASSERT_EQ(x2.size(), 3u);
  EXPECT_EQ(x2[2].at("in_run_scale"), 1.4);
  EXPECT_NEAR(x2[2].at("median_s").get<double>(), 0.0014, 1e-12);
  EXPECT_NEAR(x2[2].at("min_s").get<double>(), 0.00126, 1e-12);
}

TEST(InRunCalibration, RefusesAFileWithoutACalibratedModelForTheThreads) {
  const InRunShape three{gsmm(64), 3, 0.001, 0, 5};
  try {
    kernels::merge_in_run(kTwoModels, "two.json", {three}, "{}");
    FAIL() << "merged into a file without a 3-thread model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("3 thread"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("two.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kernels::check_in_run_target(kTwoModels, "two.json", {1, 2, 3}), InputError);
  EXPECT_NO_THROW(kernels::check_in_run_target(kTwoModels, "two.json", {1, 2}));
  const std::string keeneland = test::read_text(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json");
  try {
    kernels::check_in_run_target(keeneland, "keeneland.json", {1});
    FAIL() << "a peak-efficiency model accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a calibrated one"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kernels::merge_in_run("{ not json", "bad.json", {}, "{}"), InputError);
  // A file with in-run times already: its run entries would be scaled as if isolated.
  const InRunShape two{gsmm(64), 2, 0.0012, 0, 5};
  const std::string merged = kernels::merge_in_run(kTwoModels, "two.json", {two}, "{}");
  try {
    kernels::merge_in_run(merged, "merged.json", {two}, "{}");
    FAIL() << "merged twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in-run times already"), std::string::npos) << e.what();
  }
}

// The command end to end: a quick isolated calibration of Cholesky's kernels,
// then Cholesky runs of N = 2048; the file records the runs, some shapes come
// from them, and it drives a simulated run. Then --base adds runs to it alone.
TEST(InRunCalibrationCli, CalibratesRunsAndDrivesASimulation) {
  test::TempDir dir;
  const std::string file = dir.path() + "/cal.json", out = dir.path() + "/out.txt";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) +
                  " calibrate --quick --threads 1 --precision d --kernels potf2p,trsm,gsmm,gsmm_diag --sizes 64 "
                  "--for-n 2048 --in-run --in-run-n 2048 --out " +
                  file + " > " + out + " 2>&1"),
            0)
      << test::read_text(out);
  EXPECT_NE(test::read_text(out).find("in-run:"), std::string::npos) << test::read_text(out);
  const auto doc = nlohmann::json::parse(test::read_text(file));
  const auto& rec = doc.at("calibration").at("in_run");
  EXPECT_EQ(rec.at("algos"), nlohmann::json::array({"cholesky"}));  // no QR kernel was asked for
  EXPECT_EQ(rec.at("n"), nlohmann::json::array({2048}));
  // The one configuration's run time, the reference of a later drift check.
  ASSERT_EQ(rec.at("runs").size(), 1u) << rec.dump();
  const auto& run = rec.at("runs").at(0);
  EXPECT_EQ(run.at("algo"), "cholesky");
  EXPECT_EQ(run.at("precision"), "d");
  EXPECT_EQ(run.at("n"), 2048);
  EXPECT_EQ(run.at("s"), 1);
  EXPECT_EQ(run.at("threads"), 1);
  EXPECT_GT(run.at("time_s").get<double>(), 0);
  EXPECT_LT(run.at("time_s").get<double>(), 10.0);  // a 2048 Cholesky takes about 0.2 s here
  // The runtime's per-task cost, from the gaps between the run's tasks:
  // positive, and far below a task (0.4-0.7 us on the development VM).
  const double task_s = doc.at("kernel_models").at("core-x1").at("task_s").at("value").get<double>();
  EXPECT_GT(task_s, 0.0);
  EXPECT_LT(task_s, 1e-4);
  int from_runs = 0;
  for (const auto& e : doc.at("kernel_models").at("core-x1").at("measurements"))
    if (e.contains("in_run_calls")) {
      ++from_runs;
      EXPECT_GE(e.at("in_run_calls").get<int>(), 5);
    }
  EXPECT_GE(from_runs, 3);  // at least POTF2', TRSM and GSMM of the full tiles
  // A shape is kept with 5 calls in a pass (the record says so): at N = 2048
  // and the default B = 320 the 6 full POTF2' tiles give 5 calls after each
  // run's first, and the edge row's 128 x 320 TRSMs 6.
  EXPECT_EQ(rec.at("min_calls"), 5);
  auto calls_of = [&](const char* kernel, int m, int n) {
    for (const auto& e : doc.at("kernel_models").at("core-x1").at("measurements"))
      if (e.at("kernel") == kernel && e.at("precision") == "d" && e.at("m") == m && e.at("n") == n)
        return e.value("in_run_calls", 0);
    return -1;
  };
  EXPECT_EQ(calls_of("potf2p", 320, 320), 5);
  EXPECT_EQ(calls_of("trsm", 128, 320), 6);
  const std::string json = dir.path() + "/run.json";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) + " run --algo cholesky --n 2048 --backend sim --machine " + file +
                  " --json " + json + " > /dev/null"),
            0);
  EXPECT_GT(nlohmann::json::parse(test::read_text(json)).at("time_s").get<double>(), 0);

  // A merged file is not a base: its run times would be scaled again.
  EXPECT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --in-run --base " + file + " --precision d --out " +
                  dir.path() + "/x.json > " + out + " 2>&1"),
            2);
  EXPECT_NE(test::read_text(out).find("in-run times already"), std::string::npos) << test::read_text(out);
}

// --in-run --base ISOLATED: the runs alone, added to an isolated calibration;
// what only an isolated calibration uses is refused, and so are runs too
// small to time any shape 5 times.
TEST(InRunCalibrationCli, BaseGetsTheRunsAlone) {
  test::TempDir dir;
  const std::string iso = dir.path() + "/iso.json", again = dir.path() + "/again.json", out = dir.path() + "/out.txt";
  ASSERT_EQ(
      shell(std::string(TESSERA_BIN) + " calibrate --quick --precision d --kernels gsmm --sizes 64 --for-n 0 --out " +
            iso + " > " + out + " 2>&1"),
      0)
      << test::read_text(out);
  const std::string runs = std::string(TESSERA_BIN) + " calibrate --in-run --base " + iso + " --precision d ";
  ASSERT_EQ(shell(runs + "--kernels gsmm --in-run-n 2048 --out " + again + " > " + out + " 2>&1"), 0)
      << test::read_text(out);
  const auto doc = nlohmann::json::parse(test::read_text(again));
  EXPECT_GT(doc.at("calibration").at("in_run").at("shapes").get<int>(), 0);
  EXPECT_EQ(doc.at("calibration").at("qr_ib"), 32);  // the base's record stays
  // The base has no 2-thread model: refused before any run.
  EXPECT_EQ(shell(runs + "--threads 2 --out " + again + " > " + out + " 2>&1"), 2);
  EXPECT_NE(test::read_text(out).find("2 thread"), std::string::npos) << test::read_text(out);
  for (const char* isolated_only : {"--quick", "--cold", "--sizes 64", "--for-n 2048", "--name x"}) {
    EXPECT_EQ(shell(runs + isolated_only + " --out " + again + " > " + out + " 2>&1"), 2) << isolated_only;
    EXPECT_NE(test::read_text(out).find("in isolation"), std::string::npos) << test::read_text(out);
  }
  EXPECT_EQ(shell(runs + "--ib 64 --out " + again + " > " + out + " 2>&1"), 2);  // the base measured ib = 32
  EXPECT_NE(test::read_text(out).find("ib = 32"), std::string::npos) << test::read_text(out);
  EXPECT_EQ(shell(runs + "--kernels gsmm --in-run-n 256 --out " + again + " > " + out + " 2>&1"), 2);
  EXPECT_NE(test::read_text(out).find("no kernel shape"), std::string::npos) << test::read_text(out);
}

// Without --ib the runs take the inner blocking the base was calibrated at (here 16, not the option's default
// 32): their QR times join the base's entries (a run's entry carries no ib: the file's qr_ib is its), and the
// in-run record says the blocking they ran with.
TEST(InRunCalibrationCli, RunsTakeTheBasesInnerBlocking) {
  test::TempDir dir;
  const std::string iso = dir.path() + "/iso.json", again = dir.path() + "/again.json", out = dir.path() + "/out.txt";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) +
                  " calibrate --quick --precision d --kernels tsqrt --sizes 64 --for-n 0 --ib 16 --out " + iso + " > " +
                  out + " 2>&1"),
            0)
      << test::read_text(out);
  ASSERT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --in-run --base " + iso +
                  " --precision d --kernels tsqrt --in-run-n 2048 --out " + again + " > " + out + " 2>&1"),
            0)
      << test::read_text(out);
  const auto doc = nlohmann::json::parse(test::read_text(again));
  EXPECT_EQ(doc.at("calibration").at("in_run").at("ib"), 16);
  EXPECT_EQ(doc.at("calibration").at("qr_ib"), 16);
  int from_runs = 0;
  for (const auto& e : doc.at("kernel_models").at("core-x1").at("measurements"))
    from_runs += e.contains("in_run_calls");
  EXPECT_GT(from_runs, 0);
}

// Each bad option exits 2 with one line naming the option (and its value).
TEST(InRunCalibrationCli, BadOptionsAreRejected) {
  const auto rejected = [](std::vector<std::string> args, const std::vector<std::string>& values) {
    args.insert(args.begin(), {"calibrate", "--list"});
    test::cli::expect_rejected(test::cli::kInvalidInput, args, values);
  };
  rejected({"--in-run-n", "4096"}, {"--in-run-n is used only with --in-run"});
  rejected({"--in-run", "--in-run-n", "0"}, {"--in-run-n 0 must be >= 1"});                            // not an order
  rejected({"--in-run", "--device", "emulated"}, {"--in-run", "does not go with --device emulated"});  // cores only
  rejected({"--in-run", "--kernels", "lu_leaf"}, {"--in-run: none of the --kernels"});  // no Cholesky or QR kernel
  // An existing file, so that what refuses it is --base without --device or --in-run.
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  rejected({"--base", local}, {"--base " + local + " is used only with --device or --in-run"});
  rejected({"--in-run", "--base", "/nonexistent.json"}, {"--base /nonexistent.json: cannot open"});
  EXPECT_EQ(shell(std::string(TESSERA_BIN) +
                  " calibrate --list --in-run --kernels gsmm --sizes 64 --for-n 0 > /dev/null 2>&1"),
            0);
}

}  // namespace
