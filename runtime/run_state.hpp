#pragma once
// The state the threads of one NodeRuntime::run share (an internal header of
// the runtime: only node_runtime.cpp and protocol_sink.cpp include it): the
// task window, the ready queues, the device communication thread's streams
// and mailboxes, the GPU buffers, and a distributed run's message matching.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/spinlock.hpp"
#include "runtime/node_runtime.hpp"
#include "runtime/relevance.hpp"
#include "runtime/task_window.hpp"

namespace tessera::detail {

// State shared by the threads of one run.
struct RunState {
  // `n_data` algorithm data; the window holds one slot per datum and device
  // of this node (slot(d, dev) = dev·n_data + d). `relevance`: the data node
  // `self` follows (runtime/relevance.hpp), the only ones it can hold on a
  // GPU; nullptr: all.
  RunState(std::size_t n_data, const RuntimeOptions& o, platform::Platform& p, const DataRelevance* relevance = nullptr,
           int self = 0)
      : n_data(n_data), window(n_data * (o.gpus.size() + 1), o.window_capacity, p), ready(p, o.policy, o.seed),
        error_mutex(p.make_mutex()), gpus(o.gpus), followed(relevance, self, n_data) {
    const std::size_t held = followed.count();
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      gpu_ready.push_back(std::make_unique<ReadyQueue>(p, o.policy, o.seed + g + 1));
      buffers.emplace_back(held, nullptr);
    }
    streams = std::vector<CopyStream>(2 * gpus.size());
    for (std::size_t k = 0; k < streams.size(); ++k) {
      streams[k].depth = static_cast<std::size_t>(std::max(1, gpus[k / 2].device->copy_depth()));
      copy_depth_total += streams[k].depth;
    }
    copies_done.reserve(copy_depth_total);
    alloc_order.resize(gpus.size());
    admitted.assign(gpus.size(), 0);
    copy_mutex = p.make_mutex();
    copy_cond = p.make_condition();
    gpu_stats = std::vector<GpuCounters>(gpus.size());
    for (GpuCounters& c : gpu_stats) c.crossed.assign(held, 0);
  }
  // Frees every buffer GPU g still holds (the end of a run).
  void release_buffers(int g) {
    followed.for_each([&](DataId x) { release_buffer(g, x); });
  }

  std::size_t n_data;
  TaskWindow window;
  ReadyQueue ready;  // the host's compute threads
  std::atomic<std::uint64_t> completed{0};
  std::atomic<std::uint64_t> total{std::numeric_limits<std::uint64_t>::max()};
  std::atomic<bool> cancelled{false};
  std::unique_ptr<platform::Mutex> error_mutex;
  std::exception_ptr error;

  // ---- GPUs (000 §5.3-5.5) ----
  std::vector<GpuContext> gpus;
  // The data this node follows (runtime/relevance.hpp): the only ones it can
  // hold on a GPU, and those the generator's protocol keeps state for. The
  // per-datum GPU tables below hold them alone, at followed.index(x).
  const FollowedData followed;
  std::vector<std::unique_ptr<ReadyQueue>> gpu_ready;  // GPU g's ready tasks: gpu_ready[g-1]
  // The device communication thread's state (000 §5.4): per GPU g, stream
  // 2(g-1) serves its in_mbox (copies to it) and stream 2(g-1)+1 its
  // out_mbox (copies from it); mailboxes are heaps by priority. Up to the
  // device's copy_depth() copies are queued on a stream at once, so that the
  // device has the next at hand when one ends; the thread finishes a
  // stream's copies in the order they were queued.
  struct InFlight {
    Task* task = nullptr;
    std::size_t reserved = 0;                 // GPU bytes admit() reserved for its buffer
    double started = 0;                       // when it was handed to the device
    std::vector<platform::HostRange> ranges;  // valid until it has ended
    bool ended = false;                       // reported done (under copy_mutex)
    std::exception_ptr error;
    double ended_at = 0;
  };
  struct Posted {  // a copy and its priority, which the heap compares without reading the task
    std::int32_t priority;
    Task* task;
  };
  struct CopyStream {
    std::vector<Posted> mbox;
    std::deque<InFlight> in_flight;  // oldest first
    std::size_t depth = 1;
    double last_ended = 0;  // when the stream's previous copy ended
    double busy_s = 0;      // the stream's copies end to end: what its bytes took
    bool has_room() const { return in_flight.size() < depth; }
  };
  std::vector<CopyStream> streams;
  std::unique_ptr<platform::Mutex> copy_mutex;
  std::unique_ptr<platform::Condition> copy_cond;
  // Streams with a copy reported done since the thread last looked (the
  // slot itself carries the outcome: a copy can be reported done out of
  // order, at once, when it was cancelled or could not start). Reserved for
  // every copy that can be in flight (copy_depth_total; each reports once),
  // as is the device communication thread's list it swaps with: a report
  // never allocates, and cannot fail on the thread that makes it (an emulated
  // copy engine, the CUDA waiter, the device communication thread's catch).
  std::vector<int> copies_done;
  std::size_t copy_depth_total = 0;
  bool copies_closed = false;
  static bool lower_priority(const Posted& a, const Posted& b) { return a.priority < b.priority; }

  // The stream of a copy task: GPU g's in-stream 2(g-1), its out-stream 2(g-1)+1.
  static int stream_of(const TaskDesc& d) { return 2 * (d.arg[0] - 1) + (d.arg[3] != kCopyToHost ? 0 : 1); }
  void post_copy(Task* t) {
    const int k = stream_of(t->desc);
    platform::Lock lk(*copy_mutex);
    std::vector<Posted>& box = streams[k].mbox;
    box.push_back({t->desc.priority, t});
    std::push_heap(box.begin(), box.end(), lower_priority);
    copy_cond->notify_one();
  }
  // GPU g's buffer of each datum this node follows (its indirect tile
  // table's storage), null where it holds none: buffers[g - 1][followed.index(x)].
  std::vector<std::vector<std::byte*>> buffers;
  struct GpuCounters {
    std::atomic<std::uint64_t> copies_in{0}, bytes_in{0}, copies_out{0}, bytes_out{0};
    // Planned by the generator (ProtocolSink::evict): copies freed to make
    // room, and the bytes of those that held the node's only current version.
    std::atomic<std::uint64_t> evictions{0}, bytes_written_back{0};
    std::atomic<std::size_t> in_use{0}, peak{0};  // this run's buffers
    // Which data have crossed in (bit 0) and out (bit 1) at least once, and
    // their bytes: each crossing beyond the first is PCIe traffic a GPU that
    // kept its copies would not need. Written by the device communication
    // thread alone (start_copy), read after it has ended.
    std::vector<std::uint8_t> crossed;
    std::uint64_t distinct_bytes_in = 0, distinct_bytes_out = 0;
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
  // arrival and points the GPU's tile tables at it. A buffer-only copy ends
  // there (done at once, nothing moved or counted).
  void start_copy(const TaskDesc& d, int stream, std::vector<platform::HostRange>& ranges,
                  platform::Device::CopyDone done) {
    const int g = d.arg[0];
    const DataId x = static_cast<DataId>(d.arg[1]);
    const bool to_device = d.arg[3] != kCopyToHost;
    GpuContext& gc = gpus[g - 1];
    platform::Device& dev = *gc.device;
    std::byte*& buf = buffers[g - 1][followed.index(x)];
    const std::size_t bytes = dist->store->bytes(x);
    if (!buf) {
      if (!to_device)
        throw std::logic_error("GPU " + std::to_string(g) + " holds no copy of datum " + std::to_string(x) +
                               " to copy back");
      buf = dev.allocate(bytes);
      gpu_stats[g - 1].allocated(bytes);
      gc.tables->point_at(x, buf);
    }
    if (d.arg[3] == kCopyBufferOnly) {
      done(nullptr);
      return;
    }
    ranges.clear();
    // A device without data (a phantom simulation) still moves the datum's
    // bytes: one range of its size, which it times but never touches.
    if (dev.has_data()) dist->store->host_ranges(x, ranges);
    else ranges.push_back({nullptr, bytes});
    dev.copy_async(stream, buf, ranges.data(), static_cast<int>(ranges.size()), to_device, std::move(done));
    GpuCounters& c = gpu_stats[g - 1];
    (to_device ? c.copies_in : c.copies_out).fetch_add(1, std::memory_order_relaxed);
    (to_device ? c.bytes_in : c.bytes_out).fetch_add(bytes, std::memory_order_relaxed);
    const std::uint8_t bit = to_device ? 1 : 2;
    std::uint8_t& crossed = c.crossed[followed.index(x)];
    if (!(crossed & bit)) {
      crossed |= bit;
      (to_device ? c.distinct_bytes_in : c.distinct_bytes_out) += bytes;
    }
  }

  void release_buffer(int g, DataId x) {
    std::byte*& buf = buffers[g - 1][followed.index(x)];
    if (!buf) return;
    gpus[g - 1].tables->point_at(x, nullptr);
    const std::size_t bytes = dist->store->bytes(x);
    gpus[g - 1].device->release(buf, bytes);
    gpu_stats[g - 1].in_use.fetch_sub(bytes);
    buf = nullptr;
    // A copy may be waiting for this memory.
    platform::Lock lk(*copy_mutex);
    copy_cond->notify_one();
  }

  // ---- GPU memory admission ----
  // The generator plans every GPU buffer against the GPU's capacity, evicting
  // copies when the plan would not fit (ProtocolSink), and records the order
  // of its allocations per GPU here. The device communication thread starts
  // a copy that needs a new buffer only when it is the next one in that
  // order and fits in what is free now: a buffer the plan freed earlier is
  // released by a task generated earlier, which needs no later allocation,
  // so the copies that wait always get their memory, and a GPU's resident
  // bytes never exceed its capacity whatever the window holds.
  std::vector<std::deque<DataId>> alloc_order;  // per GPU, under copy_mutex
  std::vector<std::size_t> admitted;            // per GPU, under copy_mutex: bytes admitted, not yet allocated

  void plan_allocation(int g, DataId x) {
    platform::Lock lk(*copy_mutex);
    alloc_order[g - 1].push_back(x);
  }
  // Under copy_mutex: whether copy task d may start now (and, if it needs a
  // buffer, takes its turn in the allocation order and reserves the buffer's
  // bytes in `reserved`, which the caller gives back with unreserve() once
  // start_copy has allocated it or failed: with several copies queued per
  // stream, buffers admitted together are allocated after the check).
  bool admit(const TaskDesc& d, std::size_t& reserved) {
    reserved = 0;
    if (d.arg[3] == kCopyToHost || cancelled.load(std::memory_order_relaxed)) return true;  // no GPU memory
    const int g = d.arg[0];
    const DataId x = static_cast<DataId>(d.arg[1]);
    if (buffers[g - 1][followed.index(x)]) return true;  // into its buffer
    return take_turn(g, x, dist->store->bytes(x), reserved);
  }
  // A copy that found neither its buffer nor its turn waits aside. Its buffer
  // can not appear meanwhile: only a copy to GPU g allocates (g, x)'s, and
  // every such copy writes the window slot (x, g), so it ran before this one
  // was ready or runs after it has finished. A parked copy's admission thus
  // depends on its turn and the free memory alone, which its record answers
  // without reading the task or the buffer table (a debug build asserts the
  // buffer's absence): the thread scans the parked copies at every wake, and
  // with those reads the thread was 6.2% of a 100-node simulation (2.95% now).
  struct Parked {
    Task* task;
    DataId x;
    int g;
    int stream;
    std::size_t bytes;
  };
  Parked park(Task* t) const {
    const DataId x = static_cast<DataId>(t->desc.arg[1]);
    return {t, x, t->desc.arg[0], stream_of(t->desc), dist->store->bytes(x)};
  }
  bool admit(const Parked& p, std::size_t& reserved) {
    reserved = 0;
    if (cancelled.load(std::memory_order_relaxed)) return true;
    assert(!buffers[p.g - 1][followed.index(p.x)]);
    return take_turn(p.g, p.x, p.bytes, reserved);
  }
  bool take_turn(int g, DataId x, std::size_t bytes, std::size_t& reserved) {
    std::deque<DataId>& order = alloc_order[g - 1];
    const platform::Device& dev = *gpus[g - 1].device;
    if (order.empty() || order.front() != x || dev.in_use() + admitted[g - 1] + bytes > dev.capacity()) return false;
    order.pop_front();
    admitted[g - 1] += bytes;
    reserved = bytes;
    return true;
  }
  std::vector<Parked> parked;  // copies waiting for memory, under copy_mutex
  // Under copy_mutex.
  void unreserve(const TaskDesc& d, std::size_t reserved) { admitted[d.arg[0] - 1] -= reserved; }

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
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.arg[1])) << 32) |
           static_cast<std::uint32_t>(d.arg[2]);
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
    std::string why = "node " + std::to_string(dist->self) + ": ";
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      why += "out of memory for the tiles it sends or receives";
    } catch (const std::exception& x) {
      why += x.what();
    } catch (...) {
      why += "unknown error";
    }
    dist->network->abort(exit_status_of(e), why);
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
    if (done == total.load()) close_queues();
  }
  // The ready queues and the copy mailboxes end: their threads return once they have drained what they hold.
  void close_queues() {
    ready.close();
    for (auto& q : gpu_ready) q->close();
    platform::Lock lk(*copy_mutex);
    copies_closed = true;
    copy_cond->notify_one();
  }
};

}  // namespace tessera::detail
