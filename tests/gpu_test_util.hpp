#pragma once
// The harness of the GPU runtime tests (test_gpu_runtime.cpp,
// test_gpu_out_of_core.cpp): fast emulated devices, and run_gpus, which runs a
// factorization on in-process nodes with emulated GPUs and records what every
// node and device did; expect_correct checks such a run against the serial
// algorithm.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/factorization.hpp"
#include "algorithms/qr.hpp"
#include "algorithms/tile_data_store.hpp"
#include "base/matrix_gen.hpp"
#include "deferred_kernels.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/native/local_network.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/distribution.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera::test {

using platform::EmulatedDevice;
using platform::EmulatedDeviceOptions;
using platform::HostRange;

// An emulated device with `memory` bytes whose copies are quick (1 TB/s, no
// latency).
inline EmulatedDeviceOptions fast(std::size_t memory = std::size_t{1} << 30) {
  EmulatedDeviceOptions o;
  o.memory_bytes = memory;
  o.bandwidth_Bps = 1e12;
  o.latency_s = 0;
  return o;
}

struct Grid {
  int pr, pc;
};

// How the nodes are connected: a one-node run without a network, a one-node
// LocalCluster, or a LocalCluster of pr*pc nodes.
enum class Net { None, Local };

// A task as the serial algorithm names it: kernel, arguments and data (slot
// ids of a GPU run reduced to their datum).
using TaskKey = std::tuple<int, int, int, int, int, std::vector<DataId>>;

inline TaskKey key_of(const TaskDesc& t, std::size_t n_data) {
  std::vector<DataId> data;
  for (int a = 0; a < t.n_access; ++a) data.push_back(static_cast<DataId>(t.access[a].data % n_data));
  return {t.kernel, t.arg[0], t.arg[1], t.arg[2], t.arg[3], data};
}

// Records every kernel one device of one node runs, and whether it belongs there.
class RecordingExecutor final : public Executor {
 public:
  RecordingExecutor(Executor& e, int node, int device, std::size_t n_data, const Placement& where,
                    std::atomic<std::uint64_t>* done = nullptr)
      : e_(e), node_(node), device_(device), n_(n_data), where_(where), done_(done) {}
  void execute(const TaskDesc& t, WorkerContext& w) override {
    {
      std::lock_guard lk(mutex_);
      keys.push_back(key_of(t, n_));
      const int m = t.main_output();
      const Location l = m < 0 ? Location{-1, -1} : where_(static_cast<DataId>(t.access[m].data % n_));
      if (l != Location{node_, device_} || w.device() != device_) {
        if (misplaced++ == 0)
          first_misplaced = "kernel " + std::to_string(t.kernel) + " (" + std::to_string(t.arg[0]) + "," +
                            std::to_string(t.arg[1]) + "," + std::to_string(t.arg[2]) +
                            ") whose main output lives on node " + std::to_string(l.node) + " device " +
                            std::to_string(l.device) + " ran on node " + std::to_string(node_) + " device " +
                            std::to_string(device_) + " (worker device " + std::to_string(w.device()) + ")";
      }
    }
    e_.execute(t, w);
    if (done_) ++*done_;
  }
  KernelShape shape(const TaskDesc& t) const override { return e_.shape(t); }

  std::vector<TaskKey> keys;
  int misplaced = 0;
  std::string first_misplaced;

 private:
  std::mutex mutex_;
  Executor& e_;
  int node_, device_;
  std::size_t n_;
  const Placement& where_;
  std::atomic<std::uint64_t>* done_;
};

// A device that notes, at each buffer it frees, how many kernels its node
// had finished by then.
class WatchedDevice final : public platform::Device {
 public:
  WatchedDevice(std::unique_ptr<platform::Device> d, const std::atomic<std::uint64_t>& done)
      : d_(std::move(d)), done_(done) {}
  std::string name() const override { return d_->name(); }
  std::size_t capacity() const override { return d_->capacity(); }
  bool has_data() const override { return d_->has_data(); }
  std::byte* allocate(std::size_t bytes) override { return d_->allocate(bytes); }
  void release(std::byte* p, std::size_t bytes) override {
    {
      std::lock_guard lk(mutex_);
      released_after.push_back(done_.load());
      released_in_copy += copying_.count(p) > 0;
    }
    d_->release(p, bytes);
  }
  std::size_t in_use() const override { return d_->in_use(); }
  std::size_t peak() const override { return d_->peak(); }
  void free_kept() override { d_->free_kept(); }
  void copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) override {
    d_->copy(stream, dev, host, n, to_device);
  }
  // Counts the copies queued on each stream at once (the device's own depth
  // bounds them; the runtime must keep to it).
  // And which buffers a copy is using, so that freeing one is caught.
  void copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) override {
    if (fail_copy_at > 0 && ++copies_ == fail_copy_at) throw std::runtime_error("copy refused (a test's failure)");
    std::atomic<int>& q = queued_[stream & 1];
    const int now = q.fetch_add(1) + 1;
    int m = max_queued[stream & 1].load();
    while (now > m && !max_queued[stream & 1].compare_exchange_weak(m, now)) {
    }
    {
      std::lock_guard lk(mutex_);
      copying_.insert(dev);
    }
    const auto ended = [this, &q, dev] {
      q.fetch_sub(1);
      std::lock_guard lk(mutex_);
      copying_.erase(copying_.find(dev));
    };
    try {
      d_->copy_async(stream, dev, host, n, to_device, [ended, done = std::move(done)](std::exception_ptr e) {
        ended();
        done(e);
      });
    } catch (...) {
      ended();
      throw;
    }
  }
  int copy_depth() const override { return d_->copy_depth(); }
  kernels::TileKernels<double>& kernels_d() override { return lanes_.empty() ? d_->kernels_d() : lanes_[lane_]->d; }
  kernels::TileKernels<float>& kernels_s() override { return lanes_.empty() ? d_->kernels_s() : lanes_[lane_]->s; }
  // From now on the kernels run as late as the device contract allows
  // (tests/deferred_kernels.hpp): a task's at the wait for its mark, all at
  // synchronize(). With lanes > 1, as a CUDA GPU with that many compute
  // streams: each task's kernels go to the lanes in turn (kernels_d() after
  // begin_kernels() hands out the lane's), each lane a stream of its own.
  void defer_kernels(int lanes = 1) {
    lanes_.clear();
    for (int i = 0; i < lanes; ++i) lanes_.push_back(std::make_unique<Deferred>(*d_));
  }
  std::uint64_t deferred_calls() const {
    std::uint64_t n = 0;
    for (const auto& l : lanes_) n += l->stream.calls;
    return n;
  }
  std::vector<std::uint64_t> lane_calls() const {
    std::vector<std::uint64_t> n;
    for (const auto& l : lanes_) n.push_back(l->stream.calls);
    return n;
  }
  void synchronize() override {
    for (auto& l : lanes_) l->stream.flush();
    d_->synchronize();
  }
  void begin_kernels(bool panel) override {
    ++(panel ? panel_tasks : other_tasks);
    if (!lanes_.empty()) lane_ = static_cast<std::size_t>(next_mark_ % lanes_.size());
    d_->begin_kernels(panel);
  }
  double kernel_span_s() const override { return d_->kernel_span_s(); }
  // kernel_depth_override > 0: the depth this device reports (the emulated
  // device's kernels end before they return, so any depth is safe), its
  // marks numbered here, and checked: waited for in the order they were
  // made, never more outstanding than the depth.
  int kernel_depth() const override { return kernel_depth_override > 0 ? kernel_depth_override : d_->kernel_depth(); }
  std::uint64_t end_kernels() override {
    const std::uint64_t inner = d_->end_kernels();
    if (!lanes_.empty()) lanes_[lane_]->stream.close(next_mark_);
    outstanding_.push_back({next_mark_, inner});
    max_marks = std::max(max_marks, static_cast<int>(outstanding_.size()));
    return next_mark_++;
  }
  // With one lane (or none) marks must be waited for oldest first; a wait for
  // another counts in marks_out_of_order and runs nothing. With several
  // lanes any outstanding mark may be waited for (Device::kernel_streams):
  // its lane's stream runs through it, and a wait for another than the
  // oldest counts in marks_retired_early.
  void wait_kernels(std::uint64_t mark) override {
    auto it = find_outstanding(mark);
    if (it == outstanding_.end() || (it != outstanding_.begin() && lanes_.size() < 2)) {
      ++marks_out_of_order;
      return;
    }
    if (it != outstanding_.begin()) ++marks_retired_early;
    const std::uint64_t inner = it->second;
    outstanding_.erase(it);
    if (!lanes_.empty()) lanes_[mark % lanes_.size()]->stream.run_through(mark);
    d_->wait_kernels(inner);
  }
  int kernel_streams() const override { return lanes_.size() > 1 ? static_cast<int>(lanes_.size()) : 1; }
  // Several lanes: every third mark's kernels "take long" (never seen ended
  // before the wait for them), so that the runtime retires later ones first.
  // A mark asked about that is not outstanding counts in marks_out_of_order.
  bool kernels_ended(std::uint64_t mark) override {
    if (find_outstanding(mark) == outstanding_.end()) ++marks_out_of_order;
    return lanes_.size() < 2 || mark % 3 != 0;
  }
  // None ended: the oldest, as if the wait had lasted until it did (a late
  // mark ends only when waited for), or after a finite timeout nothing.
  std::optional<std::uint64_t> wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) override {
    for (const std::uint64_t m : marks)
      if (kernels_ended(m)) return m;
    if (std::isfinite(timeout_s) && ++timeouts % 2 == 1) return std::nullopt;
    return marks.front();
  }
  int timeouts = 0;  // wait_any_kernels calls with a finite timeout that found nothing ended

  std::vector<std::uint64_t> released_after;  // kernels finished at each release
  std::atomic<int> max_queued[2] = {0, 0};    // most copies queued at once, per stream
  int released_in_copy = 0;                   // buffers freed while a copy used them (under mutex_)
  int fail_copy_at = 0;                       // > 0: the copy_async call of that number throws
  int kernel_depth_override = 0;
  int max_marks = 0;            // most tasks' kernels outstanding at once (the manager thread's)
  int marks_out_of_order = 0;   // wait_kernels calls for another mark than the oldest (one lane), or none outstanding
  int marks_retired_early = 0;  // several lanes: waits for a mark while an older one was outstanding
  int panel_tasks = 0, other_tasks = 0;  // begin_kernels calls with panel = true, false

 private:
  struct Deferred {
    explicit Deferred(platform::Device& inner) : d(inner.kernels_d(), stream), s(inner.kernels_s(), stream) {}
    KernelStream stream;
    DeferredKernels<double> d;
    DeferredKernels<float> s;
  };
  std::unique_ptr<platform::Device> d_;
  std::deque<std::pair<std::uint64_t, std::uint64_t>>::iterator find_outstanding(std::uint64_t mark) {
    return std::find_if(outstanding_.begin(), outstanding_.end(), [&](const auto& o) { return o.first == mark; });
  }
  std::vector<std::unique_ptr<Deferred>> lanes_;  // deferred kernels, one per lane (none: the device's own)
  std::size_t lane_ = 0;                          // the lane of the task being queued
  const std::atomic<std::uint64_t>& done_;
  std::atomic<int> queued_[2] = {0, 0};
  std::multiset<std::byte*> copying_;                                // buffers of the copies under way
  std::deque<std::pair<std::uint64_t, std::uint64_t>> outstanding_;  // (mark, the inner device's mark)
  std::uint64_t next_mark_ = 0;
  int copies_ = 0;  // copy_async calls (the device communication thread's)
  std::mutex mutex_;
};

inline constexpr index_t kIb = 16;
inline constexpr std::uint64_t kMatrixSeed = 7;

struct DeviceOutcome {
  int node = 0, gpu = 0;
  bool owns_read = false;     // owns a datum some task touches
  bool owns_written = false;  // owns a datum some task writes
  DeviceStats stats;
  std::size_t in_use_after = 0, peak = 0;
  std::size_t releases = 0;
  std::size_t released_early = 0;  // buffers freed while the node still had kernels to run
  int copy_depth = 1;
  int max_queued[2] = {0, 0};  // most copies queued at once on its in- and out-stream
  int kernel_depth = 1, max_marks = 0, marks_out_of_order = 0, marks_retired_early = 0;  // WatchedDevice's
  int panel_tasks = 0, other_tasks = 0;                                                  // WatchedDevice's
  int poll_timeouts = 0;                  // WatchedDevice's timeouts: finite waits that found nothing ended
  int released_in_copy = 0;               // buffers freed while a copy into or out of them was under way
  std::uint64_t deferred_calls = 0;       // kernel calls the device ran later than made (RunSpec::defer_kernels)
  std::vector<std::uint64_t> lane_calls;  // of them, per lane (RunSpec::kernel_lanes)
};

struct GpuOutcome {
  bool release_tiles = true;  // the run honoured Release_Tile
  std::vector<TaskKey> keys;  // every kernel run, over all nodes and devices
  int misplaced = 0;
  std::string first_misplaced;
  bool same_bytes = true;
  std::string mismatch;
  std::vector<DeviceOutcome> devices;
};

template <class T>
struct Reference {
  Reference(bool chol, const TileLayout& L) : a(L), f(L, kIb) {
    generate(a, chol ? MatrixKind::Spd : MatrixKind::General, kMatrixSeed);
    if (chol) {
      CholeskyExecutor<T> ex(a);
      SequentialSink s(ex, kernels::cpu_kernel_pair());
      cholesky_tasks(L, s);
    } else {
      QrExecutor<T> ex(a, f);
      SequentialSink s(ex, kernels::cpu_kernel_pair());
      qr_tasks(L, s);
    }
  }
  TileMatrix<T> a;
  QrFactors<T> f;
};

// Per datum: 0 no task touches it, 1 tasks only read it, 2 some task writes it.
inline std::vector<int> data_use(bool chol, const TileLayout& L) {
  struct Rec final : TaskSink {
    std::vector<int> use;
    void insert(const TaskDesc& t) override {
      for (int a = 0; a < t.n_access; ++a) {
        int& u = use[t.access[a].data];
        u = std::max(u, writes(t.access[a].mode) ? 2 : 1);
      }
    }
  } r;
  r.use.assign(chol ? cholesky_data_count(L) : qr_data_count(L), 0);
  if (chol) cholesky_tasks(L, r);
  else qr_tasks(L, r);
  return r.use;
}

inline std::vector<TaskKey> serial_keys(bool chol, const TileLayout& L) {
  struct Rec final : TaskSink {
    std::size_t n;
    std::vector<TaskKey> keys;
    void insert(const TaskDesc& t) override { keys.push_back(key_of(t, n)); }
  } r;
  r.n = chol ? cholesky_data_count(L) : qr_data_count(L);
  if (chol) cholesky_tasks(L, r);
  else qr_tasks(L, r);
  std::sort(r.keys.begin(), r.keys.end());
  return r.keys;
}

struct RunSpec {
  bool chol = true;
  Grid grid{1, 1};
  Net net = Net::Local;
  int G = 1;
  int threads = 2;
  std::uint64_t seed = 1;
  bool release_tiles = true;
  std::size_t window = 16384;
  EmulatedDeviceOptions device = fast();
  int device_kernel_depth = 0;   // > 0: the devices report it (WatchedDevice::kernel_depth_override)
  int runtime_kernel_depth = 0;  // RuntimeOptions::gpu_kernel_depth
  bool defer_kernels = false;    // the devices' kernels run as late as allowed (WatchedDevice::defer_kernels)
  int kernel_lanes = 1;          // ... on this many streams, the tasks in turn
  Eviction eviction = Eviction::NextUse;
};

// One run of the factorization on pr*pc nodes (one thread each), each with
// G emulated GPUs; compares every node's own tiles (and QR T factors) with
// `ref` byte for byte.
template <class T>
GpuOutcome run_gpus(const RunSpec& r, const TileLayout& L, const Reference<T>& ref) {
  const bool chol = r.chol;
  const int P = r.grid.pr * r.grid.pc, p = L.tile_rows(), q = L.tile_cols(), G = r.G;
  const MultiLevelBlockCyclic dist(L, r.grid.pr, r.grid.pc, G);
  const DataId pq = static_cast<DataId>(p * q);
  const Placement where = factorization(chol ? "cholesky" : "qr").placement(L, dist);
  const std::size_t n_data = chol ? cholesky_data_count(L) : qr_data_count(L);
  const std::vector<int> use = data_use(chol, L);
  std::optional<platform::LocalCluster> cluster;
  if (r.net == Net::Local) cluster.emplace(P);
  GpuOutcome out;
  out.release_tiles = r.release_tiles;
  std::mutex out_mutex;
  std::vector<std::thread> nodes;
  std::vector<std::exception_ptr> errors(P);
  for (int self = 0; self < P; ++self)
    nodes.emplace_back([&, self] {
      try {
        auto own = [&](int i, int j) { return dist.owner(i, j).node == self; };
        TileMatrix<T> a(L, own);
        generate(a, chol ? MatrixKind::Spd : MatrixKind::General, kMatrixSeed);
        std::optional<QrFactors<T>> f;
        if (!chol) f.emplace(L, kIb, own);
        TileDataStore<T> store;
        store.add_tiles(0, a, f ? &*f : nullptr);
        if (f) store.add_panels(pq, *f, q);

        std::vector<std::unique_ptr<WatchedDevice>> devices;
        std::vector<std::unique_ptr<GpuTables<T>>> tables;
        std::vector<std::unique_ptr<RecordingExecutor>> gpu_ex;
        RuntimeOptions opt;
        opt.threads = r.threads;
        opt.policy = ReadyPolicy::Random;
        opt.seed = r.seed + 101 * self;
        opt.release_tiles = r.release_tiles;
        opt.window_capacity = r.window;
        opt.gpu_kernel_depth = r.runtime_kernel_depth;
        opt.eviction = r.eviction;
        std::atomic<std::uint64_t> done{0};  // kernels this node has finished
        for (int g = 1; g <= G; ++g) {
          devices.push_back(std::make_unique<WatchedDevice>(std::make_unique<EmulatedDevice>(g, r.device), done));
          devices.back()->kernel_depth_override = r.device_kernel_depth;
          if (r.defer_kernels) devices.back()->defer_kernels(r.kernel_lanes);
          tables.push_back(factorization(chol ? "cholesky" : "qr").gpu_tables(L, kIb, T{}));
          gpu_ex.push_back(
              std::make_unique<RecordingExecutor>(tables.back()->executor(), self, g, n_data, where, &done));
          opt.gpus.push_back({devices.back().get(), gpu_ex.back().get(), &tables.back()->tables, nullptr});
        }
        DistContext ctx;
        ctx.self = self;
        ctx.where = where;
        ctx.network = cluster ? &cluster->node(self) : nullptr;
        ctx.store = &store;
        opt.dist = &ctx;
        platform::NativePlatform platform;
        NodeRuntime rt(platform, opt);
        std::unique_ptr<Executor> host_ex;
        if (chol) host_ex = std::make_unique<CholeskyExecutor<T>>(a);
        else host_ex = std::make_unique<QrExecutor<T>>(a, *f);
        RecordingExecutor host(*host_ex, self, 0, n_data, where, &done);
        const RunStats st = chol ? rt.run(
                                       n_data, [&](TaskSink& s) { cholesky_tasks(L, s); }, host)
                                 : rt.run(
                                       n_data, [&](TaskSink& s) { qr_tasks(L, s); }, host);

        std::lock_guard lk(out_mutex);
        std::vector<RecordingExecutor*> all{&host};
        for (auto& e : gpu_ex) all.push_back(e.get());
        for (RecordingExecutor* e : all) {
          out.keys.insert(out.keys.end(), e->keys.begin(), e->keys.end());
          if (e->misplaced > 0 && out.misplaced == 0) out.first_misplaced = e->first_misplaced;
          out.misplaced += e->misplaced;
        }
        for (int g = 1; g <= G; ++g) {
          DeviceOutcome d;
          d.node = self;
          d.gpu = g;
          for (std::size_t x = 0; x < n_data; ++x)
            if (where(static_cast<DataId>(x)) == Location{self, g}) {
              d.owns_read |= use[x] > 0;
              d.owns_written |= use[x] > 1;
            }
          d.stats = g - 1 < static_cast<int>(st.gpus.size()) ? st.gpus[g - 1] : DeviceStats{};
          d.in_use_after = devices[g - 1]->in_use();
          d.peak = devices[g - 1]->peak();
          d.releases = devices[g - 1]->released_after.size();
          for (std::uint64_t k : devices[g - 1]->released_after) d.released_early += k < done.load();
          d.copy_depth = devices[g - 1]->copy_depth();
          for (int k = 0; k < 2; ++k) d.max_queued[k] = devices[g - 1]->max_queued[k].load();
          d.released_in_copy = devices[g - 1]->released_in_copy;
          d.kernel_depth = devices[g - 1]->kernel_depth();
          d.max_marks = devices[g - 1]->max_marks;
          d.marks_out_of_order = devices[g - 1]->marks_out_of_order;
          d.marks_retired_early = devices[g - 1]->marks_retired_early;
          d.panel_tasks = devices[g - 1]->panel_tasks;
          d.poll_timeouts = devices[g - 1]->timeouts;
          d.other_tasks = devices[g - 1]->other_tasks;
          d.deferred_calls = devices[g - 1]->deferred_calls();
          d.lane_calls = devices[g - 1]->lane_calls();
          out.devices.push_back(d);
        }
        if (static_cast<int>(st.gpus.size()) != G) {
          out.same_bytes = false;
          out.mismatch =
              "RunStats::gpus has " + std::to_string(st.gpus.size()) + " entries for " + std::to_string(G) + " GPUs";
        }
        for (int j = 0; j < q; ++j)
          for (int i = 0; i < p; ++i) {
            if (!own(i, j)) continue;
            const std::size_t e = static_cast<std::size_t>(L.row_height(i) * L.col_width(j));
            bool same = a.tile(i, j) && std::memcmp(a.tile(i, j), ref.a.tile(i, j), e * sizeof(T)) == 0;
            if (!chol && i >= L.col_top(j))
              same = same && f->t(i, j) && std::memcmp(f->t(i, j), ref.f.t(i, j), f->t_elems(i, j) * sizeof(T)) == 0;
            if (!same && out.same_bytes) {
              out.same_bytes = false;
              out.mismatch = "node " + std::to_string(self) + " tile (" + std::to_string(i) + "," + std::to_string(j) +
                             ") on device " + std::to_string(dist.owner(i, j).device);
            }
          }
      } catch (...) {
        errors[self] = std::current_exception();
      }
    });
  for (auto& t : nodes) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::sort(out.keys.begin(), out.keys.end());
  return out;
}

// Asserts (a)-(e) of one run; `what` names it in failures.
inline void expect_correct(const GpuOutcome& o, const std::vector<TaskKey>& serial, const std::string& what) {
  EXPECT_TRUE(o.same_bytes) << what << ": " << o.mismatch << " differs from the serial result";
  EXPECT_EQ(o.keys.size(), serial.size()) << what << ": kernels run over all nodes and devices";
  EXPECT_TRUE(o.keys == serial) << what << ": every task of the serial algorithm runs exactly once";
  EXPECT_EQ(o.misplaced, 0) << what << ": " << o.first_misplaced;
  for (const DeviceOutcome& d : o.devices) {
    const std::string dev = what + ", node " + std::to_string(d.node) + " GPU " + std::to_string(d.gpu);
    // With Release_Tile the task graph frees every buffer; without, it leaves
    // them all (its peak) and run() frees them after its threads.
    if (o.release_tiles) EXPECT_EQ(d.stats.bytes_at_end, 0u) << dev << ": DeviceStats.bytes_at_end";
    else
      EXPECT_EQ(d.stats.bytes_at_end, d.stats.peak_bytes) << dev << ": DeviceStats.bytes_at_end without Release_Tile";
    EXPECT_EQ(d.in_use_after, 0u) << dev << ": the device's in_use() after the run";
    for (int k = 0; k < 2; ++k)
      EXPECT_LE(d.max_queued[k], d.copy_depth) << dev << ": copies queued at once on stream " << k;
    EXPECT_EQ(d.released_in_copy, 0) << dev << ": buffers freed while a copy used them";
    EXPECT_LE(d.max_marks, d.kernel_depth) << dev << ": tasks' kernels queued at once";
    EXPECT_EQ(d.marks_out_of_order, 0) << dev << ": tasks' kernels waited for out of order";
    // Distinct data are counted once however often they cross.
    EXPECT_LE(d.stats.distinct_bytes_in, d.stats.bytes_in) << dev;
    EXPECT_LE(d.stats.distinct_bytes_out, d.stats.bytes_out) << dev;
    EXPECT_EQ(d.stats.distinct_bytes_in > 0, d.stats.bytes_in > 0) << dev;
    EXPECT_EQ(d.stats.copy_in_s > 0, d.stats.copies_in > 0) << dev << ": time of the copies in";
    EXPECT_EQ(d.stats.copy_out_s > 0, d.stats.copies_out > 0) << dev << ": time of the copies out";
    // The device's own time for the kernels lies within the manager thread's (0 where it does not measure it).
    EXPECT_GE(d.stats.kernel_span_s, 0.0) << dev;
    EXPECT_LE(d.stats.kernel_span_s, d.stats.busy_s) << dev << ": kernel span within the manager's busy time";
    if (d.owns_read) {
      EXPECT_GT(d.stats.copies_in, 0u) << dev << " owns data but nothing was copied to it";
      EXPECT_GT(d.stats.bytes_in, 0u) << dev;
      EXPECT_GT(d.stats.peak_bytes, 0u) << dev;
    }
    if (d.owns_written) {
      // What it wrote of its own data goes home to host memory.
      EXPECT_GT(d.stats.copies_out, 0u) << dev << " wrote its data but nothing came back from it";
    }
  }
}

}  // namespace tessera::test
