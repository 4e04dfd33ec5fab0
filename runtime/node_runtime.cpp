#include "runtime/node_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <mutex>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <unordered_map>

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

  // ---- distributed runs ----
  const DistContext* dist = nullptr;
  std::atomic<std::uint64_t> sent{0}, sent_bytes{0}, received{0}, received_bytes{0};
  // Receives whose task is ready but whose message has not arrived, and
  // messages that arrived before their receive task was ready, by key.
  SpinLock mail_lock;
  std::unordered_map<std::uint64_t, Task*> waiting;
  std::unordered_map<std::uint64_t, platform::Message> arrived;

  static std::uint64_t key(const TaskDesc& d) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.arg[1])) << 32) | static_cast<std::uint32_t>(d.arg[2]);
  }

  // A task whose inputs are all available: compute tasks go to the ready
  // queue; a send packs and posts its message and is done at once (the data
  // is copied, so later writers need not wait for the network); a receive is
  // done when its message is there. Finished sends and receives go to `done`.
  void start(Task* t, std::vector<Task*>& done) {
    const TaskDesc& d = t->desc;
    if (d.kernel == kRuntimeSend) {
      DataStore& st = *dist->store;
      const DataId x = static_cast<DataId>(d.arg[1]);
      const std::size_t bytes = st.bytes(x);
      platform::Message m =
          st.has_data() ? dist->network->make_message(key(d), bytes) : platform::Message::phantom(key(d), bytes);
      if (st.has_data()) st.pack(x, m.payload());
      sent.fetch_add(1, std::memory_order_relaxed);
      sent_bytes.fetch_add(bytes, std::memory_order_relaxed);
      dist->network->send(d.arg[0], std::move(m));
      done.push_back(t);
    } else if (d.kernel == kRuntimeRelease) {
      // Every earlier reader of the alien copy has finished (the release is its writer).
      dist->store->release_alien(static_cast<DataId>(d.arg[1]));
      done.push_back(t);
    } else if (d.kernel == kRuntimeRecv) {
      platform::Message m;
      {
        std::lock_guard lk(mail_lock);
        auto it = arrived.find(key(d));
        if (it == arrived.end()) {
          waiting.emplace(key(d), t);
          return;
        }
        m = std::move(it->second);
        arrived.erase(it);
      }
      take(t, std::move(m));
      done.push_back(t);
    } else {
      ready.push(t);
    }
  }

  void take(Task* t, platform::Message&& m) {
    const TaskDesc& d = t->desc;
    received.fetch_add(1, std::memory_order_relaxed);
    received_bytes.fetch_add(m.bytes(), std::memory_order_relaxed);
    if (!m.has_data()) return;
    if (d.arg[3]) dist->store->unpack_own(static_cast<DataId>(d.arg[1]), m.payload());
    else dist->store->adopt_alien(static_cast<DataId>(d.arg[1]), std::move(m));
  }

  // Communication thread: a message arrived.
  void deliver(platform::Message&& m) {
    Task* t = nullptr;
    {
      std::lock_guard lk(mail_lock);
      auto it = waiting.find(m.key());
      if (it == waiting.end()) {
        const std::uint64_t k = m.key();
        if (!arrived.emplace(k, std::move(m)).second)
          throw std::logic_error("distributed run: datum " + std::to_string(k >> 32) + " version " +
                                 std::to_string(k & 0xFFFFFFFFu) + " arrived twice (read again after Release_Tile?)");
        return;
      }
      t = it->second;
      waiting.erase(it);
    }
    take(t, std::move(m));
    std::vector<Task*> r;
    finish(t, r);
  }

  // FIRE for a finished task and everything that finishes at once because
  // of it (sends, receives whose message is there).
  // `r` is the caller's scratch vector (empty on entry and on return).
  void finish(Task* t, std::vector<Task*>& r) {
    if (!dist) {
      window.fire(t, r);
      ready.push(r);
      r.clear();
      maybe_close(completed.fetch_add(1) + 1);
      return;
    }
    std::vector<Task*> done{t};
    while (!done.empty()) {
      Task* f = done.back();
      done.pop_back();
      window.fire(f, r);
      for (Task* x : r) start(x, done);
      r.clear();
      maybe_close(completed.fetch_add(1) + 1);
    }
  }

  // An error outside a kernel in a distributed run (the generator, a send's
  // packing, a receive): this node can no longer keep its part of the
  // protocol and the others would wait for it forever, so it names the error
  // and ends the whole run.
  [[noreturn]] void abort_run(std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "tessera: error: node %d: out of memory for the tiles it sends or receives\n", dist->self);
    } catch (const std::exception& x) {
      std::fprintf(stderr, "tessera: error: node %d: %s\n", dist->self, x.what());
    } catch (...) {
      std::fprintf(stderr, "tessera: error: node %d: unknown error\n", dist->self);
    }
    dist->network->abort(exit_status_of(e));
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

// The generator's side of a distributed run: the task-assignment protocol
// (000 §6) plus the bookkeeping that lets every node decide, without a
// message, which tile versions travel where. Every node sees every write, so
// all agree on each datum's version; the owner of a datum tracks which nodes
// hold its current version, and every node which version its alien slot of
// each remote datum holds.
class ProtocolSink final : public TaskSink {
 public:
  ProtocolSink(RunState& s, std::size_t n_data)
      : s_(s), d_(*s.dist), n_data_(n_data), version_(n_data, 0), alien_version_(n_data, kNone) {}

  // Every node sees the release: the owner forgets who held the version (a
  // later read, which the algorithm promised not to make, would bring it
  // again instead of waiting for a message never sent), the others drop
  // their copy after its readers.
  void release(DataId d) override {
    if (d_.where(d).node == d_.self) {
      holders_.erase(d);
      return;
    }
    if (alien_version_[d] == kNone) return;
    alien_version_[d] = kNone;
    append(comm_task(kRuntimeRelease, d_.self, d, 0, false, 0).add(static_cast<DataId>(n_data_ + d), AccessMode::Write));
  }

  void insert(const TaskDesc& t) override {
    // Most tasks touch nothing of this node: one placement per access, then
    // only the version counts (every generator walks the whole loop nest).
    bool touches = false;
    for (int a = 0; a < t.n_access; ++a) {
      loc_[a] = d_.where(t.access[a].data);
      touches |= loc_[a].node == d_.self;
    }
    if (touches) {
      const int main = t.main_output();
      if (main < 0) throw std::logic_error("distributed run: a task without an output (kernel " + std::to_string(t.kernel) + ")");
      instances_.clear();
      node_instances(t, d_.where, d_.self, instances_);
      if (!instances_.empty()) apply(t, main);
    }
    for (int a = 0; a < t.n_access; ++a)
      if (writes(t.access[a].mode)) ++version_[t.access[a].data];
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  void apply(const TaskDesc& t, int main) {
    const int self = d_.self;
    for (const Instance& in : instances_) {
      const DataId x = t.access[in.access].data;
      switch (in.kind) {
        case InstanceKind::Owner: {
          // Remote inputs arrive in this node's alien slots before the task reads them.
          TaskDesc own = t;
          for (int a = 0; a < t.n_access; ++a) {
            const DataId y = t.access[a].data;
            const Location l = loc_[a];
            if (l.node == self) continue;
            own.access[a].data = static_cast<DataId>(n_data_ + y);
            if (t.access[a].mode == AccessMode::Write)
              throw std::logic_error("distributed run: a write-only minor output on another node is not supported");
            if (alien_version_[y] != version_[y]) {
              alien_version_[y] = version_[y];
              append(comm_task(kRuntimeRecv, l.node, y, version_[y], false, t.priority).add(static_cast<DataId>(n_data_ + y), AccessMode::Write));
            }
          }
          append(own);
          break;
        }
        case InstanceKind::InterNodeAlienInput: {
          std::vector<int>& h = holders_[x];
          if (std::find(h.begin(), h.end(), in.peer.node) == h.end()) {
            h.push_back(in.peer.node);
            append(comm_task(kRuntimeSend, in.peer.node, x, version_[x], false, t.priority).add(x, AccessMode::Read));
          }
          break;
        }
        case InstanceKind::InterNodeSourceMinorOutput:
          // The new version goes back to its owner, after the task wrote it here.
          append(comm_task(kRuntimeSend, in.peer.node, x, version_[x] + 1, false, t.priority)
                     .add(static_cast<DataId>(n_data_ + x), AccessMode::Read));
          alien_version_[x] = version_[x] + 1;
          break;
        case InstanceKind::SinkMinorOutput:
          if (in.peer.node != self) {
            append(comm_task(kRuntimeRecv, in.peer.node, x, version_[x] + 1, true, t.priority).add(x, AccessMode::Write));
            holders_[x].assign(1, in.peer.node);
          }
          break;
        default:
          break;  // same node: the owner instance reads or writes it in place
      }
    }
    // A version written on its own node is held there only.
    if (loc_[main].node == self)
      for (int a = 0; a < t.n_access; ++a)
        if (writes(t.access[a].mode) && loc_[a].node == self) holders_.erase(t.access[a].data);
  }

  static TaskDesc comm_task(std::uint16_t kernel, int peer, DataId x, std::uint32_t version, bool own, std::int32_t prio) {
    TaskDesc d;
    d.kernel = kernel;
    d.arg[0] = peer;
    d.arg[1] = static_cast<std::int32_t>(x);
    d.arg[2] = static_cast<std::int32_t>(version);
    d.arg[3] = own ? 1 : 0;
    d.priority = prio;
    return d;
  }

  void append(const TaskDesc& d) {
    if (Task* t = s_.window.append(d)) {
      std::vector<Task*> done;
      s_.start(t, done);
      for (Task* f : done) s_.finish(f, scratch_);
    }
  }

  RunState& s_;
  const DistContext& d_;
  std::size_t n_data_;
  std::vector<std::uint32_t> version_, alien_version_;
  std::unordered_map<DataId, std::vector<int>> holders_;
  std::vector<Instance> instances_;
  std::vector<Task*> scratch_;
  Location loc_[kMaxAccesses];  // where the current task's accesses live
};

}  // namespace

NodeRuntime::NodeRuntime(platform::Platform& platform, RuntimeOptions options)
    : platform_(platform), options_(options) {
  if (options_.threads < 1) throw InputError("threads = " + std::to_string(options_.threads) + " must be >= 1");
}

RunStats NodeRuntime::run(std::size_t n_data, const Generator& generate, Executor& executor) {
  const DistContext* dist = options_.dist;
  RunState s(dist ? 2 * n_data : n_data, options_, platform_);
  s.dist = dist;
  // One node sends nothing: no communication thread (000 §4).
  const bool networked = dist && dist->network->nodes() > 1;
  if (networked) dist->network->start([&s](int, platform::Message&& m) { s.deliver(std::move(m)); });
  RunStats stats;
  stats.busy_s.assign(options_.threads, 0.0);
  RuntimeObserver* obs = options_.observer;
  const double t0 = platform_.now();
  if (obs) obs->on_run_start(options_.threads, executor, t0);

  platform_.spawn("generator", [&] {
    try {
      if (dist) {
        ProtocolSink sink(s, n_data);
        generate(sink);
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
        try {
          s.finish(t, ready);
        } catch (...) {
          // Only a distributed run's sends and receives throw here.
          if (dist) s.abort_run(std::current_exception());
          s.fail(std::current_exception());
        }
      }
      stats.busy_s[w] = busy;
    });
  }
  platform_.join_all();
  if (networked) dist->network->stop();
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
    platform::NodeNetwork& net = *dist->network;
    std::vector<double> status(net.nodes(), 0.0);
    status[net.node()] = s.error ? exit_status_of(s.error) : 0;
    net.allreduce_sum(status);
    if (s.error) std::rethrow_exception(s.error);
    for (int k = 0; k < net.nodes(); ++k)
      if (status[k] != 0) throw RemoteFailure(k, static_cast<int>(status[k]));
  }
  if (s.error) std::rethrow_exception(s.error);
  return stats;
}

}  // namespace tessera
