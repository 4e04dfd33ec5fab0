// GPUs without a GPU (issue 5): the emulated device on its own, and runs of
// the protocol-driven runtime with G = 1..3 emulated GPUs per node, on one
// node and on in-process clusters. The emulated device's kernels are the CPU
// kernels, so every node must end with exactly the bytes of the serial
// algorithm; every task must run once, on the device that owns its main
// output; every device buffer must be freed by the end of the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/factorization.hpp"
#include "algorithms/qr.hpp"
#include "algorithms/tile_data_store.hpp"
#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/native/local_network.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/distribution.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {
namespace {

using platform::EmulatedDevice;
using platform::EmulatedDeviceOptions;
using platform::HostRange;

// ---------------------------------------------------------------------------
// The emulated device on its own.

EmulatedDeviceOptions fast(std::size_t memory = std::size_t{1} << 30) {
  EmulatedDeviceOptions o;
  o.memory_bytes = memory;
  o.bandwidth_Bps = 1e12;
  o.latency_s = 0;
  return o;
}

TEST(EmulatedGpu, AccountsAllocationsAndPeak) {
  EmulatedDevice d(2, fast(10000));
  EXPECT_EQ(d.capacity(), 10000u);
  EXPECT_TRUE(d.has_data());
  EXPECT_EQ(d.in_use(), 0u);
  EXPECT_EQ(d.peak(), 0u);
  std::byte* a = d.allocate(3000);
  std::byte* b = d.allocate(5000);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  // Separate allocations: writing all of one leaves the other alone.
  std::memset(a, 0x11, 3000);
  std::memset(b, 0x22, 5000);
  EXPECT_EQ(a[2999], std::byte{0x11});
  EXPECT_EQ(b[0], std::byte{0x22});
  EXPECT_EQ(d.in_use(), 8000u);
  EXPECT_EQ(d.peak(), 8000u);
  d.release(a, 3000);
  EXPECT_EQ(d.in_use(), 5000u);
  EXPECT_EQ(d.peak(), 8000u) << "the peak is the most ever in use, not what is in use now";
  std::byte* c = d.allocate(1000);
  EXPECT_EQ(d.in_use(), 6000u);
  EXPECT_EQ(d.peak(), 8000u);
  std::byte* e = d.allocate(4000);  // exactly up to the capacity
  EXPECT_EQ(d.in_use(), 10000u);
  EXPECT_EQ(d.peak(), 10000u);
  d.release(b, 5000);
  d.release(c, 1000);
  d.release(e, 4000);
  EXPECT_EQ(d.in_use(), 0u);
  EXPECT_EQ(d.peak(), 10000u);
}

TEST(EmulatedGpu, OutOfMemoryNamesTheDeviceAndTheSizes) {
  EmulatedDevice d(3, fast(10000));
  std::byte* a = d.allocate(6000);
  try {
    d.allocate(4001);
    FAIL() << "4001 bytes on top of 6000 of 10000 must not fit";
  } catch (const DeviceOutOfMemory& x) {
    const std::string m = x.what();
    EXPECT_NE(m.find("GPU 3"), std::string::npos) << m;
    EXPECT_NE(m.find("4001"), std::string::npos) << "what was asked: " << m;
    EXPECT_NE(m.find("6000"), std::string::npos) << "what is in use: " << m;
    EXPECT_NE(m.find("10000"), std::string::npos) << "the capacity: " << m;
  }
  EXPECT_EQ(d.in_use(), 6000u) << "a failed allocation takes nothing";
  EXPECT_EQ(d.peak(), 6000u);
  std::byte* b = d.allocate(4000);  // what is left still fits
  EXPECT_EQ(d.in_use(), 10000u);
  d.release(a, 6000);
  d.release(b, 4000);
  // A single buffer larger than the whole device.
  EXPECT_THROW(d.allocate(10001), DeviceOutOfMemory);
  EXPECT_EQ(d.in_use(), 0u);
}

TEST(EmulatedGpu, CopyMovesTheBytesBothWaysOverSeveralRanges) {
  EmulatedDevice d(1, fast());
  const std::size_t sizes[] = {24, 1000, 1, 4096, 333};
  std::vector<std::vector<unsigned char>> host;
  std::vector<HostRange> ranges;
  std::size_t total = 0;
  for (std::size_t k = 0; k < std::size(sizes); ++k) {
    host.emplace_back(sizes[k]);
    for (std::size_t i = 0; i < sizes[k]; ++i) host[k][i] = static_cast<unsigned char>(7 * k + 13 * i + 1);
    total += sizes[k];
  }
  for (auto& h : host) ranges.push_back({reinterpret_cast<std::byte*>(h.data()), h.size()});
  std::byte* buf = d.allocate(total);
  std::memset(buf, 0, total);
  d.copy(0, buf, ranges.data(), static_cast<int>(ranges.size()), true);
  // The device buffer holds the ranges one after the other, in order.
  std::size_t at = 0;
  for (std::size_t k = 0; k < host.size(); ++k) {
    EXPECT_EQ(std::memcmp(buf + at, host[k].data(), host[k].size()), 0) << "range " << k << " at offset " << at;
    at += host[k].size();
  }
  // Change the device copy, clear the host, copy back.
  for (std::size_t i = 0; i < total; ++i) buf[i] = static_cast<std::byte>(255 - (i % 251));
  for (auto& h : host) std::fill(h.begin(), h.end(), 0);
  d.copy(1, buf, ranges.data(), static_cast<int>(ranges.size()), false);
  at = 0;
  for (std::size_t k = 0; k < host.size(); ++k)
    for (std::size_t i = 0; i < host[k].size(); ++i, ++at)
      ASSERT_EQ(host[k][i], static_cast<unsigned char>(255 - (at % 251))) << "range " << k << " byte " << i;
  d.release(buf, total);
  EXPECT_EQ(d.in_use(), 0u);
}

TEST(EmulatedGpu, CopyTakesAtLeastLatencyPlusBytesOverBandwidth) {
  // 2 MB at 200 MB/s = 10 ms, plus 5 ms latency; only a lower bound (a busy
  // machine may take longer, never shorter).
  EmulatedDeviceOptions o;
  o.memory_bytes = std::size_t{64} << 20;
  o.bandwidth_Bps = 200e6;
  o.latency_s = 5e-3;
  EmulatedDevice d(1, o);
  const std::size_t half = std::size_t{1} << 20;
  std::vector<unsigned char> h1(half, 1), h2(half, 2);
  HostRange r[2] = {{reinterpret_cast<std::byte*>(h1.data()), half}, {reinterpret_cast<std::byte*>(h2.data()), half}};
  std::byte* buf = d.allocate(2 * half);
  const double expect = o.latency_s + static_cast<double>(2 * half) / o.bandwidth_Bps;
  for (bool to_device : {true, false}) {
    const auto t0 = std::chrono::steady_clock::now();
    d.copy(to_device ? 0 : 1, buf, r, 2, to_device);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(took, expect) << (to_device ? "to the device" : "to the host");
  }
  // A copy of nothing still pays the latency.
  const auto t0 = std::chrono::steady_clock::now();
  d.copy(0, buf, nullptr, 0, true);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), o.latency_s);
  d.release(buf, 2 * half);
}

TEST(EmulatedGpu, RejectsBadOptions) {
  auto with = [](auto set) {
    EmulatedDeviceOptions o;
    set(o);
    return o;
  };
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.bandwidth_Bps = 0; })), InputError);
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.bandwidth_Bps = -5; })), InputError);
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.bandwidth_Bps = std::nan(""); })), InputError);
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.latency_s = -1e-6; })), InputError);
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.latency_s = std::nan(""); })), InputError);
  EXPECT_THROW(EmulatedDevice(1, with([](auto& o) { o.memory_bytes = 0; })), InputError);
  try {
    EmulatedDevice(1, with([](auto& o) { o.bandwidth_Bps = 0; }));
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(EmulatedDevice(1, with([](auto& o) { o.latency_s = 0; })));
  EXPECT_EQ(EmulatedDevice(4, EmulatedDeviceOptions{}).name(), "GPU 4 (emulated)");
}

// ---------------------------------------------------------------------------
// Runs with GPUs.

// Parallelism comes from the runtime's threads: a multithreaded BLAS inside
// each kernel only makes the threads of the in-process nodes fight (as the driver does).
class BlasSingleThreaded : public ::testing::Environment {
 public:
  void SetUp() override { kernels::set_blas_threads(1); }
};
const auto* const kBlasEnv = ::testing::AddGlobalTestEnvironment(new BlasSingleThreaded);

struct Grid {
  int pr, pc;
};

// How the nodes are connected: a one-node run without a network, a one-node
// LocalCluster, or a LocalCluster of pr*pc nodes.
enum class Net { None, Local };

// A task as the serial algorithm names it: kernel, arguments and data (slot
// ids of a GPU run reduced to their datum).
using TaskKey = std::tuple<int, int, int, int, int, std::vector<DataId>>;

TaskKey key_of(const TaskDesc& t, std::size_t n_data) {
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
    }
    d_->release(p, bytes);
  }
  std::size_t in_use() const override { return d_->in_use(); }
  std::size_t peak() const override { return d_->peak(); }
  void copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) override {
    d_->copy(stream, dev, host, n, to_device);
  }
  void copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) override {
    d_->copy_async(stream, dev, host, n, to_device, std::move(done));
  }
  kernels::TileKernels<double>& kernels_d() override { return d_->kernels_d(); }
  kernels::TileKernels<float>& kernels_s() override { return d_->kernels_s(); }
  void synchronize() override { d_->synchronize(); }

  std::vector<std::uint64_t> released_after;  // kernels finished at each release

 private:
  std::unique_ptr<platform::Device> d_;
  const std::atomic<std::uint64_t>& done_;
  std::mutex mutex_;
};

constexpr index_t kIb = 16;
constexpr std::uint64_t kMatrixSeed = 7;

struct DeviceOutcome {
  int node = 0, gpu = 0;
  bool owns_read = false;     // owns a datum some task touches
  bool owns_written = false;  // owns a datum some task writes
  DeviceStats stats;
  std::size_t in_use_after = 0, peak = 0;
  std::size_t releases = 0;
  std::size_t released_early = 0;  // buffers freed while the node still had kernels to run
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
std::vector<int> data_use(bool chol, const TileLayout& L) {
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

std::vector<TaskKey> serial_keys(bool chol, const TileLayout& L) {
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
        std::atomic<std::uint64_t> done{0};  // kernels this node has finished
        for (int g = 1; g <= G; ++g) {
          devices.push_back(std::make_unique<WatchedDevice>(std::make_unique<EmulatedDevice>(g, r.device), done));
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
void expect_correct(const GpuOutcome& o, const std::vector<TaskKey>& serial, const std::string& what) {
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

struct GpuCase {
  std::string algo;
  Grid grid;
  Net net;
  int G;
};

std::string case_name(const GpuCase& c) {
  std::string g = c.grid.pr * c.grid.pc == 1 ? (c.net == Net::None ? "1node_nonet" : "1node_local")
                                             : std::to_string(c.grid.pr) + "x" + std::to_string(c.grid.pc);
  return c.algo + "_" + g + "_G" + std::to_string(c.G);
}

// gtest prints a failing case's parameter with this.
void PrintTo(const GpuCase& c, std::ostream* os) { *os << case_name(c); }

class GpuRuntime : public ::testing::TestWithParam<GpuCase> {};

template <class T>
void check_case(const GpuCase& c, int s) {
  const bool chol = c.algo == "cholesky";
#ifdef TESSERA_TSAN
  const index_t n = 360;
  const std::vector<std::uint64_t> seeds{3};
#else
  const index_t n = s == 1 ? 480 : 600;
  const std::vector<std::uint64_t> seeds{3, 29};
#endif
  const TileLayout L(chol ? n : n + 120, n, 120, s, s > 1 ? 24 : 0);
  const Reference<T> ref(chol, L);
  const std::vector<TaskKey> serial = serial_keys(chol, L);
  for (std::uint64_t seed : seeds) {
    RunSpec r;
    r.chol = chol;
    r.grid = c.grid;
    r.net = c.net;
    r.G = c.G;
    r.seed = seed;
    const GpuOutcome o = run_gpus<T>(r, L, ref);
    expect_correct(
        o, serial,
        case_name(c) + (sizeof(T) == 8 ? " d" : " s") + " s=" + std::to_string(s) + " seed=" + std::to_string(seed));
  }
}

TEST_P(GpuRuntime, MatchesSerialBitForBitOnTheOwningDevices) {
  const GpuCase c = GetParam();
  for (int s : {1, 3}) {
    check_case<double>(c, s);
    check_case<float>(c, s);
  }
}

std::vector<GpuCase> gpu_cases() {
  std::vector<GpuCase> out;
  for (const std::string algo : {"cholesky", "qr"})
    for (int G : {1, 2, 3}) {
      out.push_back({algo, {1, 1}, Net::None, G});
      out.push_back({algo, {1, 1}, Net::Local, G});
      for (Grid g : {Grid{1, 2}, Grid{2, 1}, Grid{2, 2}}) out.push_back({algo, g, Net::Local, G});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Grids, GpuRuntime, ::testing::ValuesIn(gpu_cases()),
                         [](const auto& info) { return case_name(info.param); });

// Release_Tile frees a GPU's copies after their readers: the peak of device
// memory is lower than when every copy is kept to the end (release_tiles =
// false, --keep-tiles), and the results are the same. Logs both peaks.
void compare_release(std::size_t window) {
#ifdef TESSERA_TSAN
  const TileLayout L(480, 480, 48, 3, 8);
#else
  const TileLayout L(960, 960, 96, 3, 16);
#endif
  const Reference<double> ref(true, L);
  const std::vector<TaskKey> serial = serial_keys(true, L);
  RunSpec r;
  r.chol = true;
  r.net = Net::None;
  r.G = 2;
  r.seed = 5;
  r.window = window;
  r.release_tiles = true;
  const GpuOutcome with = run_gpus<double>(r, L, ref);
  r.release_tiles = false;
  const GpuOutcome without = run_gpus<double>(r, L, ref);
  expect_correct(with, serial, "release_tiles=true");
  expect_correct(without, serial, "release_tiles=false");
  ASSERT_EQ(with.devices.size(), 2u);
  ASSERT_EQ(without.devices.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const std::size_t a = with.devices[g].stats.peak_bytes, b = without.devices[g].stats.peak_bytes;
    std::printf("[ log      ] window %zu, GPU %d peak_bytes: %zu with Release_Tile, %zu without (%.1f%%)\n", window,
                g + 1, a, b, 100.0 * static_cast<double>(a) / static_cast<double>(b));
    EXPECT_LT(a, b) << "GPU " << g + 1 << ": Release_Tile must lower the peak (window " << window << ")";
    EXPECT_GT(a, 0u);
    // The device's own peak tells the same story. (It may differ from the
    // run's by a few buffers: the runtime keeps its own count, updated after
    // the device's, from several threads.)
    EXPECT_LT(with.devices[g].peak, without.devices[g].peak) << "GPU " << g + 1 << ": the device's own peak";
  }
}

// A window much smaller than the graph: generation, and with it the end-of-run
// frees of release_tiles = false, ends only near the end of the run.
TEST(GpuRuntimeRelease, ReleaseTileLowersThePeakWithASmallWindow) { compare_release(64); }

// The default window holds the whole graph, so generation ends at once;
// without Release_Tile the copies must still stay until the run ends (they
// once were freed after their last reader as soon as generation ended, which
// made the two peaks equal up to scheduling noise).
TEST(GpuRuntimeRelease, ReleaseTileLowersThePeak) { compare_release(16384); }

// Stated directly: with release_tiles = false no GPU buffer may be freed
// while its node still has kernels to run.
TEST(GpuRuntimeRelease, KeepTilesKeepsEveryCopyToTheEnd) {
  const TileLayout L(600, 600, 120, 3, 24);
  const Reference<double> ref(true, L);
  RunSpec r;
  r.chol = true;
  r.net = Net::None;
  r.G = 2;
  r.release_tiles = false;
  const GpuOutcome o = run_gpus<double>(r, L, ref);
  expect_correct(o, serial_keys(true, L), "release_tiles=false");
  for (const DeviceOutcome& d : o.devices) {
    EXPECT_GT(d.releases, 0u) << "GPU " << d.gpu << " frees its buffers at the end";
    EXPECT_EQ(d.released_early, 0u) << "GPU " << d.gpu << ": of its " << d.releases
                                    << " buffers, these were freed before the node's last kernel";
  }
}

// Runs `body` on its own thread and fails (ending the test program) when it
// has not returned after `seconds`: a run that hangs must not look like one
// that is merely slow.
template <class F>
void within(double seconds, F body) {
  auto task = std::async(std::launch::async, body);
  if (task.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "the run did not end within %.0f s: it hangs\n", seconds);
    std::fflush(stderr);
    std::abort();
  }
  task.get();
}

// A tile that does not fit in a GPU: the run stops with DeviceOutOfMemory
// naming the device, instead of hanging or crashing.
TEST(GpuRuntimeOutOfMemory, ATileThatDoesNotFitThrows) {
  const TileLayout L(480, 480, 120, 1, 0);  // tiles of 120*120*8 = 115200 bytes
  const Reference<double> ref(true, L);
  const TileLayout L_qr(600, 480, 120, 1, 0);
  const Reference<double> ref_qr(false, L_qr);
  for (const bool chol : {true, false})
    for (const Net net : {Net::None, Net::Local}) {
      RunSpec r;
      r.chol = chol;
      r.net = net;
      r.G = 2;
      r.device = fast(100000);  // smaller than one tile
      within(60, [&] {
        try {
          if (chol) run_gpus<double>(r, L, ref);
          else run_gpus<double>(r, L_qr, ref_qr);
          ADD_FAILURE() << (chol ? "cholesky" : "qr") << ": a run whose tiles do not fit must throw";
        } catch (const DeviceOutOfMemory& e) {
          EXPECT_NE(std::string(e.what()).find("GPU "), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("100000"), std::string::npos) << e.what();
        }
      });
    }
}

// One node, one GPU with room for three Cholesky tiles of the ten it owns
// (and, with --keep-tiles, every copy it ever made kept otherwise): the
// generator evicts least recently used copies, writing back those the GPU
// alone holds, so the run completes within the device's memory with the
// serial result; with room for two tiles, a GSMM's three cannot be resident
// at once, and the run stops with DeviceOutOfMemory, frees its buffers and ends.
void run_one_node(std::size_t memory, bool release_tiles, Net net,
                  const std::function<void(NodeRuntime&, CholeskyExecutor<double>&, const TileLayout&, EmulatedDevice&,
                                           TileMatrix<double>&)>& body) {
  const TileLayout L(480, 480, 120, 1, 0);
  const MultiLevelBlockCyclic dist(L, 1, 1, 1);
  const Placement where = factorization("cholesky").placement(L, dist);
  TileMatrix<double> a(L);
  generate(a, MatrixKind::Spd, kMatrixSeed);
  TileDataStore<double> store;
  store.add_tiles(0, a);
  EmulatedDevice dev(1, fast(memory));
  const auto tables = factorization("cholesky").gpu_tables(L, kIb, double{});
  std::optional<platform::LocalCluster> cluster;
  if (net == Net::Local) cluster.emplace(1);
  DistContext ctx;
  ctx.self = 0;
  ctx.where = where;
  ctx.network = cluster ? &cluster->node(0) : nullptr;
  ctx.store = &store;
  RuntimeOptions opt;
  opt.threads = 2;
  opt.dist = &ctx;
  opt.release_tiles = release_tiles;
  opt.gpus.push_back({&dev, &tables->executor(), &tables->tables, nullptr});
  platform::NativePlatform platform;
  CholeskyExecutor<double> ex(a);
  NodeRuntime rt(platform, opt);
  body(rt, ex, L, dev, a);
}

TEST(GpuRuntimeOutOfCore, ThreeTilesOfRoomEvictAndMatchTheSerialResult) {
  const std::size_t tile = 120 * 120 * 8, memory = 3 * tile + 100;
  const Reference<double> ref(true, TileLayout(480, 480, 120, 1, 0));
  for (const bool release : {true, false})
    for (const Net net : {Net::None, Net::Local})
      run_one_node(memory, release, net,
                   [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice& dev,
                       TileMatrix<double>& a) {
                     RunStats st;
                     within(60, [&] {
                       st = rt.run(
                           cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
                     });
                     ASSERT_EQ(st.gpus.size(), 1u);
                     EXPECT_LE(dev.peak(), memory) << "resident bytes above the GPU's capacity";
                     EXPECT_GT(st.gpus[0].evictions, 0u) << "ten tiles in the room of three need evictions";
                     // Every datum lives on the GPU here: what an eviction writes back is a
                     // version only the GPU held, and it must be current for the result to match.
                     EXPECT_GT(st.gpus[0].bytes_written_back, 0u);
                     EXPECT_EQ(dev.in_use(), 0u);
                     for (int j = 0; j < L.tile_cols(); ++j)
                       for (int i = j; i < L.tile_rows(); ++i)
                         EXPECT_EQ(std::memcmp(a.tile(i, j), ref.a.tile(i, j), tile), 0)
                             << "tile (" << i << "," << j << "), release " << release;
                   });
}

TEST(GpuRuntimeOutOfCore, ATaskWhoseTilesDoNotFitTogetherThrowsAndFreesTheBuffers) {
  const std::size_t tile = 120 * 120 * 8;
  for (const Net net : {Net::None, Net::Local})
    run_one_node(2 * tile + 100, true, net,
                 [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice& dev,
                     TileMatrix<double>&) {
                   within(60, [&] {
                     try {
                       rt.run(
                           cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
                       ADD_FAILURE() << "a GSMM's three tiles in the room of two must throw";
                     } catch (const DeviceOutOfMemory& e) {
                       EXPECT_NE(std::string(e.what()).find(
                                     "GPU 1 (emulated): out of memory: a buffer of 115200 bytes does not fit"),
                                 std::string::npos)
                           << e.what();
                     }
                   });
                   EXPECT_EQ(dev.in_use(), 0u) << "a failed run leaves buffers allocated on the device";
                 });
}

// Bit for bit on every grid with GPUs of little memory: room for four tiles
// (less than half of what a GPU's own tiles need on one node, more than one
// task's), so the plan evicts
// and writes back throughout; never an input of a queued task (the result
// would differ or a kernel would find no buffer), peak within the capacity.
TEST(GpuRuntimeOutOfCore, SmallGpusMatchSerialBitForBitOnEveryGrid) {
  for (const bool chol : {true, false}) {
    const TileLayout L(chol ? 480 : 600, 480, 120, 3, 24);
    const Reference<double> ref(chol, L);
    const std::vector<TaskKey> serial = serial_keys(chol, L);
    for (Grid g : {Grid{1, 1}, Grid{1, 2}, Grid{2, 1}}) {
      RunSpec r;
      r.chol = chol;
      r.grid = g;
      r.G = 1;
      const std::size_t memory = 4 * (120 * 120 + kIb * 120) * 8;
      r.device = fast(memory);
      const std::string what =
          std::string(chol ? "cholesky " : "qr ") + std::to_string(g.pr) + "x" + std::to_string(g.pc);
      GpuOutcome o;
      within(120, [&] { o = run_gpus<double>(r, L, ref); });
      expect_correct(o, serial, what);
      std::uint64_t evictions = 0;
      for (const DeviceOutcome& d : o.devices) {
        EXPECT_LE(d.peak, memory) << what << " node " << d.node << " GPU " << d.gpu;
        evictions += d.stats.evictions;
      }
      if (g.pr * g.pc == 1) EXPECT_GT(evictions, 0u) << what;
    }
  }
}

}  // namespace
}  // namespace tessera
