// Simulated clusters through the command line (issue points 4, 5, 7, 9):
// `tessera run --backend sim --grid PrxPc` as a process, one node runtime per
// simulated node. Real data on 16 nodes passes the check and every message
// sent is received; a 1x1 run reports no communication; node counts that do
// not fit stop with exit 2; identical phantom runs give identical times and
// counts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/comm_model.hpp"
#include "sim_cli_util.hpp"
#include "sim_test_util.hpp"

namespace {
using nlohmann::json;
using tessera::test::read_text;
using tessera::test::TempDir;

const std::string kMachines = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/";
const std::string kKeeneland = kMachines + "keeneland.json";

using tessera::test::Outcome;

using tessera::test::run_ok;
using tessera::test::run_tessera;

std::vector<std::string> sim_run(const std::string& algo, const std::string& grid, std::vector<std::string> extra,
                                 const std::string& machine = kKeeneland) {
  std::vector<std::string> a = {"run", "--backend", "sim", "--machine", machine, "--grid", grid, "--algo", algo};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::uint64_t sum(const json& per_node, const char* field) {
  std::uint64_t s = 0;
  for (const json& n : per_node) s += n.at(field).get<std::uint64_t>();
  return s;
}

// 16 simulated nodes on real data: the check passes, the JSON has one entry
// per node, and the cluster as a whole receives what it sends.
void expect_16_nodes_with_data(const std::string& algo) {
  Outcome o;
  const json j =
      run_ok(sim_run(algo, "4x4", {"--n", "700", "--B", "64", "--sim-data", "--check", "--threads", "2"}), &o);
  EXPECT_NE(o.out.find(" grid=4x4 msgs_max="), std::string::npos) << o;
  // The summary line ends with the verdict; the cost of the simulation follows on its own line.
  EXPECT_NE(o.out.find(" ok\nsimulation cost: wall "), std::string::npos) << o;
  ASSERT_TRUE(j.contains("comm")) << j.dump(2);
  EXPECT_EQ(j.at("nodes"), 16);
  EXPECT_EQ(j.at("grid"), json::array({4, 4}));
  EXPECT_EQ(j.at("check_passed"), true);
  EXPECT_EQ(j.at("sim_data"), true);
  EXPECT_EQ(j.at("node_time_s").size(), 16u);
  const json& per = j.at("comm").at("per_node");
  ASSERT_EQ(per.size(), 16u);
  EXPECT_GT(sum(per, "messages_sent"), 0u);
  EXPECT_EQ(sum(per, "messages_sent"), sum(per, "messages_received"));
  EXPECT_EQ(sum(per, "words_sent"), sum(per, "words_received"));
  EXPECT_EQ(sum(per, "bytes_sent"), sum(per, "bytes_received"));
  std::uint64_t max_messages = 0;
  for (const json& n : per) {
    EXPECT_GT(n.at("messages_sent").get<std::uint64_t>(), 0u) << "a node of a 4x4 grid sent nothing: " << per.dump();
    max_messages = std::max(
        max_messages, n.at("messages_sent").get<std::uint64_t>() + n.at("messages_received").get<std::uint64_t>());
  }
  EXPECT_EQ(j.at("comm").at("max_messages"), max_messages);
}

TEST(SimCluster, Cholesky16NodesWithDataPassesCheck) { expect_16_nodes_with_data("cholesky"); }
TEST(SimCluster, Qr16NodesWithDataPassesCheck) { expect_16_nodes_with_data("qr"); }

// One node runs without a network (the P == 1 path of tessera_main.cpp): the
// summary line and the JSON carry no grid and no communication, as for runs
// without --grid (README: the JSON fields of `tessera run`).
TEST(SimCluster, OneNodeRunReportsNoCommunication) {
  Outcome o;
  const json j = run_ok(sim_run("cholesky", "1x1", {"--n", "700", "--B", "64", "--sim-data", "--check"}), &o);
  EXPECT_EQ(o.out.find("grid="), std::string::npos) << o;
  EXPECT_NE(o.out.find(" ok\n"), std::string::npos) << o;
  EXPECT_FALSE(j.contains("comm")) << j.dump(2);
  EXPECT_FALSE(j.contains("nodes")) << j.dump(2);
  EXPECT_FALSE(j.contains("grid")) << j.dump(2);
  EXPECT_EQ(j.at("check_passed"), true);
  EXPECT_TRUE(j.at("blas_core").is_string()) << j.dump(2);  // with data the tile kernels run on this host's BLAS
}

// Bad node counts stop before simulating, with exit 2 and one message line.
void expect_exit_2(const std::vector<std::string>& args, const std::vector<std::string>& named) {
  const Outcome o = run_tessera(args);
  EXPECT_TRUE(o.exited && o.status == 2) << o;
  EXPECT_EQ(o.out, "") << o;
  EXPECT_EQ(o.err.rfind("tessera: error: ", 0), 0u) << o;
  for (const auto& s : named) EXPECT_NE(o.err.find(s), std::string::npos) << "'" << s << "' not named: " << o;
}

TEST(SimCluster, NodesDifferentFromGridIsRejected) {
  expect_exit_2(sim_run("cholesky", "2x2", {"--n", "700", "--nodes", "3"}), {"--nodes 3", "--grid 2x2"});
}

TEST(SimCluster, GridLargerThanMachineIsRejected) {
  const std::string small = kMachines + "local-example.json";  // "nodes": 1
  expect_exit_2(sim_run("cholesky", "1x2", {"--n", "700"}, small), {"--grid 1x2", small, "has 1"});
  expect_exit_2(sim_run("qr", "11x10", {"--n", "700"}), {"--grid 11x10", "110", kKeeneland, "has 100"});
}

TEST(SimCluster, MalformedGridIsRejected) {
  for (const char* g : {"0x2", "2", "axb"})
    expect_exit_2(sim_run("cholesky", g, {"--n", "700"}), {std::string("--grid ") + g});
}

// Simulated time is deterministic: the same 2x2 phantom run twice gives the
// same time, per-node times and per-node counts, to the bit (nlohmann::json
// prints doubles so that they read back exactly).
TEST(SimCluster, PhantomRunIsDeterministic) {
  const auto args = sim_run("cholesky", "2x2", {"--n", "2000", "--B", "128", "--threads", "2"});
  const json a = run_ok(args), b = run_ok(args);
  ASSERT_TRUE(a.contains("comm") && b.contains("comm"));
  EXPECT_EQ(a.at("sim_data"), false);
  // No BLAS ran: the host's kernel set is not the run's (it made identical runs on two hosts differ).
  EXPECT_TRUE(a.at("blas_core").is_null()) << a.dump();
  EXPECT_GT(a.at("time_s").get<double>(), 0.0);
  EXPECT_EQ(a.at("time_s").dump(), b.at("time_s").dump());
  EXPECT_EQ(a.at("node_time_s").dump(), b.at("node_time_s").dump());
  EXPECT_EQ(a.at("tasks"), b.at("tasks"));
  EXPECT_EQ(a.at("comm").at("per_node"), b.at("comm").at("per_node"));
  EXPECT_EQ(a.at("comm").at("per_node").size(), 4u);
  EXPECT_EQ(sum(a.at("comm").at("per_node"), "messages_sent"), sum(a.at("comm").at("per_node"), "messages_received"));
}

// README "Command line": a distributed run's JSON counts every node's tasks
// (each node's in comm.per_node, with its load imbalance and its GPUs' peak
// memory), its imbalance_ratio and the summary line's imbalance= and
// gpu_peak_MiB= are the worst node's, and gpu_stats lists node 0's GPUs.
// Before, all of them were node 0's alone, which on a 2x2 grid undercounts
// the tasks about fourfold.
TEST(SimCluster, EveryNodesTasksAndTheWorstNodesGpuNumbers) {
  Outcome o;
  const json j = run_ok(sim_run("cholesky", "2x2", {"--n", "9216", "--B", "1152", "--s", "2", "--gpus", "3"}), &o);
  const json& per = j.at("comm").at("per_node");
  ASSERT_EQ(per.size(), 4u);
  double worst_imbalance = 0;
  std::uint64_t worst_peak = 0;
  for (const json& n : per) {
    EXPECT_GT(n.at("tasks").get<std::uint64_t>(), 0u) << per.dump();
    worst_imbalance = std::max(worst_imbalance, n.at("imbalance_ratio").get<double>());
    worst_peak = std::max(worst_peak, n.at("gpu_peak_bytes").get<std::uint64_t>());
  }
  EXPECT_EQ(j.at("tasks").get<std::uint64_t>(), sum(per, "tasks"));
  EXPECT_GT(j.at("tasks").get<std::uint64_t>(), 3 * per.at(0).at("tasks").get<std::uint64_t>());
  EXPECT_EQ(j.at("imbalance_ratio").get<double>(), worst_imbalance);
  ASSERT_EQ(j.at("gpu_stats").size(), 3u);
  std::uint64_t node0_peak = 0;
  for (const json& g : j.at("gpu_stats")) node0_peak = std::max(node0_peak, g.at("peak_bytes").get<std::uint64_t>());
  EXPECT_EQ(node0_peak, per.at(0).at("gpu_peak_bytes").get<std::uint64_t>());
  std::ostringstream line;
  line << " imbalance=" << std::fixed << std::setprecision(3) << worst_imbalance
       << " gpu_peak_MiB=" << std::setprecision(1) << static_cast<double>(worst_peak) / (1 << 20) << " ";
  EXPECT_NE(o.out.find(line.str()), std::string::npos) << line.str() << "\n" << o.out;
}

// QR's binary reduction tree against its communication model
// (models/comm_model.hpp, `tessera model comm --qr-tree binary`): the model
// counts the average node's sends, so the mean over the nodes of a phantom
// run is within 5% of it and the busiest node sends at most 1.25x it (the
// model's accuracy on validate_comm's grids: experiments/README.md). A tree
// that sent more per trailing column (a tile crossing node rows once per
// virtual tile, as the flat tree's chain does) fails both.
TEST(SimCluster, QrBinaryTreeMessagesFollowTheirModel) {
  for (const auto& [pr, pc] : {std::pair{2, 2}, {4, 2}, {2, 4}, {4, 4}}) {
    const std::string grid = std::to_string(pr) + "x" + std::to_string(pc);
    const json j = run_ok(sim_run("qr", grid, {"--n", "8192", "--B", "256", "--threads", "2", "--qr-tree", "binary"}));
    const json& per = j.at("comm").at("per_node");
    const double mean = static_cast<double>(sum(per, "messages_sent")) / static_cast<double>(per.size());
    const double busiest = j.at("comm").at("max_messages_sent").get<double>();
    const double model = tessera::msg_qr_binary_sum(tessera::CommShape{8192, 256, 1, pr, pc}, j.at("v").get<double>());
    EXPECT_NEAR(mean / model, 1.0, 0.05) << grid << ": mean " << mean << ", model " << model;
    EXPECT_GE(busiest, model * 0.95) << grid;
    EXPECT_LE(busiest, model * 1.25) << grid << ": busiest " << busiest << ", model " << model;
  }
}

// One message between two simulated nodes, timed by hand. Cholesky of 2x2
// tiles of 64 on a 2x1 grid, one compute thread per node, kernel times powers
// of two: POTF2'(0) on node 0 (0.5 s), its tile to node 1, then TRSM, the
// diagonal GSMM and POTF2'(1) there (0.875 s), a chain of 1.375 s plus the
// message. The message takes the machine's latency once (each node's link
// holds half of it: a route crosses two) and its wire bytes (the 32 KiB tile
// and platform/network.hpp's 64-byte header) over the link's bandwidth, which
// SimGrid's TCP cross-traffic model (its default, kept) shares with 5% of
// the flow going back: 1.05 x bytes / bandwidth.
TEST(SimCluster, AMessageTakesTheLatencyAndItsBytesOverTheBandwidth) {
  const auto run = [](double bandwidth, double latency) {
    TempDir dir;
    const std::string machine = dir.write("two-nodes.json", tessera::test::pow2_machine(2, 2, bandwidth, latency));
    const json j = run_ok(sim_run("cholesky", "2x1", {"--n", "128", "--B", "64", "--threads", "1"}, machine));
    EXPECT_EQ(j.at("comm").at("per_node").at(0).at("messages_sent"), 1) << j.dump();
    EXPECT_EQ(j.at("comm").at("per_node").at(0).at("bytes_sent"), 64 * 64 * 8) << j.dump();
    return j.at("time_s").get<double>();
  };
  const double wire = 64 * 64 * 8 + 64;
  for (const auto& [bandwidth, latency] : {std::pair{524288.0, 0.0625}, {524288.0, 0.125}, {1048576.0, 0.0625}})
    EXPECT_NEAR(run(bandwidth, latency), 1.375 + latency + 1.05 * wire / bandwidth, 1e-9)
        << bandwidth << " B/s, " << latency << " s";
  // "calibrated": false: the figures are nominal, and SimGrid's LV08 model
  // corrects them (latency x 13.01, bandwidth x 0.97), so the message takes
  // twelve more latencies and a little longer on the wire.
  TempDir dir;
  const std::string nominal = tessera::test::pow2_machine(2, 2, 524288.0, 0.0625, "", false);
  const json j = run_ok(
      sim_run("cholesky", "2x1", {"--n", "128", "--B", "64", "--threads", "1"}, dir.write("nominal.json", nominal)));
  EXPECT_GT(j.at("time_s").get<double>(), 1.375 + 13 * 0.0625 + 1.05 * wire / 524288.0) << j.dump();
  // In single precision the tile is 64 x 64 x 4 bytes, still 64 x 64 words (Keeneland's models have both).
  const json s = run_ok(sim_run("cholesky", "2x1", {"--n", "128", "--B", "64", "--threads", "1", "--precision", "s"}));
  EXPECT_EQ(s.at("comm").at("per_node").at(0).at("bytes_sent"), 64 * 64 * 4) << s.dump();
  EXPECT_EQ(s.at("comm").at("per_node").at(0).at("words_sent"), 64 * 64) << s.dump();
}

// A machine file of the most nodes it may have (32,768): a run of two builds the platform of its two, at once and in
// little memory. The full zone of every node had a route per pair of them: 5,000 nodes aborted SimGrid, 3,000 took
// 8.5 s and 2.2 GB to build.
TEST(SimCluster, AMachineOfManyNodesBuildsTheRunsNodesOnly) {
  TempDir dir;
  const std::string machine = dir.write("many.json", tessera::test::pow2_machine(32768, 2, 1e9, 1e-6));
  Outcome o;
  const json j = run_ok(sim_run("cholesky", "2x1", {"--n", "256", "--B", "64", "--threads", "1"}, machine), &o);
  EXPECT_EQ(j.at("nodes"), 2) << o;
#if !defined(__SANITIZE_ADDRESS__)  // whose shadow memory and quarantine add their own (234 MiB in all under it)
  EXPECT_LT(j.at("peak_rss_bytes").get<double>(), 200e6) << o;
#endif
}

// --trace on a simulated 2x2 grid: one file per node (node k > 0 in
// FILE.nodeK.json), each naming only its node, holding its share of the
// kernels (together: every task once) and one "node" transfer per message it
// received (bytes as counted in the JSON), each lasting the modeled transit
// time, the same for equal sizes (an idle link).
TEST(SimCluster, TraceHasEveryNodeAndItsMessages) {
  TempDir dir;
  const std::string trace = dir.path() + "/run.json";
  const json r = run_ok(sim_run("cholesky", "2x2", {"--n", "1000", "--B", "125", "--threads", "2", "--trace", trace}));
  ASSERT_TRUE(r.contains("comm")) << r.dump(2);
  const json& per = r.at("comm").at("per_node");
  std::uint64_t tasks = 0;
  for (int k = 0; k < 4; ++k) {
    const std::string path = k == 0 ? trace : dir.path() + "/run.node" + std::to_string(k) + ".json";
    SCOPED_TRACE(path);
    const std::string text = read_text(path);
    ASSERT_FALSE(text.empty());
    const json t = json::parse(text);
    std::uint64_t messages = 0, bytes = 0;
    for (const json& e : t.at("traceEvents")) {
      if (e.contains("pid")) EXPECT_EQ(e.at("pid"), k);
      if (e.value("cat", "") == "task") ++tasks;
      if (e.value("cat", "") != "transfer") continue;
      const json& a = e.at("args");
      EXPECT_EQ(a.at("kind"), "node");
      EXPECT_EQ(a.at("to"), k);
      EXPECT_NE(a.at("from"), k);
      EXPECT_GT(e.at("dur").get<double>(), 0.0) << e.dump();
      ++messages;
      bytes += a.at("bytes").get<std::uint64_t>();
    }
    EXPECT_EQ(messages, per.at(k).at("messages_received").get<std::uint64_t>());
    EXPECT_EQ(bytes, per.at(k).at("bytes_received").get<std::uint64_t>());
  }
  // Tile Cholesky on 8 x 8 tiles has p(p+1)(p+2)/6 = 120 kernels (POTF2' 8,
  // TRSM 28, diagonal GSMM 28, GSMM 56): each in exactly one node's trace.
  EXPECT_EQ(tasks, 120u);
}

// README, Simulated failures: "A link that nothing crosses afterwards costs
// nothing: the run completes and a line after the summary says so (failure:
// --fail link:… was turned off at … s of simulated time, but nothing crossed
// it afterwards)", at the time --fail gave (not the run's end). The time is
// taken between the last message any node received (from a first run's
// traces: on 1x2 every message crosses node1-net) and the run's end, where
// the link is off for 1 ms of the 143 ms run and the run's time is the same.
TEST(SimCluster, ALinkNothingCrossesAfterwardsIsNamedAtItsTime) {
  TempDir dir;
  const std::string t = dir.path() + "/t.json";
  const double end_s =
      run_ok(sim_run("cholesky", "1x2", {"--n", "2048", "--B", "256", "--trace", t})).at("time_s").get<double>();
  double last_us = 0;
  for (const std::string& f : {t, dir.path() + "/t.node1.json"}) {
    const json trace = json::parse(read_text(f));
    for (const json& e : trace.at("traceEvents"))
      if (e.value("cat", "") == "transfer")
        last_us = std::max(last_us, e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  ASSERT_GT(last_us, 0) << "no message in the traces";
  ASSERT_LT(last_us * 1e-6, end_s * 0.999) << "the run must end after its last message";
  char when[32];
  std::snprintf(when, sizeof when, "%.4g", (last_us * 1e-6 + end_s) / 2);
  ASSERT_LT(std::stod(when), end_s);
  ASSERT_GT(std::stod(when), last_us * 1e-6);
  Outcome o;
  const json j = run_ok(
      sim_run("cholesky", "1x2", {"--n", "2048", "--B", "256", "--fail", std::string("link:node1-net@") + when}), &o);
  EXPECT_EQ(j.at("time_s").get<double>(), end_s) << "nothing crossed the link: the run is the same";
  EXPECT_NE(o.out.find(std::string("\nfailure: --fail link:node1-net@") + when + ": link node1-net was turned off at " +
                       when + " s of simulated time, but nothing crossed it afterwards\n"),
            std::string::npos)
      << o;
}

}  // namespace
