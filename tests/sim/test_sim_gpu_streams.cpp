// A simulated GPU with several compute streams (platform/simgrid/sim_gpu.cpp):
// the device alone, with tasks of known times and shares whose ends follow
// from max-min sharing by hand; then whole runs (`--gpu-streams`): factors
// that pass the check, reproducible times, and QR's panels beside its
// updates making a run faster on a GPU whose panels run far below GEMM.
#include <gtest/gtest.h>

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "experiments/driver.hpp"
#include "models/machine.hpp"
#include "platform/device.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "sim_cli_util.hpp"
#include "sim_test_util.hpp"

namespace {
using nlohmann::json;
using tessera::test::Outcome;
using tessera::test::run_ok;
using tessera::test::run_tessera;
namespace platform = tessera::platform;

const std::string kKeeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
constexpr double kForever = std::numeric_limits<double>::infinity();

// Runs `body` on node 0 of a simulated Keeneland with one phantom GPU of
// `streams` compute streams; returns what it wrote.
// `overlap`, `host_waits`: the machine file's stream_overlap and host_waits.
std::string on_gpu(int streams, const std::function<void(platform::Device&, std::ostringstream&)>& body,
                   double overlap = 1, std::vector<std::uint16_t> host_waits = {}) {
  return tessera::test::run_in_child([&] {
    const auto machine = platform::Machine::load(kKeeneland);
    platform::Simulation sim(machine);
    auto gpu = platform::make_sim_gpu(sim, 0, 1, std::size_t{1} << 30, false, {streams, overlap, host_waits});
    std::ostringstream out;
    platform::run_on_nodes(sim, 1, [&](int) { body(*gpu, out); });
    return out.str();
  });
}

// Queues one task's kernels: `seconds` alone, `share` of the GPU; a panel is a POTF2', an update a GSMM.
std::uint64_t queue(platform::Device& d, bool panel, double seconds, double share) {
  d.begin_kernels(panel);
  d.model_kernels(panel ? tessera::kPotf2p : tessera::kGsmm, seconds, share);
  return d.end_kernels();
}

double now() { return simgrid::s4u::Engine::get_clock(); }

// A panel taking a quarter of the GPU beside an update that would fill it:
// the panel runs at its own speed and ends at 1 s, the update gets the other
// three quarters meanwhile, has a quarter of its work left and ends at 1.25 s.
TEST(SimGpuStreams, APanelBesideAnUpdateSharesTheGpuMaxMinFairly) {
  const std::string out = on_gpu(2, [](platform::Device& d, std::ostringstream& o) {
    EXPECT_EQ(d.kernel_depth(), 2);
    EXPECT_EQ(d.kernel_streams(), 2);
    const std::uint64_t panel = queue(d, true, 1.0, 0.25), update = queue(d, false, 1.0, 1.0);
    // Neither has ended at 0.5 s: the wait gives up then.
    o << d.wait_any_kernels({panel, update}, 0.5).has_value() << ' ' << now() << ' ';
    o << (d.wait_any_kernels({panel, update}, kForever) == panel) << ' ' << now() << ' ';
    o << d.kernels_ended(panel) << d.kernels_ended(update) << ' ';
    d.wait_kernels(update);
    o << now() << ' ';
    d.wait_kernels(panel);
    o << d.kernel_span_s();
  });
  EXPECT_EQ(out, "0 0.5 1 1 10 1.25 2.25");
}

// The same two tasks on a GPU whose kernels leave nothing to others
// (stream_overlap 0): the panel takes the whole GPU (its stream's priority),
// ends at 1 s, and the update runs after it, to 2 s; with 0.5 the panel takes
// 1 - 0.5 x 0.75 = 0.625 of it and ends at 1 s, the update gets 0.375 until
// then and its last 0.625 runs alone, to 1.625 s.
TEST(SimGpuStreams, StreamOverlapLimitsWhatAPanelLeavesToOthers) {
  const auto panel_and_update = [](platform::Device& d, std::ostringstream& o) {
    const std::uint64_t panel = queue(d, true, 1.0, 0.25), update = queue(d, false, 1.0, 1.0);
    d.wait_kernels(panel);
    o << now() << ' ';
    d.wait_kernels(update);
    o << now();
  };
  EXPECT_EQ(on_gpu(2, panel_and_update, 0.0), "1 2");
  EXPECT_EQ(on_gpu(2, panel_and_update, 0.5), "1 1.625");
}

// Stream 0 has the GPU's greatest priority (the CUDA GPU's panels' stream):
// a panel of share 0.5 beside two updates takes its half and ends at 1 s,
// the updates share the other half until then (0.25 done each) and the GPU
// after (1.5 s more each: 2.5 s). Shared evenly, as without priority, the
// panel would get a third and end at 1.5 s.
TEST(SimGpuStreams, ThePanelsStreamTakesItsShareFirst) {
  const std::string out = on_gpu(3, [](platform::Device& d, std::ostringstream& o) {
    const std::uint64_t panel = queue(d, true, 1.0, 0.5), a = queue(d, false, 1.0, 1.0), b = queue(d, false, 1.0, 1.0);
    d.wait_kernels(panel);
    o << now() << ' ';
    d.wait_kernels(a);
    d.wait_kernels(b);
    o << now();
  });
  EXPECT_EQ(out, "1 2.5");
}

// A kernel listed in host_waits (a CUDA GPU's POTF2' reads its status back)
// returns its mark only once it ended: the manager, which queued an update
// first, could queue nothing else for that second. Unlisted, it returns at once.
TEST(SimGpuStreams, AKernelThatWaitsOnTheHostHoldsTheManager) {
  const auto update_then_panel = [](platform::Device& d, std::ostringstream& o) {
    const std::uint64_t update = queue(d, false, 2.0, 1.0), panel = queue(d, true, 1.0, 0.25);
    o << now() << ' ' << d.kernels_ended(panel) << d.kernels_ended(update) << ' ';
    d.wait_kernels(panel);
    d.wait_kernels(update);
    o << now();
  };
  EXPECT_EQ(on_gpu(2, update_then_panel, 1, {tessera::kPotf2p}), "1 10 2.25");
  EXPECT_EQ(on_gpu(2, update_then_panel), "0 00 2.25");
}

// Two streams: lane 0 is the panels'; two updates share the other and run
// one after the other. Three: they run side by side, each at half speed.
TEST(SimGpuStreams, UpdatesSpreadOverTheStreamsBesideThePanels) {
  const auto two_updates = [](platform::Device& d, std::ostringstream& o) {
    const std::uint64_t a = queue(d, false, 1.0, 1.0), b = queue(d, false, 1.0, 1.0);
    d.wait_kernels(a);
    o << now() << ' ';
    d.wait_kernels(b);
    o << now();
  };
  EXPECT_EQ(on_gpu(2, two_updates), "1 2");
  EXPECT_EQ(on_gpu(3, two_updates), "2 2");
  // Two panels, lane 0 busy with the first: the second goes beside it.
  EXPECT_EQ(on_gpu(2,
                   [](platform::Device& d, std::ostringstream& o) {
                     const std::uint64_t a = queue(d, true, 1.0, 0.5), b = queue(d, true, 1.0, 0.5);
                     d.wait_kernels(b);
                     d.wait_kernels(a);
                     o << now();
                   }),
            "1");
}

TEST(SimGpuStreams, AtMostOneTaskPerStreamQueued) {
  const std::string out = on_gpu(2, [](platform::Device& d, std::ostringstream& o) {
    const std::uint64_t a = queue(d, false, 1.0, 1.0), b = queue(d, false, 1.0, 1.0);
    try {
      queue(d, false, 1.0, 1.0);
      o << "queued a third";
    } catch (const std::logic_error& e) {
      o << e.what();
    }
    d.wait_kernels(a);
    d.wait_kernels(b);
    o << "; ended at " << now();
  });
  EXPECT_NE(out.find("more than 2 tasks' kernels queued at once"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("; ended at 2")) << "the two queued, one after the other on the updates' stream: " << out;
}

const std::string kLentH100 = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/lent-h100-node.json";

// A phantom run on one GPU of `machine` (by default the lent H100's calibration) with 13 cores.
std::vector<std::string> h100(const std::string& algo, std::vector<std::string> extra,
                              const std::string& machine = kLentH100) {
  std::vector<std::string> a = {"run", "--backend", "sim",    "--machine", machine,     "--algo", algo,
                                "--s", "1",         "--gpus", "1",         "--threads", "13"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The lent H100's calibration (lent-h100-node.json): GEQRT and TSQRT at 5%
// of DGEMM's rate, SSRFB at a quarter. With three streams the panels and
// two updates run side by side: the phantom run is faster than with one
// stream, every simulated time is reproducible, and the JSON says how many.
TEST(SimGpuStreamsRuns, QrPanelsBesideUpdatesAndReproducible) {
  const std::vector<std::string> size = {"--n", "16384", "--B", "2048"};
  auto three = size;
  three.insert(three.end(), {"--gpu-streams", "3"});
  const json one = run_ok(h100("qr", size)), a = run_ok(h100("qr", three)), b = run_ok(h100("qr", three));
  EXPECT_EQ(a.at("time_s"), b.at("time_s"));
  EXPECT_EQ(a.at("gpu_streams"), 3);
  EXPECT_FALSE(one.contains("gpu_streams"));
  EXPECT_LT(a.at("time_s").get<double>(), 0.9 * one.at("time_s").get<double>()) << a.dump() << one.dump();
  const json& g = a.at("gpu_stats").at(0);
  // Spans overlap with several streams: their sum exceeds the manager's busy time.
  EXPECT_GT(g.at("kernel_span_s").get<double>(), g.at("busy_s").get<double>()) << g;
}

// The machine file's node.gpus.stream_overlap reaches the run's GPUs: with none (0), a panel leaves the
// updates on the other streams nothing of the GPU while it runs, and the QR above takes longer than with
// full overlap (1, the value a file without the field has).
TEST(SimGpuStreamsRuns, TheMachineFilesStreamOverlapReachesTheGpus) {
  tessera::test::TempDir dir;
  json f = json::parse(tessera::test::read_text(kLentH100));
  const auto with_overlap = [&](double x) {
    f["node"]["gpus"]["stream_overlap"] = x;
    return run_ok(h100("qr", {"--n", "8192", "--B", "1024", "--gpu-streams", "3"},
                       dir.write("overlap" + std::to_string(x) + ".json", f.dump())))
        .at("time_s")
        .get<double>();
  };
  const double none = with_overlap(0.0), full = with_overlap(1.0);
  EXPECT_GT(none, 1.5 * full);
  EXPECT_EQ(full, run_ok(h100("qr", {"--n", "8192", "--B", "1024", "--gpu-streams", "3"})).at("time_s").get<double>());
}

// The trace gives each GPU task its device span (gpu_span_us) where the
// device measures one: with three streams every GPU task has one and they
// sum to the run's kernel_span_s; with one stream (the manager lets the
// model's time pass itself) none.
TEST(SimGpuStreamsRuns, TraceCarriesEachGpuTasksSpan) {
  tessera::test::TempDir dir;
  const std::vector<std::string> size = {"--n", "8192", "--B", "2048"};
  for (const int streams : {1, 3}) {
    const std::string trace = dir.path() + "/t" + std::to_string(streams) + ".json";
    auto args = size;
    args.insert(args.end(), {"--gpu-streams", std::to_string(streams), "--trace", trace});
    const json j = run_ok(h100("qr", args));
    const json t = json::parse(tessera::test::read_text(trace));
    std::map<int, std::string> lanes;
    for (const json& e : t.at("traceEvents"))
      if (e.value("name", "") == "thread_name") lanes[e.at("tid").get<int>()] = e.at("args").at("name");
    double sum_us = 0;
    int gpu_tasks = 0, with_span = 0;
    for (const json& e : t.at("traceEvents")) {
      if (e.value("cat", "") != "task" || !lanes[e.at("tid").get<int>()].starts_with("gpu")) continue;
      ++gpu_tasks;
      if (e.at("args").contains("gpu_span_us")) ++with_span, sum_us += e.at("args").at("gpu_span_us").get<double>();
    }
    EXPECT_GT(gpu_tasks, 0);
    if (streams == 1) {
      EXPECT_EQ(with_span, 0) << "one stream measures no span";
    } else {
      EXPECT_EQ(with_span, gpu_tasks);
      EXPECT_NEAR(sum_us * 1e-6, j.at("gpu_stats").at(0).at("kernel_span_s").get<double>(), 1e-6 * gpu_tasks);
    }
  }
}

// A run reports its own GPU kernel span: the device's count goes on across
// runs (a warm-up, an earlier run in the same process), so a second phantom
// QR on the same simulated GPU (three streams: it measures spans) reports
// what the first did, not the sum of both.
TEST(SimGpuStreamsRuns, EachRunReportsItsOwnKernelSpan) {
  const std::string out = tessera::test::run_in_child([] {
    const auto machine = platform::Machine::load(kLentH100);
    platform::Simulation sim(machine);
    const auto gpu = platform::make_sim_gpu(sim, 0, 1, static_cast<std::size_t>(machine.node.gpus.memory_bytes), false,
                                            {3, machine.node.gpus.stream_overlap, machine.node.gpus.host_waits});
    tessera::RunConfig cfg;
    cfg.algo = "qr";
    cfg.n = cfg.m = 8192;
    cfg.B = 2048;
    cfg.s = 1;
    cfg.gpus = 1;
    cfg.gpu_streams = 3;
    cfg.threads = 13;
    cfg.machine = kLentH100;
    cfg.model = &machine.core_model(cfg.threads);
    cfg.gpu_model = &machine.model(machine.node.gpus.model);
    cfg.devices.push_back(gpu.get());
    platform::SimGridPlatform node0(sim, 0, false);
    std::ostringstream o;
    o.precision(17);
    platform::run_on_nodes(sim, 1, [&](int) {
      for (int run = 0; run < 2; ++run) o << tessera::run_factorization(cfg, node0).gpus.at(0).kernel_span_s << ' ';
    });
    return o.str();
  });
  std::istringstream in(out);
  double first = 0, second = 0;
  in >> first >> second;
  ASSERT_TRUE(in) << "unreadable child result: " << out;
  EXPECT_GT(first, 0.0);
  EXPECT_NEAR(second, first, 1e-9 * first) << "the second run's span counts the first's";
}

// The lent H100's machine file with `task_s` of the runtime's own time per GPU task, written in `dir`.
std::string slow_host(const tessera::test::TempDir& dir, double task_s) {
  json m = json::parse(tessera::test::read_text(kLentH100));
  m["kernel_models"][m["node"]["gpus"]["model"].get<std::string>()]["task_s"] = task_s;
  return dir.write("slow-host.json", m.dump());
}

// The runtime's own time per task (the GPU model's task_s) is spent by the
// manager after queuing each task, one task after the other while the GPU
// runs: with 10 ms per task the run takes at least its GPU tasks x 10 ms,
// and longer than without.
TEST(SimGpuStreamsRuns, TheManagersPerTaskTimeIsSpentPerTask) {
  tessera::test::TempDir dir;
  const std::string file = slow_host(dir, 0.01);
  const std::string trace = dir.path() + "/t.json";
  const std::vector<std::string> args = {"run",  "--backend", "sim",  "--algo",        "qr", "--n",
                                         "8192", "--B",       "2048", "--s",           "1",  "--gpus",
                                         "1",    "--threads", "13",   "--gpu-streams", "2"};
  auto with = args;
  with.insert(with.end(), {"--machine", file, "--trace", trace});
  auto without = args;
  without.insert(without.end(), {"--machine", kLentH100});
  const json slow = run_ok(with), fast = run_ok(without);
  int gpu_tasks = 0;
  const json t = json::parse(tessera::test::read_text(trace));
  for (const json& e : t.at("traceEvents"))
    if (e.value("cat", "") == "task" && e.at("args").contains("gpu_span_us")) ++gpu_tasks;
  EXPECT_GT(gpu_tasks, 20);
  EXPECT_GE(slow.at("time_s").get<double>(), 0.01 * gpu_tasks);
  EXPECT_GT(slow.at("time_s").get<double>(), fast.at("time_s").get<double>());
}

// A GPU is busy while a task of it is in flight (runtime/node_runtime.cpp):
// its busy_s covers every kernel, each of which ran between its task's
// queuing and its retirement. With three streams tasks retire out of order
// (a panel queued after an update ends first), and with 1 ms per task of
// the manager's own time their queuings are 1 ms apart: a busy time that
// counted each task from its own queuing would miss what ran meanwhile
// (3 ms of this QR's 0.445 s, measured). The trace gives each GPU task its
// end and its device span.
TEST(SimGpuStreamsRuns, AGpusBusyTimeCoversEveryKernel) {
  tessera::test::TempDir dir;
  const std::string trace = dir.path() + "/t.json";
  const json j = run_ok(
      h100("qr", {"--n", "16384", "--B", "2048", "--gpu-streams", "3", "--trace", trace}, slow_host(dir, 0.001)));
  // The kernels' intervals [end - span, end], in microseconds, merged.
  std::vector<std::pair<double, double>> kernels;
  const json t = json::parse(tessera::test::read_text(trace));
  for (const json& e : t.at("traceEvents"))
    if (e.value("cat", "") == "task" && e.at("args").contains("gpu_span_us")) {
      const double end = e.at("ts").get<double>() + e.at("dur").get<double>();
      kernels.emplace_back(end - e.at("args").at("gpu_span_us").get<double>(), end);
    }
  ASSERT_GT(kernels.size(), 20u);
  std::sort(kernels.begin(), kernels.end());
  double covered_us = 0, from = kernels[0].first, to = kernels[0].second;
  for (const auto& [a, b] : kernels) {
    if (a > to) covered_us += to - from, from = a;
    to = std::max(to, b);
  }
  covered_us += to - from;
  const double busy = j.at("gpu_stats").at(0).at("busy_s").get<double>();
  EXPECT_GE(busy, covered_us * 1e-6 - 1e-6 * kernels.size()) << "the GPU ran kernels while it was counted idle";
  EXPECT_LE(busy, j.at("time_s").get<double>());
}

// Each stream beyond the first keeps its libraries' memory on a CUDA GPU
// (node.gpus.stream_reserve_bytes): with three streams the runtime gets the
// file's memory less two reserves, unless --gpu-memory says otherwise; a
// reserve that leaves nothing is refused, naming the option and the field.
TEST(SimGpuStreamsRuns, EachStreamBeyondTheFirstKeepsItsReserve) {
  tessera::test::TempDir dir;
  json m = json::parse(tessera::test::read_text(kLentH100));
  const double memory = m["node"]["gpus"]["memory_bytes"]["value"].get<double>();
  m["node"]["gpus"]["stream_reserve_bytes"] = 1e9;
  const std::string file = dir.write("reserve.json", m.dump());
  const auto capacity = [&](const std::string& machine, std::vector<std::string> extra) {
    std::vector<std::string> a = {"run",      "--backend", "sim",  "--machine", machine, "--algo",
                                  "cholesky", "--n",       "8192", "--B",       "2048",  "--s",
                                  "1",        "--gpus",    "1",    "--threads", "13"};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_ok(a).at("gpu_stats").at(0).at("capacity_bytes").get<double>();
  };
  EXPECT_DOUBLE_EQ(capacity(file, {"--gpu-streams", "3"}), static_cast<double>(static_cast<std::size_t>(memory - 2e9)));
  EXPECT_DOUBLE_EQ(capacity(file, {}), static_cast<double>(static_cast<std::size_t>(memory)));
  EXPECT_DOUBLE_EQ(capacity(file, {"--gpu-streams", "3", "--gpu-memory", "20000000000"}), 2e10);
  m["node"]["gpus"]["stream_reserve_bytes"] = memory;
  const Outcome o = run_tessera({"run", "--backend", "sim", "--machine", dir.write("all.json", m.dump()), "--algo",
                                 "cholesky", "--n", "8192", "--B", "2048", "--gpus", "1", "--gpu-streams", "2"});
  EXPECT_TRUE(o.exited && o.status == 2) << o;
  EXPECT_NE(o.err.find("--gpu-streams 2"), std::string::npos) << o;
  EXPECT_NE(o.err.find("stream_reserve_bytes"), std::string::npos) << o;
}

// Real data through three streams on every GPU of 2x1 Keeneland nodes: the check passes.
TEST(SimGpuStreamsRuns, RealDataPassesTheCheck) {
  for (const std::string algo : {"cholesky", "qr", "lu"}) {
    Outcome o;
    const json j =
        run_ok({"run", "--backend",     "sim", "--machine",  kKeeneland, "--algo", algo, "--grid", "2x1", "--gpus",
                "2",   "--gpu-streams", "3",   "--n",        "960",      "--B",    "96", "--s",    "2",   "--b",
                "32",  "--threads",     "2",   "--sim-data", "--check"},
               &o);
    EXPECT_EQ(j.at("check_passed"), true) << algo << ": " << o;
  }
}

TEST(SimGpuStreamsRuns, StreamsNeedGpusAndADepth) {
  const Outcome o = run_tessera(
      {"run", "--backend", "sim", "--machine", kKeeneland, "--algo", "cholesky", "--n", "960", "--gpu-streams", "2"});
  EXPECT_TRUE(o.exited && o.status == 2) << o;
  EXPECT_NE(o.err.find("--gpu-streams 2"), std::string::npos) << o;
  const Outcome d = run_tessera({"run", "--backend", "sim", "--machine", kKeeneland, "--algo", "cholesky", "--n", "960",
                                 "--gpus", "1", "--gpu-streams", "2", "--gpu-kernel-depth", "1"});
  EXPECT_TRUE(d.exited && d.status == 2) << d;
  EXPECT_NE(d.err.find("--gpu-kernel-depth 1"), std::string::npos) << d;
}

}  // namespace
