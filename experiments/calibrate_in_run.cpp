#include "experiments/calibrate_in_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate.hpp"
#include "experiments/driver.hpp"
#include "platform/native/native_platform.hpp"

namespace tessera::kernels {

namespace {

using ordered = nlohmann::ordered_json;
using ShapeKey = std::tuple<int, std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t>;

bool wanted(const InRunOptions& o, std::uint16_t kernel) { return calibration_wants(o.kernels, kernel); }

// Each worker's calls of one run, with their start times; one cache line
// per worker, so that workers never share one.
class CallRecorder final : public RuntimeObserver {
 public:
  struct Call {
    KernelShape shape;
    double start, seconds;
  };
  void on_run_start(int threads, const Executor& executor, double) override {
    executor_ = &executor;
    workers_ = std::vector<Worker>(static_cast<std::size_t>(threads));
  }
  void on_task_start(int worker, const TaskDesc&, double now) override { workers_[worker].started = now; }
  void on_task_end(int worker, const TaskDesc& t, double now) override {
    Worker& w = workers_[worker];
    w.calls.push_back({executor_->shape(t), w.started, now - w.started});
  }
  // Per compute thread, the seconds from each task's end to its next task's start.
  std::vector<double> gaps() const {
    std::vector<double> out;
    for (const Worker& w : workers_)
      for (std::size_t i = 1; i < w.calls.size(); ++i)
        out.push_back(w.calls[i].start - (w.calls[i - 1].start + w.calls[i - 1].seconds));
    return out;
  }
  // Every call, but each kernel's first in the run (it pays the one-time
  // library set-up, which the model's first_call_s holds).
  std::vector<Call> calls_after_first() const {
    std::vector<Call> all;
    for (const Worker& w : workers_) all.insert(all.end(), w.calls.begin(), w.calls.end());
    std::sort(all.begin(), all.end(), [](const Call& a, const Call& b) { return a.start < b.start; });
    std::set<std::pair<std::uint16_t, char>> seen;
    std::vector<Call> out;
    for (const Call& c : all)
      if (!seen.insert({c.shape.kernel, c.shape.precision}).second) out.push_back(c);
    return out;
  }

 private:
  struct alignas(64) Worker {
    std::vector<Call> calls;
    double started = 0;
  };
  const Executor* executor_ = nullptr;
  std::vector<Worker> workers_;
};

// The model a run of `threads` threads uses, by name: node.cores.model_by_threads,
// or node.cores.model for one thread when the file has no per-thread models;
// threads 0: the node's GPUs' model (node.gpus.model).
std::string model_for(const ordered& f, int threads, const std::string& path) {
  if (threads == kGpuInRun) {
    const ordered& node = f.at("node");
    if (node.contains("gpus") && node["gpus"].is_object() && node["gpus"].contains("model"))
      return node["gpus"]["model"].get<std::string>();
    throw InputError(path +
                     ": no GPU kernel model (node.gpus.model): in-run GPU times merge into a GPU's calibrated model "
                     "(tessera calibrate --device cuda --base CORES.json writes one)");
  }
  const ordered& cores = f.at("node").at("cores");
  if (cores.contains("model_by_threads")) {
    const auto it = cores["model_by_threads"].find(std::to_string(threads));
    if (it != cores["model_by_threads"].end()) return it->get<std::string>();
  } else if (threads == 1 && cores.contains("model")) {
    return cores["model"].get<std::string>();
  }
  throw InputError(
      fmt::format("{}: no kernel model for runs of {} thread(s) (node.cores.model_by_threads); calibrate "
                  "with --threads {} or more first",
                  path, threads, threads));
}

// The calibrated model runs of `threads` threads use, in f.
ordered& target_model(ordered& f, int threads, const std::string& path) {
  const std::string name = model_for(f, threads, path);
  if (!f.contains("kernel_models") || !f["kernel_models"].contains(name))
    throw InputError(fmt::format("{}: node.{} names kernel model '{}', which kernel_models lacks", path,
                                 threads == kGpuInRun ? "gpus" : "cores", name));
  ordered& model = f["kernel_models"][name];
  if (model.value("type", "") != "calibrated" || !model.contains("measurements") || !model["measurements"].is_array())
    throw InputError(
        fmt::format("{}: kernel model '{}' is not a calibrated one (written by tessera calibrate): "
                    "in-run times are merged into a calibrated model",
                    path, name));
  return model;
}

ordered parse_machine(const std::string& text, const std::string& path) {
  try {
    return ordered::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not JSON (" + e.what() + ")");
  }
}

// Where a file records the in-run times merged into it: the cores' or the GPUs'.
const char* record_key(bool gpu) { return gpu ? "gpu_in_run" : "in_run"; }

// check_in_run_target on a parsed file.
void check_target(ordered& f, const std::string& path, const std::vector<int>& threads) {
  for (const bool gpu : {false, true}) {
    if (std::count(threads.begin(), threads.end(), kGpuInRun) == 0 && gpu) continue;
    if (std::count_if(threads.begin(), threads.end(), [](int t) { return t != kGpuInRun; }) == 0 && !gpu) continue;
    if (f.contains("calibration") && f["calibration"].is_object() && f["calibration"].contains(record_key(gpu)))
      throw InputError(
          fmt::format("{} holds in-run times already (calibration.{}): merging more would scale them as "
                      "isolated ones; give the isolated calibration it was made from",
                      path, record_key(gpu)));
  }
  for (const int t : threads) (void)target_model(f, t, path);
}

// In-run shapes carry no inner blocking into the merge's keys, so a GPU's
// times merge only where the model measured each QR kernel at one blocking,
// the one the runs used (a call clamped by its tile matches any): else the
// times of one blocking would replace another's.
void check_inner_blocking(const ordered& model, const std::vector<const InRunShape*>& measured,
                          const std::string& path) {
  constexpr auto any = std::numeric_limits<std::int64_t>::max();
  std::map<std::pair<std::string, std::string>, std::set<std::int64_t>> levels;
  for (const ordered& e : model["measurements"]) {
    const std::optional<std::uint16_t> k = kernel_from_key(e.at("kernel").get<std::string>());
    const std::int64_t ib = e.value("ib", std::int64_t{0});
    if (k && ib > 0 && ib < kernel_ib(*k, e.value("n", 0), e.value("k", 0), any))
      levels[{e["kernel"].get<std::string>(), e["precision"].get<std::string>()}].insert(ib);
  }
  // x's ib is the blocking it ran with (its tile's limit where that is less
  // than the run's); the model's entry of x's shape at level L ran with
  // kernel_ib(L) for that shape. Every level's must be x's.
  for (const InRunShape* x : measured) {
    const KernelShape& sh = x->shape;
    const auto it = levels.find({kernel_key(sh.kernel), std::string(1, sh.precision)});
    if (it == levels.end()) continue;
    if (std::any_of(it->second.begin(), it->second.end(),
                    [&](std::int64_t l) { return kernel_ib(sh.kernel, sh.n, sh.k, l) != sh.ib; }))
      throw InputError(fmt::format(
          "{} measured {} ({}) at inner blocking(s) {}, and the runs called it at ib {}: in-run times merge into a "
          "model of the blocking the runs used (calibrate the GPU with --ib {} alone)",
          path, kernel_name(x->shape.kernel), x->shape.precision, fmt::join(it->second, ", "), x->shape.ib,
          x->shape.ib));
  }
}

}  // namespace

void check_in_run_target(const std::string& text, const std::string& path, const std::vector<int>& threads) {
  ordered f = parse_machine(text, path);
  check_target(f, path, threads);
}

std::vector<std::string> in_run_algos(const InRunOptions& o) {
  std::vector<std::string> out;
  for (const std::string& a : o.algos)
    for (const std::uint16_t k : calibrated_kernels(a))
      if (wanted(o, k)) {
        out.push_back(a);
        break;
      }
  return out;
}

std::vector<InRunShape> summarize_in_run(const std::vector<InRunCall>& calls, int min_calls) {
  std::map<ShapeKey, std::vector<double>> by_shape;
  for (const InRunCall& c : calls)
    by_shape[{c.threads, c.shape.kernel, c.shape.precision, c.shape.m, c.shape.n, c.shape.k}].push_back(c.seconds);
  std::vector<InRunShape> out;
  for (auto& [key, v] : by_shape) {
    if (static_cast<int>(v.size()) < min_calls) continue;
    std::sort(v.begin(), v.end());
    InRunShape s;
    s.threads = std::get<0>(key);
    s.shape = KernelShape{std::get<1>(key), std::get<2>(key), std::get<3>(key), std::get<4>(key), std::get<5>(key), 0};
    s.median_s = quantile(v, 0.5);
    s.spread_s = quantile(v, 0.75) - quantile(v, 0.25);
    s.calls = static_cast<int>(v.size());
    out.push_back(s);
  }
  return out;
}

void InRunPasses::add(const std::vector<InRunCall>& calls, const std::vector<InRunRun>& runs,
                      std::map<int, std::vector<double>> gaps) {
  if (passes_ == 0) {
    runs_ = runs;
  } else {
    const auto same = [](const InRunRun& a, const InRunRun& b) {
      return a.algo == b.algo && a.precision == b.precision && a.n == b.n && a.s == b.s && a.threads == b.threads;
    };
    if (runs.size() != runs_.size() || !std::equal(runs.begin(), runs.end(), runs_.begin(), same))
      throw InputError(fmt::format("in-run: pass {} ran {} configurations, not the first pass's {}", passes_ + 1,
                                   runs.size(), runs_.size()));
    for (std::size_t i = 0; i < runs.size(); ++i) runs_[i].time_s = std::min(runs_[i].time_s, runs[i].time_s);
  }
  ++passes_;
  for (const InRunShape& x : summarize_in_run(calls, min_calls_)) {
    const ShapeKey key{x.threads, x.shape.kernel, x.shape.precision, x.shape.m, x.shape.n, x.shape.k};
    const auto it = best_.find(key);
    if (it == best_.end() || x.median_s < it->second.median_s) best_[key] = x;
  }
  for (auto& [t, g] : gaps) {
    if (g.empty()) continue;
    std::sort(g.begin(), g.end());
    const double median = std::max(0.0, quantile(g, 0.5));
    const auto it = task_s_.find(t);
    if (it == task_s_.end() || median < it->second) task_s_[t] = median;
  }
}

InRunMeasurement InRunPasses::result() const {
  InRunMeasurement out;
  for (const auto& [key, x] : best_) out.shapes.push_back(x);
  out.runs = runs_;
  out.task_s = task_s_;
  return out;
}

InRunMeasurement measure_in_run(const InRunOptions& o) {
  if (o.passes < 1) throw InputError(fmt::format("--passes {} must be >= 1", o.passes));
  if (o.min_calls < 1) throw InputError(fmt::format("in-run: min_calls {} must be >= 1", o.min_calls));
  for (const auto n : o.n)
    if (n < 1) throw InputError(fmt::format("--in-run-n {} must be >= 1", n));
  const std::vector<std::string> algos = in_run_algos(o);
  const std::size_t total = static_cast<std::size_t>(o.passes) * o.threads.size() * algos.size() * o.precisions.size() *
                            o.n.size() * o.s.size();
  std::size_t done = 0;
  InRunPasses passes(o.min_calls);
  for (int pass = 0; pass < o.passes; ++pass) {
    std::vector<InRunCall> calls;
    std::vector<InRunRun> runs;
    std::map<int, std::vector<double>> gaps;  // per thread count
    for (const int t : o.threads)
      for (const std::string& algo : algos)
        for (const char p : o.precisions)
          for (const std::int64_t n : o.n)
            for (const int s : o.s) {
              CallRecorder rec;
              RunConfig c;
              c.algo = algo;
              c.n = n;
              c.s = s;
              c.precision = p;
              c.threads = t;
              c.ib = o.ib;
              c.observer = &rec;
              platform::NativePlatform native;
              const RunResult r = run_factorization(c, native);
              runs.push_back({algo, p, n, s, t, r.time_s});
              for (const auto& call : rec.calls_after_first())
                if (wanted(o, call.shape.kernel)) calls.push_back({call.shape, t, call.seconds});
              const std::vector<double> g = rec.gaps();
              gaps[t].insert(gaps[t].end(), g.begin(), g.end());
              ++done;
              if (o.progress)
                o.progress(fmt::format("[{}/{}] in-run x{} {} {} N={} s={}: {:.3f} s", done, total, t, algo, p, n, s,
                                       r.time_s));
            }
    passes.add(calls, runs, std::move(gaps));
  }
  InRunMeasurement out = passes.result();
  for (const int t : o.threads)
    if (std::none_of(out.shapes.begin(), out.shapes.end(), [t](const InRunShape& x) { return x.threads == t; }))
      throw InputError(fmt::format(
          "--in-run: no kernel shape was called {} times or more in the runs of {} thread(s); larger orders "
          "(--in-run-n) run more tasks of each shape",
          o.min_calls, t));
  return out;
}

std::string merge_in_run(const std::string& text, const std::string& path, const std::vector<InRunShape>& shapes,
                         const std::string& record, const std::map<int, double>& task_s) {
  std::vector<int> threads;
  for (const InRunShape& x : shapes)
    if (std::find(threads.begin(), threads.end(), x.threads) == threads.end()) threads.push_back(x.threads);
  ordered f = parse_machine(text, path);
  check_target(f, path, threads);
  std::map<int, std::vector<const InRunShape*>> by_threads;
  for (const InRunShape& s : shapes) by_threads[s.threads].push_back(&s);
  for (const auto& [threads, measured] : by_threads) {
    ordered& model = target_model(f, threads, path);
    using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;
    const auto key_of = [](const ordered& e) {
      return Key{e.at("kernel").get<std::string>(), e.at("precision").get<std::string>(), e.value("m", 0),
                 e.value("n", 0), e.value("k", 0)};
    };
    if (threads == kGpuInRun) check_inner_blocking(model, measured, path);
    std::map<Key, const InRunShape*> runs;
    for (const InRunShape* s : measured)
      runs[{std::string(kernel_key(s->shape.kernel)), std::string(1, s->shape.precision), s->shape.m, s->shape.n,
            s->shape.k}] = s;
    // Per kernel and precision: in-run / isolated at each shape both have
    // (each shape once: of duplicates the model uses the first), with the
    // shape's log dimensions. A shape the runs lacked takes the ratio of the
    // nearest of them in (log m, log n, log k), the space in which the
    // model's Shape interpolation finds neighbours (one neighbour here: with
    // the 4 nearest weighted by 1/d^2 the held-out sweep moved by 0.1 points
    // at most): the ratio is not one per kernel (on the
    // 2-core VM, two-thread SSRFB d ran 0.971x its isolated time at
    // 256 x 256 x 320 and 1.06x at the median of its run shapes; with that
    // median, tall QR at B = 256 was predicted 9-12% slow).
    struct Ratio {
      double log_m, log_n, log_k, ratio;
    };
    const auto log_dim = [](std::int64_t x) { return std::log(static_cast<double>(std::max<std::int64_t>(x, 1))); };
    std::map<std::pair<std::string, std::string>, std::vector<Ratio>> ratios;
    std::set<Key> counted;
    for (const ordered& e : model["measurements"])
      if (const auto it = runs.find(key_of(e));
          it != runs.end() && e.value("median_s", 0.0) > 0 && counted.insert(it->first).second)
        ratios[{std::get<0>(it->first), std::get<1>(it->first)}].push_back(
            {log_dim(std::get<2>(it->first)), log_dim(std::get<3>(it->first)), log_dim(std::get<4>(it->first)),
             it->second->median_s / e["median_s"].get<double>()});
    const auto nearest_ratio = [&](const Key& k) -> std::optional<double> {
      const auto it = ratios.find({std::get<0>(k), std::get<1>(k)});
      if (it == ratios.end()) return std::nullopt;
      const double m = log_dim(std::get<2>(k)), n = log_dim(std::get<3>(k)), kk = log_dim(std::get<4>(k));
      const auto dist = [&](const Ratio& r) {
        return (r.log_m - m) * (r.log_m - m) + (r.log_n - n) * (r.log_n - n) + (r.log_k - kk) * (r.log_k - kk);
      };
      // The first of equally near ones: the file's order, so the result does not depend on sorting.
      const Ratio* best = nullptr;
      double best_d = 0;
      for (const Ratio& r : it->second)
        if (const double d = dist(r); best == nullptr || d < best_d) best = &r, best_d = d;
      return best->ratio;
    };
    const auto from_run = [](ordered& e, const InRunShape& s) {
      e["median_s"] = five_digits(s.median_s);
      e["spread_s"] = five_digits(s.spread_s);
      e.erase("min_s");
      e.erase("reps");
      e["in_run_calls"] = s.calls;
    };
    ordered merged = ordered::array();
    std::set<Key> placed;
    for (ordered e : model["measurements"]) {
      const Key k = key_of(e);
      if (const auto it = runs.find(k); it != runs.end()) {
        if (!placed.insert(k).second) continue;  // a duplicate of a shape already placed
        from_run(e, *it->second);
      } else if (const std::optional<double> sc = nearest_ratio(k)) {
        e["median_s"] = five_digits(e["median_s"].get<double>() * *sc);
        if (e.contains("spread_s")) e["spread_s"] = five_digits(e["spread_s"].get<double>() * *sc);
        if (e.contains("min_s")) e["min_s"] = five_digits(e["min_s"].get<double>() * *sc);
        e["in_run_scale"] = std::stod(fmt::format("{:.4g}", *sc));
      }
      merged.push_back(std::move(e));
    }
    for (const auto& [k, s] : runs) {
      if (placed.count(k)) continue;
      ordered e;
      e["kernel"] = std::get<0>(k);
      e["precision"] = std::get<1>(k);
      e["m"] = s->shape.m;
      e["n"] = s->shape.n;
      if (s->shape.k > 0) e["k"] = s->shape.k;
      from_run(e, *s);
      merged.push_back(std::move(e));
    }
    model["measurements"] = std::move(merged);
    model["source"] =
        model.value("source", std::string()) +
        fmt::format(
            "; then in-run (calibration.{}): shapes a real factorization ran take its median "
            "(in_run_calls), the kernel's other shapes the in-run / isolated ratio of the nearest run shape "
            "in (log m, log n, log k) (in_run_scale)",
            record_key(threads == kGpuInRun));
  }
  for (const auto& [threads, seconds] : task_s)
    target_model(f, threads, path)["task_s"] = {
        {"value", std::stod(fmt::format("{:.3g}", seconds))},
        {"source", fmt::format("calibration.in_run: the median gap between one task's end and the next one's start "
                               "on a compute thread of the {}-thread runs, the pass with the smallest",
                               threads)}};
  if (!f.contains("calibration") || !f["calibration"].is_object()) f["calibration"] = ordered::object();
  f["calibration"][record_key(threads == std::vector<int>{kGpuInRun})] = ordered::parse(record);
  return machine_file_text(f.dump());
}

std::string set_first_calls(const std::string& text, const std::string& path, int threads,
                            const std::map<std::pair<std::uint16_t, char>, double>& first_call,
                            const std::string& source, const std::string& record) {
  ordered f = parse_machine(text, path);
  if (!first_call.empty()) {
    ordered fc;
    fc["source"] = source;
    for (const auto& [kp, x] : first_call)
      fc[kernel_key(kp.first)][std::string(1, kp.second)] = std::stod(fmt::format("{:.4g}", x));
    target_model(f, threads, path)["first_call_s"] = std::move(fc);
  }
  if (!record.empty()) {
    if (!f.contains("calibration") || !f["calibration"].is_object()) f["calibration"] = ordered::object();
    // Not the in-run record's key: first calls alone leave the file open to a merge of in-run times.
    f["calibration"][threads == kGpuInRun ? "gpu_first_calls" : "first_calls"] = ordered::parse(record);
  }
  return machine_file_text(f.dump());
}

}  // namespace tessera::kernels
