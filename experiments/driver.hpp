#pragma once
// One factorization run as the command line describes it: build the input,
// factor it with the tile runtime (or, as a peer, with LAPACKE on the whole
// matrix), optionally check it, and report.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/factorization.hpp"
#include "experiments/gpu_warmup.hpp"
#include "models/kernel_noise.hpp"
#include "platform/device.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/network.hpp"
#include "platform/platform.hpp"
#include "runtime/node_runtime.hpp"
#include "runtime/relevance.hpp"

namespace tessera {

// The choices of a run that select code: parsed once from their option
// (parse_* throw InputError naming the option and the choices) and branched
// on as enums everywhere else.
enum class Backend { Native, Sim };          // --backend: real threads, or a SimGrid-modeled machine
enum class DeviceKind { Emulated, Cuda };    // --device: a native run's GPUs (a simulated run's are the machine file's)
enum class Impl { Tile, Lapack, Cusolver };  // --impl: tessera's runtime, or a vendor library's peer
enum class QrPanel { Householder, CholQr };  // --gpu-qr-panel: how a CUDA GPU's GEQRT and TSQRT factor a panel
enum class Warmup { Auto, On, Off };         // --gpu-warmup: a run's GPUs warmed before its clock starts
Backend parse_backend(const std::string& name);
DeviceKind parse_device_kind(const std::string& name);
Impl parse_impl(const std::string& name);
QrPanel parse_qr_panel(const std::string& name);
Warmup parse_warmup(const std::string& name);
const char* to_string(Warmup w);
// --gpu-cholqr-gram `rows` (run's and calibrate's): 0 (SYRK) or at least
// kernels::kMinCholqrGramRows, and above 0 only with Cholesky QR panels;
// InputError naming it otherwise.
void check_cholqr_gram(int rows, QrPanel panel);
Broadcast parse_broadcast(const std::string& name);
Eviction parse_eviction(const std::string& name);
const char* to_string(Eviction e);
// A size option that also takes "auto" (--B, --b), given as `text` (not
// empty): nullopt for auto, else the integer; InputError "OPTION 'text' is
// neither WHAT nor auto" for anything else.
std::optional<index_t> parse_size_or_auto(const std::string& option, const std::string& what, const std::string& text);
// An unsigned option given as text (--seed, --window, --gpu-memory,
// --noise-seed): decimal digits only, below 2^64; InputError naming the
// option and the text otherwise (a sign, a fraction, an overflow).
std::uint64_t parse_count(const std::string& option, const std::string& text);
const char* to_string(Broadcast b);
const char* to_string(Backend b);
const char* to_string(DeviceKind d);
const char* to_string(Impl i);
const char* to_string(QrPanel p);

// --dist: the distributions of runtime/distribution.hpp.
inline constexpr const char* kDistMultiLevel = "multi-level";         // MultiLevelBlockCyclic (000 §3.1), the default
inline constexpr const char* kDistBlockCyclic2D = "block-cyclic-2d";  // BlockCyclic2D: ScaLAPACK's map, host only
inline constexpr const char* kDistColumnCyclic = "column-cyclic";     // HeteroColumnCyclic (001 §3.4), one node
inline constexpr const char* kDistGpuColumns = "gpu-columns";         // MultiLevelBlockCyclic, every column on the GPUs

// Marks --n as not given (the size then comes from --input).
inline constexpr index_t kUnsetSize = -(index_t{1} << 62);

// The data relevance of a simulated cluster's run, made once for its nodes.
struct RelevanceCache {
  std::mutex mutex;
  std::unique_ptr<DataRelevance> relevance;
};

struct RunConfig {
  std::string algo = "cholesky";  // a registered factorization (algorithms/registry.cpp)
  // The factorization's own options, as given (empty: not given): --pivot,
  // --tslu-tree, --d (a count or auto; with GPUs auto is the default),
  // --qr-tree.
  std::string pivot, tslu_tree, d, qr_tree;
  int qr_domain = -1;  // --qr-domain (-1: not given)
  // Set by resolve: the factorization configured with them, and d as a
  // count (0: no CPU/GPU split) with where it came from.
  std::shared_ptr<const Factorization> factor;
  int d_columns = 0;
  std::string d_source;
  Impl impl = Impl::Tile;
  // Sizes left at kUnsetSize were not given: m defaults to n, B and b to
  // sizes chosen from the matrix and thread count; n then must come from --input.
  index_t m = kUnsetSize, n = kUnsetSize;
  index_t B = kUnsetSize;
  int s = 1;
  index_t b = kUnsetSize;
  bool auto_b = false;     // --b auto: b from the host/GPU balance formula (models/balance.hpp)
  std::string tiles_from;  // where B, s and b came from when tuned (--B auto, --tuned FILE); empty: the command line
  index_t ib = 32;         // QR inner blocking
  char precision = 'd';    // d | s
  int threads = 1;
  std::uint64_t seed = 1;
  std::string input;   // Matrix Market file; empty: generated
  std::string matrix;  // generated kind (--matrix); empty: spd for Cholesky, general for QR
  bool check = false;
  // --column-major: the matrix starts and ends column-major (leading dimension m), as a LAPACK caller holds it;
  // the tile store's allocation with the conversion into it, and the conversion back, are timed (convert_s).
  bool column_major = false;
  std::size_t window = 16384;
  ReadyPolicy policy = ReadyPolicy::Priority;
  RuntimeObserver* observer = nullptr;
  // Simulated runs: the kernel model whose durations the platform lets pass,
  // and whether the matrix exists at all. A phantom run allocates no tile
  // (only the task window's memory grows with the run) and never calls a
  // kernel, so it cannot --check.
  const KernelTimeModel* model = nullptr;
  // Simulated runs: variation drawn around the models' times (--kernel-noise,
  // --node-noise, --noise-seed; models/kernel_noise.hpp), per node.
  models::KernelNoise noise;
  bool phantom = false;
  std::string machine;  // machine file, reported in the JSON
  // Distributed runs: this node's end of the network and the Pr x Pc node
  // grid of the multi-level block-cyclic distribution (000 §3.1). Every node
  // calls run_factorization with the same configuration.
  platform::NodeNetwork* network = nullptr;
  int pr = 1, pc = 1;
  // Which data each node's protocol follows (runtime/relevance.hpp): made by
  // the first node of a simulated cluster that asks, and shared by all its
  // nodes (one pass of the generator instead of one per node); null: each
  // node (an MPI rank) makes its own inside its run.
  RelevanceCache* relevance = nullptr;
  // QR's virtual tile height in tile rows (000 App. A.2.2, MultiLevelBlockCyclic);
  // kUnsetV: default_virtual_tile_height. Cholesky keeps 1.
  static constexpr int kUnsetV = -(1 << 30);
  int v = kUnsetV;
  // Which distribution places the tiles (kDist*).
  std::string dist = kDistMultiLevel;
  // GPUs per node (000 §3.1: MultiLevelBlockCyclic with G > 0; on one node
  // the same map as 001's HeteroColumnCyclic). Native runs make them of
  // `device` kind (emulated | cuda); a simulated backend passes its own in
  // `devices` with their kernel model.
  int gpus = 0;
  DeviceKind device = DeviceKind::Emulated;
  platform::EmulatedDeviceOptions emulated;
  std::size_t gpu_memory_cap = 0;  // cuda: bytes a GPU may use (0: all free)
  std::vector<platform::Device*> devices;
  const KernelTimeModel* gpu_model = nullptr;
  // Per GPU, its model with its own start-up costs (models/cold_start.hpp: a
  // GPU initializes apart from the host and the other GPUs); the driver
  // fills it from gpu_model, empty: gpu_model for every GPU.
  std::vector<const KernelTimeModel*> gpu_model_each;
  // Keep every device copy to the end instead of freeing it at Release_Tile.
  bool keep_tiles = false;
  // CUDA GPUs: leave host tiles pageable (experiments/host_pinning.hpp).
  bool pageable = false;
  // How a tile version read on several nodes reaches them (--broadcast).
  Broadcast broadcast = Broadcast::Binomial;
  // Which copy a full GPU frees first (--eviction).
  Eviction eviction = Eviction::NextUse;
  // Tasks' kernels a GPU keeps queued at most (--gpu-kernel-depth; 0: the device's own).
  int gpu_kernel_depth = 0;
  // --device cuda: Cholesky's TRSM through inverted diagonal blocks of this order (--gpu-trsm-inverse; 0: none).
  int gpu_trsm_inverse = 0;
  // --device cuda: compute streams per GPU (--gpu-streams).
  int gpu_streams = 1;
  // --device cuda: QR's panels (--gpu-qr-panel).
  QrPanel gpu_qr_panel = QrPanel::Householder;
  // --device cuda, --gpu-qr-panel cholqr: the panels' Gram matrices from blocks of
  // this many rows (--gpu-cholqr-gram; kernels::CudaKernelOptions::cholqr_gram_rows; 0: SYRK).
  int gpu_cholqr_gram = 0;
  // --device cuda: reflectors QR's kernels apply at once (--gpu-qr-group; kernels/cuda/cuda_api.hpp
  // reflector_group); kUnsetGroup: the device's default.
  static constexpr int kUnsetGroup = -(1 << 30);
  int gpu_qr_group = kUnsetGroup;
  // Native runs: nice levels of the compute threads below the node's other
  // threads (--compute-nice; platform::NativePlatform::set_compute_nice).
  int compute_nice = 0;
  // Runs with GPUs: a native run's call every kernel shape of the run once
  // before the factorization's clock starts (--gpu-warmup;
  // experiments/gpu_warmup.hpp); a simulated run's skip their model's
  // first-call costs (models/cold_start.hpp). Auto: on for CUDA and
  // simulated GPUs, off for emulated ones (resolve() leaves On or Off).
  Warmup gpu_warmup = Warmup::Auto;
  // Test-only: corrupt-factor | internal-error (experiments/test_fault.hpp).
  std::string test_fault;
};

// A run's GPUs as its JSON and trace name them: "cuda", "emulated", or
// "simulated" (a machine file's).
const char* gpu_device_name(const RunConfig& c);

struct RunResult {
  RunConfig config;  // with defaults resolved
  int p = 0, q = 0;  // tile rows and columns
  double time_s = 0;
  // CPU seconds the whole process used during the factorization (every
  // thread): on a native run, cpu_s / time_s is how many cores the run
  // actually got (less than --threads on a shared machine).
  double cpu_s = 0;
  // Seconds waited before the factorization for the process's other threads
  // to stop running (Platform::settle: a BLAS library's idle threads spin
  // for a while after it starts); not part of time_s.
  double settle_s = 0;
  double gflops = 0;
  std::uint64_t tasks = 0;        // this node's (every node's: node_tasks)
  std::vector<double> busy_s;     // this node's compute threads
  double copy_s = 0;              // --impl cusolver: the matrix's copies to and from the GPU
  double convert_s = 0;           // --column-major: into tiles (with their allocation) and back, outside time_s
  std::vector<DeviceStats> gpus;  // this node's GPUs
  // CUDA GPUs: this node's host data page-locked before the factorization
  // (experiments/host_pinning.hpp), and what locking and unlocking took.
  std::size_t pinned_bytes = 0;
  double pin_s = 0, unpin_s = 0;
  // The GPUs' warm-up (--gpu-warmup), before the factorization; not part of time_s.
  std::optional<driver::GpuWarmup> gpu_warmup;
  std::optional<Residuals> residuals;
  // Distributed runs: this node, and every node's message counts (the
  // maximum over nodes is the quantity of 000 App. A.2). time_s is the
  // slowest node's.
  int node = 0, nodes = 1;
  std::vector<CommStats> comm;
  std::vector<double> node_time_s;
  // Runs with a network or GPUs (gather_nodes), per node: its tasks, its
  // load imbalance (001 §5.3: max / average of its devices' loads, the
  // host's being its cores' mean kernel time and a GPU's its kernel time) and
  // the most any of its GPUs held.
  std::vector<std::uint64_t> node_tasks;
  std::vector<double> node_imbalance;
  std::vector<std::size_t> node_gpu_peak_bytes;
  // The command's own cost: wall-clock seconds (of a simulated run: what the
  // simulation took) and the process's peak resident memory.
  double wall_s = 0;
  std::uint64_t peak_rss_bytes = 0;
};

// Peak resident set size of this process so far.
std::uint64_t peak_rss_bytes();

// Throws InputError for invalid configurations and NotPositiveDefinite for
// a Cholesky input that is not SPD. Distributed: on every node, with
// config.network set; the residual is computed distributedly.
RunResult run_factorization(RunConfig config, platform::Platform& platform);

// Standard flop counts: n^3/3 for Cholesky, 2mn^2 - 2n^3/3 for QR.
double flop_count(const std::string& algo, index_t m, index_t n);

// Maxima over nodes of a distributed run: messages and words sent, and
// communicated (sent + received), the quantity 000 App. A.2 counts for the
// process with the most communication. Words are matrix elements (tiles and
// the QR T factors that travel with them).
struct CommMax {
  std::uint64_t messages_sent = 0, words_sent = 0, messages = 0, words = 0;
};
CommMax comm_max(const RunResult& r);

std::string summary_line(const RunResult& r, const char* backend);
// What a simulated run cost this machine (wall time, peak memory), printed
// on the line after its summary line; of a real run, its GPUs' warm-up
// (--gpu-warmup), if they had one; else empty. Kept out of the summary line,
// which traces embed and which is bit-reproducible for simulated runs.
std::string cost_note(const RunResult& r);
std::string result_json(const RunResult& r, const char* backend);

}  // namespace tessera
