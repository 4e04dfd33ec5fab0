// The configuration of a run: every default resolved and every option
// checked before any work starts (experiments/driver_parts.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "experiments/driver_parts.hpp"
#include "experiments/input_matrix.hpp"
#include "experiments/preflight.hpp"
#include "experiments/test_fault.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "models/balance.hpp"
#include "models/lu_split.hpp"
#include "runtime/distribution.hpp"

namespace tessera::driver {
namespace {

// A grid of tiles beyond 2^30 is refused before it is built, naming the
// sizes (base/tile_layout.hpp check_tile_count).
void check_tile_count(const RunConfig& c) {
  if (c.B < 1 || c.s < 1 || c.m < 1 || c.n < 1) return;  // TileLayout says what is wrong
  tessera::check_tile_count(c.m, c.n, c.B, c.s);
}

// --dist: the distributions the runtime offers (runtime/distribution.hpp).
void resolve_distribution(const RunConfig& c, const Factorization& F) {
  if (c.dist == kDistMultiLevel) return;
  if (c.dist == kDistBlockCyclic2D) {
    if (c.gpus > 0)
      throw InputError("--dist " + c.dist + " places every tile on the host: drop --gpus " + std::to_string(c.gpus) +
                       " or use --dist " + kDistMultiLevel);
    return;
  }
  if (c.dist == kDistColumnCyclic) {
    if (c.pr * c.pc != 1)
      throw InputError("--dist " + c.dist + " is the one-node map of 001 §3.4: --grid " + std::to_string(c.pr) + "x" +
                       std::to_string(c.pc) + " needs --dist " + kDistMultiLevel + " or " + kDistBlockCyclic2D);
    return;
  }
  if (c.dist == kDistGpuColumns) {
    // Refused where it would change nothing, or where something else decides the devices.
    if (c.gpus < 1)
      throw InputError("--dist " + c.dist + " puts every tile column on the GPUs, and the run has --gpus " +
                       std::to_string(c.gpus) + ": add --gpus G");
    if (c.s == 1)
      throw InputError("--dist " + c.dist + " with --s 1: every column is a remainder, which --dist " +
                       kDistMultiLevel + " puts on the GPUs already (give --s S > 1)");
    if (F.splits_columns())
      throw InputError("--dist " + c.dist + " with --algo " + c.algo +
                       ": its --d decides which device works on a column (--d 0: every column on the GPUs)");
    if (c.auto_b)
      throw InputError("--dist " + c.dist + " with --b auto" + (c.tiles_from.empty() ? "" : " (" + c.tiles_from + ")") +
                       ": --b auto balances the host's narrow columns against the GPUs (000 App. A.1), and this "
                       "distribution gives the host none: give --b");
    return;
  }
  throw InputError("--dist '" + c.dist + "' is not one of: " + kDistMultiLevel + ", " + kDistBlockCyclic2D + ", " +
                   kDistColumnCyclic + ", " + kDistGpuColumns);
}

// The factorizations whose row distribution has virtual tiles: "qr".
std::string virtual_tile_algos() {
  std::string s;
  for (const std::string_view n : factorization_names())
    if (factorization(n).uses_virtual_tiles()) s += (s.empty() ? "" : " or ") + std::string(n);
  return s;
}

// A count option's value: an integer >= 1, else InputError naming it and
// what it accepts.
int parse_count(const char* opt, const std::string& v, const char* accepts) {
  std::size_t used = 0;
  int x = 0;
  try {
    x = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || x < 1) throw InputError(std::string(opt) + " '" + v + "' must be " + accepts);
  return x;
}

// --d: the CPU side's block columns of 002 Alg. 2 (a factorization that
// splits its columns between the cores and the GPUs): a count (0 with GPUs:
// none, the GPUs factor the panels as well); auto, the
// default with GPUs, the whole run's flop balance
// (models::cpu_block_columns_whole_run); or eq1, 002 §4's eq. (1). Both
// with the dominant kernel's speeds at tile size B: a simulated run's from
// its machine file's kernel models, a native run's emulated GPUs at a core's
// speed (they run the cores' kernels).
void resolve_split(RunConfig& c, const Factorization& F) {
  const bool given = !c.d.empty();
  if (given && !F.splits_columns()) throw InputError("--d " + c.d + " is not an option of --algo " + c.algo);
  if (!given && (!F.splits_columns() || c.gpus == 0)) return;
  if (c.gpus == 0)
    throw InputError("--d " + c.d +
                     " splits the block columns between the CPU cores and the GPUs: it needs --gpus >= 1");
  const int q = TileLayout(c.m, c.n, c.B, c.s, c.b).tile_cols();
  if (c.d == "0") {
    // No block column on the cores: the GPUs factor the panels too.
    c.d_columns = 0;
    c.d_source = "given";
    return;
  }
  if (given && c.d != "auto" && c.d != "eq1") {
    c.d_columns = parse_count("--d", c.d, "a whole number >= 0, auto or eq1");  // "0": above
    if (c.d_columns > q)
      throw InputError("--d " + c.d + " is larger than the matrix's " + std::to_string(q) + " block columns");
    c.d_source = "given";
    return;
  }
  const bool eq1 = c.d == "eq1";
  double g1 = 1, g2 = 1;
  std::string speeds;
  if (c.gpu_model) {
    g1 = models::dominant_kernel_speed(*c.model, F.dominant_kernel(), c.precision, c.B);
    g2 = models::dominant_kernel_speed(*c.gpu_model, F.dominant_kernel(), c.precision, c.B);
    speeds = "the machine file's kernel models at B";
  } else if (c.device == DeviceKind::Cuda) {
    throw InputError("--d " + (given ? c.d : std::string("auto")) +
                     " needs the speed of a CUDA GPU's kernels, which a native run does not know: give --d K (K block "
                     "columns on the cores) or --d 0 (every column on the GPUs)");
  } else {
    speeds = "emulated GPUs at a core's speed";
  }
  // The model counts square blocks: rows in units of the mean block column
  // width n/q (rectangular tiles have more tile columns than tile rows).
  const std::int64_t p = std::max<std::int64_t>(q, std::llround(static_cast<double>(q) * c.m / c.n));
  try {
    c.d_columns = static_cast<int>(eq1 ? models::cpu_block_columns(q, c.threads, g1, g2 * c.gpus)
                                       : models::cpu_block_columns_whole_run(p, q, c.threads, g1, g2 * c.gpus));
  } catch (const std::invalid_argument& e) {
    throw InputError("--d " + (given ? c.d : std::string("auto")) + ": " + e.what());
  }
  c.d_source = (eq1 ? "002 eq. (1), " : "whole-run balance, ") + speeds;
}

}  // namespace

void check_gpu_options(const RunConfig& c) {
  if (c.gpu_kernel_depth < 0)
    throw InputError("--gpu-kernel-depth " + std::to_string(c.gpu_kernel_depth) +
                     " must be >= 0 (0: the device's own)");
  if (c.gpu_streams < 1) throw InputError("--gpu-streams " + std::to_string(c.gpu_streams) + " must be >= 1");
  if (c.gpu_streams > 1 && (c.gpus == 0 || (c.machine.empty() && c.device != DeviceKind::Cuda)))
    throw InputError("--gpu-streams " + std::to_string(c.gpu_streams) +
                     ": only CUDA GPUs (--gpus G --device cuda) and simulated ones (--machine FILE --gpus G) have "
                     "compute streams");
  if (c.gpu_streams > 1 && c.gpu_kernel_depth == 1)
    throw InputError("--gpu-streams " + std::to_string(c.gpu_streams) +
                     " with --gpu-kernel-depth 1: one task at a time runs on one stream (give a depth of 0 or > 1)");
  // A depth changes only a GPU that queues several tasks (node_runtime.cpp: min(depth, the device's)).
  if (c.gpu_kernel_depth > 0 && c.gpus > 0 && c.device != DeviceKind::Cuda && c.gpu_streams == 1)
    throw InputError("--gpu-kernel-depth " + std::to_string(c.gpu_kernel_depth) +
                     " sets how many tasks a GPU queues, and these GPUs queue one (emulated ones always, simulated "
                     "ones with one compute stream): give --device cuda or --gpu-streams S");
}

void resolve(RunConfig& c, const DenseMatrix* input) {
  const Factorization& F = factorization(c.algo);  // throws for an unknown --algo
  if (c.impl == Impl::Cusolver && c.gpus != 0)
    throw InputError("--impl cusolver factors on one GPU by itself: drop --gpus " + std::to_string(c.gpus));
  if (c.precision != 'd' && c.precision != 's')
    throw InputError(std::string("--precision '") + c.precision + "' is not one of: d, s");
  if (c.threads < 1) throw InputError("--threads " + std::to_string(c.threads) + " must be >= 1");
  if (!input && c.n == kUnsetSize) throw InputError("--n is required unless --input FILE gives the matrix");
  if (input) {
    const bool n_differs = c.n != kUnsetSize && c.n != input->n, m_differs = c.m != kUnsetSize && c.m != input->m;
    if (n_differs || m_differs)
      throw InputError("--input " + c.input + " holds a " + std::to_string(input->m) + " x " +
                       std::to_string(input->n) + " matrix, but --" +
                       (m_differs ? "m " + std::to_string(c.m) : "n " + std::to_string(c.n)) +
                       " asks for another size");
    c.m = input->m;
    c.n = input->n;
  }
  if (c.n < 1) throw InputError("--n " + std::to_string(c.n) + " must be >= 1");
  if (c.m == kUnsetSize) c.m = c.n;
  if (c.m < 1) throw InputError("--m " + std::to_string(c.m) + " must be >= 1");
  F.check_shape(c.m, c.n);
  if (c.B != kUnsetSize && c.B < 1) throw InputError("--B " + std::to_string(c.B) + " must be >= 1");
  if (c.s < 1) throw InputError("--s " + std::to_string(c.s) + " must be >= 1");
  if (c.b != kUnsetSize && c.s > 1 && c.b < 1)
    throw InputError("--b " + std::to_string(c.b) + " must be >= 1 when --s " + std::to_string(c.s) + " > 1");
  if (c.impl == Impl::Lapack || c.impl == Impl::Cusolver) {
    // The peer factors one dense matrix: report it as a single tile.
    c.B = std::max(c.m, c.n);
    c.s = 1;
    c.b = 0;
  }
  // A default B leaves room for s-1 narrow columns of width >= 1 even when n < s.
  if (c.B == kUnsetSize) c.B = std::max<index_t>(default_tiles(c.m, c.n, c.threads, c.precision == 's').B, c.s);
  if (c.auto_b) {
    if (c.gpus < 1) throw InputError("--b auto balances the host against GPUs: add --gpus G");
    // Emulated GPUs run the cores' kernels: the same speed. Simulated ones use their machine file's models.
    double f_core = 1, f_gpu = 1;
    if (c.gpu_model) {
      if (!c.model) throw std::logic_error("a GPU model without a core model");
      f_core = models::dominant_kernel_speed(*c.model, F.dominant_kernel(), c.precision, c.B);
      f_gpu = models::dominant_kernel_speed(*c.gpu_model, F.dominant_kernel(), c.precision, c.B);
    } else if (c.device == DeviceKind::Cuda) {
      throw InputError("--b auto needs the speed of a CUDA GPU's kernels, which a native run does not know: give --b");
    }
    // The host's cores are its compute threads (the papers' n - g - 2).
    c.b = models::auto_narrow_width(c.B, c.s, f_core, c.threads, f_gpu, c.gpus, c.precision == 's' ? 96 : 64);
  }
  // --dist gpu-columns: s equal columns (LAPACK's blocked algorithm when B = n); otherwise narrow host columns.
  if (c.b == kUnsetSize) c.b = default_narrow_width(c.B, c.s, c.dist == kDistGpuColumns);
  if (c.ib < 1) throw InputError("--ib " + std::to_string(c.ib) + " must be >= 1");
  if (c.window < 1) throw InputError("--window " + std::to_string(c.window) + " must be >= 1");
  check_gpu_options(c);
  if (c.gpu_trsm_inverse < 0)
    throw InputError("--gpu-trsm-inverse " + std::to_string(c.gpu_trsm_inverse) + " must be >= 0 (0: none)");
  if (c.gpu_trsm_inverse > 0 && (c.device != DeviceKind::Cuda || !c.machine.empty() || c.gpus == 0))
    throw InputError("--gpu-trsm-inverse " + std::to_string(c.gpu_trsm_inverse) +
                     ": only the CUDA GPUs of a native run (--gpus G --device cuda) have it");
  if (c.gpu_qr_panel == QrPanel::CholQr && (c.device != DeviceKind::Cuda || !c.machine.empty() || c.gpus == 0))
    throw InputError("--gpu-qr-panel cholqr: only the CUDA GPUs of a native run (--gpus G --device cuda) have it");
  check_cholqr_gram(c.gpu_cholqr_gram, c.gpu_qr_panel);
  // GPUs to warm: a native run's call their kernels before the clock; a
  // simulated run's skip the first-call costs of their machine file's GPU
  // model (models/cold_start.hpp), or with `off` pay them, as a cold CUDA
  // run does. `auto`: what a CUDA run does, on.
  if (c.gpu_warmup != Warmup::Auto && c.gpus == 0)
    throw InputError(std::string("--gpu-warmup ") + to_string(c.gpu_warmup) +
                     ": only the GPUs of a run of tessera's runtime (--gpus G) are warmed");
  if (c.gpu_warmup == Warmup::Off && !c.machine.empty() && c.gpu_model != nullptr) {
    bool any = false;
    for (const KernelInfo& k : kernel_table())
      any = any || (c.algo == k.family && c.gpu_model->first_call_s(k.id, c.precision) > 0);
    if (!any)
      throw InputError(std::string("--gpu-warmup off: the GPU model of ") + c.machine + " has no first-call cost of " +
                       c.algo + "'s kernels (" + c.precision +
                       "): a simulated cold GPU would run as a warm one; tessera calibrate --from-traces writes them "
                       "from traces of cold runs (--gpu-warmup off)");
  }
  if (c.gpu_warmup == Warmup::Auto)
    c.gpu_warmup = c.gpus > 0 && (!c.machine.empty() || c.device == DeviceKind::Cuda) ? Warmup::On : Warmup::Off;
  if (c.gpu_qr_group != RunConfig::kUnsetGroup) {
    const std::string given = "--gpu-qr-group " + std::to_string(c.gpu_qr_group);
    if (c.gpu_qr_group < 0) throw InputError(given + " must be >= 0 (0: one block of ib at a time)");
    if (c.device != DeviceKind::Cuda || !c.machine.empty() || c.gpus == 0)
      throw InputError(given + ": only the CUDA GPUs of a native run (--gpus G --device cuda) have it");
  }
  // QR's kernel options change nothing in another factorization.
  if (c.algo != "qr")
    for (const auto& [given, name] : {std::pair{c.gpu_qr_panel != QrPanel::Householder, "--gpu-qr-panel"},
                                      std::pair{c.gpu_qr_group != RunConfig::kUnsetGroup, "--gpu-qr-group"}})
      if (given) throw InputError(std::string(name) + " sets QR's GPU kernels, and the run is --algo " + c.algo);
  if (c.phantom && c.check)
    throw InputError("--check needs the matrix, but a simulated run without --sim-data has none: add --sim-data");
  if (c.phantom && c.impl != Impl::Tile)
    throw InputError("--impl " + std::string(to_string(c.impl)) + " has no tasks to simulate: use --impl tile");
  validate_test_fault(c);
  if (c.column_major) {
    const std::string other = c.impl != Impl::Tile ? std::string("--impl ") + to_string(c.impl)
                              : c.gpus > 0         ? "--gpus " + std::to_string(c.gpus)
                              : c.pr * c.pc > 1    ? "--grid " + std::to_string(c.pr) + "x" + std::to_string(c.pc)
                              : !c.machine.empty() ? std::string("--backend sim")
                                                   : std::string();
    if (!other.empty())
      throw InputError(
          "--column-major times the conversions of a native one-node run without GPUs (tessera's tiles "
          "against a LAPACK caller's matrix), not a run with " +
          other);
  }
  if (c.gpus < 0) throw InputError("--gpus " + std::to_string(c.gpus) + " must be >= 0");
  if (c.gpus > 0 && c.impl != Impl::Tile)
    throw InputError("--impl " + std::string(to_string(c.impl)) + " runs on the CPU only: GPUs need --impl tile");
  if (c.pr < 1 || c.pc < 1)
    throw InputError("--grid " + std::to_string(c.pr) + "x" + std::to_string(c.pc) + ": Pr and Pc must be >= 1");
  if (c.v != RunConfig::kUnsetV && c.v < 1)
    throw InputError("--v " + std::to_string(c.v) + ": the virtual tile height must be >= 1 tile row");
  if (c.v != RunConfig::kUnsetV && !F.uses_virtual_tiles())
    throw InputError("--v " + std::to_string(c.v) + ": the virtual tile height applies to --algo " +
                     virtual_tile_algos() + " only");
  if (c.v != RunConfig::kUnsetV && c.pr == 1)
    throw InputError("--v " + std::to_string(c.v) + " with --grid 1x" + std::to_string(c.pc) +
                     ": on one node row every tile row is on its node already, so the virtual tile height changes "
                     "nothing");
  resolve_distribution(c, F);
  if (c.network) {
    if (c.pr * c.pc != c.network->nodes())
      throw InputError("--grid " + std::to_string(c.pr) + "x" + std::to_string(c.pc) + " has " +
                       std::to_string(c.pr * c.pc) + " nodes, but the run has " + std::to_string(c.network->nodes()));
    if (c.impl != Impl::Tile)
      throw InputError("--impl " + std::string(to_string(c.impl)) +
                       " runs on one node: distributed runs use --impl tile");
  }
  // Before resolve_matrix, which may stream an --input file's entries.
  preflight::check_matrix_fits(c);
  check_tile_count(c);
  resolve_matrix(c, input);
  try {
    TileLayout(c.m, c.n, c.B, c.s, c.b);  // validates B, s, b
  } catch (const InputError& e) {
    throw InputError(
        fmt::format("--B {} --s {}{}: {}", c.B, c.s, c.s > 1 ? fmt::format(" --b {}", c.b) : "", e.what()));
  }
  // Once the tile count is bounded: ceil(m/B) <= 2^30 tile rows.
  if (c.v == RunConfig::kUnsetV)
    c.v = F.uses_virtual_tiles() ? default_virtual_tile_height(static_cast<int>(ceil_div(c.m, c.B)), c.pr) : 1;
  resolve_split(c, F);
  c.factor =
      F.configured(FactorOptions{c.pivot, c.tslu_tree, c.d_columns, c.gpus, c.pr, c.v, c.qr_tree, c.qr_domain, c.pc});
  // What the run asks of the node: threads it can run (InputError) and the
  // memory it has (OutOfMemory), before anything is allocated.
  preflight::check_run(c);
}

RuntimeOptions runtime_options(const RunConfig& c) {
  RuntimeOptions opt;
  opt.threads = c.threads;
  opt.window_capacity = c.window;
  opt.policy = c.policy;
  opt.seed = c.seed;
  opt.observer = c.observer;
  opt.model = c.model;
  opt.broadcast = c.broadcast;
  opt.eviction = c.eviction;
  opt.gpu_kernel_depth = c.gpu_kernel_depth;
  return opt;
}

}  // namespace tessera::driver

namespace tessera {
namespace {

template <class E, std::size_t N>
E parse_choice(const char* option, const std::string& name, const std::pair<const char*, E> (&choices)[N]) {
  std::string list;
  for (const auto& [n, e] : choices) {
    if (name == n) return e;
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  throw InputError(std::string(option) + " '" + name + "' is not one of: " + list);
}

constexpr std::pair<const char*, Backend> kBackends[] = {{"native", Backend::Native}, {"sim", Backend::Sim}};
constexpr std::pair<const char*, DeviceKind> kDevices[] = {{"emulated", DeviceKind::Emulated},
                                                           {"cuda", DeviceKind::Cuda}};
constexpr std::pair<const char*, Broadcast> kBroadcasts[] = {{"binomial", Broadcast::Binomial},
                                                             {"flat", Broadcast::Flat}};
constexpr std::pair<const char*, Eviction> kEvictions[] = {{"next-use", Eviction::NextUse}, {"lru", Eviction::Lru}};
constexpr std::pair<const char*, Impl> kImpls[] = {
    {"tile", Impl::Tile}, {"lapack", Impl::Lapack}, {"cusolver", Impl::Cusolver}};
constexpr std::pair<const char*, QrPanel> kQrPanels[] = {{"householder", QrPanel::Householder},
                                                         {"cholqr", QrPanel::CholQr}};
constexpr std::pair<const char*, Warmup> kWarmups[] = {
    {"auto", Warmup::Auto}, {"on", Warmup::On}, {"off", Warmup::Off}};

template <class E, std::size_t N>
const char* name_of(E e, const std::pair<const char*, E> (&choices)[N]) {
  for (const auto& [n, x] : choices)
    if (x == e) return n;
  return "?";
}

}  // namespace

Backend parse_backend(const std::string& name) { return parse_choice("--backend", name, kBackends); }
DeviceKind parse_device_kind(const std::string& name) { return parse_choice("--device", name, kDevices); }
Impl parse_impl(const std::string& name) { return parse_choice("--impl", name, kImpls); }
const char* to_string(Backend b) { return name_of(b, kBackends); }
const char* to_string(DeviceKind d) { return name_of(d, kDevices); }
const char* gpu_device_name(const RunConfig& c) { return c.machine.empty() ? to_string(c.device) : "simulated"; }
const char* to_string(Impl i) { return name_of(i, kImpls); }
void check_cholqr_gram(int rows, QrPanel panel) {
  if (rows < 0 || (rows > 0 && rows < kernels::kMinCholqrGramRows))
    throw InputError("--gpu-cholqr-gram " + std::to_string(rows) + " must be 0 (SYRK) or >= " +
                     std::to_string(kernels::kMinCholqrGramRows) + " (smaller blocks only add calls and workspace)");
  if (rows > 0 && panel != QrPanel::CholQr)
    throw InputError("--gpu-cholqr-gram " + std::to_string(rows) +
                     " sets how Cholesky QR panels form their Gram matrices: add --gpu-qr-panel cholqr");
}

QrPanel parse_qr_panel(const std::string& name) { return parse_choice("--gpu-qr-panel", name, kQrPanels); }
const char* to_string(QrPanel p) { return name_of(p, kQrPanels); }
Warmup parse_warmup(const std::string& name) { return parse_choice("--gpu-warmup", name, kWarmups); }
const char* to_string(Warmup w) { return name_of(w, kWarmups); }
Broadcast parse_broadcast(const std::string& name) { return parse_choice("--broadcast", name, kBroadcasts); }
const char* to_string(Broadcast b) { return name_of(b, kBroadcasts); }
Eviction parse_eviction(const std::string& name) { return parse_choice("--eviction", name, kEvictions); }
const char* to_string(Eviction e) { return name_of(e, kEvictions); }

std::uint64_t parse_count(const std::string& option, const std::string& text) {
  // Digits only: strtoull would take a sign (and wrap -1), spaces or a prefix.
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE) throw InputError(option + " '" + text + "' is not a whole number from 0 to 2^64 - 1");
  return v;
}

std::optional<index_t> parse_size_or_auto(const std::string& option, const std::string& what, const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::size_t used = 0;
  index_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size()) throw InputError(option + " '" + text + "' is neither " + what + " nor auto");
  if (value < 0) throw InputError(option + " " + text + " must be >= 1");  // never the "not given" marker
  return value;
}

}  // namespace tessera
