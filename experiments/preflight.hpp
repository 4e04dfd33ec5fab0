#pragma once
// What a run asks of the node, checked before any work starts (issue 11 §4):
// driver::resolve calls check_run once every option is resolved.
//
// Threads (native runs). A node runs its --threads compute threads, one
// manager thread per GPU, the device communication thread (with GPUs) and
// the MPI communication thread (with more than one node). Each kernel runs
// on one thread, so threads beyond the cores only take turns on them, and
// every thread costs start-up time (measured on the 2-core development VM,
// N = 100 Cholesky: 0.2 s of factorization at --threads 64, 1.8 s at 1000,
// 3.4 s at 2000; --threads 100000 never answered). The rule: at most
// max(4 x cores, 64) threads, the cores being those this process may run on
// (its CPU affinity, else std::thread::hardware_concurrency(); an unknown
// count counts as 1). The factor 4 and the floor of 64 leave room for
// oversubscription experiments on small machines. A simulated node runs at
// most its machine file's node.cores.count compute threads (checked where
// the machine file is loaded, experiments/tessera_main.cpp).
//
// Memory. The bytes a run needs in this process are estimated from the
// factorization registry (every datum's bytes, Factorization::phantom_bytes:
// the m x n matrix's tiles plus the factorization's own data, such as QR's T
// factors and panel copies), plus with --check the copy of the input, plus
// the host memory of emulated (or simulated, with data) GPUs' buffers, each
// GPU at most min(its memory, the node's data). A peer (--impl lapack,
// cusolver) holds the dense matrix and, with --check, its copy. An MPI
// rank needs its share, 1/nodes of the total; a simulated cluster with
// --sim-data holds every node in this process; a simulated run without
// --sim-data allocates no tiles and is not checked. Not counted: the task
// window, received copies of remote tiles, and the residual's own work
// space after the factorization (a few more dense copies on one node).
// What the machine has: MemAvailable of /proc/meminfo (under mpirun split
// evenly between the ranks on this host), and, when set lower, what the
// address-space limit (RLIMIT_AS, ulimit -v) and the data-segment limit
// (RLIMIT_DATA, ulimit -d) leave above what this process already maps.
// Against the address-space limit a native run also counts the address
// space its threads reserve as they start, little of which they ever touch:
// each thread's stack (the default pthread stack size) and malloc arena
// (glibc reserves 64 MiB per arena on 64-bit, for at most 8 x cores
// arenas), and for each thread that runs CPU kernels (compute threads,
// emulated GPUs' managers) OpenBLAS's buffer (the Debian build maps 128 MiB
// per thread that calls it concurrently, on its first level-3 call).
// Uncounted, a rank under a tight `ulimit -v` passed this check, then
// OpenBLAS retried its failing mmap forever (a hang) or a thread could not
// start (exit 5).
// A run that needs more than that stops with OutOfMemory (exit 4) naming both.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/task.hpp"
#include "experiments/driver.hpp"

namespace tessera::preflight {

// ---- Threads ---------------------------------------------------------------

inline constexpr int kThreadsPerCore = 4;   // the limit's threads per core
inline constexpr int kMinThreadLimit = 64;  // the limit on any machine

// max(kThreadsPerCore x cores, kMinThreadLimit); cores < 1 (unknown) counts as 1.
int thread_limit(int cores);

// The threads one node of a native run starts besides its generator.
struct NodeThreads {
  int compute = 0;       // --threads
  int gpu_managers = 0;  // one per GPU (--gpus)
  int device_comm = 0;   // the device communication thread, with GPUs
  int network_comm = 0;  // the MPI (or in-process network) thread, with more than one node
  long long total() const { return static_cast<long long>(compute) + gpu_managers + device_comm + network_comm; }
};
NodeThreads node_threads(int threads, int gpus, bool multi_node);

// Why the node cannot run `t` on `cores` cores (empty: it can).
std::string thread_refusal(const NodeThreads& t, int cores);

// The cores this process may run on: its CPU affinity, else
// std::thread::hardware_concurrency(); 0 when neither says.
int cores_found();

// ---- Memory ----------------------------------------------------------------

// What the probe read; every field a plain value so that the decision can be
// tested with any machine.
struct MemoryFacts {
  std::optional<std::uint64_t> mem_available;  // bytes; nullopt: /proc/meminfo unreadable or without the field
  std::optional<std::uint64_t> as_limit;       // RLIMIT_AS soft limit in bytes; nullopt: unlimited
  std::optional<std::uint64_t> data_limit;     // RLIMIT_DATA soft limit in bytes; nullopt: unlimited
  std::uint64_t vm_size = 0;                   // bytes this process maps now (VmSize)
  std::uint64_t vm_data = 0;                   // bytes of its data segment now (VmData)
  int ranks_on_host = 1;                       // MPI ranks sharing this host's memory
  std::uint64_t thread_reserve = 0;            // address space the run's threads will reserve (thread_reserve())
  std::int64_t threads = 0;                    // how many threads that is, for the message
  bool actors = false;                         // a simulated cluster's: its actors' stacks
};

// A simulated cluster's actors, each on a stack of SimGrid's (contexts/stack-size, 8 MiB by default, which this
// project leaves as it is, and a guard page): per node its main actor, generator, compute threads and GPU managers, a
// device communication actor with GPUs and each GPU's two copy engines and compute streams, a communication actor and
// the kSendsInFlight senders with more than one node. Under an address-space limit these stacks are what a
// simulation with data runs out of first (SimGrid then aborts: "Failed to allocate stack").
inline constexpr std::uint64_t kSimActorStackBytes = (std::uint64_t{8} << 20) + 4096;
std::int64_t simulated_actors(int nodes, int threads, int gpus, int gpu_streams);

// The value of `key` ("MemAvailable", "VmSize", ...) in /proc/meminfo or
// /proc/self/status text ("MemAvailable:   24245124 kB"), in bytes.
std::optional<std::uint64_t> proc_field_bytes(std::string_view text, std::string_view key);

// Builds MemoryFacts from the texts of /proc/meminfo and /proc/self/status
// and the soft limits (RLIM_INFINITY: unlimited).
MemoryFacts memory_facts(std::string_view meminfo, std::string_view self_status, std::uint64_t as_limit,
                         std::uint64_t data_limit, std::uint64_t unlimited, int ranks_on_host);

// The address space a native node's threads reserve (see the header
// comment): `t`'s threads, the generator and, with `emulated_gpus`, each
// GPU's two copy engines, each with a stack of `stack_bytes` and a malloc
// arena; the compute threads and, with `emulated_gpus`, the GPU managers
// (they run CPU kernels) with an OpenBLAS buffer each.
inline constexpr std::uint64_t kMallocArenaBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kBlasBufferBytes = std::uint64_t{128} << 20;
std::uint64_t thread_reserve(const NodeThreads& t, bool emulated_gpus, int cores, std::uint64_t stack_bytes);
// How many threads that counts.
int reserved_threads(const NodeThreads& t, bool emulated_gpus);
// The stack size of a new thread (pthread_getattr_default_np; 8 MiB when
// that does not answer).
std::uint64_t default_stack_bytes();

// The memory this process can still take, and what bounds it.
struct Available {
  double bytes = 0;
  std::string source;  // e.g. "MemAvailable in /proc/meminfo"
};
// The least of what `f` allows; nullopt when nothing is known.
std::optional<Available> available_memory(const MemoryFacts& f);

// Reads /proc/meminfo, /proc/self/status, the rlimits and the Open MPI
// ranks on this host.
MemoryFacts probe_memory();

// The bytes a resolved run needs in this process (see the header comment).
struct MemoryNeed {
  double data = 0;         // the matrix's tiles and the factorization's own data (a peer: the dense matrix)
  double check_copy = 0;   // --check: the copy of the input
  double dense_copy = 0;   // --column-major: the caller's column-major matrix beside the tiles
  double gpu_buffers = 0;  // emulated (or simulated, with data) GPUs' buffers in host memory
  int nodes_here = 1;      // nodes whose data this process holds (a simulated cluster: all)
  int nodes = 1;           // nodes of the run
  bool checked = true;     // false: a simulated run without data, nothing allocated
  double total() const { return data + check_copy + dense_copy + gpu_buffers; }
};
// `budget`: when the matrix alone already exceeds it, the factorization's
// own data are not summed (the answer is no either way). `matrix_only`:
// the matrix and its copies alone, without building the tile layout (a
// lower bound for a run whose tiles are not resolved yet).
MemoryNeed memory_need(const RunConfig& c, double budget, bool matrix_only = false);

// Why the run cannot have its memory (empty: it can).
std::string memory_refusal(const RunConfig& c, const MemoryNeed& need, const Available& available);

// "29.80 GiB (32000000000 bytes)".
std::string gib(double bytes);

// ---- Calibration -------------------------------------------------------------

// Throws OutOfMemory when the least a calibration holds at once for the
// largest of `shapes`, two copies of its operands in each of `threads`
// timing threads (experiments/calibrate.cpp), exceeds what this process can
// take, naming the shape, the bytes and --sizes where its size is one of
// `sizes` (else --for-n's tiles). Nothing when nothing is known.
void check_calibration_fits(const std::vector<KernelShape>& shapes, int threads,
                            const std::vector<std::int64_t>& sizes);

// ---- Both --------------------------------------------------------------------

// Throws InputError (threads) or OutOfMemory (memory) for a resolved run.
void check_run(const RunConfig& c);
// Throws OutOfMemory when the matrix alone (with --check's copy) exceeds
// what the node has: called before anything whose size grows with n is
// built (the tile layout), so a matrix orders of magnitude too large is
// refused at once instead of after minutes and gigabytes.
void check_matrix_fits(const RunConfig& c);

}  // namespace tessera::preflight
