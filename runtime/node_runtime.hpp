#pragma once
// One node's runtime: a task-generation thread runs a serial algorithm that
// APPENDs into the task window; compute threads pop ready tasks, run their
// kernel and FIRE their successors.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/task.hpp"
#include "kernels/tile_kernels_api.hpp"
#include "platform/device.hpp"
#include "platform/kernel_time_model.hpp"
#include "platform/network.hpp"
#include "platform/platform.hpp"
#include "runtime/protocol.hpp"
#include "runtime/ready_queue.hpp"

namespace tessera {

// Per-worker state handed to kernels: its index, the device it runs on
// (0: the host's cores, g >= 1: GPU g) and that device's kernels, and a
// reusable scratch buffer.
class WorkerContext {
 public:
  // A CPU worker: the kernels of its core (Platform::core_kernels), which it owns.
  WorkerContext(int id, kernels::KernelPair own) : id_(id), own_(std::move(own)), d_(own_.d.get()), s_(own_.s.get()) {}
  // A GPU manager: the device's kernels.
  WorkerContext(int id, int device, kernels::TileKernels<double>& d, kernels::TileKernels<float>& s)
      : id_(id), device_(device), d_(&d), s_(&s) {}
  // A GPU manager, after Device::begin_kernels: the kernels of the task it
  // is about to queue (a device with several compute streams hands out
  // another stream's kernels per task).
  void use_kernels(kernels::TileKernels<double>& d, kernels::TileKernels<float>& s) {
    d_ = &d;
    s_ = &s;
  }
  int id() const { return id_; }
  int device() const { return device_; }
  template <class T>
  kernels::TileKernels<T>& kernels() {
    if constexpr (sizeof(T) == 8) return *d_;
    else return *s_;
  }
  // Scratch space for at least `count` elements of T, 64-byte aligned, valid until the next call.
  template <class T>
  T* scratch(std::size_t count) {
    const std::size_t bytes = count * sizeof(T) + 64;
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    auto p = reinterpret_cast<std::uintptr_t>(scratch_.data());
    return reinterpret_cast<T*>((p + 63) & ~std::uintptr_t{63});
  }

 private:
  int id_;
  int device_ = 0;
  kernels::KernelPair own_;
  kernels::TileKernels<double>* d_;
  kernels::TileKernels<float>* s_;
  std::vector<unsigned char> scratch_;
};

// Runs the kernel of a task. Implemented by each algorithm for its data.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void execute(const TaskDesc& t, WorkerContext& w) = 0;
  // The call's dimensions, for kernel models (simulated runs, traces).
  virtual KernelShape shape(const TaskDesc& t) const { return KernelShape{t.kernel}; }
};

// Hooks called around every kernel (tracing, statistics). on_task_start and
// on_task_end run on the worker that runs the task, concurrently on a native
// platform; on_run_start runs before any worker starts, on_run_end after all
// have ended.
class RuntimeObserver {
 public:
  virtual ~RuntimeObserver() = default;
  // `executor` stays valid until on_run_end (its shape() names a task's dimensions).
  virtual void on_run_start(int /*threads*/, const Executor& /*executor*/, double /*now*/) {}
  virtual void on_run_end(double /*now*/) {}
  virtual void on_task_start(int /*worker*/, const TaskDesc& /*t*/, double /*now*/) {}
  virtual void on_task_end(int /*worker*/, const TaskDesc& /*t*/, double /*now*/) {}
  // Right before on_task_end of a GPU task, where the device measures its
  // own work (Device::kernel_span_s): the span of the task's kernels as the
  // device saw it, from the first one's start to the last one's end. The
  // task's interval less this is the host's share (launches, the wait).
  virtual void on_task_device_span(int /*worker*/, double /*span_s*/) {}
  // A copy between the host and GPU `gpu` (1-based) of datum d ended; called
  // on the device communication thread.
  virtual void on_copy(int /*gpu*/, bool /*to_device*/, DataId /*d*/, std::size_t /*bytes*/, double /*start*/,
                       double /*end*/) {}
  // A message from node `from` carrying datum d arrived at node `to` (this
  // node) at `end`, after `end - start` seconds in transit as the network
  // measured it (Message::transit_s); called on the communication thread.
  virtual void on_message(int /*from*/, int /*to*/, DataId /*d*/, std::size_t /*bytes*/, double /*start*/,
                          double /*end*/) {}
};

// The data a distributed run moves between nodes, as one node holds them.
// Implemented per algorithm over its tile tables (algorithms/tile_data_store.hpp);
// a phantom store (simulated runs without data) only knows sizes.
class DataStore {
 public:
  virtual ~DataStore() = default;
  // Whether messages carry data (false: only their modeled size travels).
  virtual bool has_data() const = 0;
  // Payload size of datum d on the wire.
  virtual std::size_t bytes(DataId d) const = 0;
  // Element size, to count words (000 App. A.2 counts matrix elements).
  virtual std::size_t word_bytes() const = 0;
  // Copies this node's copy of d (its own, or the alien copy it holds) to `out`.
  virtual void pack(DataId d, std::byte* out) const = 0;
  // A new version of one of this node's own data arrived (a sink minor output).
  virtual void unpack_own(DataId d, const std::byte* in) = 0;
  // An alien copy of d arrived: the store keeps the message and points its
  // tile tables at the payload, where kernels find it. The previous alien
  // copy of d, whose readers have all finished, is freed.
  virtual void adopt_alien(DataId d, platform::Message&& m) = 0;
  // The alien copy of d is no longer needed (Release_Tile): free it.
  virtual void release_alien(DataId d) = 0;
  // The host bytes of this node's copy of d (its own, or the alien copy it
  // holds), in wire order: what a copy to or from a GPU moves.
  virtual void host_ranges(DataId d, std::vector<platform::HostRange>& out) = 0;
  // Whether this node has host memory for d now (host_ranges would succeed):
  // false for data made during the run, such as QR's panel copies.
  virtual bool holds(DataId d) const {
    (void)d;
    return true;
  }
  // Points the tile tables at `at`, a buffer that holds d in wire order (a
  // GPU's tables at its device buffer), or at nothing.
  virtual void point_at(DataId d, std::byte* at) = 0;
};

// One GPU of a node: the device, the executor that runs tasks on its tile
// tables (000 §5.5: pointers into device memory), and those tables.
struct GpuContext {
  platform::Device* device = nullptr;
  Executor* executor = nullptr;
  DataStore* tables = nullptr;
  // Simulated runs: the GPU's kernel model.
  const KernelTimeModel* model = nullptr;
};

// What a run did on one GPU.
struct DeviceStats {
  double busy_s = 0;  // manager thread: time in kernels
  // The device's own time for the tasks' kernels (Device::kernel_span_s;
  // 0 where it does not measure it): busy_s less this is host overhead.
  double kernel_span_s = 0;
  // Kernel calls that fell back to a slower path (Device::kernel_fallbacks).
  std::uint64_t kernel_fallbacks = 0;
  std::size_t capacity_bytes = 0;  // Device::capacity(): the memory the runtime may use on it
  std::size_t peak_bytes = 0;      // most device memory in use at once
  std::size_t bytes_at_end = 0;    // left allocated by the task graph (0 with Release_Tile; run() then frees it)
  std::uint64_t copies_in = 0, bytes_in = 0, copies_out = 0, bytes_out = 0;
  // Copies freed before their Release_Tile to keep the GPU within its memory
  // (RuntimeOptions::eviction chooses which), and the bytes of those written back first
  // because the GPU held the node's only current version.
  std::uint64_t evictions = 0, bytes_written_back = 0;
  // The bytes of the distinct data copied in, and out, at least once: the
  // least a run that moves those data can copy (issue 15's residency, each
  // datum across PCIe once each way, is bytes_in == distinct_bytes_in).
  std::uint64_t distinct_bytes_in = 0, distinct_bytes_out = 0;
  // Seconds the in- and out-stream spent on copies (a queued copy counted
  // from the end of the one before it): bytes_in / copy_in_s is the
  // bandwidth the copies reached, to hold against the link's (issue 15
  // point 1: at least 80% of its pinned bandwidth).
  double copy_in_s = 0, copy_out_s = 0;
};

// A node of a distributed run, or the one node of a run with GPUs: who it
// is, where every datum lives (the same function on every node), its end of
// the network (null: a single node) and its data.
class DataRelevance;

struct DistContext {
  int self = 0;
  Placement where;
  platform::NodeNetwork* network = nullptr;
  DataStore* store = nullptr;
  // The data whose state this node's protocol follows (runtime/relevance.hpp),
  // made beforehand for this run's generator and placement (a simulated
  // cluster makes it once for all its nodes). Null: the run makes its own
  // (RuntimeOptions::follow_own_data).
  const DataRelevance* relevance = nullptr;
};

// Messages and payload bytes one node sent and received in a run.
struct CommStats {
  std::uint64_t messages_sent = 0, bytes_sent = 0, words_sent = 0;
  std::uint64_t messages_received = 0, bytes_received = 0, words_received = 0;
};

struct RuntimeOptions {
  int threads = 1;                      // compute threads
  std::size_t window_capacity = 16384;  // unfinished tasks held at most
  ReadyPolicy policy = ReadyPolicy::Priority;
  std::uint64_t seed = 1;  // for ReadyPolicy::Random
  RuntimeObserver* observer = nullptr;
  // When set, every kernel's modeled duration is handed to the platform
  // (a simulated platform advances its clock by it).
  const KernelTimeModel* model = nullptr;
  // Set for one node of a distributed run: the generator applies the
  // task-assignment protocol of 000 §6 and the node exchanges data through
  // dist->network (see run()).
  const DistContext* dist = nullptr;
  // The node's GPUs (devices 1..G of `dist->where`); needs `dist`. Each gets
  // a manager thread and two copy streams, which the node's one device
  // communication thread drives.
  std::vector<GpuContext> gpus;
  // Honour Release_Tile (false: keep every GPU copy until the run ends, for comparisons).
  bool release_tiles = true;
  // How a version read on several nodes reaches them (runtime/protocol_sink.hpp).
  Broadcast broadcast = Broadcast::Binomial;
  // Which copy a full GPU frees first.
  Eviction eviction = Eviction::NextUse;
  // Tasks' kernels a GPU's manager thread keeps queued at most
  // (Device::kernel_depth): 0 each device's own; 1 waits for each task's
  // kernels before the next (the depth of a simulated GPU).
  int gpu_kernel_depth = 0;
  // A distributed run's node follows only the tasks that touch its data
  // (runtime/relevance.hpp); false: every task, as 000 §6 states the
  // protocol (the same tasks and messages; for comparisons).
  bool follow_own_data = true;
};

struct RunStats {
  std::uint64_t tasks = 0;
  double elapsed_s = 0;
  std::vector<double> busy_s;  // per compute thread: time spent in kernels
  CommStats comm;              // distributed runs
  std::vector<DeviceStats> gpus;
};

// Inserts a factorization's tasks in order. It must be deterministic and free
// of side effects: with GPUs, the first time one must evict a copy the run
// calls it a second time, from inside an insert() of the first call, to learn
// the future uses of the data (runtime/next_use.hpp; RuntimeOptions::eviction).
using Generator = std::function<void(TaskSink&)>;

class NodeRuntime {
 public:
  NodeRuntime(platform::Platform& platform, RuntimeOptions options);

  // Runs `generate` on the task-generation thread and every task it inserts on
  // the compute threads; returns when all have finished. The first exception a
  // kernel throws cancels the remaining kernels and is rethrown here.
  //
  // Distributed (options.dist set): data ids [0, n_data) are the algorithm's
  // data, wherever they live; the window also holds one alien slot per datum,
  // n_data + d, for the copy of a remote datum this node works on. The
  // generator keeps the owner instance of every task whose main output lives
  // here and adds a send task for every inter-node alien input and source
  // minor output, and a receive task for every remote input and sink minor
  // output; a tile version travels to a node at most once. A failed kernel
  // does not stop the generator here: the other nodes expect this node's
  // messages, so the run completes (without running kernels) and rethrows;
  // run() returns on all nodes together (a collective over the network), and
  // a node whose peer failed throws RemoteFailure with that node's status.
  RunStats run(std::size_t n_data, const Generator& generate, Executor& executor);

 private:
  platform::Platform& platform_;
  RuntimeOptions options_;
};

// Runs the tasks one after the other in serial order on the calling thread:
// the reference every parallel execution must reproduce.
class SequentialSink final : public TaskSink {
 public:
  // `kernels`: the kernels of the core it runs on (Platform::core_kernels).
  SequentialSink(Executor& e, kernels::KernelPair kernels) : executor_(e), worker_(0, std::move(kernels)) {}
  void insert(const TaskDesc& t) override { executor_.execute(t, worker_); }

 private:
  Executor& executor_;
  WorkerContext worker_;
};

}  // namespace tessera
