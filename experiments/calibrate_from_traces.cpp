#include "experiments/calibrate_from_traces.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate.hpp"

namespace tessera::kernels {

namespace {

// The calibrated kernel a trace's task name ("POTF2'") is; nullopt for a
// kernel calibration does not time (its model takes another's rate).
std::optional<std::uint16_t> calibrated_kernel_named(const std::string& name) {
  for (const KernelInfo& k : kernel_table())
    if (k.calibrated && k.key != nullptr && name == k.name) return k.id;
  return std::nullopt;
}

}  // namespace

GpuInRunTraces gpu_in_run_shapes(const std::vector<std::string>& traces, int min_calls) {
  if (traces.empty()) throw InputError("--from-traces: give one or more trace files");
  std::set<std::string> named;
  for (const std::string& path : traces)
    if (!named.insert(path).second)
      throw InputError("--from-traces names " + path + " twice: its calls would count twice");
  GpuInRunTraces out;
  if (min_calls < 1) throw InputError(fmt::format("in-run: min_calls {} must be >= 1", min_calls));
  using Key = std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t>;
  std::vector<InRunCall> calls;
  // (kernel, precision) -> each cold first call's excess.
  std::map<std::pair<std::uint16_t, char>, std::vector<double>> excess;
  std::map<Key, std::set<std::int64_t>> ibs;
  for (const std::string& path : traces) {
    require_regular_file("--from-traces", path);
    std::ifstream in(path);
    const nlohmann::json t = nlohmann::json::parse(in, nullptr, false);
    if (t.is_discarded() || !t.is_object() || !t.contains("traceEvents") ||
        t.value("/otherData/format"_json_pointer, std::string()) != "tessera-trace")
      throw InputError("--from-traces " + path + ": not a trace tessera run --trace wrote");
    if (const std::string panel = t.value("/otherData/gpu_qr_panel"_json_pointer, std::string()); !panel.empty()) {
      if (!out.qr_panel.empty() && out.qr_panel != panel)
        throw InputError("--from-traces: the traced QR runs factored panels by " + out.qr_panel + " and " + panel +
                         " (" + path + "): trace runs of one --gpu-qr-panel");
      // Cholesky QR panels: how their Grams were formed (traces written before commit 1bca9c3 do not say, and
      // are read as SYRK's, 0: none of the lent GPUs' traces ran with --gpu-cholqr-gram).
      const int gram = t.value("/otherData/gpu_cholqr_gram"_json_pointer, 0);
      if (panel == "cholqr" && out.qr_panel == "cholqr" && gram != out.cholqr_gram)
        throw InputError(fmt::format(
            "--from-traces: the traced QR runs formed their Cholesky QR Grams with --gpu-cholqr-gram {} and {} ({}): "
            "trace runs of one --gpu-cholqr-gram",
            out.cholqr_gram, gram, path));
      out.qr_panel = panel;
      if (panel == "cholqr") out.cholqr_gram = gram;
    }
    // Cold: its GPUs' first calls paid their set-up inside the run. Not
    // recorded: a native trace from before 2026-11-28 (CUDA GPUs were never
    // warmed), a simulated one from then (no GPU first call was charged).
    // Emulated GPUs run the CPU's kernels: their first calls are no GPU's.
    const std::string warmup = t.value("/otherData/gpu_warmup"_json_pointer, std::string());
    const bool cold =
        t.value("/otherData/gpu_device"_json_pointer, std::string()) != "emulated" &&
        (warmup.empty() ? t.value("/otherData/backend"_json_pointer, std::string()) == "native" : warmup == "off");
    // The GPU lanes (threads named gpu1, gpu2, ...) and whether any task has a device span.
    std::set<int> gpu_lanes;
    bool spans = false;
    for (const nlohmann::json& e : t["traceEvents"]) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" &&
          e.value("/args/name"_json_pointer, std::string()).rfind("gpu", 0) == 0)
        gpu_lanes.insert(e.value("tid", -1));
      spans = spans || (e.contains("args") && e["args"].contains("gpu_span_us"));
    }
    // Per GPU lane, its calls in order; a task's time is its device span, or
    // in a trace without spans (before 2026-11-27; a simulated GPU with one
    // stream) its interval, which only the first calls' excess uses.
    std::map<int, std::vector<InRunCall>> lanes;
    for (const nlohmann::json& e : t["traceEvents"]) {
      if (e.value("ph", "") != "X" || e.value("cat", "") != "task" || !e.contains("args")) continue;
      const nlohmann::json& a = e["args"];
      const int lane = e.value("tid", -1);
      if (spans ? !a.contains("gpu_span_us") : gpu_lanes.count(lane) == 0) continue;  // a core's task
      const std::optional<std::uint16_t> kernel = calibrated_kernel_named(e.value("name", ""));
      if (!kernel) continue;
      const char precision = a.value("precision", std::string("?"))[0];
      if (precision != 'd' && precision != 's') continue;
      const std::int64_t m = a.value("m", std::int64_t{0}), n = a.value("n", std::int64_t{0}),
                         k = a.value("kdim", std::int64_t{0});
      const double seconds = spans ? a["gpu_span_us"].get<double>() * 1e-6 : e.value("dur", 0.0) * 1e-6;
      lanes[lane].push_back({KernelShape{*kernel, precision, m, n, k, 0}, kGpuInRun, seconds});
      if (spans)
        ibs[{*kernel, precision, m, n, k}].insert(
            kernel_ib(*kernel, n, k, a.value("ib", std::int64_t{0})));  // the blocking it ran with
    }
    if (lanes.empty() || (!spans && !cold))
      throw InputError("--from-traces " + path +
                       ": no GPU task of a calibrated kernel with its device span (gpu_span_us), nor a cold run's "
                       "GPU tasks: trace a run with --gpus on CUDA GPUs, or on simulated ones with --gpu-streams 2 or "
                       "more (one stream measures no span)");
    // Each lane's first call of each kernel apart: its one-time set-up.
    std::vector<InRunCall> trace_calls, trace_first;
    for (const auto& [lane, lane_calls] : lanes) {
      std::set<std::pair<std::uint16_t, char>> seen;
      for (const InRunCall& c : lane_calls)
        (seen.insert({c.shape.kernel, c.shape.precision}).second ? trace_first : trace_calls).push_back(c);
    }
    if (spans) calls.insert(calls.end(), trace_calls.begin(), trace_calls.end());
    if (cold) {
      // Against the other calls of its shape in the same trace, timed the same way.
      ++out.cold_traces;
      std::map<Key, std::vector<double>> same;
      for (const InRunCall& c : trace_calls)
        same[{c.shape.kernel, c.shape.precision, c.shape.m, c.shape.n, c.shape.k}].push_back(c.seconds);
      for (const InRunCall& c : trace_first)
        if (const auto it = same.find({c.shape.kernel, c.shape.precision, c.shape.m, c.shape.n, c.shape.k});
            it != same.end()) {
          excess[{c.shape.kernel, c.shape.precision}].push_back(std::max(0.0, c.seconds - median_of(it->second)));
          ++out.first_calls;
        }
    }
  }
  for (const auto& [key, blockings] : ibs)
    if (blockings.size() > 1) {
      const auto& [kernel, precision, m, n, k] = key;
      throw InputError(
          fmt::format("--from-traces: {} ({}) {}x{}x{} ran at inner blockings {}: trace runs of one "
                      "--ib",
                      kernel_name(kernel), precision, m, n, k, fmt::join(blockings, " and ")));
    }
  // Median and interquartile range per shape, as the CPU's in-run calls; each keeps the one blocking it ran with.
  out.shapes = summarize_in_run(calls, min_calls);
  for (InRunShape& s : out.shapes)
    s.shape.ib = *ibs.at({s.shape.kernel, s.shape.precision, s.shape.m, s.shape.n, s.shape.k}).begin();
  for (auto& [kp, v] : excess) out.first_call_s[kp] = median_of(v);
  if (out.shapes.empty() && out.first_call_s.empty())
    throw InputError(
        fmt::format("--from-traces: no GPU kernel shape with a device span was called {} time(s) or more after "
                    "each kernel's first call, and no cold run's first call had another call of its shape",
                    min_calls));
  return out;
}

}  // namespace tessera::kernels
