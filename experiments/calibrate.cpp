#include "experiments/calibrate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "algorithms/factorization.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/kernel_call.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "platform/native/native_platform.hpp"
#include "platform/native/start_thread.hpp"

namespace tessera::kernels {
namespace {

using calibration::KernelCall;

bool wanted(const CalibrationOptions& o, std::uint16_t k) { return calibration_wants(o.kernels, k); }
bool has_k(std::uint16_t k) { return kernel_info(k) && kernel_info(k)->has_k; }
bool takes_ib(std::uint16_t k) { return kernel_info(k) && kernel_info(k)->ib != KernelIb::kNone; }

class Recorder final : public TaskSink {
 public:
  void insert(const TaskDesc& t) override { tasks.push_back(t); }
  std::vector<TaskDesc> tasks;
};

auto key(const KernelShape& s) { return std::make_tuple(s.kernel, s.precision, s.m, s.n, s.k, s.ib); }

template <class T>
KernelMeasurement measure(const KernelShape& s, int concurrency, const CalibrationOptions& o) {
  using clock = std::chrono::steady_clock;
  const std::int64_t ib = takes_ib(s.kernel) ? (s.ib > 0 ? s.ib : kernel_ib(s.kernel, s.n, s.k, o.ib)) : 0;
  // Enough copies that consecutive calls do not share operands in L2 (or,
  // cold, in any cache).
  const double bytes = std::max(KernelCall<T>::set_bytes(s, ib), 1.0);
  const int sets = o.cold
                       ? static_cast<int>(std::clamp(std::floor(static_cast<double>(o.cold_bytes) / bytes), 2.0, 256.0))
                       : static_cast<int>(std::clamp(std::floor(double(32u << 20) / bytes), 2.0, 8.0));
  // A call on copy c: restored before it (warm) or right after its previous call (cold).
  const auto timed_call = [&o](KernelCall<T>& call, int c) {
    if (!o.cold) call.prepare(c);
    if (o.flush_restored) call.flush_restored(c);
    const auto t0 = clock::now();
    call.run(c);
    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
    if (o.cold) call.prepare(c);
    return dt;
  };

  // The other threads: same kernel, own operands, no pause, until `stop`.
  // Started through start_thread (a thread that cannot start is exit 4 naming
  // it), into room reserved first; one that cannot start stops and joins
  // those that did before its error goes on (a joinable std::thread destroyed
  // with the vector ended the process). The first error of theirs is kept.
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> others;
  std::mutex error_mutex;
  std::exception_ptr other_error;
  const auto stop_others = [&] {
    stop = true;
    for (auto& t : others) t.join();
  };
  others.reserve(static_cast<std::size_t>(std::max(concurrency - 1, 0)));
  try {
    for (int c = 1; c < concurrency; ++c)
      others.push_back(platform::start_thread("kernel timer " + std::to_string(c), "", [&, c] {
        try {
          KernelCall<T> call(s, ib, sets, 1000 + c);
          call.run(0);
          call.prepare(0);
          ready.fetch_add(1);
          for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) timed_call(call, i % call.sets());
        } catch (...) {
          {
            const std::lock_guard<std::mutex> lock(error_mutex);
            if (!other_error) other_error = std::current_exception();
          }
          ready.fetch_add(1);
        }
      }));
  } catch (...) {
    stop_others();
    throw;
  }
  KernelMeasurement r;
  try {
    KernelCall<T> call(s, ib, sets, 1);
    while (ready.load() < concurrency - 1) std::this_thread::yield();
    // Warm-up: every copy once (page faults, OpenBLAS buffers), untimed.
    for (int c = 0; c < std::max(2, call.sets()); ++c) {
      call.prepare(c % call.sets());
      call.run(c % call.sets());
      if (o.cold) call.prepare(c % call.sets());
    }
    r = sample_calls(s, concurrency, o, [&](int i) { return timed_call(call, i % call.sets()); });
  } catch (...) {
    stop_others();
    throw;
  }
  stop_others();
  if (other_error) std::rethrow_exception(other_error);
  r.shape.ib = ib;
  r.blas_threads = blas_threads();
  return r;
}

}  // namespace

bool calibration_wants(const std::vector<std::uint16_t>& kernels, std::uint16_t k) {
  return kernels.empty() ? kernel_info(k) && kernel_info(k)->calibrated : std::ranges::count(kernels, k) > 0;
}

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return std::max(0.0, quantile(v, 0.5));
}

double five_digits(double x) { return std::stod(fmt::format("{:.5g}", x)); }

void keep_fastest_pass(std::vector<KernelMeasurement>& kept, std::size_t i, int pass, const KernelMeasurement& m) {
  if (pass == 0) kept.push_back(m);
  else if (m.median_s < kept.at(i).median_s) kept[i] = m;
}

KernelMeasurement sample_calls(const KernelShape& shape, int concurrency, const CalibrationOptions& o,
                               const std::function<double(int)>& timed) {
  std::vector<double> samples;
  double total = 0;
  for (int i = 0;; ++i) {
    const int n = static_cast<int>(samples.size());
    if (n >= o.max_reps || (n >= o.min_reps && (total >= o.min_time_s || total >= o.max_time_s))) break;
    samples.push_back(timed(i));
    total += samples.back();
  }
  std::sort(samples.begin(), samples.end());
  KernelMeasurement r;
  r.shape = shape;
  r.concurrency = concurrency;
  r.reps = static_cast<int>(samples.size());
  r.median_s = quantile(samples, 0.5);
  r.spread_s = quantile(samples, 0.75) - quantile(samples, 0.25);
  r.min_s = samples.front();
  return r;
}

std::string measurement_json(const KernelMeasurement& m) {
  nlohmann::ordered_json e;
  e["kernel"] = kernel_key(m.shape.kernel);
  e["precision"] = std::string(1, m.shape.precision);
  e["m"] = m.shape.m;
  e["n"] = m.shape.n;
  if (m.shape.k > 0) e["k"] = m.shape.k;
  if (m.shape.ib > 0) e["ib"] = m.shape.ib;
  // Five significant digits: more than the measurements' own precision.
  e["median_s"] = five_digits(m.median_s);
  e["spread_s"] = five_digits(m.spread_s);
  e["min_s"] = five_digits(m.min_s);
  e["reps"] = m.reps;
  return e.dump();
}

std::vector<KernelShape> calibration_shapes(const CalibrationOptions& o) {
  std::set<std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t, std::int64_t>> seen;
  std::vector<KernelShape> out;
  std::vector<std::int64_t> ibs{o.ib};
  ibs.insert(ibs.end(), o.more_ib.begin(), o.more_ib.end());
  const auto add = [&](KernelShape s, std::int64_t ib) {
    if (!wanted(o, s.kernel) || s.m < 1 || s.n < 1) return;
    if (!has_k(s.kernel)) s.k = 0;
    s.ib = kernel_ib(s.kernel, s.n, s.k, ib);
    if (seen.insert(key(s)).second) out.push_back(s);
  };
  const int max_threads = o.concurrency.empty() ? 1 : *std::max_element(o.concurrency.begin(), o.concurrency.end());
  for (const char p : o.precisions) {
    for (const std::int64_t B : o.sizes)
      for (const std::uint16_t k : calibrated_kernels())
        for (const std::int64_t ib : ibs) add(KernelShape{k, p, B, B, B, 0}, ib);
    for (const std::int64_t N : o.for_n)
      for (int t = 1; t <= max_threads; ++t)
        for (const int s : o.for_s) {
          // The runtime's default tiles (B from default_tiles, b from default_narrow_width), or o.for_b's.
          std::vector<std::int64_t> Bs = o.for_b;
          if (Bs.empty()) Bs.push_back(default_tiles(N, N, t, p == 's').B);
          for (const std::int64_t B0 : Bs) {
            const std::int64_t B = std::max<std::int64_t>(B0, s);
            std::vector<std::int64_t> narrow = o.for_narrow;
            if (s == 1 || narrow.empty()) narrow = {default_narrow_width(B, s, false)};
            for (const std::int64_t b : narrow) {
              if (s > 1 && (s - 1) * b >= B)  // a tile asked for that cannot exist: said, not skipped
                throw InputError("--for-narrow " + std::to_string(b) + " with --for-s " + std::to_string(s) +
                                 " fits no tile of B = " + std::to_string(B) +
                                 ": s - 1 narrow columns of that width "
                                 "leave no remainder (give --for-b with B > " +
                                 std::to_string((s - 1) * b) + ")");
              const TileLayout L(N, N, B, s, b);
              // Every registered factorization's task shapes on those tiles.
              for (const std::string_view name : factorization_names()) {
                const Factorization& F = factorization(name);
                Recorder rec;
                F.tasks(L, rec);
                for (const TaskDesc& d : rec.tasks)
                  for (const std::int64_t ib : ibs) add(F.shape(L, d, p, ib), ib);
              }
            }
          }
        }
  }
  std::sort(out.begin(), out.end(), [](const KernelShape& a, const KernelShape& b) { return key(a) < key(b); });
  return out;
}

std::uint16_t calibration_kernel_from_key(const std::string& key) {
  if (const auto id = kernel_from_key(key); id && kernel_info(*id)->calibrated) return *id;
  throw InputError("--kernels '" + key + "' is not one of: " + kernel_keys_text(KernelKeys::kCalibrated));
}

namespace {

// One BLAS thread per call while it lives (a run's workers each call a
// single-threaded kernel), the library's setting before it afterwards.
// Without it, `concurrency` threads each calling a BLAS that spreads every
// call over the node's cores ran twice the threads the cores have, and a
// call that found the others' threads idle measured up to twice as fast:
// spikes of 2x in the tuner's speed curve on the 2-core VM (2026-11-26).
class OneBlasThread {
 public:
  OneBlasThread() : saved_(blas_threads()) { set_blas_threads(1); }
  ~OneBlasThread() { set_blas_threads(saved_); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int saved_;
};

}  // namespace

KernelMeasurement measure_kernel(const KernelShape& shape, int concurrency, const CalibrationOptions& o) {
  const OneBlasThread one;
  return shape.precision == 's' ? measure<float>(shape, concurrency, o) : measure<double>(shape, concurrency, o);
}

namespace {

// Runs `body` in a fresh child process; the numbers it computed (empty on failure).
std::vector<double> in_child(const std::function<std::vector<double>()>& body) {
  int fd[2];
  if (pipe(fd) != 0) return {};
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // ends with the calibration, however it ends
    if (getppid() != parent) _exit(1);
    close(fd[0]);
    std::vector<double> x;
    try {
      x = body();
    } catch (...) {
      x.clear();
    }
    const auto bytes = static_cast<ssize_t>(x.size() * sizeof(double));
    const ssize_t w = bytes ? write(fd[1], x.data(), static_cast<std::size_t>(bytes)) : 0;
    _exit(w == bytes ? 0 : 1);
  }
  close(fd[1]);
  std::vector<double> x;
  double v;
  while (read(fd[0], &v, sizeof v) == sizeof v) x.push_back(v);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return x;
}

// In a fresh process: each kernel of `seq` once at the default tile, in the
// order a factorization first calls them, and the extra time of that first
// call over a warm one. The library's one-time initialization lands on the
// first kernel, as it does in a real run.
template <class T>
std::vector<double> first_call_extras(const std::vector<KernelShape>& seq, std::int64_t ib_default) {
  using clock = std::chrono::steady_clock;
  std::vector<std::unique_ptr<KernelCall<T>>> calls;
  const auto timed = [&](KernelCall<T>& c, int set) {
    c.prepare(set);
    const auto t0 = clock::now();
    c.run(set);
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  // Operands are made just before each first call: making LARFB's and
  // SSRFB's runs GEQRT and TSQRT, which must not warm those before their turn.
  std::vector<double> first;
  for (const KernelShape& s : seq) {
    calls.push_back(std::make_unique<KernelCall<T>>(s, kernel_ib(s.kernel, s.n, s.k, ib_default), 2, 7));
    first.push_back(timed(*calls.back(), 0));
  }
  std::vector<double> extra;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<double> warm;
    for (int r = 0; r < 3; ++r) warm.push_back(timed(*calls[i], 1 - r % 2));
    std::sort(warm.begin(), warm.end());
    extra.push_back(first[i] - warm[1]);
  }
  return extra;
}

class NopExecutor final : public Executor {
 public:
  void execute(const TaskDesc&, WorkerContext&) override {}
};

}  // namespace

StartupCosts measure_startup(const CalibrationOptions& o, int samples) {
  StartupCosts c;
  // A process runs one factorization: its kernels in the order of its first tasks (the table's).
  for (const char p : o.precisions)
    for (const std::string_view family : kernel_families()) {
      const std::int64_t B = default_tiles(4096, 4096, 1, p == 's').B;  // the default tile of mid-size runs
      std::vector<KernelShape> seq;
      for (const std::uint16_t k : calibrated_kernels(family))
        if (wanted(o, k)) seq.push_back(KernelShape{k, p, B, B, B, 0});
      if (seq.empty()) continue;
      std::vector<std::vector<double>> runs;
      for (int r = 0; r < samples; ++r) {
        auto x = in_child([&] {
          set_blas_threads(1);
          // As a run does (Platform::settle): the BLAS library's pool threads stop spinning first.
          platform::settle_process(platform::NativePlatform::kSettleMax_s);
          return p == 's' ? first_call_extras<float>(seq, o.ib) : first_call_extras<double>(seq, o.ib);
        });
        if (x.size() == seq.size()) runs.push_back(std::move(x));
      }
      for (std::size_t i = 0; i < seq.size(); ++i) {
        std::vector<double> v;
        for (const auto& r : runs) v.push_back(r[i]);
        c.first_call_s[{seq[i].kernel, p}] = median_of(v);
      }
    }
  for (const int threads : o.concurrency) {
    std::vector<double> x;
    for (int r = 0; r < samples; ++r) {
      const auto v = in_child([&] {
        platform::NativePlatform native;
        native.settle();  // as a run does
        RuntimeOptions ro;
        ro.threads = threads;
        NodeRuntime rt(native, ro);
        NopExecutor ex;
        return std::vector<double>{rt.run(
                                         1,
                                         [](TaskSink& sink) {
                                           TaskDesc d;
                                           d.kernel = kNop;
                                           sink.insert(d.add(0, AccessMode::ReadWrite));
                                         },
                                         ex)
                                       .elapsed_s};
      });
      if (!v.empty()) x.push_back(v[0]);
    }
    c.start_s[threads] = median_of(x);
  }
  return c;
}

Calibration calibrate(const CalibrationOptions& o) {
  Calibration result;
  // First, while this process has called no BLAS routine.
  if (o.startup) result.startup = measure_startup(o);
  const OneBlasThread one;
  platform::settle_process(
      platform::NativePlatform::kSettleMax_s);  // the measuring threads get the cores to themselves
  const auto shapes = calibration_shapes(o);
  std::vector<KernelMeasurement>& out = result.kernels;
  std::size_t done = 0;
  const int passes = std::max(1, o.passes);
  const std::size_t total = shapes.size() * o.concurrency.size() * static_cast<std::size_t>(passes);
  // Pass after pass over every shape and concurrency level; each keeps its
  // fastest pass (keep_fastest_pass).
  for (int pass = 0; pass < passes; ++pass) {
    std::size_t i = 0;
    for (const int c : o.concurrency)
      for (const KernelShape& s : shapes) {
        const KernelMeasurement m = measure_kernel(s, c, o);
        keep_fastest_pass(out, i, pass, m);
        ++i;
        ++done;
        if (o.progress)
          o.progress(fmt::format("[{}/{}] x{} {:<9} {} m={} n={} k={}: median {:.1f} us, IQR {:.1f} us, {} calls", done,
                                 total, c, kernel_name(s.kernel), s.precision, s.m, s.n, s.k, m.median_s * 1e6,
                                 m.spread_s * 1e6, m.reps));
      }
  }
  return result;
}

namespace {
// "POTF2', TRSM, ...; GEQRT, ...": each family's calibrated kernels in the order measure_startup calls them.
std::string first_call_order() {
  std::string out;
  for (const std::string_view family : kernel_families())
    for (const std::uint16_t k : calibrated_kernels(family))
      out += (out.empty() ? "" : k == calibrated_kernels(family).front() ? "; " : ", ") + std::string(kernel_name(k));
  return out;
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}
}  // namespace

std::string calibration_machine_file(const Calibration& cal_result, const CalibrationOptions& o,
                                     const std::string& name, int cores, const std::string& command, double seconds) {
  const std::vector<KernelMeasurement>& ms = cal_result.kernels;
  const StartupCosts& startup = cal_result.startup;
  using ordered = nlohmann::ordered_json;
  const std::string host = host_name(), date = utc_now();
  const std::string cpu = cpu_name();
  std::map<int, ordered> models;
  for (const KernelMeasurement& m : ms) {
    ordered& model = models[m.concurrency];
    if (model.empty()) {
      model["type"] = "calibrated";
      model["concurrency"] = m.concurrency;
      model["source"] = fmt::format(
          "tessera calibrate on {} ({}), {}: median and interquartile range of per-call wall times of each kernel on one "
          "core (OpenBLAS single-threaded), {}",
          host, cpu, date,
          m.concurrency == 1
              ? std::string("with no other calibration thread running")
              : fmt::format("while {} other thread(s) ran the same kernel concurrently", m.concurrency - 1));
      if (!startup.first_call_s.empty()) {
        ordered fc;
        fc["source"] = fmt::format(
            "extra time of the first call of each kernel in a fresh process over a warm call, the kernels called in the "
            "order of a factorization's first tasks ({}) at the default tile size, so the library's one-time "
            "initialization lands on the first; median of 5 processes",
            first_call_order());
        for (const auto& [kp, x] : startup.first_call_s)
          fc[kernel_key(kp.first)][std::string(1, kp.second)] = std::stod(fmt::format("{:.4g}", x));
        model["first_call_s"] = fc;
      }
      if (const auto it = startup.start_s.find(m.concurrency); it != startup.start_s.end())
        model["start_s"] = {{"value", std::stod(fmt::format("{:.4g}", it->second))},
                            {"source", fmt::format("a run of one empty task with {} thread(s) in a fresh process "
                                                   "(thread start-up and wake-up), median of 5 processes",
                                                   m.concurrency)}};
      model["measurements"] = ordered::array();
    }
    model["measurements"].push_back(ordered::parse(measurement_json(m)));
  }
  ordered f;
  f["name"] = name;
  f["description"] = fmt::format("This machine ({}, {}), one node, written by `{}`", host, cpu, command);
  ordered cal;
  cal["command"] = command;
  cal["date"] = date;
  cal["host"] = host;
  cal["cpu"] = cpu;
  cal["blas_core"] = blas_core();
  cal["seconds"] = std::round(seconds * 10) / 10;
  const std::string copies =
      o.cold ? fmt::format(
                   "per shape: operands in rotated copies spanning {} MiB (cold: no call finds its operands in "
                   "a cache), inputs a kernel destroys restored right after each call (untimed), ",
                   o.cold_bytes >> 20)
             : std::string(
                   "per shape: operands in 2-8 rotated copies, inputs a kernel destroys restored before each "
                   "call ") +
                   (o.flush_restored ? "and then flushed from every cache (clflush) " : "") + "(untimed), ";
  cal["method"] = copies +
                  "warm-up calls, then per-call steady_clock times until min_reps calls and min_time_s; median_s = "
                  "median, spread_s = interquartile range. concurrency c: c-1 other threads run the same kernel on "
                  "their own operands throughout the timed calls.";
  cal["cold_operands"] = o.cold;
  cal["flush_restored"] = o.flush_restored;
  cal["passes"] = std::max(1, o.passes);
  cal["min_reps"] = o.min_reps;
  cal["min_time_s"] = o.min_time_s;
  cal["qr_ib"] = o.ib;
  if (!o.more_ib.empty()) cal["qr_more_ib"] = o.more_ib;
  cal["concurrency"] = o.concurrency;
  cal["for_n"] = o.for_n;
  cal["for_s"] = o.for_s;
  cal["for_b"] = o.for_b;
  cal["for_narrow"] = o.for_narrow;
  f["calibration"] = cal;
  f["nodes"] = 1;
  ordered by_threads;
  for (const auto& [c, _] : models) by_threads[std::to_string(c)] = "core-x" + std::to_string(c);
  f["node"]["cores"]["count"] = cores;
  f["node"]["cores"]["model"] = "core-x" + std::to_string(models.empty() ? 1 : models.begin()->first);
  f["node"]["cores"]["model_by_threads"] = by_threads;
  f["network"] = {{"topology", "star"},
                  {"bandwidth_Bps", {{"value", 1e10}, {"source", "placeholder: one node sends no messages"}}},
                  {"latency_s", {{"value", 1e-6}, {"source", "placeholder: one node sends no messages"}}},
                  {"calibrated", true}};
  ordered km;
  for (auto& [c, model] : models) km["core-x" + std::to_string(c)] = std::move(model);
  f["kernel_models"] = km;
  return machine_file_text(f.dump());
}

std::string host_name() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return host;
}

std::string utc_now() {
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

std::string machine_file_text(const std::string& json) {
  using ordered = nlohmann::ordered_json;
  ordered f = ordered::parse(json);
  std::map<std::string, std::string> lists;
  if (f.contains("kernel_models") && f["kernel_models"].is_object())
    for (auto& [name, model] : f["kernel_models"].items()) {
      if (!model.is_object() || !model.contains("measurements") || !model["measurements"].is_array()) continue;
      const std::string mark = "@measurements:" + name;
      std::string list = "[";
      for (std::size_t i = 0; i < model["measurements"].size(); ++i)
        list += std::string(i ? "," : "") + "\n    " + model["measurements"][i].dump();
      lists[mark] = list + "\n   ]";
      model["measurements"] = mark;
    }
  std::string text = f.dump(1);
  for (const auto& [mark, list] : lists) {
    const std::string quoted = "\"" + mark + "\"";
    text.replace(text.find(quoted), quoted.size(), list);
  }
  return text + "\n";
}

}  // namespace tessera::kernels
