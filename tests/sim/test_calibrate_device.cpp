// `tessera calibrate --device` (issue 15 point 7) on an emulated GPU: it times
// the kernels a GPU runs for the runtime and no other, its link fit finds the
// bandwidth and latency the emulated copies are modeled with, and the machine
// file it writes carries that GPU and drives a simulated run with GPUs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../test_helpers.hpp"
#include "base/kernel_table.hpp"
#include "calibrate_test_util.hpp"
#include "experiments/calibrate.hpp"
#include "experiments/calibrate_device.hpp"
#include "models/kernel_model.hpp"
#include "models/machine.hpp"
#include "platform/native/emulated_device.hpp"
#include "sim_cli_util.hpp"

namespace {
using namespace tessera;

// A slow link (4 MiB in 21 ms), so that a loaded machine's millisecond of wake-up jitter on a copy's sleep
// (platform/native/emulated_device.cpp) is a few percent of the fitted slope, not the 5% it was at 2 GB/s.
constexpr double kBandwidth = 2e8, kLatency = 50e-6;

kernels::CalibrationOptions small_options() {
  kernels::CalibrationOptions o;
  o.sizes = {64};
  o.for_n = {};
  o.precisions = {'d'};
  o.min_reps = 3;
  o.min_time_s = 0.002;
  o.max_time_s = 0.05;
  return o;
}

const kernels::DeviceCalibration& calibration() {
  static const kernels::DeviceCalibration c = [] {
    platform::EmulatedDeviceOptions eo;
    eo.bandwidth_Bps = kBandwidth;
    eo.latency_s = kLatency;
    platform::EmulatedDevice dev(1, eo);
    return kernels::calibrate_device(dev, small_options(), {4096, 1u << 20, 2u << 20, 4u << 20});
  }();
  return c;
}

// The LU tournament's candidate selection (LEAF, MERGE) runs on CPU cores only: a GPU is not timed on it;
// every other calibrated kernel is, LU's PANEL, DIAG and TRSM_L included (--d 0 runs them on a GPU).
TEST(CalibrateDevice, TimesTheKernelsAGpuRuns) {
  std::vector<std::uint16_t> timed;
  for (const auto& m : calibration().kernels) {
    timed.push_back(m.shape.kernel);
    EXPECT_GT(m.median_s, 0) << kernel_name(m.shape.kernel);
    EXPECT_GE(m.reps, 3) << kernel_name(m.shape.kernel);
    EXPECT_EQ(m.shape.m, 64);
  }
  for (const std::uint16_t k : calibrated_kernels()) {
    const bool on_gpu = k != kLuLeaf && k != kLuMerge;
    EXPECT_EQ(std::ranges::count(timed, k), on_gpu ? 1 : 0) << kernel_name(k);
    EXPECT_EQ(kernels::runs_on_device(k), on_gpu) << kernel_name(k);
  }
}

// The emulated copies take latency + bytes / bandwidth (platform/native/emulated_device.hpp) plus the
// engine's own overhead, never less: the fit finds the bandwidth within 30% below and 15% above (a late wake-up
// on the small copies tilts the slope up) and a latency at least the modeled one.
TEST(CalibrateDevice, LinkFitFindsTheModeledLink) {
  for (const auto* l : {&calibration().to_device, &calibration().from_device}) {
    EXPECT_GT(l->bandwidth_Bps, 0.7 * kBandwidth);
    EXPECT_LT(l->bandwidth_Bps, 1.15 * kBandwidth);
    EXPECT_GE(l->latency_s, 0.8 * kLatency);
    EXPECT_LT(l->latency_s, 2e-3);
    ASSERT_EQ(l->points.size(), 4u);
    EXPECT_GT(l->points.back().second, 20e-3) << "4 MiB at 0.2 GB/s take 21 ms";
  }
}

// --passes: each shape's fastest pass is kept (each pass's median read from its progress line, to 0.1 us).
TEST(CalibrateDevice, PassesKeepEachShapesFastest) {
  platform::EmulatedDeviceOptions eo;
  eo.bandwidth_Bps = kBandwidth;
  eo.latency_s = kLatency;
  platform::EmulatedDevice dev(1, eo);
  kernels::CalibrationOptions o = small_options();
  o.kernels = {kGsmm, kTrsm, kPotf2p};
  o.passes = 3;
  std::map<std::string, std::vector<double>> passes_us;
  o.progress = [&](const std::string& line) { test::record_median(passes_us, line); };
  const kernels::DeviceCalibration c = kernels::calibrate_device(dev, o, {1u << 20, 2u << 20});
  ASSERT_EQ(c.kernels.size(), 3u);
  for (const auto& m : c.kernels) {
    const std::string key =
        fmt::format("{} {} d m={} n={} k={}", c.device, kernel_name(m.shape.kernel), m.shape.m, m.shape.n, m.shape.k);
    const std::vector<double>& us = passes_us[key];
    ASSERT_EQ(us.size(), 3u) << key;
    EXPECT_NEAR(m.median_s * 1e6, *std::min_element(us.begin(), us.end()), 0.051) << key;
  }
}

// The fit on exact points: copies of 1, 2 and 4 MiB taking 10 us + bytes / 1 GB/s (and a 4 KiB one, left out
// of the slope) give 1 GB/s and 10 us; a fit through the origin would read the latency as a slower link.
TEST(CalibrateDevice, LinkFitHasAnIntercept) {
  kernels::LinkMeasurement l;
  for (const std::size_t b : {std::size_t{4096}, std::size_t{1} << 20, std::size_t{2} << 20, std::size_t{4} << 20})
    l.points.emplace_back(b, 10e-6 + static_cast<double>(b) / 1e9);
  kernels::fit_link(l, true);
  EXPECT_NEAR(l.bandwidth_Bps, 1e9, 1e-6 * 1e9);
  EXPECT_NEAR(l.latency_s, 10e-6, 1e-12);
  // Times that do not grow with size fit no bandwidth.
  for (auto& p : l.points) p.second = 1e-3;
  EXPECT_THROW(kernels::fit_link(l, false), std::runtime_error);
}

// The file's one link is the slower direction's, its bandwidth and its latency (a link slower from the device,
// as the lent H200's, and one slower to it).
TEST(CalibrateDevice, TheFilesLinkIsTheSlowerDirectionsWhole) {
  const std::string base = test::read_text(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json");
  kernels::DeviceCalibration c = calibration();
  for (const bool slower_from : {true, false}) {
    c.to_device.bandwidth_Bps = slower_from ? 2e9 : 1e9;
    c.to_device.latency_s = slower_from ? 1e-5 : 3e-5;
    c.from_device.bandwidth_Bps = slower_from ? 1e9 : 2e9;
    c.from_device.latency_s = slower_from ? 3e-5 : 1e-5;
    const auto m = platform::Machine::parse(
        kernels::device_machine_file(base, "local.json", c, small_options(), 1, "links", "test", 1.0), "links.json");
    EXPECT_EQ(m.node.gpus.pcie.bandwidth_Bps, 1e9) << slower_from;
    EXPECT_EQ(m.node.gpus.pcie.latency_s, 3e-5) << slower_from;
  }
}

// The written file loads: the GPU count asked for, its capacity, the slower direction's link, and a
// calibrated model that gives a measured shape its median; a simulated Cholesky and QR with one GPU run on it.
TEST(CalibrateDevice, MachineFileCarriesTheGpuAndDrivesASimulation) {
  const auto& c = calibration();
  const std::string base = test::read_text(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json");
  const std::string text =
      kernels::device_machine_file(base, "local.json", c, small_options(), 2, "with-gpu", "test", 1.0);
  const auto m = platform::Machine::parse(text, "with-gpu.json");
  EXPECT_EQ(m.name, "with-gpu");
  EXPECT_EQ(m.node.gpus.count, 2);
  EXPECT_EQ(m.node.gpus.memory_bytes, static_cast<double>(c.capacity));
  const double slower = std::min(c.to_device.bandwidth_Bps, c.from_device.bandwidth_Bps);
  EXPECT_NEAR(m.node.gpus.pcie.bandwidth_Bps, slower, 1e-4 * slower);
  const auto* gpu = dynamic_cast<const models::CalibratedModel*>(&m.model(m.node.gpus.model));
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->entries().size(), c.kernels.size());
  for (const auto& k : c.kernels)
    if (k.shape.kernel == kGsmm) EXPECT_NEAR(gpu->seconds(k.shape), k.median_s, 1e-4 * k.median_s);
  EXPECT_EQ(m.core_model_name(1), platform::Machine::parse(base, "local.json").core_model_name(1)) << "cores kept";

  test::TempDir dir;
  const std::string file = dir.path() + "/with-gpu.json";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  for (const char* algo : {"cholesky", "qr"}) {
    const auto r = test::run_ok({"run", "--algo", algo, "--n", "512", "--B", "64", "--gpus", "1", "--threads", "1",
                                 "--backend", "sim", "--machine", file});
    ASSERT_TRUE(r.contains("gpu_stats")) << algo << ": " << r.dump();
    EXPECT_GT(r.at("time_s").get<double>(), 0) << algo;
  }
}

// --cold on a device: a scratch copy evicts the device's cache before each call; the file says so.
TEST(CalibrateDevice, ColdOperandsAreRecorded) {
  platform::EmulatedDevice dev(1, platform::EmulatedDeviceOptions{});
  kernels::CalibrationOptions o = small_options();
  o.kernels = {kGsmm, kTrsm};
  o.cold = true;
  o.cold_bytes = std::size_t{8} << 20;
  const auto c = kernels::calibrate_device(dev, o, {4096, 1u << 20, 2u << 20});
  ASSERT_EQ(c.kernels.size(), 2u);
  for (const auto& m : c.kernels) EXPECT_GT(m.median_s, 0);
  const std::string base = test::read_text(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json");
  const auto f = nlohmann::json::parse(kernels::device_machine_file(base, "local.json", c, o, 1, "cold", "test", 1));
  EXPECT_EQ(f.at("calibration").at("gpu").at("cold_operands"), true);
  EXPECT_NE(f.at("calibration").at("gpu").at("method").get<std::string>().find("4 MiB copied"), std::string::npos);
}

// --for-b: the for_n shapes at the tile sizes a GPU's runs use, not the cores' default tiles.
TEST(CalibrateDevice, ForBChoosesTheTileSize) {
  kernels::CalibrationOptions o;
  o.sizes = {};
  o.for_n = {8192};
  o.for_b = {2048};
  o.precisions = {'d'};
  const auto shapes = kernels::calibration_shapes(o);
  ASSERT_FALSE(shapes.empty());
  for (const auto& s : shapes) {
    EXPECT_EQ(s.m % 2048, 0) << kernel_name(s.kernel) << " m=" << s.m;
    if (s.kernel == kGsmm) EXPECT_EQ(s.n, 2048);
  }
}

// --stream-overlap's model (experiments/calibrate_overlap.hpp). A TRSM of
// 1024 (m n^2 = 2^30 flops) taking 1 s beside 16 GEMMs at its dimensions
// (2^31 flops each) taking 2 s: its share is 2^30 / 2^34 = 1/16. With
// overlap 0.5 it takes e = 1 - 0.5 (15/16) = 0.53125 of the GPU beside
// them, so the pair takes 2 + 0.53125 s (the simulated GPU's max-min
// sharing gives that: tests/sim/test_sim_gpu_streams.cpp); the estimate
// inverts it.
TEST(StreamOverlap, FromTheThreeTimes) {
  kernels::OverlapMeasurement m;
  m.panel = KernelShape{kTrsm, 'd', 1024, 1024, 0, 0};
  m.gemm_calls = 16;
  m.panel_s = 1.0, m.gemms_s = 2.0, m.together_s = 2.53125;
  const auto r = kernels::overlap_from_times(m);
  EXPECT_DOUBLE_EQ(r.share, 1.0 / 16);
  EXPECT_DOUBLE_EQ(r.used, 0.53125);
  EXPECT_DOUBLE_EQ(r.overlap, 0.5);
  // No longer than the GEMMs alone: all of what it leaves is used; one after the other: none.
  m.together_s = 2.0;
  EXPECT_DOUBLE_EQ(kernels::overlap_from_times(m).overlap, 1.0);
  EXPECT_DOUBLE_EQ(kernels::overlap_from_times(m).used, 1.0 / 16);
  m.together_s = 3.0;
  EXPECT_DOUBLE_EQ(kernels::overlap_from_times(m).overlap, 0.0);
  m.together_s = 3.5;  // slower than one after the other: still 0
  EXPECT_DOUBLE_EQ(kernels::overlap_from_times(m).overlap, 0.0);
  // GEMMs that did not outlast the panel: the model's premise fails, no value.
  m.gemms_s = 0.5, m.together_s = 1.2;
  EXPECT_TRUE(std::isnan(kernels::overlap_from_times(m).overlap));
  // A kernel at GEMM's rate says nothing about it.
  m.gemms_s = 2.0, m.panel_s = 0.0625;
  EXPECT_TRUE(std::isnan(kernels::overlap_from_times(m).overlap));
  m.gemm_calls = 0;
  EXPECT_THROW(kernels::overlap_from_times(m), std::logic_error);
}

TEST(StreamOverlap, TheMedianOfTheDefinedOnesAndThePanelsMeasured) {
  std::vector<kernels::OverlapMeasurement> m(5);
  m[0].overlap = 0.2, m[1].overlap = std::nan(""), m[2].overlap = 0.9, m[3].overlap = 0.6;
  m[4].overlap = 0.0, m[4].share = 0.7;  // above half of GEMM's rate: left out
  EXPECT_DOUBLE_EQ(kernels::median_overlap(m), 0.6);
  m.erase(m.begin() + 3);
  EXPECT_DOUBLE_EQ(kernels::median_overlap(m), 0.55);
  EXPECT_THROW(kernels::median_overlap({m[1], m[3]}), std::runtime_error);
  // The largest shape of each panel kernel and precision; GEMMs are no panels.
  const std::vector<KernelShape> shapes = {{kTsqrt, 'd', 512, 512, 0, 0},  {kTsqrt, 'd', 1024, 1024, 0, 0},
                                           {kTsqrt, 's', 512, 512, 0, 0},  {kGsmm, 'd', 1024, 1024, 1024, 0},
                                           {kPotf2p, 'd', 256, 256, 0, 0}, {kPotf2p, 'd', 8192, 8192, 0, 0}};
  const auto p = kernels::overlap_panels(shapes);
  ASSERT_EQ(p.size(), 3u);
  for (const auto& s : p) EXPECT_TRUE(panel_kernel(s.kernel)) << kernel_name(s.kernel);
  EXPECT_EQ(std::ranges::count_if(p, [](const KernelShape& s) { return s.kernel == kTsqrt && s.m == 1024; }), 1);
  EXPECT_EQ(std::ranges::count_if(p, [](const KernelShape& s) { return s.kernel == kPotf2p && s.m == 256; }), 1)
      << "above 4096 by default: not timed";
  EXPECT_EQ(kernels::overlap_panels(shapes, 8192).size(), 3u);
}

// One compute stream cannot run a panel beside GEMMs: the measurement says
// so; shapes without a panel kernel leave nothing to measure, which is
// recorded, not thrown.
TEST(StreamOverlap, NeedsTwoComputeStreamsAndAPanel) {
  platform::EmulatedDevice dev(1, platform::EmulatedDeviceOptions{});
  try {
    kernels::measure_overlap(dev, KernelShape{kTrsm, 'd', 64, 64, 0, 0}, small_options());
    FAIL() << "measured on one stream";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs two"), std::string::npos) << e.what();
  }
  kernels::DeviceCalibration c;
  EXPECT_THROW(kernels::measure_overlaps(dev, {KernelShape{kTrsm, 'd', 64, 64, 0, 0}}, small_options(), c), InputError);
  kernels::measure_overlaps(dev, {KernelShape{kGsmm, 'd', 64, 64, 64, 0}}, small_options(), c);
  EXPECT_TRUE(c.overlaps.empty());
  EXPECT_NE(c.overlap_error.find("no panel kernel"), std::string::npos) << c.overlap_error;
}

// The measured overlaps go into the file: node.gpus.stream_overlap is their
// median (what a simulated GPU with several streams uses), each one recorded.
TEST(StreamOverlap, MachineFileCarriesTheMedian) {
  kernels::DeviceCalibration c = calibration();
  for (const double x : {0.3, 0.8, 0.5}) {
    kernels::OverlapMeasurement m;
    m.panel = KernelShape{kGeqrt, 'd', 64, 64, 0, 32};
    m.gemm_calls = 3, m.panel_s = 1, m.gemms_s = 1, m.together_s = 1.5, m.share = 0.1, m.used = 0.5, m.overlap = x;
    c.overlaps.push_back(m);
  }
  const std::string base = test::read_text(std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json");
  const std::string text = kernels::device_machine_file(base, "local.json", c, small_options(), 1, "o", "test", 1);
  EXPECT_DOUBLE_EQ(platform::Machine::parse(text, "o.json").node.gpus.stream_overlap, 0.5);
  EXPECT_TRUE(platform::Machine::parse(text, "o.json").node.gpus.host_waits.empty());
  // The kernels whose call waits on the host, as keys a simulated GPU reads back.
  c.host_waits = {kPotf2p, kLuDiag};
  EXPECT_EQ(platform::Machine::parse(
                kernels::device_machine_file(base, "local.json", c, small_options(), 1, "o", "t", 1), "o.json")
                .node.gpus.host_waits,
            (std::vector<std::uint16_t>{kPotf2p, kLuDiag}));
  c.host_waits.clear();
  // The memory each stream beyond the first keeps, for simulated runs with several.
  c.stream_reserve = std::size_t{512} << 20;
  EXPECT_DOUBLE_EQ(platform::Machine::parse(
                       kernels::device_machine_file(base, "local.json", c, small_options(), 1, "o", "t", 1), "o.json")
                       .node.gpus.stream_reserve_bytes,
                   536870912.0);
  c.stream_reserve = 0;
  const auto f = nlohmann::json::parse(text);
  EXPECT_EQ(f.at("calibration").at("gpu").at("stream_overlap").size(), 3u);
  EXPECT_NE(f.at("node").at("gpus").at("stream_overlap").at("source").get<std::string>().find("GEQRT d 64x64: 0.80"),
            std::string::npos);
  // Without the measurement, or with no value defined, the file has no such field (the default, 1, applies);
  // why the measurement stopped is recorded.
  EXPECT_FALSE(nlohmann::json::parse(
                   kernels::device_machine_file(base, "local.json", calibration(), small_options(), 1, "o", "test", 1))
                   .at("node")
                   .at("gpus")
                   .contains("stream_overlap"));
  for (auto& m : c.overlaps) m.overlap = std::nan("");
  c.overlap_error = "TSQRT d m=64 n=64: out of memory";
  const auto none =
      nlohmann::json::parse(kernels::device_machine_file(base, "local.json", c, small_options(), 1, "o", "test", 1));
  EXPECT_FALSE(none.at("node").at("gpus").contains("stream_overlap"));
  EXPECT_EQ(none.at("calibration").at("gpu").at("stream_overlap_error"), c.overlap_error);
  EXPECT_EQ(none.at("calibration").at("gpu").at("stream_overlap").size(), 3u);
}

TEST(CalibrateDeviceCli, BadOptionsAreRejected) {
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  const auto fails = [](const std::vector<std::string>& args, const std::string& needle) {
    const test::Outcome o = test::run_tessera(args);
    EXPECT_TRUE(o.exited && o.status == 2) << o;
    EXPECT_NE((o.out + o.err).find(needle), std::string::npos) << needle << " not in: " << o;
  };
  fails({"calibrate", "--device", "emulated", "--list"}, "--base");
  fails({"calibrate", "--device", "tpu", "--base", local, "--out", "/dev/null"}, "'tpu'");
  fails({"calibrate", "--device", "emulated", "--base", "/nonexistent.json"}, "/nonexistent.json");
  fails({"calibrate", "--device", "emulated", "--base", local, "--kernels", "lu_leaf", "--list"}, "lu_leaf");
  fails({"calibrate", "--base", local, "--list"}, "--device");
  fails({"calibrate", "--device", "emulated", "--base", local, "--gpus", "0", "--list"}, "--gpus 0");
  fails({"calibrate", "--gpus", "2", "--list"}, "--gpus 2");
  fails({"calibrate", "--for-b", "2048", "--for-n", "0", "--list"}, "--for-b");
  fails({"calibrate", "--device", "emulated", "--base", local, "--flush-restored", "--list"}, "--flush-restored");
  fails({"calibrate", "--device", "emulated", "--base", local, "--stream-overlap", "--list"}, "one compute stream");
  fails({"calibrate", "--stream-overlap", "--list"}, "--stream-overlap needs --device cuda");
  // A calibration that fails leaves --out as it was (here: the base it would have extended).
  test::TempDir dir;
  const std::string out = dir.path() + "/node.json";
  std::FILE* f = std::fopen(out.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("keep me", f);
  std::fclose(f);
  fails({"calibrate", "--device", "tpu", "--base", local, "--out", out}, "'tpu'");
  EXPECT_EQ(test::read_text(out), "keep me");
  fails({"calibrate", "--device", "tpu", "--base", local, "--out", dir.path() + "/new.json"}, "'tpu'");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/new.json")) << "a failed calibration leaves no empty file";
  const test::Outcome ok = test::run_tessera({"calibrate", "--device", "emulated", "--base", local, "--list"});
  EXPECT_TRUE(ok.exited && ok.status == 0) << ok;
  EXPECT_NE(ok.out.find("GSMM"), std::string::npos) << ok;
  EXPECT_NE(ok.out.find("LU_PANEL"), std::string::npos) << ok;
  EXPECT_EQ(ok.out.find("LU_LEAF"), std::string::npos) << ok;
  EXPECT_EQ(ok.out.find("LU_MERGE"), std::string::npos) << ok;
  // The GPU's square tiles of 512 ... 4096 alone, not the cores' tiles of --for-n's orders.
  std::istringstream lines(ok.out);
  int listed = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" m=") == std::string::npos) continue;  // the count's line
    ++listed;
    for (const char* dim : {" m=", " n=", " k="}) {
      const auto at = line.find(dim);
      ASSERT_NE(at, std::string::npos) << line;
      const long v = std::stol(line.substr(at + 3));
      EXPECT_TRUE(v == 512 || v == 1024 || v == 2048 || v == 4096 || (v == 0 && dim[1] == 'k')) << line;
    }
  }
  EXPECT_GT(listed, 40);
}

}  // namespace
