// README claims about the command line that no other test pinned (issue 17
// point 6), each through the `tessera` binary as a user runs it: the ready
// queue's order and the matrix seed, --keep-tiles and --window, simulated runs
// without or with a bad machine file, the shipped local.json, `model comm
// --json` for QR, an emulated GPU's copies in gpu_stats and in the trace, and,
// on a machine with a CUDA GPU, --device cuda and --impl cusolver end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_expect.hpp"
#include "cli_json.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "models/comm_model.hpp"
#include "test_helpers.hpp"

namespace tessera::test::cli {
namespace {

using tessera::test::TempDir;
using ::testing::HasSubstr;

// The tasks of a --trace file, "NAME(k,i,j)" each, in the order they started.
std::vector<std::string> task_order(const std::string& trace) {
  std::vector<std::pair<double, std::string>> started;
  const nlohmann::json events = read_json(trace).at("traceEvents");
  for (const auto& e : events) {
    if (e.value("cat", "") != "task") continue;
    const auto& a = e.at("args");
    started.emplace_back(e.at("ts").get<double>(), e.at("name").get<std::string>() + "(" + a.at("k").dump() + "," +
                                                       a.at("i").dump() + "," + a.at("j").dump() + ")");
  }
  std::stable_sort(started.begin(), started.end());
  std::vector<std::string> order;
  for (auto& [ts, task] : started) order.push_back(std::move(task));
  return order;
}

// --policy fifo and random run every task and pass the check; the factor
// (hence the residual, to the last bit) does not depend on the order, since
// each tile's updates run in the serial order whatever the policy. The order
// itself does: on one thread, priority runs the next panel (POTF2'(1), once
// column 1 is updated) before the rest of step 0's trailing update, which
// fifo runs first, in the order its tasks became ready; random runs yet
// another order. The orders are compared on a simulated node (the same
// runtime and ready queue, deterministic): natively, which tasks are ready
// when the worker picks one also depends on how far the generator thread has
// got, and on a loaded machine step 1's panel was once generated only after
// the worker had reached the end of step 0.
TEST(CliClaims, PolicyChangesOrderNotResult) {
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "512", "--B", "64", "--threads", "1", "--check"};
  std::vector<double> residuals;
  std::map<std::string, std::vector<std::string>> orders, native;
  for (const char* policy : {"priority", "fifo", "random"}) {
    for (const bool simulated : {false, true}) {
      auto args = base(shape);
      const std::string name = std::string(policy) + (simulated ? "-sim" : "");
      const std::string trace = dir.path() + "/" + name + ".trace.json";
      args.insert(args.end(), {"--policy", policy, "--trace", trace});
      if (simulated) {
        if (!TESSERA_HAVE_SIMGRID) continue;
        args.insert(args.end(), {"--backend", "sim", "--machine",
                                 std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json", "--sim-data"});
      }
      const auto j = run_ok(dir, args, simulated ? 2 : 1, nullptr, name + ".json");
      EXPECT_EQ(j.at("check_passed"), true) << name;
      EXPECT_EQ(j.at("tasks"), 120) << name;  // 8x8 tiles: 8 POTF2', 28 TRSM, 28 GSMM_DIAG, 56 GSMM
      residuals.push_back(j.at("residual").get<double>());
      (simulated ? orders : native)[policy] = task_order(trace);
      EXPECT_EQ(task_order(trace).size(), 120u) << name;
    }
  }
  for (const double r : residuals) EXPECT_EQ(r, residuals[0]);
  // The same tasks, each once, in every order.
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  for (const auto* o : {&native, &orders})
    for (const auto& [policy, order] : *o) EXPECT_EQ(sorted(order), sorted(native["priority"])) << policy;
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the orders are compared on a simulated node)";
  EXPECT_NE(orders["fifo"], orders["priority"]);
  EXPECT_NE(orders["random"], orders["priority"]);
  EXPECT_NE(orders["random"], orders["fifo"]);
  const auto position = [&](const char* policy, const std::string& task) {
    const auto& o = orders[policy];
    return std::find(o.begin(), o.end(), task) - o.begin();
  };
  EXPECT_LT(position("priority", "POTF2'(1,1,1)"), position("priority", "GSMM_DIAG(0,7,7)"));
  EXPECT_GT(position("fifo", "POTF2'(1,1,1)"), position("fifo", "GSMM_DIAG(0,7,7)"));
}

// --seed picks the generated matrix: the same seed gives the same factor
// (bit-identical residual), another seed another matrix; the JSON records it.
TEST(CliClaims, SeedPicksTheMatrix) {
  TempDir dir;
  auto run_seed = [&](const char* seed, const char* name) {
    return run_ok(dir, base({"--n", "300", "--B", "64", "--check", "--seed", seed}, "qr"), 1, nullptr, name);
  };
  const auto a = run_seed("7", "a.json"), b = run_seed("7", "b.json"), c = run_seed("8", "c.json");
  EXPECT_EQ(a.at("seed"), 7);
  EXPECT_EQ(c.at("seed"), 8);
  EXPECT_EQ(a.at("residual").get<double>(), b.at("residual").get<double>());
  EXPECT_NE(a.at("residual").get<double>(), c.at("residual").get<double>());
}

// --window bounds the unfinished tasks the generator may hold: a window of 4
// still runs every task and passes.
TEST(CliClaims, SmallWindowCompletes) {
  TempDir dir;
  const auto j = run_ok(dir, base({"--n", "500", "--B", "64", "--threads", "2", "--window", "4", "--check"}));
  EXPECT_EQ(j.at("check_passed"), true);
  EXPECT_EQ(j.at("tasks"), 120);
}

// Release_Tile frees an emulated GPU's copies as their last reader ends
// (nothing left at the end); --keep-tiles keeps them all to the end. Both
// report their copies in gpu_stats, and the trace shows them as h2d/d2h.
TEST(CliClaims, EmulatedGpuCopiesAndKeepTiles) {
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "600", "--B",    "120", "--s",    "3",
                                          "--b", "24",  "--gpus", "1",   "--check"};
  auto args = base(shape);
  const std::string trace = dir.path() + "/t.json";
  args.insert(args.end(), {"--trace", trace});
  const auto freed = run_ok(dir, args, 1, nullptr, "freed.json");
  auto keep_args = base(shape);
  keep_args.push_back("--keep-tiles");
  const auto kept = run_ok(dir, keep_args, 1, nullptr, "kept.json");
  EXPECT_EQ(freed.at("release_tiles"), true);
  EXPECT_EQ(kept.at("release_tiles"), false);
  const auto& f = freed.at("gpu_stats").at(0);
  const auto& k = kept.at("gpu_stats").at(0);
  EXPECT_GT(f.at("copies_in").get<int>(), 0);
  EXPECT_GT(f.at("bytes_in").get<double>(), 0);
  EXPECT_GT(f.at("copies_out").get<int>(), 0);
  EXPECT_EQ(f.at("bytes_at_end").get<double>(), 0);
  EXPECT_GT(k.at("bytes_at_end").get<double>(), 0);
  EXPECT_GE(k.at("peak_bytes").get<double>(), f.at("peak_bytes").get<double>());
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("h2d"));
  EXPECT_THAT(text.str(), HasSubstr("d2h"));
}

TEST(CliClaims, SimulatedRunsNeedAGoodMachineFile) {
  TempDir dir;
  expect_rejected(kInvalidInput, base({"--n", "600", "--backend", "sim"}), {"--backend sim needs --machine"});
  const std::string missing = dir.path() + "/none.json";
  expect_rejected(kInvalidInput, base({"--n", "600", "--backend", "sim", "--machine", missing}), {missing});
  const std::string broken = dir.write("broken.json", "{ \"name\": \"x\", ");
  expect_rejected(kInvalidInput, base({"--n", "600", "--backend", "sim", "--machine", broken}), {broken});
  const std::string no_nodes = dir.write("bad.json", R"({ "name": "x", "nodes": 0 })");
  expect_rejected(kInvalidInput, base({"--n", "600", "--backend", "sim", "--machine", no_nodes}), {no_nodes, "nodes"});
}

// The shipped machine file of the development VM loads and simulates a run.
TEST(CliClaims, ShippedLocalMachineFileLoads) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const auto j = run_ok(dir,
                        base({"--n", "1024", "--threads", "2", "--backend", "sim", "--machine",
                              std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json"}),
                        2);
  EXPECT_GT(j.at("time_s").get<double>(), 0);
  EXPECT_EQ(j.at("sim_data"), false);
}

// `tessera model comm --json` for QR: the rows of 000 App. A.2.2 with the
// virtual tile height the run would use (default_virtual_tile_height: 64 tile
// rows on 2 node rows give 4, neither 1 nor the paper's n/(B Pr) = 32), each
// the library's value for the shape.
TEST(CliClaims, ModelCommJsonForQr) {
  TempDir dir;
  const std::string json = dir.path() + "/comm.json";
  const Outcome o = run_tessera(
      {"model", "comm", "--algo", "qr", "--n", "8192", "--B", "128", "--s", "1", "--grid", "2x2", "--json", json});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  const auto j = read_json(json);
  EXPECT_EQ(j.at("algo"), "qr");
  EXPECT_EQ(j.at("grid"), nlohmann::json::array({2, 2}));
  const CommShape shape{.n = 8192, .B = 128, .s = 1, .Pr = 2, .Pc = 2};
  const double v = run_virtual_tile_height(shape);
  ASSERT_EQ(v, 4);
  EXPECT_EQ(j.at("v"), v);
  const auto& t = j.at("tessera");
  EXPECT_DOUBLE_EQ(t.at("messages_closed_form").get<double>(), msg_qr_closed(shape, v));
  EXPECT_DOUBLE_EQ(t.at("words_closed_form").get<double>(), word_qr_closed(shape, v));
  EXPECT_DOUBLE_EQ(t.at("messages_summation").get<double>(), msg_qr_sum(shape, v));
  EXPECT_DOUBLE_EQ(t.at("words_summation").get<double>(), word_qr_sum(shape, v));
  // ScaLAPACK's row is Table 1's PDGEQRF at nb = B (not tessera's counts), and the lower bound's.
  const auto& peer = j.at("scalapack");
  EXPECT_EQ(peer.at("routine"), "PDGEQRF");
  EXPECT_DOUBLE_EQ(peer.at("messages").get<double>(), pdgeqrf_messages(shape, 128));
  EXPECT_DOUBLE_EQ(peer.at("words").get<double>(), pdgeqrf_words(shape, 128));
  EXPECT_NE(peer.at("messages").get<double>(), t.at("messages_closed_form").get<double>());
}

// On a GPU machine: the runtime on a CUDA GPU and the cuSOLVER peer, checked.
// Skipped, with the reason, where CUDA was not built or no GPU is present.
TEST(CliClaims, CudaEndToEnd) {
  if (!TESSERA_HAVE_CUDA) GTEST_SKIP() << "built without CUDA";
  if (kernels::cuda_device_count() < 1) GTEST_SKIP() << "no CUDA GPU on this machine";
  TempDir dir;
  // Two lines each: the summary, then the GPU's warm-up before the clock (--gpu-warmup, on for CUDA GPUs; the
  // peer's: its routine on an identity of the matrix's size).
  for (const char* algo : {"cholesky", "qr"}) {
    const auto t = run_ok(dir, base({"--n", "2048", "--B", "512", "--gpus", "1", "--device", "cuda", "--check"}, algo),
                          2, nullptr, std::string(algo) + "-tile.json");
    EXPECT_EQ(t.at("check_passed"), true) << algo;
    EXPECT_GE(t.at("gpu_warmup").at("calls"), 4) << algo;
    EXPECT_TRUE(t.at("gpu_warmup").at("skipped").empty()) << algo;
    const auto p = run_ok(dir, base({"--n", "2048", "--impl", "cusolver", "--check"}, algo), 2, nullptr,
                          std::string(algo) + "-cusolver.json");
    EXPECT_EQ(p.at("check_passed"), true) << algo;
    EXPECT_EQ(p.at("gpu_warmup").at("calls"), 1) << algo;
  }
}

}  // namespace
}  // namespace tessera::test::cli
