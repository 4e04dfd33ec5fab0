#include "runtime/node_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <mutex>
#include <exception>
#include <limits>
#include <string>

#include "runtime/error.hpp"
#include "runtime/spinlock.hpp"
#include "runtime/task_window.hpp"

namespace tessera {
namespace {

// State shared by the threads of one run.
struct RunState {
  RunState(std::size_t n_data, const RuntimeOptions& o, platform::Platform& p)
      : window(n_data, o.window_capacity, p), ready(p, o.policy, o.seed), error_mutex(p.make_mutex()) {
    std::fill(std::begin(warm_after), std::end(warm_after), -1.0);
  }

  TaskWindow window;
  ReadyQueue ready;
  std::atomic<std::uint64_t> completed{0};
  std::atomic<std::uint64_t> total{std::numeric_limits<std::uint64_t>::max()};
  std::atomic<bool> cancelled{false};
  std::unique_ptr<platform::Mutex> error_mutex;
  std::exception_ptr error;

  // Modeled start-up costs (KernelTimeModel::start_s, first_call_s): whether
  // the first task has started, and per (kernel, precision) when its first
  // call ends (< 0: not called yet).
  SpinLock cold_lock;
  bool started = false;
  double warm_after[2 * 32];
  double cold_extra(const KernelTimeModel& m, const KernelShape& sh, double now, double base) {
    std::lock_guard lk(cold_lock);
    double extra = 0;
    if (!started) started = true, extra += m.start_s();
    const double fc = m.first_call_s(sh.kernel, sh.precision);
    if (fc > 0 && sh.kernel < 32) {
      double& w = warm_after[2 * sh.kernel + (sh.precision == 's' ? 1 : 0)];
      if (w < 0 || now < w) {
        extra += fc;
        if (w < 0) w = now + base + extra;
      }
    }
    return extra;
  }

  void fail(std::exception_ptr e) {
    platform::Lock lk(*error_mutex);
    if (!error) error = e;
    cancelled.store(true, std::memory_order_relaxed);
  }
  // Called once per finished task and once when generation ends: whoever sees
  // the last completion of a known total closes the queue.
  void maybe_close(std::uint64_t done) {
    if (done == total.load()) ready.close();
  }
};

class WindowSink final : public TaskSink {
 public:
  explicit WindowSink(RunState& s) : s_(s) {}
  void insert(const TaskDesc& t) override {
    // After a failure the generator still walks its loops but adds nothing.
    if (s_.cancelled.load(std::memory_order_relaxed)) return;
    if (Task* ready = s_.window.append(t)) s_.ready.push(ready);
  }

 private:
  RunState& s_;
};

}  // namespace

NodeRuntime::NodeRuntime(platform::Platform& platform, RuntimeOptions options)
    : platform_(platform), options_(options) {
  if (options_.threads < 1) throw InputError("threads = " + std::to_string(options_.threads) + " must be >= 1");
}

RunStats NodeRuntime::run(std::size_t n_data, const Generator& generate, Executor& executor) {
  RunState s(n_data, options_, platform_);
  RunStats stats;
  stats.busy_s.assign(options_.threads, 0.0);
  RuntimeObserver* obs = options_.observer;
  const double t0 = platform_.now();
  if (obs) obs->on_run_start(options_.threads, executor, t0);

  platform_.spawn("generator", [&] {
    WindowSink sink(s);
    try {
      generate(sink);
    } catch (...) {
      s.fail(std::current_exception());
    }
    const std::uint64_t n = s.window.appended();
    s.total.store(n);
    s.maybe_close(s.completed.load());
  });

  for (int w = 0; w < options_.threads; ++w) {
    platform_.spawn("cpu" + std::to_string(w), [&, w] {
      WorkerContext ctx(w);
      std::vector<Task*> ready;
      double busy = 0;
      while (Task* t = s.ready.pop()) {
        if (!s.cancelled.load(std::memory_order_relaxed)) {
          const double a = platform_.now();
          if (obs) obs->on_task_start(w, t->desc, a);
          try {
            double modeled = 0;
            if (options_.model) {
              const KernelShape sh = executor.shape(t->desc);
              modeled = options_.model->seconds(sh);
              modeled += s.cold_extra(*options_.model, sh, a, modeled);
            }
            platform_.run_kernel(executor, t->desc, ctx, modeled);
          } catch (...) {
            s.fail(std::current_exception());
          }
          const double b = platform_.now();
          if (obs) obs->on_task_end(w, t->desc, b);
          busy += b - a;
        }
        s.window.fire(t, ready);
        s.ready.push(ready);
        ready.clear();
        s.maybe_close(s.completed.fetch_add(1) + 1);
      }
      stats.busy_s[w] = busy;
    });
  }
  platform_.join_all();
  const double t1 = platform_.now();
  if (obs) obs->on_run_end(t1);
  stats.elapsed_s = t1 - t0;
  stats.tasks = s.window.appended();
  if (s.error) std::rethrow_exception(s.error);
  return stats;
}

}  // namespace tessera
