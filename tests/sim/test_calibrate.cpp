// `tessera calibrate`: the shapes it measures are the runtime's, and the
// machine file it writes loads and drives a simulated run as it is.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../cli_expect.hpp"
#include "../dag_test_util.hpp"
#include "../test_helpers.hpp"
#include "algorithms/cholesky.hpp"
#include "algorithms/lu.hpp"
#include "algorithms/qr.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/tile_layout.hpp"
#include "calibrate_test_util.hpp"
#include "experiments/calibrate.hpp"
#include "experiments/driver.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "sim_test_util.hpp"

namespace {
using namespace tessera;

int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Every kernel call of a default-tiled run of order N is measured exactly, so
// the model never interpolates for it.
TEST(Calibrate, ShapesCoverTheRuntimesCalls) {
  kernels::CalibrationOptions o;
  o.sizes = {};
  o.for_n = {1000};
  o.concurrency = {1, 2};
  std::set<std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t>> measured;
  for (const auto& s : kernels::calibration_shapes(o)) measured.emplace(s.kernel, s.precision, s.m, s.n, s.k);
  for (const char p : {'d', 's'})
    for (int threads : {1, 2}) {
      const TileLayout L(1000, 1000, default_tiles(1000, 1000, threads, p == 's').B, 1, 0);
      test::TaskList chol, qr, lu;
      cholesky_tasks(L, chol);
      qr_tasks(L, qr);
      lu_tasks(L, LuOptions{}, lu);
      for (const auto& t : chol.tasks) {
        const KernelShape s = cholesky_shape(L, t, p);
        EXPECT_TRUE(measured.count({s.kernel, p, s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
      }
      for (const auto& t : qr.tasks) {
        const KernelShape s = qr_shape(L, t, p, 32);
        EXPECT_TRUE(measured.count({s.kernel, p, s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
      }
      // LU's default (partial pivoting) calls; its row moves are not calibrated.
      for (const auto& t : lu.tasks) {
        const KernelShape s = lu_shape(L, t, p);
        if (!kernel_info(s.kernel)->calibrated || s.m < 1) continue;
        EXPECT_TRUE(measured.count({s.kernel, p, s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
      }
    }
}

TEST(Calibrate, MeasurementIsPositiveWithSpread) {
  kernels::CalibrationOptions o;
  o.min_reps = 5;
  o.min_time_s = 0.002;
  for (const std::uint16_t k : {kPotf2p, kTrsm, kGsmm, kGsmmDiag, kGeqrt, kLarfb, kTsqrt, kSsrfb, kLuLeaf, kLuMerge,
                                kLuPanel, kLuDiag, kLuTrsmL, kLuTrsmU, kLuGemm}) {
    const auto m = kernels::measure_kernel(KernelShape{k, 's', 48, 40, 40}, 2, o);
    EXPECT_GT(m.median_s, 0) << kernel_name(k);
    EXPECT_GE(m.spread_s, 0);
    EXPECT_LE(m.min_s, m.median_s);
    EXPECT_GE(m.reps, 5);
  }
}

// The statistics of one shape's calls, on times given by hand: calls until
// min_reps and min_time_s (both), their median, interquartile range (linear
// between order statistics) and minimum; one preempted call (100 s among
// 1 ... 8) moves neither the median nor the spread.
TEST(Calibrate, SampleCallsGivesTheMedianSpreadAndMinimum) {
  kernels::CalibrationOptions o;
  o.min_reps = 9;
  o.max_reps = 50;
  o.min_time_s = 10;  // reached after the third call: min_reps still asks for nine
  o.max_time_s = 1e9;
  const std::vector<double> times = {8, 3, 100, 1, 5, 2, 7, 4, 6, 1000};
  int calls = 0;
  const auto m = kernels::sample_calls(KernelShape{kGsmm, 'd', 64, 64, 64}, 2, o, [&](int i) {
    ++calls;
    return times.at(static_cast<std::size_t>(i));
  });
  EXPECT_EQ(calls, 9);
  EXPECT_EQ(m.reps, 9);
  EXPECT_EQ(m.median_s, 5.0);
  EXPECT_EQ(m.spread_s, 4.0);  // 7 - 3
  EXPECT_EQ(m.min_s, 1.0);
  EXPECT_EQ(m.concurrency, 2);
  // max_reps ends the calls short of min_time_s; past min_reps, min_time_s ends them (8 + 3 >= 10).
  const auto reps = [&](int min_reps, int max_reps) {
    o.min_reps = min_reps;
    o.max_reps = max_reps;
    return kernels::sample_calls(KernelShape{}, 1, o, [&](int i) { return times.at(static_cast<std::size_t>(i)); })
        .reps;
  };
  EXPECT_EQ(reps(9, 3), 3);
  EXPECT_EQ(reps(2, 50), 2);
  EXPECT_EQ(reps(1, 50), 2);
}

// Each call is measured with one BLAS thread, as a run's workers call the
// kernels, whatever the process had set (the tuner's speed curve, measured
// with the library's default of one thread per core, showed 2x spikes where
// a call found the other caller's threads idle); the setting is restored.
TEST(Calibrate, MeasuresWithOneBlasThreadAndRestoresTheSetting) {
  kernels::CalibrationOptions o;
  o.min_reps = 3;
  o.min_time_s = 0.001;
  kernels::set_blas_threads(2);
  const int before = kernels::blas_threads();
  const auto m = kernels::measure_kernel(KernelShape{kGsmm, 'd', 64, 64, 64}, 2, o);
  EXPECT_EQ(m.blas_threads, 1);
  EXPECT_EQ(kernels::blas_threads(), before);
  kernels::set_blas_threads(1);
}

// Cold operands: every copy is restored right after its call, so no timed
// call runs on what the previous call on that copy destroyed (POTF2' on a
// factored tile would fail; the warm-up restores too).
TEST(Calibrate, ColdOperandsMeasureEveryKernel) {
  kernels::CalibrationOptions o;
  o.min_reps = 5;
  o.min_time_s = 0.002;
  o.cold = true;
  o.cold_bytes = std::size_t{1} << 20;  // a few copies of these small shapes
  for (const std::uint16_t k : {kPotf2p, kTrsm, kGsmm, kGsmmDiag, kGeqrt, kLarfb, kTsqrt, kSsrfb, kLuLeaf, kLuMerge,
                                kLuPanel, kLuDiag, kLuTrsmL, kLuTrsmU, kLuGemm}) {
    const auto m = kernels::measure_kernel(KernelShape{k, 'd', 48, 40, 40}, 2, o);
    EXPECT_GT(m.median_s, 0) << kernel_name(k);
    EXPECT_GE(m.reps, 5);
  }
}

// Passes combine shape by shape: the first appends, a later one keeps the
// smaller median of the two, whichever pass it came from (here the third
// pass's for shape 0, the second's for shape 1, the first's for shape 2;
// reps marks the pass a measurement came from).
TEST(Calibrate, EachShapeKeepsItsFastestPass) {
  const auto measured = [](double median_s, int reps) {
    kernels::KernelMeasurement m;
    m.median_s = median_s;
    m.reps = reps;
    return m;
  };
  std::vector<kernels::KernelMeasurement> kept;
  const double medians[3][3] = {{5, 4, 3}, {5, 2, 4}, {1, 2, 3}};  // [shape][pass]
  for (int pass = 0; pass < 3; ++pass)
    for (std::size_t i = 0; i < 3; ++i) kernels::keep_fastest_pass(kept, i, pass, measured(medians[i][pass], pass));
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].median_s, 3.0);
  EXPECT_EQ(kept[0].reps, 2);
  EXPECT_EQ(kept[1].median_s, 2.0);
  EXPECT_EQ(kept[1].reps, 1);
  EXPECT_EQ(kept[2].median_s, 1.0);
  EXPECT_EQ(kept[2].reps, 0);
}

// --passes: every shape measured once per pass; one measurement per shape
// and concurrency level comes out, the fastest pass's (each pass's median
// read from its progress line, printed to 0.1 us).
TEST(Calibrate, PassesKeepOneMeasurementPerShape) {
  kernels::CalibrationOptions o;
  o.precisions = {'d'};
  o.kernels = {kGsmm, kTrsm};
  o.sizes = {32, 48};
  o.for_n = {};
  o.concurrency = {1, 2};
  o.startup = false;
  o.min_reps = 3;
  o.min_time_s = 0.001;
  o.passes = 3;
  std::map<std::string, std::vector<double>> passes_us;  // "x2 GSMM d m=32 n=32 k=32" -> each pass's median
  o.progress = [&](const std::string& line) { test::record_median(passes_us, line); };
  const kernels::Calibration c = kernels::calibrate(o);
  ASSERT_EQ(c.kernels.size(), 2u * 2u * 2u);
  std::set<std::tuple<std::uint16_t, std::int64_t, int>> seen;
  for (const auto& m : c.kernels) {
    EXPECT_TRUE(seen.emplace(m.shape.kernel, m.shape.m, m.concurrency).second) << "measured twice in the result";
    EXPECT_GT(m.median_s, 0);
    const std::string key = fmt::format("x{} {} d m={} n={} k={}", m.concurrency, kernel_name(m.shape.kernel),
                                        m.shape.m, m.shape.n, m.shape.k);
    const std::vector<double>& us = passes_us[key];
    ASSERT_EQ(us.size(), 3u) << key;
    EXPECT_NEAR(m.median_s * 1e6, *std::min_element(us.begin(), us.end()), 0.051) << key;
  }
}

// The machine file of a calibration made by hand: one model per thread
// count, each with its own thread count's start-up cost (a 2-thread run
// starts two threads) and the first calls, and its measurements as measured.
TEST(Calibrate, EachThreadCountsModelHasItsOwnStartUp) {
  kernels::Calibration c;
  for (const int t : {1, 2}) {
    kernels::KernelMeasurement m;
    m.shape = KernelShape{kGsmm, 'd', 64, 64, 64};
    m.concurrency = t;
    m.median_s = 1e-4 * t;
    m.spread_s = 1e-6;
    m.min_s = 0.9e-4 * t;
    m.reps = 9;
    c.kernels.push_back(m);
  }
  c.startup.start_s = {{1, 0.001}, {2, 0.003}};
  c.startup.first_call_s[{kGsmm, 'd'}] = 0.02;
  kernels::CalibrationOptions o;
  o.precisions = {'d'};
  const auto f = nlohmann::json::parse(kernels::calibration_machine_file(c, o, "hand", 4, "test", 1.0));
  EXPECT_EQ(f.at("node").at("cores").at("count"), 4);
  for (const int t : {1, 2}) {
    const auto& model = f.at("kernel_models").at("core-x" + std::to_string(t));
    EXPECT_EQ(model.at("concurrency"), t);
    EXPECT_EQ(model.at("start_s").at("value"), t == 1 ? 0.001 : 0.003) << t;
    EXPECT_EQ(model.at("first_call_s").at("gsmm").at("d"), 0.02);
    ASSERT_EQ(model.at("measurements").size(), 1u);
    EXPECT_EQ(model.at("measurements")[0].at("median_s"), 1e-4 * t);
  }
}

// The command end to end: a small calibration (a few seconds), loaded by
// Machine, used by a simulated Cholesky run with 1 and 2 threads.
TEST(CalibrateCli, QuickFileLoadsAndDrivesASimulatedRun) {
  test::TempDir dir;
  const std::string file = dir.path() + "/cal.json";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) +
                  " calibrate --quick --threads 2 --precision d --kernels potf2p,trsm,gsmm,gsmm_diag "
                  "--sizes 64 --for-n 0 --out " +
                  file + " > " + dir.path() + "/out.txt"),
            0)
      << test::read_text(dir.path() + "/out.txt");
  const auto m = platform::Machine::load(file);
  EXPECT_EQ(m.nodes, 1);
  EXPECT_GE(m.node.cores, 2);
  EXPECT_EQ(m.core_model_name(1), "core-x1");
  EXPECT_EQ(m.core_model_name(2), "core-x2");
  EXPECT_EQ(m.core_model_name(7), "core-x2");
  const auto* cal = dynamic_cast<const models::CalibratedModel*>(&m.core_model(2));
  ASSERT_NE(cal, nullptr);
  EXPECT_EQ(cal->entries().size(), 4u);
  for (const auto& e : cal->entries()) {
    EXPECT_GT(e.median_s, 0);
    EXPECT_EQ(cal->seconds(KernelShape{e.kernel, 'd', e.m, e.n, e.k}), e.median_s);
  }
  const auto doc = nlohmann::json::parse(test::read_text(file));
  EXPECT_EQ(doc.at("kernel_models").at("core-x2").at("concurrency"), 2);
  EXPECT_TRUE(doc.at("calibration").contains("method"));

  for (const char* threads : {"1", "2"}) {
    const std::string json = dir.path() + "/run.json";
    ASSERT_EQ(shell(std::string(TESSERA_BIN) + " run --algo cholesky --n 512 --B 64 --threads " + threads +
                    " --backend sim --machine " + file + " --json " + json + " > /dev/null"),
              0);
    const auto r = nlohmann::json::parse(test::read_text(json));
    EXPECT_EQ(r.at("backend"), "sim");
    EXPECT_GT(r.at("time_s").get<double>(), 0);
  }
  // A kernel the file has no measurement of fails the run naming it.
  EXPECT_EQ(shell(std::string(TESSERA_BIN) + " run --algo qr --n 256 --B 64 --backend sim --machine " + file +
                  " > /dev/null 2> " + dir.path() + "/err.txt"),
            2);
  EXPECT_NE(test::read_text(dir.path() + "/err.txt").find("geqrt"), std::string::npos);
}

// --ib with a list measures QR's kernels at each inner blocking; the file
// records each entry's ib and the model times a call at its own.
TEST(CalibrateCli, SeveralInnerBlockingsAreMeasuredAndLookedUp) {
  test::TempDir dir;
  const std::string file = dir.path() + "/cal.json";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) +
                  " calibrate --quick --precision d --kernels tsqrt --sizes 128 "
                  "--for-n 0 --ib 16,64 --out " +
                  file + " > " + dir.path() + "/out.txt"),
            0)
      << test::read_text(dir.path() + "/out.txt");
  const auto doc = nlohmann::json::parse(test::read_text(file));
  // One thread measured (the default --threads), the node's every core described.
  EXPECT_EQ(doc.at("node").at("cores").at("count"), std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(doc.at("calibration").at("qr_ib"), 16);
  EXPECT_EQ(doc.at("calibration").at("qr_more_ib"), nlohmann::json::array({64}));
  const auto m = platform::Machine::load(file);
  const auto* cal = dynamic_cast<const models::CalibratedModel*>(&m.core_model(1));
  ASSERT_NE(cal, nullptr);
  ASSERT_EQ(cal->entries().size(), 2u);
  std::set<std::int64_t> ibs;
  for (const auto& e : cal->entries()) {
    ibs.insert(e.ib);
    EXPECT_EQ(cal->seconds(KernelShape{e.kernel, 'd', e.m, e.n, e.k, e.ib}), e.median_s) << e.ib;
  }
  EXPECT_EQ(ibs, (std::set<std::int64_t>{16, 64}));
  // Bad lists stop before measuring, naming the value.
  for (const std::string bad : {"16,16", "0", "16,-4"}) {
    EXPECT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --quick --kernels tsqrt --sizes 128 --for-n 0 --ib " + bad +
                    " --out " + dir.path() + "/bad.json > /dev/null 2> " + dir.path() + "/err.txt"),
              2)
        << bad;
    EXPECT_NE(test::read_text(dir.path() + "/err.txt").find("--ib"), std::string::npos) << bad;
  }
}

// --gpu-qr-panel names the CUDA kernels' panels: refused, naming the value,
// for anything but householder or cholqr, and cholqr without --device cuda.
TEST(CalibrateCli, QrPanelsOnlyForACudaDevice) {
  test::TempDir dir;
  for (const auto& [args, want] :
       {std::pair<std::string, std::string>{"--gpu-qr-panel givens", "--gpu-qr-panel 'givens'"},
        std::pair<std::string, std::string>{"--gpu-qr-panel cholqr", "needs --device cuda"},
        std::pair<std::string, std::string>{"--device emulated --gpu-qr-panel cholqr", "needs --device cuda"}}) {
    EXPECT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --quick --kernels tsqrt --sizes 128 --for-n 0 " + args +
                    " --out " + dir.path() + "/bad.json > /dev/null 2> " + dir.path() + "/err.txt"),
              2)
        << args;
    EXPECT_NE(test::read_text(dir.path() + "/err.txt").find(want), std::string::npos) << args;
  }
}

// LU's kernels are in the default list, and a quick calibration of them
// drives a simulated LU run (its row moves take no modeled time).
TEST(CalibrateCli, LuKernelsAreListedAndDriveASimulatedRun) {
  test::TempDir dir;
  ASSERT_EQ(
      shell(std::string(TESSERA_BIN) + " calibrate --list --precision d --for-n 1000 > " + dir.path() + "/list.txt"),
      0);
  const std::string list = test::read_text(dir.path() + "/list.txt");
  for (const std::uint16_t k : calibrated_kernels("lu"))
    EXPECT_NE(list.find(std::string(kernel_name(k)) + " "), std::string::npos) << kernel_name(k);
  EXPECT_EQ(list.find("LU_GATHER"), std::string::npos);

  std::string keys;
  for (const std::uint16_t k : calibrated_kernels("lu")) keys += (keys.empty() ? "" : ",") + std::string(kernel_key(k));
  const std::string file = dir.path() + "/cal.json";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --quick --precision d --kernels " + keys +
                  " --sizes 64 --for-n 0 --out " + file + " > " + dir.path() + "/out.txt"),
            0)
      << test::read_text(dir.path() + "/out.txt");
  const auto m = platform::Machine::load(file);
  const auto* cal = dynamic_cast<const models::CalibratedModel*>(&m.core_model(1));
  ASSERT_NE(cal, nullptr);
  EXPECT_EQ(cal->entries().size(), calibrated_kernels("lu").size());
  for (const auto& e : cal->entries()) EXPECT_GT(e.median_s, 0) << kernel_key(e.kernel);
  for (const char* pivot : {"partial", "tournament"}) {
    const std::string json = dir.path() + "/run.json";
    ASSERT_EQ(shell(std::string(TESSERA_BIN) + " run --algo lu --pivot " + pivot +
                    " --n 512 --B 64 --backend sim --machine " + file + " --json " + json + " > /dev/null"),
              0)
        << pivot;
    EXPECT_GT(nlohmann::json::parse(test::read_text(json)).at("time_s").get<double>(), 0) << pivot;
  }
}

// --flush-restored: the destroyed inputs flushed after their restore; the file says so and how.
TEST(CalibrateCli, FlushRestoredIsRecorded) {
  test::TempDir dir;
  const std::string file = dir.path() + "/cal.json";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --quick --flush-restored --precision d --kernels trsm,gsmm " +
                  "--sizes 64 --for-n 0 --out " + file + " > /dev/null"),
            0);
  const auto j = nlohmann::json::parse(test::read_text(file));
  EXPECT_EQ(j.at("calibration").at("flush_restored"), true);
  EXPECT_NE(j.at("calibration").at("method").get<std::string>().find("clflush"), std::string::npos);
  EXPECT_EQ(platform::Machine::load(file).core_model(1).seconds(KernelShape{kTrsm, 'd', 64, 64, 0, 0}) > 0, true);
}

// --for-s: the rectangular tiles' shapes too, every Cholesky and QR call
// of the runtime's default s = 3 tiles (b = B/6) measured exactly.
TEST(Calibrate, ForSCoversRectangularTiles) {
  kernels::CalibrationOptions o;
  o.sizes = {};
  o.for_n = {1000};
  o.for_s = {1, 3};
  o.precisions = {'d'};
  std::set<std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t>> measured;
  for (const auto& s : kernels::calibration_shapes(o)) measured.emplace(s.kernel, s.precision, s.m, s.n, s.k);
  const index_t B = default_tiles(1000, 1000, 1, false).B;
  const TileLayout L(1000, 1000, B, 3, B / 6);
  test::TaskList chol, qr;
  cholesky_tasks(L, chol);
  qr_tasks(L, qr);
  for (const auto& t : chol.tasks) {
    const KernelShape s = cholesky_shape(L, t, 'd');
    EXPECT_TRUE(measured.count({s.kernel, 'd', s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
  }
  for (const auto& t : qr.tasks) {
    const KernelShape s = qr_shape(L, t, 'd', 32);
    EXPECT_TRUE(measured.count({s.kernel, 'd', s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
  }
  o.for_s = {1};
  EXPECT_LT(kernels::calibration_shapes(o).size(), measured.size());
}

// --for-narrow: --dist gpu-columns' tiles (one tile row, s equal columns)
// measured exactly: every Cholesky and QR call of N = 1000, B = 1000, s = 4,
// b = 250, none of which the default b = B/(2s) gives.
TEST(Calibrate, ForNarrowCoversEqualColumns) {
  kernels::CalibrationOptions o;
  o.sizes = {};
  o.for_n = {1000};
  o.for_s = {4};
  o.for_b = {1000};
  o.precisions = {'d'};
  const auto shapes = [&] {
    std::set<std::tuple<std::uint16_t, std::int64_t, std::int64_t, std::int64_t>> m;
    for (const auto& s : kernels::calibration_shapes(o)) m.emplace(s.kernel, s.m, s.n, s.k);
    return m;
  };
  const auto halves = shapes();
  o.for_narrow = {250};
  const auto equal = shapes();
  const TileLayout L(1000, 1000, 1000, 4, 250);
  test::TaskList chol, qr;
  cholesky_tasks(L, chol);
  qr_tasks(L, qr);
  int missing_before = 0;
  for (const auto& t : chol.tasks) {
    const KernelShape s = cholesky_shape(L, t, 'd');
    EXPECT_TRUE(equal.count({s.kernel, s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
    missing_before += !halves.count({s.kernel, s.m, s.n, s.k});
  }
  for (const auto& t : qr.tasks) {
    const KernelShape s = qr_shape(L, t, 'd', 32);
    EXPECT_TRUE(equal.count({s.kernel, s.m, s.n, s.k})) << kernel_name(s.kernel) << " " << s.m << " " << s.n;
    missing_before += !halves.count({s.kernel, s.m, s.n, s.k});
  }
  EXPECT_GT(missing_before, 0) << "b = B/(2s) gives other shapes";
  // A width that leaves no remainder column in one of the tiles asked for is
  // an error naming them (the tile cannot exist), not a tile skipped in silence.
  o.for_b = {1000, 1500};
  o.for_narrow = {250, 400};
  try {
    (void)shapes();
    ADD_FAILURE() << "--for-narrow 400 fits no tile of B = 1000, s = 4";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--for-narrow 400 with --for-s 4 fits no tile of B = 1000"), std::string::npos)
        << e.what();
  }
  // In B = 1500 both widths fit, and each one's tiles are measured.
  o.for_b = {1500};
  const auto both = shapes();
  for (const index_t w : {250, 400}) {
    const TileLayout T(1000, 1000, 1500, 4, w);
    test::TaskList tasks;
    qr_tasks(T, tasks);
    for (const auto& t : tasks.tasks) {
      const KernelShape s = qr_shape(T, t, 'd', 32);
      EXPECT_TRUE(both.count({s.kernel, s.m, s.n, s.k})) << "b = " << w << ": " << kernel_name(s.kernel);
    }
  }
}

// --for-narrow without --for-n, without an s > 1, or below 1 exits 2 naming it.
TEST(CalibrateCli, ForNarrowNeedsItsTiles) {
  const auto rejected = [](std::vector<std::string> args, const std::vector<std::string>& values) {
    args.insert(args.begin(), {"calibrate", "--list"});
    test::cli::expect_rejected(test::cli::kInvalidInput, args, values);
  };
  rejected({"--for-n", "0", "--for-s", "4", "--for-narrow", "100"}, {"--for-narrow needs --for-n"});
  rejected({"--for-n", "1000", "--for-narrow", "100"}, {"--for-narrow needs --for-s S > 1"});
  rejected({"--for-n", "1000", "--for-s", "4", "--for-narrow", "0"}, {"--for-narrow 0 must be >= 1"});
  rejected({"--for-n", "1000", "--for-s", "4", "--for-narrow", "2000"},
           {"--for-narrow 2000 with --for-s 4 fits no tile"});
  // --in-run --base only runs factorizations: the sizes of a calibration in isolation are refused there.
  rejected({"--in-run", "--base", std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json", "--for-n", "1000",
            "--for-s", "4", "--for-narrow", "100"},
           {"is for a calibration in isolation", "--in-run"});
}

// `tessera model kernels`: a calibrated file's leave-one-out table (one row
// per kernel and precision, then "all"); a file without a calibrated model exits 2.
TEST(CalibrateCli, ModelKernelsReportsLeaveOneOutErrors) {
  test::TempDir dir;
  const std::string out = dir.path() + "/loo.txt";
  ASSERT_EQ(shell(std::string(TESSERA_BIN) + " model kernels --machine " + TESSERA_SOURCE_DIR +
                  "/platform/machines/local.json --model core-x1 > " + out),
            0);
  const std::string text = test::read_text(out);
  EXPECT_EQ(text.rfind("core-x1: ", 0), 0u) << text;
  EXPECT_NE(text.find("GSMM          d"), std::string::npos) << text;
  EXPECT_NE(text.find("\nall "), std::string::npos) << text;
  EXPECT_EQ(text.find("core-x2"), std::string::npos) << "--model selects one: " << text;
  // The "all" row's numbers: per interpolation (flops, then shape), the median (upper) and worst of every
  // left-out entry's |predicted / measured - 1|, in percent.
  const auto m = platform::Machine::load(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json");
  const auto* cal = dynamic_cast<const models::CalibratedModel*>(&m.model("core-x1"));
  ASSERT_NE(cal, nullptr);
  std::string want;
  for (const auto how : {models::Interpolation::Flops, models::Interpolation::Shape}) {
    std::vector<double> e;
    for (const models::LeftOut& x : models::leave_one_out(cal->entries(), how))
      e.push_back(std::abs(x.predicted_s / x.entry.median_s - 1) * 100);
    ASSERT_GT(e.size(), 10u);
    std::sort(e.begin(), e.end());
    want += fmt::format("| {:>22} ", fmt::format("{:.1f}% / {:.1f}%", e[e.size() / 2], e.back()));
  }
  const auto all = text.find("\nall ");
  ASSERT_NE(all, std::string::npos) << text;
  const std::string row = text.substr(all + 1, text.find('\n', all + 1) - all - 1) + " ";
  EXPECT_NE(row.find(want), std::string::npos) << row << "\nwant: " << want;
  const std::string keeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
  test::cli::expect_rejected(test::cli::kInvalidInput, {"model", "kernels", "--machine", keeneland},
                             {"--machine " + keeneland, "has no calibrated kernel model"});
}

// Each bad option exits 2 with one line naming the option and its value.
TEST(CalibrateCli, BadOptionsAreRejected) {
  const auto rejected = [](std::vector<std::string> args, const std::vector<std::string>& values) {
    args.insert(args.begin(), {"calibrate", "--list"});
    test::cli::expect_rejected(test::cli::kInvalidInput, args, values);
  };
  rejected({"--kernels", "gemm"}, {"--kernels 'gemm' is not one of"});
  rejected({"--precision", "z"}, {"--precision 'z' is not one of"});
  for (const char* opt : {"--threads", "--sizes", "--for-s", "--passes", "--ib"})
    rejected({opt, "0"}, {std::string(opt) + " 0 must be >= 1"});
  rejected({"--cold", "--flush-restored"}, {"--flush-restored and --cold"});
  EXPECT_EQ(shell(std::string(TESSERA_BIN) + " calibrate --list --kernels gsmm --sizes 64 --for-n 0 > /dev/null 2>&1"),
            0);
}

// Start-up costs (KernelTimeModel::start_s, first_call_s) by hand: tiles of
// 64, kernel times powers of two as in test_sim_time.cpp, start_s = 1 and
// first calls 2, 4, 8, 16 extra.
double simulated_with_startup(int threads, index_t n) {
  const std::string text = R"({
    "name": "hand-made", "nodes": 1,
    "node": { "cores": { "count": 2, "model": "m" } },
    "network": { "topology": "star", "bandwidth_Bps": 1e9, "latency_s": 0 },
    "kernel_models": { "m": { "type": "calibrated", "start_s": { "value": 1, "source": "test" },
      "first_call_s": { "potf2p": { "d": 2 }, "trsm": { "d": 4 }, "gsmm_diag": { "d": 8 }, "gsmm": { "d": 16 } },
      "measurements": [
      { "kernel": "potf2p",    "precision": "d", "m": 64, "n": 64,          "median_s": 0.5 },
      { "kernel": "trsm",      "precision": "d", "m": 64, "n": 64,          "median_s": 0.25 },
      { "kernel": "gsmm_diag", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.125 },
      { "kernel": "gsmm",      "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.0625 } ] } }
  })";
  const std::string out = test::run_in_child([&] {
    const auto machine = platform::Machine::parse(text, "hand-made.json");
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, false);
    RunConfig c;
    c.n = n;
    c.B = 64;
    c.threads = threads;
    c.model = &machine.core_model(threads);
    c.phantom = true;
    return test::exact(run_factorization(c, node0).time_s);
  });
  return std::strtod(out.c_str(), nullptr);
}

// One core, 3x3 tiles: the 10 tasks back to back (2.6875), plus the start-up
// once and each kernel's first call once.
TEST(StartupCosts, OneCorePaysEachOnce) { EXPECT_EQ(simulated_with_startup(1, 192), 2.6875 + 1 + 2 + 4 + 8 + 16); }

// A chain on two cores: POTF2' -> TRSM -> GSMM_DIAG -> POTF2', the second POTF2' warm.
TEST(StartupCosts, ChainPaysEachKernelsFirstCall) { EXPECT_EQ(simulated_with_startup(2, 128), 1.375 + 1 + 2 + 4 + 8); }

// Two TRSMs that start together both pay the first-call cost (both wait for
// the library's initialization), so 3x3 tiles on two cores take longer than
// one core's start-up-free schedule plus each cost once would suggest.
TEST(StartupCosts, ConcurrentFirstCallsBothPay) {
  const double t = simulated_with_startup(2, 192);
  // POTF2'(0) ends at 3.5; both TRSMs run [3.5, 7.75].
  EXPECT_GE(t, 7.75 + 8);
}

}  // namespace
