#include "runtime/node_runtime.hpp"

#include <algorithm>
#include <utility>
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
  // `n_data` algorithm data; the window holds one slot per datum and device
  // of this node (slot(d, dev) = dev·n_data + d).
  RunState(std::size_t n_data, const RuntimeOptions& o, platform::Platform& p)
      : n_data(n_data), window(n_data * (o.gpus.size() + 1), o.window_capacity, p), ready(p, o.policy, o.seed),
        error_mutex(p.make_mutex()), gpus(o.gpus) {
    std::fill(std::begin(warm_after), std::end(warm_after), -1.0);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      gpu_ready.push_back(std::make_unique<ReadyQueue>(p, o.policy, o.seed + g + 1));
      buffers.emplace_back(n_data, nullptr);
    }
    streams = std::vector<CopyStream>(2 * gpus.size());
    copy_mutex = p.make_mutex();
    copy_cond = p.make_condition();
    gpu_stats = std::vector<GpuCounters>(gpus.size());
  }

  std::size_t n_data;
  TaskWindow window;
  ReadyQueue ready;  // the host's compute threads
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

  // ---- GPUs (000 §5.3-5.5) ----
  std::vector<GpuContext> gpus;
  std::vector<std::unique_ptr<ReadyQueue>> gpu_ready;  // GPU g's ready tasks: gpu_ready[g-1]
  // The device communication thread's state (000 §5.4): per GPU g, stream
  // 2(g-1) serves its in_mbox (copies to it) and stream 2(g-1)+1 its
  // out_mbox (copies from it), one copy in flight each; mailboxes are heaps
  // by priority. The devices report finished copies in copies_done.
  struct CopyStream {
    std::vector<Task*> mbox;
    Task* current = nullptr;
    double started = 0, ended = 0;
    std::vector<platform::HostRange> ranges;
  };
  std::vector<CopyStream> streams;
  std::unique_ptr<platform::Mutex> copy_mutex;
  std::unique_ptr<platform::Condition> copy_cond;
  std::vector<std::pair<int, std::exception_ptr>> copies_done;
  bool copies_closed = false;
  static bool lower_priority(const Task* a, const Task* b) { return a->desc.priority < b->desc.priority; }

  void post_copy(Task* t) {
    const int k = 2 * (t->desc.arg[0] - 1) + (t->desc.arg[3] ? 0 : 1);
    platform::Lock lk(*copy_mutex);
    std::vector<Task*>& box = streams[k].mbox;
    box.push_back(t);
    std::push_heap(box.begin(), box.end(), lower_priority);
    copy_cond->notify_one();
  }
  // GPU g's buffer of each datum (its indirect tile table's storage), null where it holds none.
  std::vector<std::vector<std::byte*>> buffers;
  struct GpuCounters {
    std::atomic<std::uint64_t> copies_in{0}, bytes_in{0}, copies_out{0}, bytes_out{0};
    std::atomic<std::size_t> in_use{0}, peak{0};  // this run's buffers
    void allocated(std::size_t b) {
      const std::size_t now = in_use.fetch_add(b) + b;
      std::size_t p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
    }
  };
  std::vector<GpuCounters> gpu_stats;

  // Device (0: host, g: GPU g) of a compute task: where its main output's slot is.
  int device_of(const TaskDesc& d) const {
    if (gpus.empty()) return 0;
    const int m = d.main_output();
    return m < 0 ? 0 : static_cast<int>(d.access[m].data / n_data);
  }

  // Starts a copy task on its stream: allocates the GPU's buffer on first
  // arrival and points the GPU's tile tables at it.
  void start_copy(const TaskDesc& d, int stream, std::vector<platform::HostRange>& ranges, platform::Device::CopyDone done) {
    const int g = d.arg[0];
    const DataId x = static_cast<DataId>(d.arg[1]);
    const bool to_device = d.arg[3] != 0;
    GpuContext& gc = gpus[g - 1];
    platform::Device& dev = *gc.device;
    std::byte*& buf = buffers[g - 1][x];
    const std::size_t bytes = dist->store->bytes(x);
    if (!buf) {
      if (!to_device) throw std::logic_error("GPU " + std::to_string(g) + " holds no copy of datum " + std::to_string(x) + " to copy back");
      buf = dev.allocate(bytes);
      gpu_stats[g - 1].allocated(bytes);
      gc.tables->point_at(x, buf);
    }
    ranges.clear();
    if (dev.has_data()) dist->store->host_ranges(x, ranges);
    dev.copy_async(stream, buf, ranges.data(), static_cast<int>(ranges.size()), to_device, std::move(done));
    GpuCounters& c = gpu_stats[g - 1];
    (to_device ? c.copies_in : c.copies_out).fetch_add(1, std::memory_order_relaxed);
    (to_device ? c.bytes_in : c.bytes_out).fetch_add(bytes, std::memory_order_relaxed);
  }

  void release_buffer(int g, DataId x) {
    std::byte*& buf = buffers[g - 1][x];
    if (!buf) return;
    gpus[g - 1].tables->point_at(x, nullptr);
    const std::size_t bytes = dist->store->bytes(x);
    gpus[g - 1].device->release(buf, bytes);
    gpu_stats[g - 1].in_use.fetch_sub(bytes);
    buf = nullptr;
  }

  // ---- distributed runs ----
  const DistContext* dist = nullptr;
  // Told of every message that arrives (distributed runs with an observer).
  RuntimeObserver* observer = nullptr;
  platform::Platform* clock = nullptr;
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
      // Every earlier reader of the copy has finished (the release is its writer).
      if (d.arg[0] == 0) dist->store->release_alien(static_cast<DataId>(d.arg[1]));
      else release_buffer(d.arg[0], static_cast<DataId>(d.arg[1]));
      done.push_back(t);
    } else if (d.kernel == kRuntimeCopy) {
      post_copy(t);
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
      push_ready(t);
    }
  }

  void push_ready(Task* t) {
    const int dev = device_of(t->desc);
    if (dev == 0) ready.push(t);
    else gpu_ready[dev - 1]->push(t);
  }

  void take(Task* t, platform::Message&& m) {
    const TaskDesc& d = t->desc;
    received.fetch_add(1, std::memory_order_relaxed);
    received_bytes.fetch_add(m.bytes(), std::memory_order_relaxed);
    if (!m.has_data()) return;
    if (d.arg[3]) dist->store->unpack_own(static_cast<DataId>(d.arg[1]), m.payload());
    else dist->store->adopt_alien(static_cast<DataId>(d.arg[1]), std::move(m));
  }

  // Communication thread: a message from node `source` arrived.
  void deliver(int source, platform::Message&& m) {
    if (observer) {
      const double now = clock->now();
      observer->on_message(source, dist->self, static_cast<DataId>(m.key() >> 32), m.bytes(), now - m.transit_s(), now);
    }
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
    std::abort();  // not reached: abort() ends the process
  }
  bool networked() const { return dist && dist->network && dist->network->nodes() > 1; }

  void fail(std::exception_ptr e) {
    platform::Lock lk(*error_mutex);
    if (!error) error = e;
    cancelled.store(true, std::memory_order_relaxed);
  }
  // Called once per finished task and once when generation ends: whoever sees
  // the last completion of a known total closes the queue.
  void maybe_close(std::uint64_t done) {
    if (done != total.load()) return;
    ready.close();
    for (auto& q : gpu_ready) q->close();
    platform::Lock lk(*copy_mutex);
    copies_closed = true;
    copy_cond->notify_one();
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

// The generator's side of a distributed run or a run with GPUs: the
// task-assignment protocol (000 §6) plus the bookkeeping that lets every
// node decide, without a message, which tile versions travel where. Every
// node sees every write, so all agree on each datum's version. A node keeps,
// for each datum and each of its devices, which version that device's copy
// holds (slot(d, dev) of the window); the owner of a datum also tracks which
// other nodes hold its current version.
//
// Copies inside a node follow 000 §5.4: a GPU's input comes from the host
// (from another GPU it is relayed through the host, so a tile several GPUs
// read crosses to the host once); a version written away from the datum's
// home device goes back to it at once (rules 7, 8); a remote datum arrives
// in host memory and is copied on to the GPUs that read it. A datum whose
// home is a GPU starts in host memory (version 0 is the input) and ends
// there: at its Release_Tile, or when generation ends, its last version is
// copied back and the GPU's buffer freed.
class ProtocolSink final : public TaskSink {
 public:
  ProtocolSink(RunState& s, std::size_t n_data, int gpus, bool honour_release)
      : s_(s), d_(*s.dist), n_(n_data), G_(gpus), honour_release_(honour_release), version_(n_data, 0),
        have_(n_data * (gpus + 1), kNone), home_(n_data, -1) {
    for (std::size_t x = 0; x < n_; ++x) {
      const Location l = d_.where(static_cast<DataId>(x));
      if (l.node != d_.self) continue;
      if (l.device < 0 || l.device > G_)
        throw std::logic_error("datum " + std::to_string(x) + " placed on device " + std::to_string(l.device) +
                               " of a node with " + std::to_string(G_) + " GPUs");
      home_[x] = static_cast<std::int8_t>(l.device);
      have_[x] = 0;  // this node's host memory holds the input
    }
  }

  // Every node sees the release: the owner forgets who held the version (a
  // later read, which the algorithm promised not to make, would bring it
  // again instead of waiting for a message never sent) and brings a GPU's
  // last version home to host memory; every copy on another device is freed
  // after its readers.
  void release(DataId x) override {
    if (!honour_release_) return;
    if (home_[x] >= 0) {
      holders_.erase(x);
      if (home_[x] > 0) ensure(x, 0, 0);
    }
    for (int dev = home_[x] >= 0 ? 1 : 0; dev <= G_; ++dev) drop(x, dev);
  }

  void insert(const TaskDesc& t) override {
    // Most tasks touch nothing of this node: one placement per access, then
    // only the version counts (every generator walks the whole loop nest).
    bool touches = false;
    for (int a = 0; a < t.n_access; ++a) {
      loc_[a] = d_.where(t.access[a].data);
      touches |= loc_[a].node == d_.self;
    }
    int main = -1;
    post_.clear();
    if (touches) {
      main = t.main_output();
      if (main < 0) throw std::logic_error("distributed run: a task without an output (kernel " + std::to_string(t.kernel) + ")");
      instances_.clear();
      node_instances(t, d_.where, d_.self, instances_);
      for (const Instance& in : instances_) before_write(t, in);
    }
    for (int a = 0; a < t.n_access; ++a)
      if (writes(t.access[a].mode)) ++version_[t.access[a].data];
    for (const Instance& in : post_) after_write(t, main, in);
  }

  // Generation has ended: every datum whose home is a GPU returns to host
  // memory, and every GPU buffer is freed after its readers. (The window
  // then knows each copy's last reader, as Release_Tile tells it earlier;
  // without Release_Tile the buffers stay until the run ends, and run()
  // frees them after every thread has finished.)
  void finish() {
    for (std::size_t x = 0; x < n_; ++x)
      if (home_[x] > 0) ensure(static_cast<DataId>(x), 0, 0);
    if (!honour_release_) return;
    for (int g = 1; g <= G_; ++g)
      for (std::size_t x = 0; x < n_; ++x) drop(static_cast<DataId>(x), g);
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  DataId slot(DataId x, int dev) const { return static_cast<DataId>(dev * n_ + x); }
  std::uint32_t& have(DataId x, int dev) { return have_[dev * n_ + x]; }

  // Instances that act before the task's writes take effect (their version is the current one).
  void before_write(const TaskDesc& t, const Instance& in) {
    const DataId x = t.access[in.access].data;
    switch (in.kind) {
      case InstanceKind::Owner: {
        // Every input reaches the owner's device first; the task then works on
        // that device's slots.
        const int dm = loc_[in.access].device;
        TaskDesc own = t;
        for (int a = 0; a < t.n_access; ++a) {
          const DataId y = t.access[a].data;
          const bool remote = loc_[a].node != d_.self;
          if (t.access[a].mode == AccessMode::Write) {
            if (remote) throw std::logic_error("distributed run: a write-only minor output on another node is not supported");
            if (dm != 0) ensure(y, dm, t.priority);  // the GPU needs a buffer to write into
          } else {
            ensure(y, dm, t.priority);
          }
          own.access[a].data = slot(y, dm);
        }
        append(own);
        post_.push_back(in);
        break;
      }
      case InstanceKind::InterNodeAlienInput: {
        std::vector<int>& h = holders_[x];
        if (std::find(h.begin(), h.end(), in.peer.node) == h.end()) {
          h.push_back(in.peer.node);
          ensure(x, 0, t.priority);
          append(comm_task(kRuntimeSend, in.peer.node, x, version_[x], false, t.priority).add(slot(x, 0), AccessMode::Read));
        }
        break;
      }
      case InstanceKind::SinkMinorOutput:
        if (in.peer.node != d_.self) post_.push_back(in);
        break;
      default:
        break;  // same node: the owner instance reads or writes it in place
    }
  }

  // Instances that act on the versions the task wrote (version_ already counts them).
  void after_write(const TaskDesc& t, int main, const Instance& in) {
    if (in.kind == InstanceKind::SinkMinorOutput) {
      // This node's datum was written on another node: its new version comes back.
      const DataId y = t.access[in.access].data;
      append(comm_task(kRuntimeRecv, in.peer.node, y, version_[y], true, t.priority).add(slot(y, 0), AccessMode::Write));
      written(y, 0);
      holders_[y].assign(1, in.peer.node);
      if (home_[y] > 0) ensure(y, home_[y], t.priority);
      return;
    }
    // The owner instance: its device holds the new versions of everything it wrote.
    const int dm = loc_[main].device;
    for (int a = 0; a < t.n_access; ++a) {
      if (!writes(t.access[a].mode)) continue;
      const DataId y = t.access[a].data;
      written(y, dm);
      if (home_[y] >= 0) {
        holders_.erase(y);  // a version written on its own node is held there only
        if (home_[y] != dm) ensure(y, home_[y], t.priority);  // rule 7: back to its device
      } else {
        // Rule 8: back to its node, from host memory.
        ensure(y, 0, t.priority);
        append(comm_task(kRuntimeSend, loc_[a].node, y, version_[y], false, t.priority).add(slot(y, 0), AccessMode::Read));
      }
    }
  }

  // Device `dev` now holds the only current copy of y.
  void written(DataId y, int dev) {
    for (int e = 0; e <= G_; ++e) have(y, e) = kNone;
    have(y, dev) = version_[y];
  }

  // Makes slot(x, dev) hold x's current version: from the host to a GPU,
  // from a GPU to the host, from another node to the host (when no device
  // of this node holds it: a version this node wrote is sent, not received).
  void ensure(DataId x, int dev, std::int32_t prio) {
    const std::uint32_t v = version_[x];
    if (have(x, dev) == v) return;
    if (dev != 0) {
      ensure(x, 0, prio);
      copy(x, 0, dev, prio);
      return;
    }
    for (int g = 1; g <= G_; ++g)
      if (have(x, g) == v) {
        copy(x, g, 0, prio);
        return;
      }
    if (home_[x] < 0) {  // the current version is on its own node
      append(comm_task(kRuntimeRecv, d_.where(x).node, x, v, false, prio).add(slot(x, 0), AccessMode::Write));
      have(x, 0) = v;
      return;
    }
    throw std::logic_error("datum " + std::to_string(x) + " version " + std::to_string(v) + " is on no device of node " +
                           std::to_string(d_.self));
  }

  void copy(DataId x, int from, int to, std::int32_t prio) {
    TaskDesc c;
    c.kernel = kRuntimeCopy;
    c.arg[0] = from == 0 ? to : from;
    c.arg[1] = static_cast<std::int32_t>(x);
    c.arg[2] = static_cast<std::int32_t>(version_[x]);
    c.arg[3] = from == 0 ? 1 : 0;
    c.priority = prio;
    c.add(slot(x, from), AccessMode::Read).add(slot(x, to), AccessMode::Write);
    append(c);
    have(x, to) = version_[x];
  }

  // Frees device dev's copy of x (not the host memory of this node's own data) after its readers.
  void drop(DataId x, int dev) {
    if (have(x, dev) == kNone) return;
    have(x, dev) = kNone;
    append(comm_task(kRuntimeRelease, dev, x, 0, false, 0).add(slot(x, dev), AccessMode::Write));
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
  std::size_t n_;
  int G_;
  bool honour_release_;
  std::vector<std::uint32_t> version_;
  std::vector<std::uint32_t> have_;  // per device and datum: the version this node's copy holds
  std::vector<std::int8_t> home_;    // device of each of this node's data; -1: another node's
  std::unordered_map<DataId, std::vector<int>> holders_;
  std::vector<Instance> instances_, post_;
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
  const int G = static_cast<int>(options_.gpus.size());
  if (G > 0 && !dist) throw std::logic_error("a run with GPUs needs a DistContext (placement and data store)");
  for (const GpuContext& g : options_.gpus)
    if (!g.device || !g.executor || !g.tables) throw std::logic_error("GpuContext without device, executor or tables");
  RunState s(n_data, options_, platform_);
  s.dist = dist;
  // One node sends nothing: no communication thread (000 §4).
  const bool networked = s.networked();
  if (networked) {
    s.observer = options_.observer;
    s.clock = &platform_;
    dist->network->start([&s](int source, platform::Message&& m) { s.deliver(source, std::move(m)); });
  }
  RunStats stats;
  stats.busy_s.assign(options_.threads, 0.0);
  stats.gpus.assign(G, DeviceStats{});
  RuntimeObserver* obs = options_.observer;
  const double t0 = platform_.now();
  if (obs) obs->on_run_start(options_.threads + G, executor, t0);

  platform_.spawn("generator", [&] {
    try {
      if (dist) {
        ProtocolSink sink(s, n_data, G, options_.release_tiles);
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

  // A compute thread: the host's CPU workers share its queue; a GPU's
  // manager thread serves the GPU's queue and waits for each kernel.
  auto serve = [&](ReadyQueue& queue, WorkerContext& ctx, Executor& ex, const KernelTimeModel* model,
                   platform::Device* device, double& busy) {
    std::vector<Task*> ready;
    const int w = ctx.id();
    while (Task* t = queue.pop()) {
      if (!s.cancelled.load(std::memory_order_relaxed)) {
        const double a = platform_.now();
        // Observers see the algorithm's data ids, not this node's device slots.
        TaskDesc seen;
        if (obs) {
          seen = t->desc;
          for (int x = 0; x < seen.n_access; ++x) seen.access[x].data = static_cast<DataId>(seen.access[x].data % s.n_data);
          obs->on_task_start(w, seen, a);
        }
        try {
          double modeled = 0;
          if (model) {
            const KernelShape sh = ex.shape(t->desc);
            modeled = model->seconds(sh);
            modeled += s.cold_extra(*model, sh, a, modeled);
          }
          platform_.run_kernel(ex, t->desc, ctx, modeled);
          if (device) device->synchronize();
        } catch (...) {
          s.fail(std::current_exception());
        }
        const double b = platform_.now();
        if (obs) obs->on_task_end(w, seen, b);
        busy += b - a;
      }
      try {
        s.finish(t, ready);
      } catch (...) {
        // Only a distributed run's sends and receives throw here.
        if (networked) s.abort_run(std::current_exception());
        s.fail(std::current_exception());
      }
    }
  };

  for (int w = 0; w < options_.threads; ++w) {
    platform_.spawn("cpu" + std::to_string(w), [&, w] {
      WorkerContext ctx(w);
      serve(s.ready, ctx, executor, options_.model, nullptr, stats.busy_s[w]);
    });
  }
  for (int g = 1; g <= G; ++g) {
    GpuContext& gc = s.gpus[g - 1];
    platform_.spawn("gpu" + std::to_string(g), [&, g] {
      WorkerContext ctx(options_.threads + g - 1, g, gc.device->kernels_d(), gc.device->kernels_s());
      serve(*s.gpu_ready[g - 1], ctx, *gc.executor, gc.model, gc.device, stats.gpus[g - 1].busy_s);
    });
  }
  // The device communication thread (000 §5.4): moves copies from the
  // mailboxes to idle streams, and FIREs the copies the devices report done.
  if (G > 0)
    platform_.spawn("gpu-comm", [&] {
      std::vector<Task*> ready;
      std::vector<int> to_start;
      std::vector<std::pair<int, std::exception_ptr>> ended;
      for (;;) {
        to_start.clear();
        ended.clear();
        {
          platform::Lock lk(*s.copy_mutex);
          for (;;) {
            ended.swap(s.copies_done);
            for (std::size_t k = 0; k < s.streams.size(); ++k) {
              RunState::CopyStream& st = s.streams[k];
              if (st.current || st.mbox.empty()) continue;
              std::pop_heap(st.mbox.begin(), st.mbox.end(), RunState::lower_priority);
              st.current = st.mbox.back();
              st.mbox.pop_back();
              to_start.push_back(static_cast<int>(k));
            }
            if (!ended.empty() || !to_start.empty()) break;
            if (s.copies_closed) return;  // every task has finished
            s.copy_cond->wait(*s.copy_mutex);
          }
        }
        for (const int k : to_start) {
          RunState::CopyStream& st = s.streams[k];
          st.started = platform_.now();
          auto done = [&s, k, this](std::exception_ptr e) {
            platform::Lock lk(*s.copy_mutex);
            s.streams[k].ended = platform_.now();
            s.copies_done.emplace_back(k, e);
            s.copy_cond->notify_one();
          };
          if (s.cancelled.load(std::memory_order_relaxed)) {
            done(nullptr);
            continue;
          }
          try {
            s.start_copy(st.current->desc, k % 2, st.ranges, done);
          } catch (...) {
            done(std::current_exception());
          }
        }
        for (auto& [k, error] : ended) {
          RunState::CopyStream& st = s.streams[k];
          Task* t = std::exchange(st.current, nullptr);
          if (error) {
            // The other nodes wait for this node's messages: a copy that
            // cannot be made ends the run (cancelling would leave them waiting).
            if (networked) s.abort_run(error);
            s.fail(error);
          } else if (obs && !s.cancelled.load(std::memory_order_relaxed)) {
            const DataId x = static_cast<DataId>(t->desc.arg[1]);
            obs->on_copy(k / 2 + 1, k % 2 == 0, x, dist->store->bytes(x), st.started, st.ended);
          }
          try {
            s.finish(t, ready);
          } catch (...) {
            if (networked) s.abort_run(std::current_exception());
            s.fail(std::current_exception());
          }
        }
      }
    });
  platform_.join_all();
  if (networked) dist->network->stop();
  for (int g = 1; g <= G; ++g) {
    DeviceStats& d = stats.gpus[g - 1];
    const auto& c = s.gpu_stats[g - 1];
    d.peak_bytes = c.peak;
    d.bytes_at_end = c.in_use;
    // What the task graph left (with release_tiles off: every copy) is freed now.
    for (std::size_t x = 0; x < n_data; ++x) s.release_buffer(g, static_cast<DataId>(x));
    d.copies_in = c.copies_in, d.bytes_in = c.bytes_in, d.copies_out = c.copies_out, d.bytes_out = c.bytes_out;
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
