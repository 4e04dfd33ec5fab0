#include "runtime/node_runtime.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "runtime/device_comm.hpp"
#include "runtime/protocol_sink.hpp"
#include "runtime/relevance.hpp"
#include "runtime/run_state.hpp"

namespace tessera {

namespace {

// The 1-based global column of a pivot breakdown, 0 for any other error.
std::int64_t breakdown_column(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const PivotBreakdown& p) {
    return p.column();
  } catch (...) {
    return 0;
  }
}

using detail::ProtocolSink;
using detail::RunState;

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
  if (options_.gpu_kernel_depth < 0)
    throw InputError("gpu_kernel_depth = " + std::to_string(options_.gpu_kernel_depth) + " must be >= 0");
}

RunStats NodeRuntime::run(std::size_t n_data, const Generator& generate, Executor& executor) {
  const DistContext* dist = options_.dist;
  const int G = static_cast<int>(options_.gpus.size());
  if (G > 0 && !dist) throw std::logic_error("a run with GPUs needs a DistContext (placement and data store)");
  for (const GpuContext& g : options_.gpus)
    if (!g.device || !g.executor || !g.tables) throw std::logic_error("GpuContext without device, executor or tables");
  const double t0 = platform_.now();
  // The data this node follows (runtime/relevance.hpp): given (a simulated
  // cluster's, made once for its nodes), or made here, inside the run's
  // time. Its protocol and GPU tables keep only those.
  // One node sends nothing: no communication thread (000 §4).
  const bool networked = dist && dist->network && dist->network->nodes() > 1;
  std::optional<DataRelevance> own;
  const DataRelevance* relevance = nullptr;
  if (networked && options_.follow_own_data) {
    relevance = dist->relevance;
    if (!relevance) relevance = &own.emplace(n_data, dist->network->nodes(), generate, dist->where);
    if (relevance->data() != n_data || relevance->nodes() != dist->network->nodes())
      throw std::logic_error("the data relevance of " + std::to_string(relevance->data()) + " data on " +
                             std::to_string(relevance->nodes()) + " nodes does not fit node " +
                             std::to_string(dist->self) + "'s run of " + std::to_string(n_data) + " data on " +
                             std::to_string(dist->network->nodes()));
  }
  RunState s(n_data, options_, platform_, relevance, networked ? dist->self : 0);
  s.dist = dist;
  RunStats stats;
  stats.busy_s.assign(options_.threads, 0.0);
  stats.gpus.assign(G, DeviceStats{});
  // A device's kernel time counts from its construction; this run's is the difference.
  std::vector<double> span_at_start;
  std::vector<std::uint64_t> fallbacks_at_start;
  for (const GpuContext& gc : options_.gpus) {
    span_at_start.push_back(gc.device ? gc.device->kernel_span_s() : 0.0);
    fallbacks_at_start.push_back(gc.device ? gc.device->kernel_fallbacks() : 0);
  }
  RuntimeObserver* obs = options_.observer;
  if (obs) obs->on_run_start(options_.threads + G, executor, t0);

  // From the network's start to the last thread's, anything that throws (a
  // thread that cannot start, a limit on processes or address space; an
  // allocation for the next thread's name or body) leaves the threads started
  // before it running on this frame's state: stop them before it unwinds. A
  // networked run ends every node at once (the others would wait for this
  // one's messages); otherwise generation is cancelled, the queues closed
  // (their threads drain what they hold, running nothing, since the run
  // failed), the started threads joined, and the error thrown. Nothing before
  // the network's start leaves a thread running.
  const auto unwind_start = [&](std::exception_ptr e) {
    if (networked) s.abort_run(e);
    s.fail(e);
    s.window.cancel();
    s.close_queues();
    platform_.join_all();
    std::rethrow_exception(e);
  };
  // The threads' shared steps, defined before any thread starts: the threads
  // call them until join_all, so they must outlive the try block below.

  // Observers see the algorithm's data ids, not this node's device slots
  // (an empty TaskDesc without observers).
  const auto observed = [&](const Task* t) {
    TaskDesc seen;
    if (obs) {
      seen = t->desc;
      for (int x = 0; x < seen.n_access; ++x) seen.access[x].data = static_cast<DataId>(seen.access[x].data % s.n_data);
    }
    return seen;
  };
  // A task's end: its successors readied (and, in a distributed run, its sends).
  const auto finish = [&](Task* t, std::vector<Task*>& ready) {
    try {
      s.finish(t, ready);
    } catch (...) {
      // Only a distributed run's sends and receives throw here.
      if (networked) s.abort_run(std::current_exception());
      s.fail(std::current_exception());
    }
  };

  // A compute thread: the host's CPU workers share its queue; a GPU's
  // manager thread serves the GPU's queue and waits for each kernel.
  auto serve = [&](ReadyQueue& queue, WorkerContext& ctx, Executor& ex, const KernelTimeModel* model,
                   platform::Device* device, double& busy) {
    std::vector<Task*> ready;
    const int w = ctx.id();
    while (Task* t = queue.pop()) {
      if (!s.cancelled.load(std::memory_order_relaxed)) {
        const double a = platform_.now();
        const TaskDesc seen = observed(t);
        if (obs) obs->on_task_start(w, seen, a);
        double span_before = 0;
        try {
          double modeled = 0;
          if (model) {
            modeled = model->seconds_for(ex.shape(t->desc), a, task_key(t->desc));
          }
          if (device) {
            span_before = device->kernel_span_s();
            device->begin_kernels(panel_kernel(t->desc.kernel));
            ctx.use_kernels(device->kernels_d(), device->kernels_s());
          }
          platform_.run_kernel(modeled, [&] { ex.execute(t->desc, ctx); });
          if (device) device->synchronize();
        } catch (...) {
          s.fail(std::current_exception());
          // What it queued before failing ends before the task is finished (as in serve_queued).
          if (device) {
            try {
              device->synchronize();
            } catch (...) {
            }
          }
        }
        const double b = platform_.now();
        if (obs && device && device->kernel_span_s() > span_before)
          obs->on_task_device_span(w, device->kernel_span_s() - span_before);
        if (obs) obs->on_task_end(w, seen, b);
        busy += b - a;
      }
      finish(t, ready);
      // A simulated thread's share of the runtime's own work per task
      // (KernelTimeModel::task_s): after the task's successors are released,
      // before it takes the next, as a native thread spends it.
      if (model && model->task_s() > 0) platform_.run_kernel(model->task_s(), [] {});
    }
  };

  // A GPU's manager thread with kernel_depth() > 1 (platform/device.hpp):
  // up to `depth` tasks' kernels queued on the device at once. A task is
  // finished (its successors readied, its copies started) once its kernels
  // have ended: in the order they were queued on a device with one stream;
  // on one with several (Device::kernel_streams), whichever ended first,
  // so that a short task queued beside a long one (a panel beside a trailing
  // update) readies its successors at once. With a task in flight the
  // manager takes another only if one is ready now; else it retires one (so
  // it never sleeps on the queue while holding a task whose end would ready
  // the next). Observers and busy time see each task from when the device
  // could start it (queued, and the task retired before it ended) to when
  // its end was seen, so the intervals of one GPU do not overlap.
  // A simulated GPU (`model` set) is told each task's modeled time and its
  // share of the device (platform/device.hpp model_kernels) and lets it pass
  // itself; the manager spends the runtime's own time per task
  // (KernelTimeModel::task_s) after queuing each, while the device runs.
  auto serve_queued = [&](ReadyQueue& queue, WorkerContext& ctx, Executor& ex, platform::Device& device,
                          const KernelTimeModel* model, std::size_t depth, double& busy) {
    struct Queued {
      Task* t;
      TaskDesc seen;
      double queued_at;
      std::uint64_t mark;
      bool ran;
    };
    std::deque<Queued> flight;
    std::vector<Task*> ready;
    std::vector<std::uint64_t> marks;
    const int w = ctx.id();
    const bool any_order = device.kernel_streams() > 1;
    double last_end = 0;
    const auto retire_at = [&](std::size_t i) {
      Queued q = flight[i];
      flight.erase(flight.begin() + static_cast<std::ptrdiff_t>(i));
      if (q.ran) {
        const double span_before = device.kernel_span_s();
        try {
          device.wait_kernels(q.mark);
        } catch (...) {
          s.fail(std::current_exception());
        }
        const double span = device.kernel_span_s() - span_before;
        // From when the device could start it: queued, and the task retired
        // before it ended; with tasks retiring out of order, from the first
        // queued of it and those still in flight (it may have run beside them).
        double queued = q.queued_at;
        for (const Queued& o : flight) queued = std::min(queued, o.queued_at);
        const double a = std::max(queued, last_end), b = platform_.now();
        last_end = b;
        if (obs) {
          obs->on_task_start(w, q.seen, a);
          if (span > 0) obs->on_task_device_span(w, span);
          obs->on_task_end(w, q.seen, b);
        }
        busy += b - a;
      }
      finish(q.t, ready);
    };
    // The index in flight of the task to retire next: the oldest, or on a
    // device with several streams one whose kernels have ended (a task that
    // queued nothing is done at once), waiting up to `timeout_s` for one:
    // nullopt if none ended by then.
    const auto next_to_retire = [&](double timeout_s) -> std::optional<std::size_t> {
      if (!any_order) return 0;
      marks.clear();
      for (std::size_t i = 0; i < flight.size(); ++i) {
        if (!flight[i].ran) return i;
        marks.push_back(flight[i].mark);
      }
      std::optional<std::uint64_t> m;
      try {
        m = device.wait_any_kernels(marks, timeout_s);
      } catch (...) {
        s.fail(std::current_exception());
        m = flight.front().mark;  // its wait reports the error again, and the task is finished
      }
      if (!m) return std::nullopt;
      for (std::size_t i = 0; i < flight.size(); ++i)
        if (flight[i].mark == *m) return i;
      return 0;
    };
    constexpr double kForever = std::numeric_limits<double>::infinity();
    // With room for another task and none ready, a device with several
    // streams is polled this long before the queue is looked at again, so that
    // a task readied meanwhile (by a copy, a core) is queued beside the
    // running ones instead of after one of them ends: 50 us for the first
    // millisecond without a task to queue, then 1 ms (the device's wait sleeps
    // between its polls after 100 us).
    constexpr double kPollS = 50e-6, kPollSlowS = 1e-3, kPollFastFor = 1e-3;
    double idle_since = -1;  // when the manager last started polling without a task to queue
    // On a device with several streams, the tasks whose kernels ended already.
    const auto retire_ended = [&] {
      if (!any_order) return;
      for (std::size_t i = 0; i < flight.size();) {
        bool ended = !flight[i].ran;
        if (!ended) {
          try {
            ended = device.kernels_ended(flight[i].mark);
          } catch (...) {
            s.fail(std::current_exception());
            ended = true;  // its wait reports the error again, and the task is finished
          }
        }
        if (ended) retire_at(i);
        else ++i;
      }
    };
    for (;;) {
      retire_ended();
      Task* t = flight.empty() ? queue.pop() : queue.try_pop();
      if (t == nullptr) {
        if (flight.empty()) return;  // closed: every task finished
        double timeout = kForever;
        if (any_order) {  // (room for another task: the flight is below depth here)
          const double now = platform_.now();
          if (idle_since < 0) idle_since = now;
          timeout = now - idle_since < kPollFastFor ? kPollS : kPollSlowS;
        }
        if (const auto i = next_to_retire(timeout)) retire_at(*i);
        continue;
      }
      idle_since = -1;
      Queued q{t, TaskDesc{}, platform_.now(), 0, false};
      if (!s.cancelled.load(std::memory_order_relaxed)) {
        q.seen = observed(t);
        try {
          device.begin_kernels(panel_kernel(t->desc.kernel));
          if (model) {
            const KernelShape shape = ex.shape(t->desc);
            device.model_kernels(shape.kernel, model->seconds_for(shape, q.queued_at, task_key(t->desc)),
                                 device_share(*model, shape));
          }
          ctx.use_kernels(device.kernels_d(), device.kernels_s());
          // (A simulated run without data runs no kernel: run_kernel skips it.)
          platform_.run_kernel(0, [&] { ex.execute(t->desc, ctx); });
          q.mark = device.end_kernels();
          q.ran = true;
        } catch (...) {
          s.fail(std::current_exception());
          // What it queued before failing ends before the task is finished.
          try {
            q.mark = device.end_kernels();
            q.ran = true;
          } catch (...) {
          }
        }
      }
      flight.push_back(q);
      if (model && model->task_s() > 0) platform_.run_kernel(model->task_s(), [] {});
      if (flight.size() >= depth) retire_at(next_to_retire(kForever).value_or(0));
    }
  };

  try {
    if (networked) {
      s.observer = options_.observer;
      s.clock = &platform_;
      dist->network->start([&s](int source, platform::Message&& m) { s.deliver(source, std::move(m)); });
    }
    platform_.spawn(platform::ThreadRole::Generator, "generator", [&] {
      try {
        if (dist) {
          ProtocolSink sink(s, n_data, G, options_.release_tiles, options_.broadcast,
                            options_.eviction == Eviction::NextUse ? &generate : nullptr);
          generate(sink);
          sink.finish();
        } else {
          WindowSink sink(s);
          generate(sink);
        }
      } catch (...) {
        if (networked) s.abort_run(std::current_exception());
        s.fail(std::current_exception());
      }
      const std::uint64_t n = s.window.appended();
      s.total.store(n);
      s.maybe_close(s.completed.load());
    });
    for (int w = 0; w < options_.threads; ++w) {
      platform_.spawn(platform::ThreadRole::Compute, "cpu" + std::to_string(w), [&, w] {
        WorkerContext ctx(w, platform_.core_kernels());
        serve(s.ready, ctx, executor, options_.model, nullptr, stats.busy_s[w]);
      });
    }
    for (int g = 1; g <= G; ++g) {
      GpuContext& gc = s.gpus[g - 1];
      platform_.spawn(platform::ThreadRole::GpuManager, "gpu" + std::to_string(g), [&, g] {
        WorkerContext ctx(options_.threads + g - 1, g, gc.device->kernels_d(), gc.device->kernels_s());
        const int depth = options_.gpu_kernel_depth > 0 ? std::min(options_.gpu_kernel_depth, gc.device->kernel_depth())
                                                        : gc.device->kernel_depth();
        if (depth > 1)
          serve_queued(*s.gpu_ready[g - 1], ctx, *gc.executor, *gc.device, gc.model, static_cast<std::size_t>(depth),
                       stats.gpus[g - 1].busy_s);
        else serve(*s.gpu_ready[g - 1], ctx, *gc.executor, gc.model, gc.device, stats.gpus[g - 1].busy_s);
      });
    }
    // The device communication thread (000 §5.4): moves copies from the
    // mailboxes to idle streams, and FIREs the copies the devices report done.
    if (G > 0)
      platform_.spawn(platform::ThreadRole::DeviceComm, "gpu-comm", [&] { device_communication(s, platform_, obs); });
  } catch (...) {
    unwind_start(std::current_exception());
  }
  platform_.join_all();
  if (networked) dist->network->stop();
  for (int g = 1; g <= G; ++g) {
    DeviceStats& d = stats.gpus[g - 1];
    const auto& c = s.gpu_stats[g - 1];
    d.peak_bytes = c.peak;
    d.capacity_bytes = options_.gpus[g - 1].device->capacity();
    d.bytes_at_end = c.in_use;
    // What the task graph left (with release_tiles off: every copy) is freed now.
    s.release_buffers(g);
    d.copies_in = c.copies_in, d.bytes_in = c.bytes_in, d.copies_out = c.copies_out, d.bytes_out = c.bytes_out;
    d.evictions = c.evictions, d.bytes_written_back = c.bytes_written_back;
    d.distinct_bytes_in = c.distinct_bytes_in, d.distinct_bytes_out = c.distinct_bytes_out;
    d.copy_in_s = s.streams[2 * (g - 1)].busy_s, d.copy_out_s = s.streams[2 * (g - 1) + 1].busy_s;
    d.kernel_span_s = options_.gpus[g - 1].device->kernel_span_s() - span_at_start[g - 1];
    d.kernel_fallbacks = options_.gpus[g - 1].device->kernel_fallbacks() - fallbacks_at_start[g - 1];
  }
  if (dist) {
    const std::size_t w = dist->store->word_bytes();
    stats.comm.messages_sent = s.sent;
    stats.comm.bytes_sent = s.sent_bytes;
    stats.comm.words_sent = s.sent_bytes / w;
    stats.comm.messages_received = s.received;
    stats.comm.bytes_received = s.received_bytes;
    stats.comm.words_received = s.received_bytes / w;
  }
  const double t1 = platform_.now();
  if (obs) obs->on_run_end(t1);
  stats.elapsed_s = t1 - t0;
  stats.tasks = s.window.appended();
  if (networked) {
    // Every node returns together, knowing whether any failed: none then
    // waits for a failed node, and no message of a later run can reach this
    // run's communication thread.
    // With each status goes the global column of a pivot breakdown. A node
    // whose kernels ran on after another node's failure factors what that
    // failure left (the failed node still sends its tiles) and may break
    // down as its consequence. So the failures reported are the errors that
    // are not breakdowns (each its node's own), else the first breakdown in
    // column order; every other node names the first of them.
    platform::NodeNetwork& net = *dist->network;
    const int P = net.nodes(), me = net.node();
    std::vector<double> status(2 * static_cast<std::size_t>(P), 0.0);
    status[me] = s.error ? exit_status_of(s.error) : 0;
    status[P + me] = s.error ? static_cast<double>(breakdown_column(s.error)) : 0;
    net.allreduce_sum(status);
    const auto failed = [&](int k) { return status[k] != 0; };
    const auto breakdown = [&](int k) { return status[P + k] > 0; };
    int primary = -1;  // the first node of the failures reported
    for (int k = 0; k < P && primary < 0; ++k)
      if (failed(k) && !breakdown(k)) primary = k;
    if (primary < 0)
      for (int k = 0; k < P; ++k)
        if (breakdown(k) && (primary < 0 || status[P + k] < status[P + primary])) primary = k;
    if (s.error && (!breakdown(me) || primary == me)) std::rethrow_exception(s.error);
    if (primary >= 0) throw RemoteFailure(primary, static_cast<int>(status[primary]));
  }
  if (s.error) std::rethrow_exception(s.error);
  return stats;
}

}  // namespace tessera
