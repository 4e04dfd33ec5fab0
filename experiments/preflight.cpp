// What a run asks of the node, checked before any work starts (see preflight.hpp).
#include "experiments/preflight.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "algorithms/factorization.hpp"
#include "base/cpu_count.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/kernel_call.hpp"
#include "platform/native/mpi_network.hpp"
#include "platform/network.hpp"

namespace tessera::preflight {

// ---- Threads ---------------------------------------------------------------

int thread_limit(int cores) { return std::max(kThreadsPerCore * std::max(cores, 1), kMinThreadLimit); }

NodeThreads node_threads(int threads, int gpus, bool multi_node) {
  NodeThreads t;
  t.compute = threads;
  t.gpu_managers = std::max(gpus, 0);
  t.device_comm = gpus > 0 ? 1 : 0;
  t.network_comm = multi_node ? 1 : 0;
  return t;
}

std::string thread_refusal(const NodeThreads& t, int cores) {
  const int limit = thread_limit(cores);
  if (t.total() <= limit) return {};
  std::string options = "--threads " + std::to_string(t.compute);
  std::string parts = std::to_string(t.compute) + " compute";
  if (t.gpu_managers > 0) {
    options += " --gpus " + std::to_string(t.gpu_managers);
    parts += fmt::format(", {} GPU manager{}, 1 device communication", t.gpu_managers, t.gpu_managers == 1 ? "" : "s");
  }
  if (t.network_comm > 0) parts += ", 1 MPI communication";
  const std::string core_text =
      cores >= 1 ? fmt::format("{} core{} found", cores, cores == 1 ? "" : "s") : "1 core (the core count is unknown)";
  const long long others = t.total() - t.compute, per_core = static_cast<long long>(cores) - others;
  std::string advice = "use fewer --gpus";
  if (others < limit) {
    advice = fmt::format("use --threads {} or fewer", limit - others);
    if (per_core >= 1) advice += fmt::format(" (--threads {} gives every thread a core of its own)", per_core);
  }
  return fmt::format(
      "{} asks for {} threads on this node ({}), more than its limit of {} = max({} x {}, {}): each kernel runs on "
      "one thread, so threads beyond the cores only take turns on them, and every thread adds start-up time; {}",
      options, t.total(), parts, limit, kThreadsPerCore, core_text, kMinThreadLimit, advice);
}

int cores_found() { return static_cast<int>(cpus_found()); }  // 0 when unknown

// ---- Memory ----------------------------------------------------------------

std::optional<std::uint64_t> proc_field_bytes(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') continue;
    std::size_t i = key.size() + 1;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + line.size(), value);
    if (ec != std::errc() || ptr == line.data() + i) return std::nullopt;
    std::string_view unit = line.substr(static_cast<std::size_t>(ptr - line.data()));
    while (!unit.empty() && (unit.front() == ' ' || unit.front() == '\t')) unit.remove_prefix(1);
    while (!unit.empty() && (unit.back() == ' ' || unit.back() == '\r')) unit.remove_suffix(1);
    if (unit.empty()) return value;
    if (unit == "kB") return value * 1024;
    return std::nullopt;  // a unit the kernel does not write
  }
  return std::nullopt;
}

MemoryFacts memory_facts(std::string_view meminfo, std::string_view self_status, std::uint64_t as_limit,
                         std::uint64_t data_limit, std::uint64_t unlimited, int ranks_on_host) {
  MemoryFacts f;
  f.mem_available = proc_field_bytes(meminfo, "MemAvailable");
  if (as_limit != unlimited) f.as_limit = as_limit;
  if (data_limit != unlimited) f.data_limit = data_limit;
  f.vm_size = proc_field_bytes(self_status, "VmSize").value_or(0);
  f.vm_data = proc_field_bytes(self_status, "VmData").value_or(0);
  f.ranks_on_host = std::max(ranks_on_host, 1);
  return f;
}

std::optional<Available> available_memory(const MemoryFacts& f) {
  std::optional<Available> best;
  const auto consider = [&best](double bytes, std::string source) {
    if (!best || bytes < best->bytes) best = Available{bytes, std::move(source)};
  };
  if (f.mem_available) {
    if (f.ranks_on_host > 1)
      consider(static_cast<double>(*f.mem_available) / f.ranks_on_host,
               fmt::format("MemAvailable {} of /proc/meminfo, split between the {} MPI ranks on this host",
                           gib(static_cast<double>(*f.mem_available)), f.ranks_on_host));
    else consider(static_cast<double>(*f.mem_available), "MemAvailable in /proc/meminfo");
  }
  const auto limit = [&consider](std::optional<std::uint64_t> lim, std::uint64_t used, const char* what) {
    if (!lim) return;
    const double left = *lim > used ? static_cast<double>(*lim - used) : 0.0;
    consider(left, fmt::format("{} of {} less the {} this process maps already", what, gib(static_cast<double>(*lim)),
                               gib(static_cast<double>(used))));
  };
  if (f.as_limit) {
    const double used = static_cast<double>(f.vm_size) + static_cast<double>(f.thread_reserve);
    const double left = std::max(static_cast<double>(*f.as_limit) - used, 0.0);
    std::string source = fmt::format(
        "the address-space limit (ulimit -v, RLIMIT_AS) of {} less the {} this process "
        "maps already",
        gib(static_cast<double>(*f.as_limit)), gib(static_cast<double>(f.vm_size)));
    if (f.thread_reserve > 0 && f.actors)
      source += fmt::format(" and the {} the stacks of its {} simulated actors reserve",
                            gib(static_cast<double>(f.thread_reserve)), f.threads);
    else if (f.thread_reserve > 0)
      source += fmt::format(" and the {} its {} threads reserve (stacks, malloc arenas, OpenBLAS buffers)",
                            gib(static_cast<double>(f.thread_reserve)), f.threads);
    consider(left, std::move(source));
  }
  limit(f.data_limit, f.vm_data, "the data-segment limit (ulimit -d, RLIMIT_DATA)");
  return best;
}

int reserved_threads(const NodeThreads& t, bool emulated_gpus) {
  return static_cast<int>(t.total()) + 1 + (emulated_gpus ? 2 * t.gpu_managers : 0);
}

std::uint64_t thread_reserve(const NodeThreads& t, bool emulated_gpus, int cores, std::uint64_t stack_bytes) {
  const auto threads = static_cast<std::uint64_t>(reserved_threads(t, emulated_gpus));
  const std::uint64_t arenas = std::min<std::uint64_t>(threads, 8 * static_cast<std::uint64_t>(std::max(cores, 1)));
  const std::uint64_t blas =
      static_cast<std::uint64_t>(t.compute) + (emulated_gpus ? static_cast<std::uint64_t>(t.gpu_managers) : 0);
  return threads * stack_bytes + arenas * kMallocArenaBytes + blas * kBlasBufferBytes;
}

std::int64_t simulated_actors(int nodes, int threads, int gpus, int gpu_streams) {
  const std::int64_t g = gpus, per_node = 2 + std::int64_t{threads} + g +
                                          (gpus > 0 ? 1 + g * (2 + std::max<std::int64_t>(gpu_streams, 1)) : 0) +
                                          (nodes > 1 ? 1 + platform::kSendsInFlight : 0);
  return nodes * per_node;
}

std::uint64_t default_stack_bytes() {
  pthread_attr_t attr;
  std::size_t size = 0;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
  }
  return size > 0 ? size : std::uint64_t{8} << 20;
}

namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::uint64_t soft_limit(int resource) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0) return RLIM_INFINITY;
  return r.rlim_cur;
}

}  // namespace

MemoryFacts probe_memory() {
  return memory_facts(read_text("/proc/meminfo"), read_text("/proc/self/status"), soft_limit(RLIMIT_AS),
                      soft_limit(RLIMIT_DATA), RLIM_INFINITY, platform::MpiNetwork::local_ranks());
}

MemoryNeed memory_need(const RunConfig& c, double budget, bool matrix_only) {
  MemoryNeed need;
  const bool simulated = c.model != nullptr;
  if (simulated && c.phantom) {
    need.checked = false;
    return need;
  }
  const double word = c.precision == 's' ? 4.0 : 8.0;
  const double matrix = static_cast<double>(c.m) * static_cast<double>(c.n) * word;
  if (c.impl != Impl::Tile) {  // a peer: one dense matrix on one node
    need.data = matrix;
    need.check_copy = c.check ? matrix : 0.0;
    return need;
  }
  need.nodes = std::max(1, c.pr * c.pc);
  need.nodes_here = simulated ? need.nodes : 1;  // a simulated cluster holds every node in this process
  const double share = static_cast<double>(need.nodes_here) / need.nodes;
  need.check_copy = c.check ? matrix * share : 0.0;
  need.dense_copy = c.column_major ? matrix : 0.0;  // a native one-node run's
  // The tiles alone: a lower bound of the data, enough to say no.
  double all_data = matrix;
  if (matrix * share + need.check_copy + need.dense_copy <= budget && !matrix_only) {
    const Factorization& F = c.factor ? *c.factor : factorization(c.algo);
    const TileLayout L(c.m, c.n, c.B, c.s, c.b);
    const double data_count = static_cast<double>(L.tile_rows()) * L.tile_cols();
    if (data_count <= double(1 << 26)) {
      // Every datum's bytes (tiles and the factorization's own data) from the registry.
      const std::size_t n_data = F.data_count(L);
      const auto bytes = F.phantom_bytes(L, c.ib, static_cast<std::size_t>(word));
      double sum = 0;
      for (std::size_t d = 0; d < n_data; ++d) sum += static_cast<double>(bytes(static_cast<DataId>(d)));
      all_data = std::max(sum, matrix);
    }
  }
  need.data = all_data * share;
  // GPUs whose memory is host memory: each holds at most its memory and at most the node's data.
  const double node_data = all_data / need.nodes;
  double gpus = 0;
  if (simulated) {
    for (const platform::Device* d : c.devices)
      if (d && d->has_data()) gpus += std::min(static_cast<double>(d->capacity()), node_data);
  } else if (c.device == DeviceKind::Emulated && c.gpus > 0) {
    gpus = c.gpus * std::min(static_cast<double>(c.emulated.memory_bytes), node_data);
  }
  need.gpu_buffers = gpus * need.nodes_here;
  return need;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB ({:.0f} bytes)", bytes / 1073741824.0, bytes); }

std::string memory_refusal(const RunConfig& c, const MemoryNeed& need, const Available& available) {
  if (!need.checked || need.total() <= available.bytes) return {};
  const char* precision = c.precision == 's' ? "single" : "double";
  std::string size = c.input.empty() ? "--n " + std::to_string(c.n) : "--input " + c.input;
  if (c.m != c.n && c.input.empty()) size += " --m " + std::to_string(c.m);
  size += std::string(" --precision ") + c.precision;
  std::string where = "on this node";
  if (need.nodes_here > 1)
    where = fmt::format("in this process (all {} simulated nodes of --grid {}x{})", need.nodes, c.pr, c.pc);
  else if (need.nodes > 1) where = fmt::format("on this node (its 1/{} share of --grid {}x{})", need.nodes, c.pr, c.pc);
  std::string parts = fmt::format("{} for the {} x {} matrix in {} ({}){}", gib(need.data), c.m, c.n, precision, size,
                                  c.impl == Impl::Tile ? " and the factorization's own data" : "");
  if (need.check_copy > 0) parts += fmt::format(", {} for --check's copy of the input", gib(need.check_copy));
  if (need.dense_copy > 0) parts += fmt::format(", {} for --column-major's dense matrix", gib(need.dense_copy));
  if (need.gpu_buffers > 0)
    parts += fmt::format(", {} for the buffers of --gpus {} GPUs in host memory", gib(need.gpu_buffers), c.gpus);
  std::string advice = "use a smaller --n";
  if (c.precision == 'd') advice += ", --precision s";
  if (c.check) advice += ", no --check";
  if (c.column_major) advice += ", no --column-major";
  if (c.impl == Impl::Tile && !c.model) advice += " or more nodes (--grid under mpirun)";
  return fmt::format("out of memory: the run needs {} {} but {} is available ({}): {}; {}", gib(need.total()), where,
                     gib(available.bytes), available.source, parts, advice);
}

// ---- Calibration -------------------------------------------------------------

void check_calibration_fits(const std::vector<KernelShape>& shapes, int threads,
                            const std::vector<std::int64_t>& sizes) {
  using kernels::calibration::KernelCall;
  const KernelShape* largest = nullptr;
  double most = 0;
  for (const KernelShape& s : shapes)
    if (const double b =
            s.precision == 's' ? KernelCall<float>::set_bytes(s, s.ib) : KernelCall<double>::set_bytes(s, s.ib);
        b > most)
      most = b, largest = &s;
  if (largest == nullptr) return;
  const double need = 2.0 * std::max(threads, 1) * most;
  const std::optional<Available> available = available_memory(probe_memory());
  if (!available || need <= available->bytes) return;
  const KernelShape& s = *largest;
  const bool given = s.m == s.n && std::find(sizes.begin(), sizes.end(), s.m) != sizes.end();
  throw OutOfMemory(fmt::format(
      "out of memory: calibrating {} ({}) at m = {}, n = {}, k = {} ({}) needs {} for two copies of its operands in "
      "each of {} thread(s), but {} is available ({}): give {}",
      kernel_name(s.kernel), s.precision, s.m, s.n, s.k, given ? "--sizes " + std::to_string(s.m) : "a tile of --for-n",
      gib(need), std::max(threads, 1), gib(available->bytes), available->source,
      given ? "smaller --sizes" : "a smaller --for-n or --for-b"));
}

// ---- Both --------------------------------------------------------------------

namespace {

// What the node has for this run: the machine's facts, less (native runs)
// the address space its threads reserve as they start.
std::optional<Available> available_for(const RunConfig& c) {
  MemoryFacts facts = probe_memory();
  if (c.model == nullptr) {
    const NodeThreads t = node_threads(c.threads, c.gpus, c.network && c.network->nodes() > 1);
    const bool emulated = c.gpus > 0 && c.device == DeviceKind::Emulated;
    facts.threads = reserved_threads(t, emulated);
    facts.thread_reserve = thread_reserve(t, emulated, cores_found(), default_stack_bytes());
  } else {
    facts.actors = true;
    facts.threads = simulated_actors(std::max(1, c.pr * c.pc), c.threads, c.gpus, c.gpu_streams);
    const std::uint64_t most = std::numeric_limits<std::uint64_t>::max() / kSimActorStackBytes;  // (saturates)
    facts.thread_reserve = std::min(static_cast<std::uint64_t>(facts.threads), most) * kSimActorStackBytes;
  }
  return available_memory(facts);
}

// Throws OutOfMemory when `need` exceeds what the node has.
void check_memory(const RunConfig& c, bool matrix_only) {
  // A simulated cluster's node 0 checks for every node of the process, before any allocates: the others resolve
  // after node 0 built its tiles, which their check would count a second time ("this process maps already").
  if (c.model != nullptr && c.network && c.network->node() != 0) return;
  const std::optional<Available> available = available_for(c);
  if (c.model != nullptr && c.phantom) {
    // A simulated run without data allocates no tile, but its actors need their stacks (SimGrid aborts at the first
    // it cannot give one).
    if (available && available->bytes <= 0)
      throw OutOfMemory(
          fmt::format("out of memory: the simulated run cannot start its actors ({} of --grid {}x{}, "
                      "--threads {}, --gpus {}): nothing is left of {}; use fewer nodes, threads or GPUs",
                      simulated_actors(std::max(1, c.pr * c.pc), c.threads, c.gpus, c.gpu_streams), c.pr, c.pc,
                      c.threads, c.gpus, available->source));
    return;
  }
  if (!available) return;  // nothing known: the allocation itself will tell
  const MemoryNeed need = memory_need(c, available->bytes, matrix_only);
  if (const std::string why = memory_refusal(c, need, *available); !why.empty()) throw OutOfMemory(why);
}

// A simulated node (it has a kernel model) runs actors, not threads: its
// thread count is bounded by the machine file's cores where that is loaded.
void check_threads(const RunConfig& c) {
  if (c.model != nullptr) return;
  const NodeThreads t = node_threads(c.threads, c.gpus, c.network && c.network->nodes() > 1);
  if (const std::string why = thread_refusal(t, cores_found()); !why.empty()) throw InputError(why);
}

}  // namespace

// The threads first: a thread count beyond the limit is a bad --threads
// (exit 2), not a lack of memory for their stacks.
void check_matrix_fits(const RunConfig& c) {
  check_threads(c);
  check_memory(c, true);
}

void check_run(const RunConfig& c) {
  check_threads(c);
  check_memory(c, false);
}

}  // namespace tessera::preflight
