#pragma once
// Execution traces in Chrome trace-event JSON (opens in Perfetto and
// chrome://tracing; analysis/trace_summary.py reads it). One schema for every
// backend: timestamps come from the platform clock, so a simulated run's trace
// is in simulated time and the same inputs give the same bytes.
//
//   {"displayTimeUnit": "ms",
//    "otherData": {"format": "tessera-trace", "version": 1, "backend": "sim", ...},
//    "traceEvents": [
//      {"ph":"M","pid":0,"name":"process_name","args":{"name":"node 0 (sim)"}},
//      {"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"cpu1"}},
//      {"name":"GSMM","cat":"task","ph":"X","pid":0,"tid":1,"ts":1520.000,"dur":676.174,
//       "args":{"k":0,"i":2,"j":1,"precision":"d","m":320,"n":320,"kdim":320,"ib":0,
//               "tiles":[{"i":2,"j":0,"mode":"r"},{"i":1,"j":0,"mode":"r"},{"i":2,"j":1,"mode":"rw"}]}},
//      {"name":"transfer","cat":"transfer","ph":"X","pid":1,"tid":2000,"ts":...,"dur":...,
//       "args":{"kind":"node","from":0,"to":1,"bytes":819200,"tile":{"i":2,"j":1}}}
//    ]}
//
// pid = node, tid = worker index (compute threads, then GPU managers),
// 1000 + 2(g-1) + direction for GPU g's copy streams (h2d, d2h), 2000 for
// the messages the node received from other nodes (kind "node"); ts and dur in microseconds since the first
// run started, printed with 3 decimals. A task event's args are the task's
// integer arguments (k, i, j), the precision and dimensions of its kernel call
// (kdim: inner dimension, ib: QR inner blocking; 0 when the kernel has none)
// and the data it accesses: tile (i, j) of the run's tile grid, or
// {"panel": k} for an algorithm's extra datum (QR's copy of panel k's
// reflectors); a GPU task on a device that measures its own work also has
// gpu_span_us (RuntimeObserver::on_task_device_span). Events are sorted by
// start time, then pid, then tid.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "base/spinlock.hpp"
#include "base/task.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// A node-to-node message (recorded by the receiving node) or a host<->device copy.
struct TransferRecord {
  enum class Kind : std::uint8_t { Node, HostToDevice, DeviceToHost };
  Kind kind = Kind::Node;
  int thread = 1000;     // tid in the trace
  int from = 0, to = 0;  // node (Kind::Node) or device (-1: host) indices
  DataId data = 0;       // the tile moved
  std::uint64_t bytes = 0;
  double start = 0, end = 0;  // platform clock, seconds
};

// What a trace file says about the run besides its events.
struct TraceInfo {
  std::string backend;  // "native", "sim"
  int tile_rows = 0;    // the run's tile grid: data id d < rows*cols is tile (d % rows, d / rows)
  int tile_cols = 0;
  std::string run;  // free text: the configuration (summary line)
  int gpus = 0;     // the last `gpus` workers are GPU managers (named gpu1..)
  // A QR run on CUDA GPUs: how their GEQRT and TSQRT factored panels
  // ("householder", "cholqr"); empty otherwise. A calibration from the trace
  // (tessera calibrate --from-traces) must have timed the same panels.
  std::string gpu_qr_panel;
  // With "cholqr": the rows of the blocks its Gram matrices were summed over
  // (--gpu-cholqr-gram; 0: one SYRK), written as gpu_cholqr_gram.
  int gpu_cholqr_gram = 0;
  // A run with GPUs: "on" where they were warmed before the clock (a
  // simulated run: their first-call costs skipped), "off" where the run paid
  // their first calls; written as gpu_warmup. Empty without GPUs (native CUDA
  // traces written before 2026-11-28 have none: their GPUs were cold; a
  // simulated run's then charged no GPU first call).
  std::string gpu_warmup;
  // A run with GPUs: "cuda", "emulated" (the CPU's kernels: no GPU library to
  // load) or "simulated"; written as gpu_device.
  std::string gpu_device;
};

// A RuntimeObserver that records one event per task of one node. Each worker
// appends to its own buffer (no lock on the task path); write() merges them.
class TraceRecorder final : public RuntimeObserver {
 public:
  explicit TraceRecorder(int node = 0) : node_(node) {}
  // The node a rank learns it is only once its run has started (mpirun).
  void set_node(int node) { node_ = node; }
  void on_run_start(int threads, const Executor& executor, double now) override;
  void on_run_end(double now) override;
  void on_task_start(int worker, const TaskDesc& t, double now) override;
  void on_task_end(int worker, const TaskDesc& t, double now) override;
  // Written as the task event's "gpu_span_us".
  void on_task_device_span(int worker, double span_s) override { workers_[worker]->span = span_s; }
  // A host<->GPU copy: a transfer event on the stream's own tid (1000 + 2(g-1) + direction).
  void on_copy(int gpu, bool to_device, DataId d, std::size_t bytes, double start, double end) override;
  // A message from another node: a transfer event of kind "node" on tid kMessageLane.
  void on_message(int from, int to, DataId d, std::size_t bytes, double start, double end) override;
  static constexpr int kMessageLane = 2000;
  // Thread-safe.
  void on_transfer(const TransferRecord& r);

  std::size_t task_events() const;
  // Writes the whole trace; call after the runs have ended.
  void write(std::ostream& out, const TraceInfo& info) const;

 private:
  struct TaskEvent {
    double start, end;
    TaskDesc desc;
    KernelShape shape;
    double gpu_span = -1;  // on_task_device_span's, or -1
  };
  // One cache line apart so workers never share one.
  struct alignas(64) WorkerBuffer {
    std::vector<TaskEvent> events;
    double started = 0;
    double span = -1;  // the task ending next's device span, if told
  };
  int node_;
  bool have_origin_ = false;
  double origin_ = 0;
  const Executor* executor_ = nullptr;
  std::vector<std::unique_ptr<WorkerBuffer>> workers_;
  mutable SpinLock transfer_lock_;
  std::vector<TransferRecord> transfers_;
};

}  // namespace tessera
