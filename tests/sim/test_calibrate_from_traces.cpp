// A GPU's kernels timed inside runs, from their traces
// (experiments/calibrate_from_traces.hpp, `tessera calibrate --from-traces`).
// The simulator is the real run here: a machine file whose GPU kernels are
// all 1.25x slower than the lent H100's plays the node, a traced run on it
// gives the spans, and merging them into the H100's own file must give a
// model that reproduces the run and predicts another configuration of it,
// where the unmerged file is 20% fast (as the H100's isolated calibration
// was, 2026-11-25 to 2026-11-27).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim_cli_util.hpp"

namespace {

using nlohmann::json;
using tessera::test::Outcome;
using tessera::test::read_text;
using tessera::test::run_ok;
using tessera::test::run_tessera;
using tessera::test::TempDir;

const std::string kH100 = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/lent-h100-node.json";

json& gpu_model(json& f) { return f["kernel_models"][f["node"]["gpus"]["model"].get<std::string>()]; }

std::vector<std::string> cholesky(const std::string& machine, const std::string& B) {
  return {"run", "--algo",    "cholesky", "--n",           "8192", "--B",       B,     "--s",       "1",    "--gpus",
          "1",   "--threads", "2",        "--gpu-streams", "2",    "--backend", "sim", "--machine", machine};
}

TEST(CalibrateFromTraces, ARunsSpansMakeAModelThatReproducesItAndPredictsAnother) {
  TempDir dir;
  json slow = json::parse(read_text(kH100));
  for (json& e : gpu_model(slow)["measurements"]) e["median_s"] = e["median_s"].get<double>() * 1.25;
  const std::string node = dir.write("slow.json", slow.dump()), trace = dir.path() + "/t.json";
  auto traced = cholesky(node, "1024");
  traced.insert(traced.end(), {"--trace", trace});
  const double real = run_ok(traced)["time_s"].get<double>();

  const std::string merged = dir.path() + "/merged.json";
  const Outcome o = run_tessera({"calibrate", "--from-traces", trace, "--base", kH100, "--out", merged});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  json m = json::parse(read_text(merged));
  ASSERT_TRUE(m["calibration"].contains("gpu_in_run"));
  EXPECT_EQ(m["calibration"]["gpu_in_run"]["traces"], json::array({trace}));
  json base = json::parse(read_text(kH100));
  const json& before = gpu_model(base)["measurements"];
  const json& after = gpu_model(m)["measurements"];
  ASSERT_EQ(after.size(), before.size()) << "every traced shape was measured alone too";
  int traced_shapes = 0, scaled = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const double ratio = after[i]["median_s"].get<double>() / before[i]["median_s"].get<double>();
    if (after[i].contains("in_run_calls")) {
      ++traced_shapes;
      EXPECT_EQ(after[i]["m"], 1024) << after[i];
      // A span is the kernel's modeled time on the slow file, or longer where the two streams' kernels overlapped.
      EXPECT_GE(ratio, 1.25 * (1 - 1e-4)) << after[i];
    } else if (after[i].contains("in_run_scale")) {
      ++scaled;
      EXPECT_NEAR(ratio, after[i]["in_run_scale"].get<double>(), 1e-3) << after[i];
      EXPECT_GE(ratio, 1.25 * (1 - 1e-3)) << after[i];
    }
  }
  EXPECT_EQ(traced_shapes, 4) << "POTF2', TRSM, GSMM_DIAG and GSMM at 1024";
  // Every GPU task of the trace counted, but each kernel's first on its lane (its library set-up).
  const json t = json::parse(read_text(trace));
  std::map<std::string, int> tasks;
  for (const json& e : t["traceEvents"])
    if (e.value("cat", "") == "task" && e["args"].contains("gpu_span_us")) ++tasks[e["name"].get<std::string>()];
  const std::map<std::string, std::string> key = {
      {"potf2p", "POTF2'"}, {"trsm", "TRSM"}, {"gsmm_diag", "GSMM_DIAG"}, {"gsmm", "GSMM"}};
  for (const json& e : after)
    if (e.contains("in_run_calls")) EXPECT_EQ(e["in_run_calls"], tasks[key.at(e["kernel"])] - 1) << e;
  EXPECT_GT(scaled, 0);

  const double unmerged = run_ok(cholesky(kH100, "1024"))["time_s"].get<double>();
  const double reproduced = run_ok(cholesky(merged, "1024"))["time_s"].get<double>();
  EXPECT_LT(unmerged, 0.85 * real);
  EXPECT_NEAR(reproduced / real, 1.0, 0.02);
  // Another tile size, none of whose shapes was traced: the scaled shapes carry the slowdown.
  const double held_out_real = run_ok(cholesky(node, "2048"))["time_s"].get<double>();
  const double held_out = run_ok(cholesky(merged, "2048"))["time_s"].get<double>();
  EXPECT_NEAR(held_out / held_out_real, 1.0, 0.05);
  EXPECT_LT(run_ok(cholesky(kH100, "2048"))["time_s"].get<double>(), 0.85 * held_out_real);
}

// Each GPU pays its own first call of each kernel (its library set-up): with
// two GPUs, two calls of each kernel are left out, one per GPU that ran it.
TEST(CalibrateFromTraces, EachGpuLeavesOutItsOwnFirstCall) {
  TempDir dir;
  json two = json::parse(read_text(kH100));
  two["node"]["gpus"]["count"] = 2;
  const std::string node = dir.write("two.json", two.dump()), trace = dir.path() + "/t.json";
  auto traced = cholesky(node, "1024");
  traced[10] = "2";  // --gpus 2
  traced.insert(traced.end(), {"--trace", trace});
  (void)run_ok(traced);
  const json t = json::parse(read_text(trace));
  std::map<std::string, int> tasks;
  std::map<std::string, std::set<int>> lanes;
  for (const json& e : t["traceEvents"])
    if (e.value("cat", "") == "task" && e["args"].contains("gpu_span_us")) {
      ++tasks[e["name"].get<std::string>()];
      lanes[e["name"].get<std::string>()].insert(e["tid"].get<int>());
    }
  ASSERT_EQ(lanes["GSMM"].size(), 2u) << "both GPUs ran GSMMs";
  const std::string out = dir.path() + "/m.json";
  const Outcome o = run_tessera({"calibrate", "--from-traces", trace, "--base", node, "--out", out});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  const json m = json::parse(read_text(out));
  const std::map<std::string, std::string> name = {
      {"potf2p", "POTF2'"}, {"trsm", "TRSM"}, {"gsmm_diag", "GSMM_DIAG"}, {"gsmm", "GSMM"}};
  int checked = 0;
  for (const json& e : m["kernel_models"]["gpu"]["measurements"])
    if (e.contains("in_run_calls")) {
      const std::string& k = name.at(e["kernel"]);
      EXPECT_EQ(e["in_run_calls"].get<int>(), tasks[k] - static_cast<int>(lanes[k].size())) << e;
      ++checked;
    }
  EXPECT_GT(checked, 0);
}

// A GPU's first call of each kernel (models/cold_start.hpp): a machine file
// with GPU first-call costs plays a cold GPU node (--gpu-warmup off), its
// trace gives them back, and the file they are merged into predicts the cold
// run. With one stream a simulated GPU measures no span: the tasks' intervals
// time the first calls, as in the lent H200's traces (2026-11-25). A warmed
// run (the default) pays none, to the bit.
TEST(CalibrateFromTraces, ColdRunsTracesGiveTheGpusFirstCalls) {
  TempDir dir;
  json cold = json::parse(read_text(kH100));
  gpu_model(cold)["first_call_s"] = {{"source", "test"}, {"potf2p", {{"d", 0.02}}}, {"trsm", {{"d", 0.05}}}};
  const std::string node = dir.write("cold.json", cold.dump()), trace = dir.path() + "/t.json";
  auto one_stream = cholesky(node, "1024");
  one_stream[one_stream.size() - 5] = "1";  // --gpu-streams 1
  const auto with = [](std::vector<std::string> a, const std::vector<std::string>& extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const json warm = run_ok(one_stream);
  EXPECT_EQ(warm["gpu_first_calls"], "warmed");
  auto plain = one_stream;
  plain[plain.size() - 1] = kH100;
  EXPECT_EQ(warm["time_s"].get<double>(), run_ok(plain)["time_s"].get<double>()) << "warmed: no first call charged";
  const json paid = run_ok(with(one_stream, {"--gpu-warmup", "off", "--trace", trace}));
  EXPECT_EQ(paid["gpu_first_calls"], "paid");
  // POTF2'(0) and then the first TRSMs are each on the critical path.
  EXPECT_GE(paid["time_s"].get<double>() - warm["time_s"].get<double>(), 0.07 - 1e-9);
  EXPECT_LT(paid["time_s"].get<double>() - warm["time_s"].get<double>(), 0.2);
  EXPECT_EQ(json::parse(read_text(trace))["otherData"]["gpu_warmup"], "off");

  const std::string merged = dir.path() + "/merged.json";
  const Outcome o = run_tessera({"calibrate", "--from-traces", trace, "--base", kH100, "--out", merged});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_NE(o.out.find("first calls of 4 GPU kernel(s) from 1 cold trace(s)"), std::string::npos) << o;
  json m = json::parse(read_text(merged));
  const json& fc = gpu_model(m)["first_call_s"];
  EXPECT_NEAR(fc["potf2p"]["d"].get<double>(), 0.02, 1e-6) << fc;
  EXPECT_NEAR(fc["trsm"]["d"].get<double>(), 0.05, 1e-6) << fc;
  EXPECT_NEAR(fc["gsmm"]["d"].get<double>(), 0.0, 1e-6) << fc;
  EXPECT_EQ(m["calibration"]["gpu_first_calls"]["cold_traces"], 1);
  EXPECT_EQ(m["calibration"]["gpu_first_calls"]["shapes"], 0) << "no spans: the base's shapes stay";
  EXPECT_FALSE(m["calibration"].contains("gpu_in_run")) << "first calls alone leave the file open to spans";
  EXPECT_EQ(gpu_model(m)["measurements"], gpu_model(cold)["measurements"]);
  auto again = one_stream;
  again[again.size() - 1] = merged;
  EXPECT_NEAR(run_ok(with(again, {"--gpu-warmup", "off"}))["time_s"].get<double>() / paid["time_s"].get<double>(), 1.0,
              1e-4);

  // Spans merged into it afterwards (a two-stream trace of a warmed run) keep its first calls.
  const std::string spans = dir.path() + "/spans.json", both = dir.path() + "/both.json";
  (void)run_ok(with(cholesky(kH100, "1024"), {"--trace", spans}));
  const Outcome o2 = run_tessera({"calibrate", "--from-traces", spans, "--base", merged, "--out", both});
  ASSERT_TRUE(o2.exited && o2.status == 0) << o2;
  json b = json::parse(read_text(both));
  EXPECT_EQ(gpu_model(b)["first_call_s"], fc);
  EXPECT_TRUE(b["calibration"].contains("gpu_in_run"));

  // Each GPU pays its own first calls: with two, both GPUs' first TRSMs are 0.05 s slower (one GPU paying for
  // both would give a median of 0.025).
  json two = cold;
  two["node"]["gpus"]["count"] = 2;
  const std::string two_node = dir.write("cold2.json", two.dump()), two_trace = dir.path() + "/two.json";
  auto on_two = with(one_stream, {"--gpu-warmup", "off", "--trace", two_trace});
  on_two[10] = "2";  // --gpus 2
  on_two[on_two.size() - 5] = two_node;
  (void)run_ok(on_two);
  const std::string two_merged = dir.path() + "/two-merged.json";
  ASSERT_EQ(run_tessera({"calibrate", "--from-traces", two_trace, "--base", kH100, "--out", two_merged}).status, 0);
  json t2 = json::parse(read_text(two_merged));
  EXPECT_NEAR(gpu_model(t2)["first_call_s"]["trsm"]["d"].get<double>(), 0.05, 1e-6);
  EXPECT_NEAR(gpu_model(t2)["first_call_s"]["potf2p"]["d"].get<double>(), 0.02, 1e-6);
  EXPECT_EQ(t2["calibration"]["gpu_first_calls"]["first_calls"], 8) << "4 kernels on each of 2 GPUs";

  // A trace from before runs recorded their warm-up (no otherData.gpu_warmup): a real run's was cold (CUDA GPUs
  // were never warmed then), a simulated one's warm (no first call was charged).
  json old = json::parse(read_text(trace));
  old["otherData"].erase("gpu_warmup");
  old["otherData"]["backend"] = "native";
  const std::string old_native = dir.write("old-native.json", old.dump()), old_merged = dir.path() + "/old.json";
  const Outcome on = run_tessera({"calibrate", "--from-traces", old_native, "--base", kH100, "--out", old_merged});
  ASSERT_TRUE(on.exited && on.status == 0) << on;
  EXPECT_EQ(json::parse(read_text(old_merged))["calibration"]["gpu_first_calls"]["cold_traces"], 1);
  old["otherData"]["backend"] = "sim";
  const Outcome os = run_tessera(
      {"calibrate", "--from-traces", dir.write("old-sim.json", old.dump()), "--base", kH100, "--out", old_merged});
  EXPECT_TRUE(os.exited && os.status == 2) << os;

  // A warmed run's trace has no first calls to give, and without spans nothing else.
  const std::string warm_trace = dir.path() + "/warm.json";
  (void)run_ok(with(one_stream, {"--trace", warm_trace}));
  EXPECT_EQ(json::parse(read_text(warm_trace))["otherData"]["gpu_warmup"], "on");
  const Outcome w = run_tessera({"calibrate", "--from-traces", warm_trace, "--base", kH100, "--out", merged});
  EXPECT_TRUE(w.exited && w.status == 2) << w;
  EXPECT_NE(w.err.find("nor a cold run's GPU tasks"), std::string::npos) << w;
  // A cold simulated run needs first calls in its machine file's GPU model; --gpu-warmup needs GPUs.
  const Outcome r = run_tessera(with(plain, {"--gpu-warmup", "off"}));
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("has no first-call cost of cholesky's kernels (d)"), std::string::npos) << r;
  EXPECT_NE(r.err.find("--from-traces"), std::string::npos) << r;
  // Cholesky's first calls do not make a cold QR.
  auto qr = with(one_stream, {"--gpu-warmup", "off"});
  qr[2] = "qr";
  const Outcome q = run_tessera(qr);
  EXPECT_TRUE(q.exited && q.status == 2) << q;
  EXPECT_NE(q.err.find("no first-call cost of qr's kernels (d)"), std::string::npos) << q;
  // An emulated GPU runs the CPU's kernels: its run's trace gives no GPU first calls.
  const std::string emulated = dir.path() + "/emulated.json";
  (void)run_ok(
      {"run", "--algo", "cholesky", "--n", "256", "--B", "64", "--gpus", "1", "--threads", "1", "--trace", emulated});
  EXPECT_EQ(json::parse(read_text(emulated))["otherData"]["gpu_device"], "emulated");
  const Outcome e = run_tessera({"calibrate", "--from-traces", emulated, "--base", kH100, "--out", merged});
  EXPECT_TRUE(e.exited && e.status == 2) << e;
}

// A first call no slower than the later calls of its shape paid no set-up
// (or its set-up hid in noise): its excess is zero, not negative, which
// would pull the median of the GPUs' excesses down (and a negative cost
// would make a simulated cold run faster than a warm one). A cold CUDA
// trace made by hand, two GPU lanes: TRSM's first call 0.1 ms on gpu1 and
// 0.7 ms on gpu2 against 0.5 ms later (excesses 0 and 0.2 ms: median
// 0.1 ms, where -0.4 and 0.2 would give none), GSMM's 0.9 ms on gpu1.
TEST(CalibrateFromTraces, AFirstCallFasterThanTheRestCostsNothing) {
  TempDir dir;
  json ev = json::array();
  for (const int lane : {1, 2})
    ev.push_back({{"ph", "M"},
                  {"pid", 0},
                  {"tid", lane},
                  {"name", "thread_name"},
                  {"args", {{"name", "gpu" + std::to_string(lane)}}}});
  double ts = 0;
  const auto call = [&](const std::string& name, double dur_us, int lane = 1) {
    ev.push_back({{"name", name},
                  {"cat", "task"},
                  {"ph", "X"},
                  {"pid", 0},
                  {"tid", lane},
                  {"ts", ts},
                  {"dur", dur_us},
                  {"args", {{"precision", "d"}, {"m", 512}, {"n", 512}, {"kdim", name == "GSMM" ? 512 : 0}}}});
    ts += dur_us;
  };
  call("TRSM", 100);
  call("GSMM", 900);
  for (int i = 0; i < 3; ++i) call("TRSM", 500), call("GSMM", 500);
  call("TRSM", 700, 2);
  for (int i = 0; i < 3; ++i) call("TRSM", 500, 2);
  const json trace = {{"otherData",
                       {{"format", "tessera-trace"},
                        {"version", 1},
                        {"backend", "native"},
                        {"gpu_warmup", "off"},
                        {"gpu_device", "cuda"}}},
                      {"traceEvents", ev}};
  const std::string merged = dir.path() + "/merged.json";
  const Outcome o = run_tessera(
      {"calibrate", "--from-traces", dir.write("cold.json", trace.dump()), "--base", kH100, "--out", merged});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  json m = json::parse(read_text(merged));
  const json& fc = gpu_model(m)["first_call_s"];
  EXPECT_NEAR(fc["trsm"]["d"].get<double>(), 1e-4, 1e-12) << fc;
  EXPECT_NEAR(fc["gsmm"]["d"].get<double>(), 4e-4, 1e-12) << fc;
  EXPECT_EQ(m["calibration"]["gpu_first_calls"]["first_calls"], 3);
}

TEST(CalibrateFromTraces, RefusesWhatItCannotMerge) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.json", one_stream = dir.path() + "/one.json";
  auto traced = cholesky(kH100, "1024");
  traced.insert(traced.end(), {"--trace", trace});
  (void)run_ok(traced);
  auto plain = cholesky(kH100, "1024");
  plain[plain.size() - 5] = "1";  // --gpu-streams 1: a simulated GPU with one stream measures no span
  plain.insert(plain.end(), {"--trace", one_stream});
  (void)run_ok(plain);
  const std::string out = dir.path() + "/m.json";
  const auto refused = [&](const std::vector<std::string>& args, const std::vector<std::string>& words) {
    std::vector<std::string> a{"calibrate"};
    a.insert(a.end(), args.begin(), args.end());
    const Outcome o = run_tessera(a);
    EXPECT_TRUE(o.exited && o.status == 2) << o;
    for (const std::string& w : words) EXPECT_NE(o.err.find(w), std::string::npos) << w << "\n" << o;
  };
  refused({"--from-traces", trace, "--out", out}, {"--base"});
  refused({"--from-traces", trace, "--base", kH100}, {"--out"});
  refused({"--from-traces", trace, "--base", kH100, "--out", trace}, {trace});
  refused({"--from-traces", trace + "," + trace, "--base", kH100, "--out", out}, {trace, "twice"});
  refused({"--from-traces", trace, "--base", kH100, "--out", out, "--device", "cuda"}, {"--device", "--from-traces"});
  refused({"--from-traces", kH100, "--base", kH100, "--out", out}, {kH100, "not a trace"});
  refused({"--from-traces", one_stream, "--base", kH100, "--out", out}, {one_stream, "gpu_span_us"});
  refused({"--from-traces", trace, "--base", std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json", "--out",
           out},
          {"local.json", "no GPU kernel model"});
  // Two QR traces in which one kernel shape ran at two inner blockings: one model entry cannot hold both.
  auto qr_run = cholesky(kH100, "1024");
  qr_run[2] = "qr";
  const std::string qr_spans = dir.path() + "/qr-spans.json";
  qr_run.insert(qr_run.end(), {"--trace", qr_spans});
  (void)run_ok(qr_run);
  json other = json::parse(read_text(qr_spans));
  for (json& e : other["traceEvents"])
    if (e.contains("args") && e["args"].value("ib", 0) > 0) e["args"]["ib"] = e["args"]["ib"].get<int>() + 16;
  refused({"--from-traces", qr_spans + "," + dir.write("other-ib.json", other.dump()), "--base", kH100, "--out", out},
          {"inner blockings", "trace runs of one --ib"});
  // Merged once: merging again would scale in-run times as isolated ones.
  ASSERT_EQ(run_tessera({"calibrate", "--from-traces", trace, "--base", kH100, "--out", out}).status, 0);
  refused({"--from-traces", trace, "--base", out, "--out", dir.path() + "/again.json"}, {"gpu_in_run"});
  // QR's kernels measured at two inner blockings: a trace's times would replace one blocking's with another's.
  json two = json::parse(read_text(kH100));
  json extra = json::array();
  for (const json& e : gpu_model(two)["measurements"])
    if (e.value("kernel", "") == "ssrfb" && e.value("ib", 0) == 32) {
      json x = e;
      x["ib"] = 128;
      extra.push_back(x);
    }
  ASSERT_FALSE(extra.empty());
  for (const json& x : extra) gpu_model(two)["measurements"].push_back(x);
  const std::string two_ib = dir.write("two-ib.json", two.dump()), qr_trace = dir.path() + "/qr.json";
  auto qr = cholesky(kH100, "1024");
  qr[2] = "qr";
  qr.insert(qr.end(), {"--trace", qr_trace});
  (void)run_ok(qr);
  refused({"--from-traces", qr_trace, "--base", two_ib, "--out", out}, {"SSRFB", "32, 128", "--ib 32"});
  // A CUDA run's trace names its QR panels, a CUDA calibration the panels it timed: they must agree.
  json qt = json::parse(read_text(qr_trace));
  qt["otherData"]["gpu_qr_panel"] = "householder";
  const std::string householder = dir.write("qr-householder.json", qt.dump());
  json cholqr = json::parse(read_text(kH100));
  cholqr["calibration"]["gpu"]["qr_panel"] = "cholqr";
  const std::string cholqr_base = dir.write("cholqr.json", cholqr.dump());
  refused({"--from-traces", householder, "--base", cholqr_base, "--out", out},
          {"householder", "cholqr", "--gpu-qr-panel householder"});
  cholqr["calibration"]["gpu"]["qr_panel"] = "householder";
  const std::string householder_base = dir.write("householder.json", cholqr.dump());
  EXPECT_EQ(run_tessera({"calibrate", "--from-traces", householder, "--base", householder_base, "--out", out}).status,
            0);
  // Cholesky QR panels also say how their Grams were formed (--gpu-cholqr-gram; 0: SYRK): traces of one way only,
  // and the base's calibration timed the same.
  qt["otherData"]["gpu_qr_panel"] = "cholqr";
  qt["otherData"]["gpu_cholqr_gram"] = 512;
  const std::string gram512 = dir.write("qr-gram512.json", qt.dump());
  qt["otherData"].erase("gpu_cholqr_gram");  // a trace from before it was recorded: SYRK
  const std::string syrk = dir.write("qr-syrk.json", qt.dump());
  refused({"--from-traces", syrk + "," + gram512, "--base", cholqr_base, "--out", out},
          {"--gpu-cholqr-gram 0 and 512", gram512, "one --gpu-cholqr-gram"});
  refused({"--from-traces", gram512, "--base", cholqr_base, "--out", out},
          {"--gpu-cholqr-gram 512", "--gpu-cholqr-gram 0", "calibrate the GPU with --gpu-cholqr-gram 512"});
  cholqr["calibration"]["gpu"]["qr_panel"] = "cholqr";
  cholqr["calibration"]["gpu"]["cholqr_gram"] = 512;
  const std::string gram_base = dir.write("gram512.json", cholqr.dump());
  EXPECT_EQ(run_tessera({"calibrate", "--from-traces", gram512, "--base", gram_base, "--out", out}).status, 0);
  EXPECT_EQ(json::parse(read_text(out))["calibration"]["gpu_in_run"]["cholqr_gram"], 512);
}

}  // namespace
