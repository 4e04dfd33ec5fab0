#pragma once
// A task as the serial algorithms describe it: a kernel, its integer
// arguments, a priority, and the data it reads and writes.
#include <cstdint>

namespace tessera {

enum class AccessMode : std::uint8_t { Read = 1, Write = 2, ReadWrite = 3 };
constexpr bool writes(AccessMode m) { return (static_cast<std::uint8_t>(m) & 2) != 0; }

// Index of a dependency-tracked datum (a tile, or an algorithm's extra
// object such as a QR panel's copied reflectors) in the task window.
using DataId = std::uint32_t;

struct Access {
  DataId data;
  AccessMode mode;
};

inline constexpr int kMaxAccesses = 4;

// Kernel ids the runtime itself creates in distributed runs: a send of a
// datum's version to another node and its receive (arg[0] peer node, arg[1]
// datum, arg[2] version, arg[3] 1 when a receive updates this node's own datum).
inline constexpr std::uint16_t kRuntimeSend = 0xFF00;
inline constexpr std::uint16_t kRuntimeRecv = 0xFF01;
// Frees this node's copy of datum arg[1] on device arg[0] (0: the host's
// alien copy, g: GPU g's buffer) after its last reader (Release_Tile).
inline constexpr std::uint16_t kRuntimeRelease = 0xFF02;
// Copies version arg[2] of datum arg[1] between the host and GPU arg[0]:
// to the GPU when arg[3] is kCopyToDevice, back to the host when
// kCopyToHost; kCopyBufferOnly gives the GPU a buffer and copies nothing
// (for a write-only output, whose writer overwrites every byte).
inline constexpr std::uint16_t kRuntimeCopy = 0xFF03;
inline constexpr std::int32_t kCopyToHost = 0, kCopyToDevice = 1, kCopyBufferOnly = 2;

struct TaskDesc {
  std::uint16_t kernel = 0;
  std::int32_t arg[4] = {0, 0, 0, 0};  // kernel-specific, typically k, i, j
  std::int32_t priority = 0;           // larger runs first among ready tasks
  std::uint8_t n_access = 0;
  // Where on its node the task runs: -1, the device of its main output (000
  // §6 rule 1); d >= 0, device d (0 the host, g GPU g), for algorithms whose
  // split between devices moves as the factorization advances (002 Alg. 2:
  // a block column leaves the GPU for the CPU cores d steps before its
  // panel). What such a task writes stays on device d until a task elsewhere
  // needs it (no rule 7). Fits in the padding after n_access.
  std::int8_t device = -1;
  Access access[kMaxAccesses] = {};

  // The main output (000 §6): the first access that writes; -1 if none.
  int main_output() const {
    for (int a = 0; a < n_access; ++a)
      if (writes(access[a].mode)) return a;
    return -1;
  }

  // Adds an access; a datum named twice is kept once with the union of the modes.
  TaskDesc& add(DataId d, AccessMode m) {
    for (int a = 0; a < n_access; ++a)
      if (access[a].data == d) {
        access[a].mode =
            static_cast<AccessMode>(static_cast<std::uint8_t>(access[a].mode) | static_cast<std::uint8_t>(m));
        return *this;
      }
    access[n_access++] = Access{d, m};
    return *this;
  }
};

// A task's identity as a 64-bit key: its kernel and arguments mixed
// (SplitMix64's finalizer, Steele, Lea and Flood, OOPSLA 2014), the same for
// the same task in every run of a configuration and whatever the order tasks
// run in; for models that draw a per-task quantity (models/kernel_noise.hpp).
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline std::uint64_t task_key(const TaskDesc& t) {
  std::uint64_t h = mix64(t.kernel);
  for (const std::int32_t a : t.arg) h = mix64(h ^ static_cast<std::uint32_t>(a));
  return h;
}

// The dimensions of one kernel call, for performance models: the kernel, the
// precision ('d' or 's'), the output's m×n, the inner dimension k (GEMM-like
// kernels) and the QR inner blocking ib.
struct KernelShape {
  std::uint16_t kernel = 0;
  char precision = 'd';
  std::int64_t m = 0, n = 0, k = 0, ib = 0;
};

// Where serial algorithms put their tasks. Implemented by the task window
// (parallel execution), by a sequential executor (reference results) and by
// recorders in tests.
class TaskSink {
 public:
  virtual ~TaskSink() = default;
  virtual void insert(const TaskDesc& t) = 0;
  // Release_Tile (000 §5.5): no task inserted after this call reads datum
  // d's current version again. The runtime may then free the copies of d it
  // made for other nodes or devices once their readers have run. A marker,
  // not a task: sinks that keep no copies ignore it.
  virtual void release(DataId /*d*/) {}
  // As release, and d's value is no part of the result either (scratch: a
  // QR panel's copied reflectors): its copies may be dropped without being
  // brought home, now or at the end (as StarPU's starpu_data_invalidate).
  virtual void discard(DataId d) { release(d); }
};

}  // namespace tessera
