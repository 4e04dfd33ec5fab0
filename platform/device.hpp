#pragma once
// A GPU of a node as the runtime sees it (000 §5.3-5.5): separate memory in
// which the runtime allocates one buffer per datum on first arrival, two copy
// streams (0: host -> device, the in_mbox's; 1: device -> host, the
// out_mbox's), and kernels that work on its memory.
//
// Implementations: CudaDevice (kernels/cuda, a real GPU), EmulatedDevice
// (platform/native/emulated_device: separate host memory, copies timed by a
// configured PCIe bandwidth and latency, CPU kernels) and the simulated GPU
// of platform/simgrid (copies cross the machine file's PCIe link).
//
// Threading: allocate/release and copy_async() are called by the node's
// device communication thread; a copy's completion is reported from
// whatever runs it (a CUDA device's waiter thread, the emulated device's copy
// engine, a simulated transfer's actor); synchronize() and the kernels are
// called by the device's manager thread only.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace tessera::kernels {
template <class T>
class TileKernels;
}

namespace tessera::platform {

// Host bytes of one datum, in the order its device buffer holds them (a tile,
// then the QR T factor that travels with it).
struct HostRange {
  std::byte* ptr = nullptr;
  std::size_t bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // "GPU 1 (emulated)", "GPU 1 (NVIDIA H100 80GB HBM3, cuda:0)".
  virtual std::string name() const = 0;
  // Bytes of device memory the runtime may use.
  virtual std::size_t capacity() const = 0;
  // Whether buffers hold data (false: a simulated run without data; buffers
  // are then only accounted, and copies only take time).
  virtual bool has_data() const { return true; }

  // A buffer of `bytes`; throws DeviceOutOfMemory past capacity().
  virtual std::byte* allocate(std::size_t bytes) = 0;
  virtual void release(std::byte* p, std::size_t bytes) = 0;
  // Bytes allocated now, and the most allocated at any time since construction.
  virtual std::size_t in_use() const = 0;
  virtual std::size_t peak() const = 0;
  // Frees what the device keeps of released buffers for reuse (a CUDA GPU:
  // cudaFree, which waits for the whole device), so that a run starts from
  // the memory it had before set-up work that allocated buffers of other
  // sizes (experiments/gpu_warmup.hpp). Outside a run; a no-op for devices
  // that keep nothing.
  virtual void free_kept() {}

  // Copies one datum between `host` (n ranges, in order) and the device
  // buffer `dev` on `stream` (0: to the device, 1: to the host); returns when
  // the copy is complete. (Tests; the runtime uses copy_async.)
  virtual void copy(int stream, std::byte* dev, const HostRange* host, int n, bool to_device) = 0;
  // The same, started on `stream` and returning at once; `done` is called
  // exactly once when the copy is complete (with the error if it failed),
  // possibly on another thread. `host` must stay valid until then. At most
  // copy_depth() copies per stream at a time (the device communication
  // thread keeps to that); a stream runs them, and calls their `done`, in
  // the order they were started.
  using CopyDone = std::function<void(std::exception_ptr)>;
  virtual void copy_async(int stream, std::byte* dev, const HostRange* host, int n, bool to_device, CopyDone done) = 0;
  // Copies the runtime keeps queued per stream: 1 hands the next copy over
  // only once the last has ended; 2 or more let the next start at once.
  virtual int copy_depth() const { return 1; }

  // Whether page-locking host memory helps this device's copies (a CUDA
  // device; not emulated or simulated GPUs, whose pin_host does nothing).
  virtual bool pins_host() const { return false; }
  // Page-locks host memory that copies to and from this device will use, so
  // that they run at the link's pinned bandwidth, return at once and overlap
  // each other and the kernels (a CUDA device: cudaHostRegister, valid for
  // every device of the process). Returns false if the memory was locked
  // already (by someone else: leave it to them); throws if it cannot be
  // locked. `p` and `bytes` are page-aligned; unpin_host takes a `p` that
  // pin_host accepted. Called outside the factorization, by the thread that
  // builds the run.
  virtual bool pin_host(std::byte* p, std::size_t bytes) {
    (void)p, (void)bytes;
    return false;
  }
  virtual void unpin_host(std::byte* p) { (void)p; }

  // Kernels that work on this device's memory, for its manager thread: after
  // begin_kernels(), those of the task being queued (a device may hand out
  // other kernels, on another stream, for each task).
  virtual kernels::TileKernels<double>& kernels_d() = 0;
  virtual kernels::TileKernels<float>& kernels_s() = 0;
  // Waits until every kernel the manager thread started has finished (a
  // task's outputs are then complete for its successors and for copies).
  virtual void synchronize() {}
  // The manager thread calls begin_kernels(panel) before a task's kernels and
  // synchronize() after them. A device that can time its own work (a CUDA
  // device: events around the task's kernels on the stream) adds the span
  // from the first to the end of the last, as the device saw it, to
  // kernel_span_s(): the manager's busy time less the span is what the
  // device waited for its host between a task's start and its end (launches,
  // the wait's wake-up). 0 where the device does not measure it.
  // `panel`: the task factors a panel (base/kernel_table.hpp panel_kernel):
  // a device with several compute streams runs it on its high-priority one,
  // so that its kernels' blocks start ahead of the trailing updates' pending
  // ones (as MAGMA's and cuSOLVER's lookahead panels overlap their updates).
  virtual void begin_kernels(bool panel) { (void)panel; }
  // A simulated device's kernels take no time of their own: with
  // kernel_depth() > 1 the manager thread tells it, between begin_kernels()
  // and end_kernels(), the task's kernel, how long its kernels take alone
  // (`seconds`, the kernel model's) and the share of the device's
  // throughput they take meanwhile (`share`, in (0, 1]:
  // kernel_time_model.hpp device_share); the kernels of tasks on different
  // streams then share the device. A device that runs its kernels ignores it.
  virtual void model_kernels(std::uint16_t kernel, double seconds, double share) {
    (void)kernel, (void)seconds, (void)share;
  }
  virtual double kernel_span_s() const { return 0; }
  // Kernel calls that took a slower path after their fast one failed a
  // check (a CUDA GPU's Cholesky QR panels refactored with GEQRF), in the
  // device's life.
  virtual std::uint64_t kernel_fallbacks() const { return 0; }
  // Where a device's kernels spent their time, step by step, for a device
  // that profiles them (a CUDA GPU made with CudaKernelOptions::
  // profile_panels: its Cholesky QR panels' operations), in the device's
  // life; empty for the others. Call it while the device is idle (after
  // synchronize()): the manager thread adds to the phases as kernels end.
  struct KernelPhase {
    std::string name;
    std::uint64_t calls = 0;
    double seconds = 0;
  };
  virtual std::vector<KernelPhase> kernel_phases() const { return {}; }

  // How many tasks' kernels the manager thread may have queued at once. 1:
  // it waits (synchronize) for a task's kernels before it takes the next. A
  // device whose kernels run in order on a stream of their own can take 2:
  // the manager queues the next task's kernels while the last task's run,
  // so the device does not idle through the host's turn between two tasks
  // (finishing one, taking the next, launching its kernels). A task is
  // finished, for its successors and copies, only once its kernels ended.
  virtual int kernel_depth() const { return 1; }
  // With kernel_depth() > 1, instead of synchronize(): end_kernels() marks
  // the end of the task's kernels queued since begin_kernels() and returns
  // the mark; wait_kernels(mark) returns once they have ended (throws their
  // error), and adds their span to kernel_span_s(). Marks are waited for in
  // the order they were made, at most kernel_depth() outstanding.
  virtual std::uint64_t end_kernels() {
    synchronize();
    return 0;
  }
  virtual void wait_kernels(std::uint64_t mark) { (void)mark; }
  // How many streams the device runs tasks' kernels on. More than 1: the
  // kernels of tasks queued together may run side by side and end in any
  // order, and their marks may be waited for in any order; kernels_ended
  // tells which have, wait_any_kernels waits for one of them. With 1, marks
  // are waited for in the order they were made.
  virtual int kernel_streams() const { return 1; }
  // Whether the kernels of the outstanding `mark` have ended (never waits).
  virtual bool kernels_ended(std::uint64_t mark) {
    (void)mark;
    return true;
  }
  // Waits until the kernels of one of `marks` (outstanding, not empty) have
  // ended and returns that mark (not yet waited for: wait_kernels still
  // follows, and returns at once); gives up after `timeout_s` seconds
  // (nullopt) if it is finite, so that the manager can take a task that
  // became ready meanwhile.
  virtual std::optional<std::uint64_t> wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) {
    (void)timeout_s;
    return marks.front();
  }
};

}  // namespace tessera::platform
