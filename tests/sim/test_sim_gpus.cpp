// Simulated GPUs through the command line (issue 5 points 5-7, 9): Keeneland
// nodes with their three GPUs, as processes. Real data on 4 nodes x 3 GPUs
// passes the check; every GPU works, copies data in and frees every buffer;
// a phantom run is deterministic and slower GPUs make it slower; --gpus past
// the machine's and --b auto without GPUs stop with exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../cli_expect.hpp"
#include "../test_helpers.hpp"
#include "sim_cli_util.hpp"

namespace {
using nlohmann::json;
using tessera::test::Outcome;
using tessera::test::read_text;
using tessera::test::TempDir;

const std::string kKeeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";

using tessera::test::run_ok;
using tessera::test::run_tessera;

std::vector<std::string> sim(const std::string& algo, std::vector<std::string> extra) {
  std::vector<std::string> a = {"run", "--backend", "sim", "--machine", kKeeneland, "--algo", algo};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

void expect_gpus_used(const json& j, int gpus) {
  ASSERT_TRUE(j.contains("gpu_stats")) << j.dump(2);
  const json& per = j.at("gpu_stats");
  ASSERT_EQ(per.size(), static_cast<std::size_t>(gpus));
  for (const json& g : per) {
    EXPECT_GT(g.at("busy_s").get<double>(), 0.0) << g;
    EXPECT_GT(g.at("copies_in").get<std::uint64_t>(), 0u) << g;
    EXPECT_GT(g.at("peak_bytes").get<std::uint64_t>(), 0u) << g;
    EXPECT_EQ(g.at("bytes_at_end").get<std::uint64_t>(), 0u) << g;  // every buffer freed
  }
  EXPECT_GE(j.at("imbalance_ratio").get<double>(), 1.0);
}

// A checked run's arguments, with test::checked_matrix's --matrix.
std::vector<std::string> checked(const std::string& algo, const std::string& precision, std::vector<std::string> args) {
  if (const std::string m = tessera::test::checked_matrix(algo, precision.at(0)); !m.empty())
    args.insert(args.end(), {"--matrix", m});
  return args;
}

class SimGpus : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// 4 simulated Keeneland nodes x 3 GPUs on real data (issue 5 point 7).
TEST_P(SimGpus, FourNodesThreeGpusWithDataPassCheck) {
  const auto& [algo, precision] = GetParam();
  Outcome o;
  const json j =
      run_ok(sim(algo, checked(algo, precision,
                               {"--grid", "2x2", "--gpus", "3", "--n", "1200", "--B", "192", "--s", "3", "--b", "32",
                                "--threads", "2", "--precision", precision, "--sim-data", "--check"})),
             &o);
  EXPECT_NE(o.out.find(" gpus=3 "), std::string::npos) << o;
  EXPECT_EQ(j.at("check_passed"), true) << o;
  EXPECT_EQ(j.at("nodes"), 4);
  expect_gpus_used(j, 3);
}

INSTANTIATE_TEST_SUITE_P(AlgoPrecision, SimGpus,
                         ::testing::Combine(::testing::Values("cholesky", "qr"), ::testing::Values("d", "s")));

// One node, phantom kernels: simulated time is deterministic, and the run
// with GPUs beats the same node's cores alone by far (Keeneland's GPUs are
// each ~28x a core on GEMM).
TEST(SimGpusPhantom, DeterministicAndFasterThanCoresAlone) {
  const std::vector<std::string> args = {"--n", "8000", "--B", "960", "--s", "4", "--b", "64", "--threads", "7"};
  auto with = args;
  with.insert(with.end(), {"--gpus", "3"});
  const json a = run_ok(sim("cholesky", with)), b = run_ok(sim("cholesky", with)), cpu = run_ok(sim("cholesky", args));
  EXPECT_EQ(a.at("time_s"), b.at("time_s"));
  expect_gpus_used(a, 3);
  EXPECT_GT(a.at("gflops").get<double>(), 3 * cpu.at("gflops").get<double>()) << a.dump() << cpu.dump();
}

// --b auto picks the width from the machine file's kernel speeds (000 App. A.1):
// Keeneland's 7 cores (10.7 GFlop/s each) against 3 GPUs (302) give B_h = 0.076 B.
TEST(SimGpusPhantom, AutoNarrowWidthFromMachineFile) {
  const json j = run_ok(sim("cholesky", {"--n", "11520", "--B", "1152", "--s", "2", "--b", "auto", "--gpus", "3"}));
  EXPECT_EQ(j.at("threads"), 7);  // n - g - 2 on a 12-core node with 3 GPUs
  EXPECT_EQ(j.at("b"), 64);       // 87.7 rounded to the granularity of 64
}

// Every host<->GPU copy is one transfer event in the trace, on its stream's tid.
TEST(SimGpusPhantom, TraceHasOneTransferPerCopy) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.json";
  const json j = run_ok(sim(
      "qr", {"--n", "2000", "--B", "384", "--s", "3", "--b", "64", "--gpus", "2", "--threads", "2", "--trace", trace}));
  const json t = json::parse(read_text(trace));
  std::uint64_t h2d = 0, d2h = 0;
  std::set<std::string> lanes;
  for (const json& e : t.at("traceEvents")) {
    if (e.value("name", "") == "thread_name") lanes.insert(e.at("args").at("name").get<std::string>());
    // GPU tasks name the algorithm's tiles, not the node's device slots.
    if (e.value("cat", "") == "task")
      for (const json& a : e.at("args").at("tiles")) EXPECT_FALSE(a.contains("data")) << e;
    if (e.value("cat", "") != "transfer") continue;
    const std::string kind = e.at("args").at("kind");
    const int tid = e.at("tid");
    if (kind == "h2d" || kind == "d2h") {
      // A phantom copy still takes its bytes over the PCIe link (keeneland.json:
      // 6 GB/s, 10 us): the modeled time, not the latency alone.
      const double bytes = e.at("args").at("bytes").get<double>();
      EXPECT_GE(e.at("dur").get<double>() * 1e-6 * (1 + 1e-9), 1e-5 + bytes / 6e9) << e;
    }
    if (kind == "h2d") {
      ++h2d;
      EXPECT_EQ(tid % 2, 0) << e;
    } else if (kind == "d2h") {
      ++d2h;
      EXPECT_EQ(tid % 2, 1) << e;
    }
  }
  std::uint64_t in = 0, out = 0;
  for (const json& g : j.at("gpu_stats"))
    in += g.at("copies_in").get<std::uint64_t>(), out += g.at("copies_out").get<std::uint64_t>();
  EXPECT_GT(h2d, 0u);
  EXPECT_GT(d2h, 0u);
  EXPECT_EQ(h2d, in);
  EXPECT_EQ(d2h, out);
  for (const char* lane : {"cpu0", "cpu1", "gpu1", "gpu2", "gpu1 h2d", "gpu2 d2h"})
    EXPECT_TRUE(lanes.count(lane)) << lane;
}

// Each direction's copy time is its own stream's: Cholesky with s = 2 copies
// the host's narrow columns in for the GPU's updates and never out, so the
// traffic is lopsided (1.4x the bytes in), and both streams still move their
// bytes at the one PCIe rate (within 15%: the per-copy latency weighs on the
// smaller copies in). Reported the other way round, the rates differ 1.8x.
TEST(SimGpusPhantom, EachDirectionsCopyTimeIsItsOwnBytes) {
  const json j = run_ok(sim("cholesky", {"--n", "4608", "--B", "1152", "--s", "2", "--b", "auto", "--gpus", "1"}));
  const json& g = j.at("gpu_stats").at(0);
  const double in = g.at("bytes_in").get<double>(), out = g.at("bytes_out").get<double>();
  EXPECT_GT(in, 1.3 * out) << g;
  EXPECT_NEAR((in / g.at("copy_in_s").get<double>()) / (out / g.at("copy_out_s").get<double>()), 1.0, 0.15) << g;
}

TEST(SimGpusBadInput, MoreGpusThanTheMachineHas) {
  const Outcome o = run_tessera(sim("cholesky", {"--n", "1000", "--gpus", "4"}));
  EXPECT_TRUE(o.exited && o.status == 2) << o;
  EXPECT_NE(o.err.find("--gpus 4 asks for more GPUs than the 3 per node"), std::string::npos) << o;
}

TEST(SimGpusBadInput, EmulatedDeviceOptionsAreNotForSimulatedGpus) {
  for (const char* opt : {"--gpu-bandwidth", "--gpu-latency"}) {
    const Outcome o = run_tessera(sim("cholesky", {"--n", "1000", "--gpus", "1", opt, "1"}));
    EXPECT_TRUE(o.exited && o.status == 2) << o;
    EXPECT_NE(o.err.find(std::string(opt) + " 1 describes the GPUs of a native run"), std::string::npos) << o;
  }
  tessera::test::cli::expect_rejected(tessera::test::cli::kInvalidInput,
                                      sim("cholesky", {"--n", "1000", "--gpus", "1", "--device", "cuda"}),
                                      {"--device cuda describes the GPUs of a native run"});
}

// Out of core in simulation (issue 12 point 2): one simulated GPU with a
// third of the matrix's bytes (--gpu-memory overrides the machine file's)
// evicts copies to stay within its memory, and the factors, on real data,
// pass the check; 2x1 nodes do the same with two GPUs each.
class SimOutOfCore : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(SimOutOfCore, AThirdOfTheMatrixOnTheGpuStillFactorsAndChecks) {
  const auto& [algo, precision, grid] = GetParam();
  const std::size_t n = 960, word = precision == "d" ? 8 : 4, memory = n * n * word / 3;
  const int gpus = grid == "1x1" ? 1 : 2;
  Outcome o;
  const json j = run_ok(sim(algo, checked(algo, precision, {"--grid",       grid,
                                                            "--gpus",       std::to_string(gpus),
                                                            "--n",          std::to_string(n),
                                                            "--B",          "96",
                                                            "--s",          "2",
                                                            "--b",          "32",
                                                            "--threads",    "2",
                                                            "--precision",  precision,
                                                            "--gpu-memory", std::to_string(memory),
                                                            "--sim-data",   "--check"})),
                        &o);
  EXPECT_EQ(j.at("check_passed"), true) << o;
  std::uint64_t evictions = 0;
  for (const json& g : j.at("gpu_stats")) {
    EXPECT_LE(g.at("peak_bytes").get<std::size_t>(), memory) << g;
    EXPECT_EQ(g.at("bytes_at_end").get<std::uint64_t>(), 0u) << g;
    evictions += g.at("evictions").get<std::uint64_t>();
  }
  if (grid == "1x1") EXPECT_GT(evictions, 0u) << "a third of the matrix cannot hold a GPU's share: " << o;
}

INSTANTIATE_TEST_SUITE_P(AlgoPrecisionGrid, SimOutOfCore,
                         ::testing::Combine(::testing::Values("cholesky", "qr"), ::testing::Values("d", "s"),
                                            ::testing::Values("1x1", "2x1")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

TEST(SimGpusBadInput, AutoWidthNeedsGpus) {
  const Outcome o = run_tessera(sim("cholesky", {"--n", "1000", "--s", "3", "--b", "auto"}));
  EXPECT_TRUE(o.exited && o.status == 2) << o;
  EXPECT_NE(o.err.find("--b auto"), std::string::npos) << o;
}

}  // namespace

#include "base/error.hpp"
#include "models/balance.hpp"

namespace {

// 000 App. A.1: with equal speeds, G GPUs and `cores` cores split B in proportion.
TEST(BalanceFormula, HostShareIsProportionalToSpeed) {
  EXPECT_DOUBLE_EQ(tessera::models::host_share_width(1000, 1, 3, 1, 1), 750);
  EXPECT_DOUBLE_EQ(tessera::models::host_share_width(1152, 10.7, 7, 302, 3), 1152 * 74.9 / (74.9 + 906));
  // b = B_h / (s-1), to the granularity: 87.7 -> 64; with s = 3 -> 43.9 -> 64 (>= 32) ; granularity 1 -> exact.
  EXPECT_EQ(tessera::models::auto_narrow_width(1152, 2, 10.7, 7, 302, 3, 64), 64);
  EXPECT_EQ(tessera::models::auto_narrow_width(1152, 3, 10.7, 7, 302, 3, 1), 44);
  EXPECT_EQ(tessera::models::auto_narrow_width(1000, 2, 1, 3, 1, 1, 64), 768);
  // Never wider than what leaves the GPU column one element.
  EXPECT_EQ(tessera::models::auto_narrow_width(100, 2, 1000, 10, 1, 1, 1), 99);
  EXPECT_THROW(tessera::models::auto_narrow_width(1000, 1, 1, 3, 1, 1, 64), tessera::InputError);
  EXPECT_THROW(tessera::models::auto_narrow_width(1000, 2, 0, 3, 1, 1, 64), tessera::InputError);
}

}  // namespace

// Out of core, the eviction (runtime/next_use.hpp): a right-looking Cholesky
// sweeps its trailing matrix in the same order at every step. In two thirds of
// its lower triangle's bytes (32x32 tiles of 2048, 11.45 GB), evicting the copy
// used again furthest ahead keeps each sweep's start resident: 672 evictions
// and 39.0 GB in (2.2x the triangle), against 2,483 evictions and 100.8 GB
// (5.7x) when the copy used longest ago goes first (measured before the change). Each datum still
// comes in at least once and every buffer is freed.
TEST(SimOutOfCoreTraffic, FurthestNextUseKeepsEachSweepsStartResident) {
  const std::string h100 = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/h100-node.json";
  const json j = run_ok({"run", "--backend", "sim", "--machine", h100, "--algo", "cholesky", "--n", "65536", "--B",
                         "2048", "--s", "1", "--gpus", "1", "--threads", "13", "--gpu-memory", "11453246122"});
  const json& g = j.at("gpu_stats").at(0);
  const double in = g.at("bytes_in").get<double>(), distinct = g.at("distinct_bytes_in").get<double>();
  EXPECT_EQ(distinct, 528.0 * 2048 * 2048 * 8) << "the lower triangle's 528 tiles";
  EXPECT_GE(in, distinct);
  EXPECT_LT(in, 2.5 * distinct) << g;
  EXPECT_EQ(g.at("evictions").get<std::uint64_t>(), 672u) << g;
  EXPECT_LE(g.at("peak_bytes").get<double>(), 11453246122.0) << g;
  EXPECT_EQ(g.at("capacity_bytes").get<double>(), 11453246122.0) << g;
  EXPECT_EQ(g.at("bytes_at_end").get<std::uint64_t>(), 0u) << g;
  EXPECT_EQ(j.at("eviction"), "next-use");
  // --eviction lru: the copy used longest ago first, every sweep's copies miss.
  const json lru = run_ok({"run", "--backend", "sim", "--machine",    h100,          "--algo",     "cholesky",
                           "--n", "65536",     "--B", "2048",         "--s",         "1",          "--gpus",
                           "1",   "--threads", "13",  "--gpu-memory", "11453246122", "--eviction", "lru"});
  const json& l = lru.at("gpu_stats").at(0);
  EXPECT_EQ(l.at("evictions").get<std::uint64_t>(), 2483u) << l;
  EXPECT_GT(l.at("bytes_in").get<double>(), 5.5 * distinct) << l;
  EXPECT_LT(j.at("time_s").get<double>(), lru.at("time_s").get<double>());
  tessera::test::cli::expect_rejected(tessera::test::cli::kInvalidInput,
                                      {"run", "--algo", "cholesky", "--n", "300", "--gpus", "1", "--eviction", "mru"},
                                      {"--eviction 'mru' is not one of: next-use, lru"});
}
