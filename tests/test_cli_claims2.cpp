// More README claims about the command line that no other test pinned
// (issue 17 point 6), each through the `tessera` binary as a user runs it:
// the summary line of the README's example, the JSON fields and the
// defaults of the options table, the GFlop/s counts, --dist, the options that
// only a simulated run takes, a simulated cluster's JSON and cost line, and
// a GPU run's JSON, imbalance ratio and default thread count.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_expect.hpp"
#include "cli_json.hpp"
#include "test_helpers.hpp"

namespace tessera::test::cli {
namespace {

using tessera::test::TempDir;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// README "Command line": the example summary line, field by field, for the
// same command (QR of a 700 x 500 matrix, B = 64, 2 threads, checked).
TEST(CliClaims2, SummaryLineOfTheReadmeExample) {
  TempDir dir;
  std::string out;
  run_ok(dir, base({"--m", "700", "--n", "500", "--B", "64", "--threads", "2", "--check"}, "qr"), 1, &out);
  EXPECT_TRUE(std::regex_match(out, std::regex("qr +tile d 700x500 B=64 s=1 b=0 tiles=11x8 threads=2 backend=native "
                                               "time=[0-9.]+s gflops=[0-9.]+ residual=[0-9.e-]+ orth=[0-9.e-]+ ok\n")))
      << out;
}

// The JSON fields the README lists and the options table's defaults
// (--s 1, --ib 32, --precision d, --seed 1, --impl tile, --backend native,
// --m = n, --threads 1), and busy_s with one entry per compute thread.
TEST(CliClaims2, JsonFieldsAndDefaults) {
  TempDir dir;
  const auto q = run_ok(dir, base({"--m", "700", "--n", "500", "--B", "64", "--threads", "2", "--check"}, "qr"));
  EXPECT_EQ(q.at("impl"), "tile");
  EXPECT_EQ(q.at("backend"), "native");
  EXPECT_EQ(q.at("ib"), 32);
  EXPECT_EQ(q.at("s"), 1);
  EXPECT_EQ(q.at("seed"), 1);
  EXPECT_EQ(q.at("precision"), "d");
  EXPECT_TRUE(q.at("input").is_null());
  EXPECT_EQ(q.at("tiles"), nlohmann::json::array({11, 8}));
  EXPECT_EQ(q.at("busy_s").size(), 2u);
  EXPECT_DOUBLE_EQ(q.at("residual_threshold").get<double>(), 30.0);
  EXPECT_TRUE(q.at("blas_core").is_string());
  EXPECT_GT(q.at("tasks").get<int>(), 0);
  const auto c = run_ok(dir, base({"--n", "200", "--B", "40"}));
  EXPECT_EQ(c.at("m"), 200);
  EXPECT_EQ(c.at("threads"), 1);
  EXPECT_EQ(c.at("busy_s").size(), 1u);
  EXPECT_EQ(c.at("tiles"), nlohmann::json::array({5, 5}));
}

// "GFlop/s uses the standard counts n³/3 for Cholesky and 2mn² − 2n³/3 for QR",
// over time_s.
TEST(CliClaims2, GflopsUseTheStandardCounts) {
  TempDir dir;
  const double m = 700, n = 500;
  const auto q = run_ok(dir, base({"--m", "700", "--n", "500", "--B", "64", "--threads", "2"}, "qr"));
  EXPECT_NEAR(q.at("gflops").get<double>() * q.at("time_s").get<double>() * 1e9, 2 * m * n * n - 2 * n * n * n / 3,
              1e-9 * m * n * n);
  const auto c = run_ok(dir, base({"--n", "500", "--B", "64", "--threads", "2"}));
  EXPECT_NEAR(c.at("gflops").get<double>() * c.at("time_s").get<double>() * 1e9, n * n * n / 3, 1e-9 * n * n * n);
}

// --B's default: 320 in double, 384 in single, lowered in steps of 64 (down
// to 64) until there are about 2 tile columns per thread, at most min(m, n);
// --b's: B/(2s).
TEST(CliClaims2, DefaultTileSizeFollowsThreads) {
  TempDir dir;
  EXPECT_EQ(run_ok(dir, base({"--n", "1000", "--threads", "2"})).at("B"), 192);  // 320, 256: 3 columns < 4
  EXPECT_EQ(run_ok(dir, base({"--n", "1000", "--threads", "4"})).at("B"), 64);   // 128: 7 columns < 8
}

TEST(CliClaims2, DefaultTileSizeAtMostTheMatrixAndNarrowWidth) {
  TempDir dir;
  EXPECT_EQ(run_ok(dir, base({"--n", "50"})).at("B"), 50);
  EXPECT_EQ(run_ok(dir, base({"--n", "600", "--B", "120", "--s", "3"})).at("b"), 20);
}

TEST(CliClaims2, DefaultTileSizeByPrecision) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the large cases run as phantom simulations)";
  TempDir dir;
  EXPECT_EQ(run_ok(dir, sim({"--n", "4096", "--threads", "1"}), 2).at("B"), 320);
  EXPECT_EQ(run_ok(dir, sim({"--n", "4096", "--threads", "1", "--precision", "s"}), 2).at("B"), 384);
}

// --dist: the three maps of the host run and pass the check on one node.
TEST(CliClaims2, DistributionsRunOnOneNode) {
  TempDir dir;
  for (const char* d : {"multi-level", "block-cyclic-2d", "column-cyclic"})
    EXPECT_EQ(run_ok(dir, base({"--n", "300", "--B", "60", "--s", "2", "--threads", "2", "--dist", d, "--check"}))
                  .at("check_passed"),
              true)
        << d;
}

// Another name exits 2; block-cyclic-2d refuses --gpus, column-cyclic a grid of nodes.
TEST(CliClaims2, DistributionsRefused) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--dist", "bogus"}), {"--dist", "'bogus'"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--B", "60", "--dist", "block-cyclic-2d", "--gpus", "1"}),
                  {"--dist block-cyclic-2d", "--gpus 1"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput, sim({"--n", "300", "--grid", "1x2", "--dist", "column-cyclic"}),
                  {"--dist column-cyclic", "--grid 1x2"});
}

// --dist gpu-columns: every tile column on the GPUs, the narrow ones too, so
// the host's threads run no kernel where multi-level gives them the narrow
// columns; one tile row (B = n) of s equal columns (the default b = B/s) is
// LAPACK's blocked algorithm on the GPUs. The imbalance ratio leaves out the
// host that holds nothing. Checked on emulated GPUs (1 and 2), and on a
// simulated 2x2 cluster with data, whose tile rows and columns cross nodes.
TEST(CliClaims2, GpuColumnsPutsEveryColumnOnTheGpus) {
  TempDir dir;
  const auto host_busy = [](const nlohmann::json& j) {
    double busy = 0;
    for (const auto& b : j.at("busy_s")) busy += b.get<double>();
    return busy;
  };
  for (const char* algo : {"cholesky", "qr"})
    for (const char* gpus : {"1", "2"}) {
      SCOPED_TRACE(std::string(algo) + " --gpus " + gpus);
      const std::vector<std::string> tiles = {"--n",    "480", "--B",       "480", "--s",    "4",
                                              "--gpus", gpus,  "--threads", "1",   "--check"};
      auto all = tiles, ml = tiles;
      all.insert(all.end(), {"--dist", "gpu-columns"});
      const auto j = run_ok(dir, base(all, algo));
      EXPECT_EQ(j.at("check_passed"), true);
      EXPECT_EQ(j.at("dist"), "gpu-columns");
      EXPECT_EQ(j.at("b"), 120) << "s equal columns";
      EXPECT_EQ(j.at("tiles"), nlohmann::json::array({1, 4}));
      EXPECT_EQ(host_busy(j), 0.0);
      double gpu_busy = 0, gpu_max = 0;
      for (const auto& g : j.at("gpu_stats")) {
        EXPECT_GT(g.at("busy_s").get<double>(), 0.0) << "every GPU holds columns";
        gpu_busy += g.at("busy_s").get<double>();
        gpu_max = std::max(gpu_max, g.at("busy_s").get<double>());
      }
      if (std::string(gpus) == "1") {
        // Each column tile crosses PCIe once each way, and nothing else does: QR's panel copies
        // are written on the GPU into a buffer (no copy in) and, being scratch, stay there.
        // (With two GPUs a column one wrote and the other reads passes through the host.)
        const auto& g = j.at("gpu_stats").at(0);
        const double matrix = 480.0 * 480 * 8, column = 480.0 * 120 * 8;
        EXPECT_EQ(g.at("copies_in"), 4);
        EXPECT_EQ(g.at("copies_out"), 4);
        EXPECT_GE(g.at("bytes_in").get<double>(), matrix);
        EXPECT_LT(g.at("bytes_in").get<double>(), matrix + column) << "the tiles (with QR's T factors) and no more";
        EXPECT_EQ(g.at("bytes_out"), g.at("bytes_in"));
      }
      const double gpu_mean = gpu_busy / static_cast<double>(j.at("gpu_stats").size());
      EXPECT_NEAR(j.at("imbalance_ratio").get<double>(), gpu_max / gpu_mean, 1e-12) << "the idle host left out";
      const auto m = run_ok(dir, base(ml, algo));
      EXPECT_EQ(m.at("dist"), "multi-level");
      EXPECT_EQ(m.at("b"), 60) << "B/(2s)";
      EXPECT_GT(host_busy(m), 0.0) << "multi-level gives the host the narrow columns";
    }
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  for (const char* algo : {"cholesky", "qr"}) {
    const auto j = run_ok(dir,
                          sim({"--n", "600", "--B", "300", "--s", "3", "--grid", "2x2", "--gpus", "2", "--threads", "2",
                               "--dist", "gpu-columns", "--sim-data", "--check"},
                              algo),
                          2);
    EXPECT_EQ(j.at("check_passed"), true) << algo;
    EXPECT_EQ(host_busy(j), 0.0) << algo;
  }
}

// Out of core, QR's panel copies (scratch: the tiles hold V and T too) never
// cross PCIe: written on the GPU into a buffer, never written back when evicted
// nor brought home, with the GPU's copies freed at Release_Tile or kept
// (--keep-tiles), under both evictions; the factors still pass --check.
TEST(CliClaims2, QrPanelCopiesNeverCrossOutOfCore) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.json";
  for (const char* eviction : {"next-use", "lru"})
    for (const bool keep : {false, true}) {
      SCOPED_TRACE(std::string(eviction) + (keep ? " --keep-tiles" : ""));
      std::vector<std::string> a = {"--m",        "600",    "--n",          "480",     "--B",       "120",
                                    "--gpus",     "1",      "--gpu-memory", "600000",  "--threads", "1",
                                    "--eviction", eviction, "--check",      "--trace", trace};
      if (keep) a.push_back("--keep-tiles");
      const auto j = run_ok(dir, base(a, "qr"));
      EXPECT_EQ(j.at("check_passed"), true);
      EXPECT_GT(j.at("gpu_stats").at(0).at("evictions").get<int>(), 0) << "out of core";
      int tiles = 0, panels = 0;
      const nlohmann::json events = read_json(trace).at("traceEvents");  // (a range-for would dangle)
      for (const auto& e : events)
        if (e.value("name", "") == "transfer") (e.at("args").at("tile").contains("panel") ? panels : tiles) += 1;
      EXPECT_GT(tiles, 0);
      EXPECT_EQ(panels, 0) << "a panel copy crossed PCIe";
    }
}

// gpu-columns is refused where it would change nothing (no GPUs, s = 1) or
// where something else places the columns (LU's --d, --b auto's balance).
TEST(CliClaims2, GpuColumnsRefusedWhereItChangesNothing) {
  const std::vector<std::string> t = {"--n", "300", "--B", "300", "--s", "3", "--b", "100", "--dist", "gpu-columns"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = t;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, base(t), {"--dist gpu-columns", "--gpus 0"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--B", "100", "--dist", "gpu-columns", "--gpus", "1"}),
                  {"--dist gpu-columns", "--s 1"});
  expect_rejected(kInvalidInput, base(with({"--gpus", "1"}), "lu"), {"--dist gpu-columns", "--algo lu", "--d"});
  // A peer places no tile; the tuner chooses tiles for multi-level (s = 1, --b auto).
  expect_rejected(kInvalidInput, base({"--n", "300", "--impl", "lapack", "--dist", "gpu-columns"}),
                  {"--dist gpu-columns", "--impl lapack"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--B", "auto", "--gpus", "1", "--dist", "gpu-columns"}),
                  {"--B auto", "--dist gpu-columns", "give --B and --s"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput,
                  sim({"--n", "300", "--B", "300", "--s", "3", "--b", "auto", "--gpus", "1", "--dist", "gpu-columns"}),
                  {"--dist gpu-columns", "--b auto"});
}

// On a 2x2 cluster with s = 2 the maps place tiles differently, so the messages differ.
TEST(CliClaims2, DistributionsChangeAClustersMessages) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "2000", "--B", "200", "--s", "2", "--grid", "2x2", "--threads", "2"};
  auto ml = shape, bc = shape;
  bc.insert(bc.end(), {"--dist", "block-cyclic-2d"});
  EXPECT_NE(run_ok(dir, sim(ml), 2).at("comm").at("max_words"), run_ok(dir, sim(bc), 2).at("comm").at("max_words"));
}

// Options of simulated runs, and pairings the README rules out, exit 2 naming them.
TEST(CliClaims2, NativeRunsRefuseSimulatedOptionsAndBadPairs) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--machine", kKeeneland}), {"--machine", "--backend sim"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--b", "auto"}), {"--b auto", "--gpus"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--grid", "0x2"}), {"--grid 0x2"});
}

TEST(CliClaims2, SimulatedRunsRefuseWhatTheyCannotDo) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput, sim({"--n", "300", "--impl", "lapack"}), {"--impl lapack"});
  expect_rejected(kInvalidInput, sim({"--n", "300", "--check"}), {"--check", "--sim-data"});
  expect_rejected(kInvalidInput, sim({"--n", "300", "--grid", "1x2", "--nodes", "3"}), {"--nodes 3", "--grid 1x2"});
}

// A simulated 2x2 cluster: the cost line after the summary line, the
// summary's grid and counts, and the JSON's machine, sim_data, nodes, time_s
// (the slowest node's) and comm maxima over per_node (words are elements: 8
// bytes each in double).
TEST(CliClaims2, SimulatedClusterJsonAndCostLine) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  std::string out;
  const auto j =
      run_ok(dir, sim({"--n", "2000", "--B", "200", "--s", "2", "--grid", "2x2", "--threads", "2"}), 2, &out);
  EXPECT_EQ(j.at("machine"), kKeeneland);
  EXPECT_EQ(j.at("sim_data"), false);
  EXPECT_EQ(j.at("backend"), "sim");
  EXPECT_EQ(j.at("grid"), nlohmann::json::array({2, 2}));
  EXPECT_EQ(j.at("nodes"), 4);
  const auto& times = j.at("node_time_s");
  ASSERT_EQ(times.size(), 4u);
  double slowest = 0;
  for (const auto& t : times) slowest = std::max(slowest, t.get<double>());
  EXPECT_EQ(j.at("time_s").get<double>(), slowest);
  std::uint64_t msent = 0, wsent = 0, words = 0;
  for (const auto& n : j.at("comm").at("per_node")) {
    msent = std::max(msent, n.at("messages_sent").get<std::uint64_t>());
    wsent = std::max(wsent, n.at("words_sent").get<std::uint64_t>());
    words = std::max(words, n.at("words_sent").get<std::uint64_t>() + n.at("words_received").get<std::uint64_t>());
    EXPECT_EQ(n.at("bytes_sent").get<std::uint64_t>(), 8 * n.at("words_sent").get<std::uint64_t>());
    EXPECT_EQ(n.at("bytes_received").get<std::uint64_t>(), 8 * n.at("words_received").get<std::uint64_t>());
  }
  const auto& comm = j.at("comm");
  EXPECT_GT(msent, 0u);
  EXPECT_EQ(comm.at("max_messages_sent"), msent);
  EXPECT_EQ(comm.at("max_words_sent"), wsent);
  EXPECT_EQ(comm.at("max_words"), words);
  const std::string counts =
      "grid=2x2 msgs_max=" + comm.at("max_messages").dump() + " words_max=" + std::to_string(words);
  EXPECT_THAT(out, HasSubstr(counts + " ")) << out;
  EXPECT_THAT(out, HasSubstr(" backend=sim ")) << out;
  const std::string second = out.substr(out.find('\n') + 1);
  std::smatch cost;
  ASSERT_TRUE(std::regex_match(second, cost,
                               std::regex("simulation cost: wall ([0-9.]+) s, peak memory [0-9.]+ MiB, ([0-9]+) "
                                          "tasks/s, ([0-9]+) messages/s\n")))
      << second;
  // The rates are every node's tasks and messages over the wall time, which
  // the JSON holds unrounded (the line prints it to 0.1 s and the rates to the unit).
  const double wall = j.at("wall_s").get<double>();
  ASSERT_GT(wall, 0.0);
  EXPECT_NEAR(std::stod(cost[1]), wall, 0.051) << second;
  std::uint64_t all_sent = 0;
  for (const auto& n : comm.at("per_node")) all_sent += n.at("messages_sent").get<std::uint64_t>();
  ASSERT_GT(all_sent, 0u);
  EXPECT_NEAR(std::stod(cost[3]), static_cast<double>(all_sent) / wall, 0.5 + 1e-9 * all_sent / wall) << second;
  // Every node's tasks, in the JSON as in the line, not the reporting node's: at least the whole graph's (a
  // one-node run's count; the cluster's nodes run each of its tasks once, and their own sends and receives
  // besides), where node 0 runs about a quarter.
  const auto tasks = j.at("tasks").get<std::uint64_t>();
  EXPECT_NEAR(std::stod(cost[2]), static_cast<double>(tasks) / wall, 0.5 + 1e-9 * tasks / wall) << second;
  const auto one = run_ok(dir, sim({"--n", "2000", "--B", "200", "--s", "2", "--threads", "2"}), 2);
  const auto graph = one.at("tasks").get<std::uint64_t>();
  ASSERT_GT(tasks, graph);
  std::uint64_t per_node = 0;
  for (const auto& n : comm.at("per_node")) per_node += n.at("tasks").get<std::uint64_t>();
  EXPECT_EQ(per_node, tasks);
}

// A run with GPUs: gpus and device in the JSON; imbalance_ratio is 001 §5.3's
// max/avg of the devices' kernel time, the host's being its cores' mean;
// --threads defaults to the node's cores − G − 2 (at least 1).
TEST(CliClaims2, GpuRunJsonImbalanceAndDefaultThreads) {
  TempDir dir;
  auto check_imbalance = [](const nlohmann::json& j) {
    double host = 0;
    for (const auto& b : j.at("busy_s")) host += b.get<double>();
    ASSERT_GT(host, 0.0) << "these runs give the host narrow columns";
    std::vector<double> devices = {host / j.at("busy_s").size()};
    for (const auto& g : j.at("gpu_stats")) devices.push_back(g.at("busy_s").get<double>());
    double sum = 0;
    for (double d : devices) sum += d;
    const double expected = *std::max_element(devices.begin(), devices.end()) / (sum / devices.size());
    EXPECT_NEAR(j.at("imbalance_ratio").get<double>(), expected, 1e-12 * expected);
  };
  const auto e = run_ok(dir, base({"--n", "600", "--B", "120", "--s", "3", "--b", "24", "--gpus", "1"}));
  EXPECT_EQ(e.at("gpus"), 1);
  EXPECT_EQ(e.at("device"), "emulated");
  EXPECT_EQ(e.at("gpu_stats").size(), 1u);
  EXPECT_EQ(e.at("threads"), std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - 1 - 2));
  check_imbalance(e);
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  // keeneland.json: 12 cores and 3 GPUs per node; --b auto rounds to 64 in double.
  std::string kout;
  const auto k = run_ok(dir, sim({"--n", "2304", "--B", "1152", "--s", "2", "--b", "auto", "--gpus", "3"}), 2, &kout);
  EXPECT_EQ(k.at("threads"), 12 - 3 - 2);
  EXPECT_EQ(k.at("gpus"), 3);
  EXPECT_EQ(k.at("gpu_stats").size(), 3u);
  EXPECT_EQ(k.at("b").get<int>() % 64, 0);
  EXPECT_GT(k.at("b").get<int>(), 0);
  check_imbalance(k);
  // The summary's gpu_peak_MiB is the most any GPU held (here the first: the third holds no tile).
  std::uint64_t peak = 0, last = 0;
  for (const auto& g : k.at("gpu_stats")) peak = std::max(peak, last = g.at("peak_bytes").get<std::uint64_t>());
  ASSERT_GT(peak, last) << "the last GPU's peak would pass for the most";
  EXPECT_THAT(kout, HasSubstr(fmt::format(" gpu_peak_MiB={:.1f} ", static_cast<double>(peak) / (1 << 20)))) << kout;
}

// --impl lapack: the peer on the dense matrix, named in the JSON and the summary line.
TEST(CliClaims2, LapackPeerIsNamedAsSuch) {
  TempDir dir;
  std::string out;
  const auto j = run_ok(dir, base({"--n", "300", "--impl", "lapack", "--threads", "2", "--check"}), 1, &out);
  EXPECT_EQ(j.at("impl"), "lapack");
  EXPECT_EQ(j.at("check_passed"), true);
  EXPECT_THAT(out, MatchesRegex("cholesky +lapack d 300x300 .* ok\n"));
}

}  // namespace
}  // namespace tessera::test::cli
