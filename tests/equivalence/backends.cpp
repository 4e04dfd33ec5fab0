// The backends of the equivalence suite, set up as the driver sets them up
// (experiments/run_local.cpp, run_distributed.cpp, tessera_main.cpp's
// simulated cluster), but keeping each node's data to read its bytes after
// the run; and the same cases through run_factorization with --check.
#include "backends.hpp"

#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../sim/sim_test_util.hpp"
#include "algorithms/factorization.hpp"
#include "algorithms/tile_data_store.hpp"
#include "base/matrix_gen.hpp"
#include "experiments/driver.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "models/machine.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/native/local_network.hpp"
#include "platform/native/native_platform.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "runtime/distribution.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera::equivalence {

std::string machine_file() { return std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json"; }

namespace {

// A simulated GPU with `streams` compute streams and the other options at their defaults.
platform::SimGpuOptions streams_only(int streams) {
  platform::SimGpuOptions o;
  o.streams = streams;
  return o;
}

// Emulated GPUs whose copies cost nothing: the bytes are what is compared.
platform::EmulatedDeviceOptions fast_gpu() {
  platform::EmulatedDeviceOptions o;
  o.memory_bytes = std::size_t{1} << 30;
  o.bandwidth_Bps = 1e12;
  o.latency_s = 0;
  return o;
}

// A different random ready-queue order for every backend and node.
std::uint64_t order_seed(const Case& c, int node) {
  return std::hash<std::string>{}(c.backend.name) % 1000 + 101 * static_cast<std::uint64_t>(node) + 1;
}

Generator tasks_of(const Factorization& f, const TileLayout& L) {
  return [&f, L](TaskSink& s) { f.tasks(L, s); };
}

// The bytes of datum d as this node's store packs it.
template <class T>
std::string pack(const TileDataStore<T>& store, DataId d) {
  std::string bytes(store.bytes(d), '\0');
  store.pack(d, reinterpret_cast<std::byte*>(bytes.data()));
  return bytes;
}

template <class T>
Factors pack_all(FactorData<T>& data, std::size_t n_data) {
  TileDataStore<T> store;
  data.add_to(store);
  Factors out(n_data);
  for (std::size_t d = 0; d < n_data; ++d) out[d] = pack(store, static_cast<DataId>(d));
  return out;
}

template <class T>
Factors sequential(const Case& c, bool run) {
  const Factorization& f = factorization(c.algo);
  const TileLayout L = c.shape.layout();
  kernels::set_blas_threads(1);
  TileMatrix<T> a(L);
  generate(a, f.default_matrix(), kSeed);
  const std::unique_ptr<FactorData<T>> data = f.data(a, kIb, {});
  if (run) {
    SequentialSink sink(data->executor(), kernels::cpu_kernel_pair());
    f.tasks(L, sink);
  }
  return pack_all(*data, f.data_count(L));
}

template <class T>
Factors threads(const Case& c) {
  const Factorization& f = factorization(c.algo);
  const TileLayout L = c.shape.layout();
  TileMatrix<T> a(L);
  generate(a, f.default_matrix(), kSeed);
  const std::unique_ptr<FactorData<T>> data = f.data(a, kIb, {});
  RuntimeOptions o;
  o.threads = c.backend.threads;
  o.policy = ReadyPolicy::Random;
  o.seed = order_seed(c, 0);
  platform::NativePlatform platform;
  kernels::set_blas_threads(1);
  NodeRuntime(platform, o).run(f.data_count(L), tasks_of(f, L), data->executor());
  return pack_all(*data, f.data_count(L));
}

// The distribution a run of `c` uses: the driver's default (multi-level
// block cyclic, with its default virtual tile height), every column on the
// GPUs where the backend says so.
std::unique_ptr<Distribution> distribution(const Case& c, const TileLayout& L) {
  const Backend& b = c.backend;
  const int v = factorization(c.algo).uses_virtual_tiles()
                    ? default_virtual_tile_height(static_cast<int>(ceil_div(c.shape.m, c.shape.B)), b.pr)
                    : 1;
  return std::make_unique<MultiLevelBlockCyclic>(
      L, b.pr, b.pc, b.gpus, v,
      b.gpu_columns ? MultiLevelBlockCyclic::Columns::AllOnGpus : MultiLevelBlockCyclic::Columns::NarrowOnHost);
}

// What one node of a distributed run needs besides the case.
struct NodeEnv {
  platform::Platform& platform;
  platform::NodeNetwork& network;
  std::vector<platform::Device*> gpus;
  const KernelTimeModel* core_model = nullptr;  // simulated
  const KernelTimeModel* gpu_model = nullptr;   // simulated
};

// One node: its own tiles and the data that go with them, the protocol's
// runtime (000 §6) with its GPUs; then the bytes of every datum whose home
// is this node go into `out`.
template <class T>
void run_node(const Case& c, int self, const NodeEnv& env, Factors& out, std::mutex& out_mutex) {
  const Factorization& f = factorization(c.algo);
  const TileLayout L = c.shape.layout();
  const std::unique_ptr<Distribution> dist = distribution(c, L);
  const Placement where = f.placement(L, *dist);
  const std::size_t n_data = f.data_count(L);
  const auto own = [&](int i, int j) { return dist->owner(i, j).node == self; };
  TileMatrix<T> a(L, own);
  generate(a, f.default_matrix(), kSeed);
  const std::unique_ptr<FactorData<T>> data = f.data(a, kIb, own);
  TileDataStore<T> store;
  data->add_to(store);
  std::vector<std::unique_ptr<GpuTables<T>>> tables;
  RuntimeOptions o;
  o.threads = c.backend.threads;
  o.policy = ReadyPolicy::Random;
  o.seed = order_seed(c, self);
  o.model = env.core_model;
  for (platform::Device* d : env.gpus) {
    tables.push_back(f.gpu_tables(L, kIb, T{}));
    o.gpus.push_back({d, &tables.back()->executor(), &tables.back()->tables, env.gpu_model});
  }
  const DistContext ctx{self, where, &env.network, &store};
  o.dist = &ctx;
  NodeRuntime(env.platform, o).run(n_data, tasks_of(f, L), data->executor());
  std::lock_guard lk(out_mutex);
  for (std::size_t d = 0; d < n_data; ++d)
    if (where(static_cast<DataId>(d)).node == self) out[d] = pack(store, static_cast<DataId>(d));
}

// Native nodes: a LocalCluster, one thread per node, each on its own NativePlatform.
template <class T>
Factors native_nodes(const Case& c) {
  const int P = c.backend.nodes();
  platform::LocalCluster cluster(P);
  Factors out(factorization(c.algo).data_count(c.shape.layout()));
  std::mutex out_mutex;
  std::vector<std::exception_ptr> errors(P);
  std::vector<std::thread> nodes;
  kernels::set_blas_threads(1);
  for (int self = 0; self < P; ++self)
    nodes.emplace_back([&, self] {
      try {
        std::vector<std::unique_ptr<platform::Device>> own;
        platform::NativePlatform platform;
        NodeEnv env{platform, cluster.node(self), {}};
        for (int g = 1; g <= c.backend.gpus; ++g) {
          own.push_back(std::make_unique<platform::EmulatedDevice>(g, fast_gpu()));
          env.gpus.push_back(own.back().get());
        }
        run_node<T>(c, self, env, out, out_mutex);
      } catch (...) {
        errors[self] = std::current_exception();
      }
    });
  for (std::thread& t : nodes) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// Factors through a pipe: each datum's size, then its bytes.
std::string serialize(const Factors& f) {
  std::string s;
  for (const std::string& d : f) {
    const std::uint64_t n = d.size();
    s.append(reinterpret_cast<const char*>(&n), sizeof n);
    s += d;
  }
  return s;
}

Factors deserialize(const std::string& s) {
  Factors f;
  for (std::size_t at = 0; at < s.size();) {
    std::uint64_t n = 0;
    if (at + sizeof n > s.size()) throw std::runtime_error("truncated factors from the simulation child");
    std::memcpy(&n, s.data() + at, sizeof n);
    at += sizeof n;
    if (at + n > s.size()) throw std::runtime_error("truncated factors from the simulation child");
    f.emplace_back(s.substr(at, n));
    at += n;
  }
  return f;
}

// Simulated nodes (SimGrid, real data), as `tessera run --backend sim
// --sim-data` builds them: one simulation per child process
// (tests/sim/sim_test_util.hpp says why), every node an actor.
template <class T>
Factors simulated_nodes(const Case& c) {
  const Backend& b = c.backend;
  return deserialize(test::run_in_child([&] {
    const auto machine = platform::Machine::load(machine_file());
    platform::Simulation sim(machine);
    platform::SimCluster cluster(sim, b.nodes());
    std::vector<std::unique_ptr<platform::SimGridPlatform>> nodes;
    std::vector<std::vector<std::unique_ptr<platform::Device>>> gpus(b.nodes());
    for (int k = 0; k < b.nodes(); ++k) {
      nodes.push_back(std::make_unique<platform::SimGridPlatform>(sim, k, /*sim_data=*/true));
      for (int g = 1; g <= b.gpus; ++g)
        gpus[k].push_back(platform::make_sim_gpu(sim, k, g, static_cast<std::size_t>(machine.node.gpus.memory_bytes),
                                                 true, streams_only(b.streams)));
    }
    Factors out(factorization(c.algo).data_count(c.shape.layout()));
    std::mutex out_mutex;
    kernels::set_blas_threads(1);
    platform::run_on_nodes(sim, b.nodes(), [&](int k) {
      NodeEnv env{*nodes[k], cluster.node(k), {}, &machine.core_model(b.threads)};
      for (auto& g : gpus[k]) env.gpus.push_back(g.get());
      if (b.gpus > 0) env.gpu_model = &machine.model(machine.node.gpus.model);
      run_node<T>(c, k, env, out, out_mutex);
    });
    return serialize(out);
  }));
}

template <class T>
Factors backend(const Case& c) {
  switch (c.backend.kind) {
    case Kind::Sequential: return sequential<T>(c, true);
    case Kind::Threads: return threads<T>(c);
    case Kind::Cluster:
    case Kind::Gpus: return native_nodes<T>(c);
    case Kind::Sim: return simulated_nodes<T>(c);
  }
  throw std::logic_error("unknown backend kind");
}

// ---------------------------------------------------------------------------
// Through the driver.

Checked checked(const Residuals& r) {
  Checked x;
  x.passed = r.passed();
  x.factor = r.factor;
  for (const ResidualRatio& m : r.more) x.more.emplace_back(m.name, m.value);
  return x;
}

Checked checked(const RunResult& r) {
  if (!r.residuals) throw std::logic_error("a run with check = true reported no residuals");
  return checked(*r.residuals);
}

RunConfig driver_config(const Case& c, const std::string& test_fault) {
  RunConfig cfg;
  cfg.algo = c.algo;
  cfg.precision = c.precision;
  cfg.m = c.shape.m;
  cfg.n = c.shape.n;
  cfg.B = c.shape.B;
  cfg.s = c.shape.s;
  cfg.b = c.shape.b;
  cfg.ib = kIb;
  cfg.seed = kSeed;
  cfg.threads = c.backend.threads;
  cfg.policy = c.backend.kind == Kind::Sequential ? ReadyPolicy::Priority : ReadyPolicy::Random;
  cfg.check = true;
  cfg.test_fault = test_fault;
  cfg.pr = c.backend.pr;
  cfg.pc = c.backend.pc;
  cfg.gpus = c.backend.gpus;
  if (c.backend.gpu_columns) cfg.dist = kDistGpuColumns;
  cfg.emulated = fast_gpu();
  return cfg;
}

std::vector<Checked> driver_native(const Case& c, const std::string& test_fault) {
  const int P = c.backend.nodes();
  const RunConfig cfg = driver_config(c, test_fault);
  if (P == 1) {
    platform::NativePlatform platform;
    return {checked(run_factorization(cfg, platform))};
  }
  platform::LocalCluster cluster(P);
  std::vector<Checked> out(P);
  std::vector<std::exception_ptr> errors(P);
  std::vector<std::thread> nodes;
  for (int k = 0; k < P; ++k)
    nodes.emplace_back([&, k] {
      try {
        RunConfig mine = cfg;
        mine.network = &cluster.node(k);
        platform::NativePlatform platform;
        out[k] = checked(run_factorization(mine, platform));
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (std::thread& t : nodes) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// `tessera run --backend sim --machine keeneland.json --grid PrxPc --sim-data --check`.
std::vector<Checked> driver_simulated(const Case& c, const std::string& test_fault) {
  const Backend& b = c.backend;
  const std::string text = test::run_in_child([&] {
    const auto machine = platform::Machine::load(machine_file());
    RunConfig cfg = driver_config(c, test_fault);
    cfg.model = &machine.core_model(b.threads);
    cfg.phantom = false;
    cfg.machine = machine_file();
    if (b.gpus > 0) cfg.gpu_model = &machine.model(machine.node.gpus.model);
    cfg.gpu_streams = b.streams;
    platform::Simulation sim(machine);
    platform::SimCluster cluster(sim, b.nodes());
    std::vector<std::unique_ptr<platform::SimGridPlatform>> nodes;
    std::vector<std::vector<std::unique_ptr<platform::Device>>> gpus(b.nodes());
    for (int k = 0; k < b.nodes(); ++k) {
      nodes.push_back(std::make_unique<platform::SimGridPlatform>(sim, k, true));
      for (int g = 1; g <= b.gpus; ++g)
        gpus[k].push_back(platform::make_sim_gpu(sim, k, g, static_cast<std::size_t>(machine.node.gpus.memory_bytes),
                                                 true, streams_only(b.streams)));
    }
    std::vector<Checked> out(b.nodes());
    platform::run_on_nodes(sim, b.nodes(), [&](int k) {
      RunConfig mine = cfg;
      mine.network = &cluster.node(k);
      for (auto& g : gpus[k]) mine.devices.push_back(g.get());
      out[k] = checked(run_factorization(mine, *nodes[k]));
    });
    std::ostringstream s;
    for (const Checked& x : out) {
      s << x.passed << ' ' << test::exact(x.factor) << ' ' << x.more.size();
      for (const auto& [name, value] : x.more) s << ' ' << name << ' ' << test::exact(value);
      s << '\n';
    }
    return s.str();
  });
  std::istringstream in(text);
  std::vector<Checked> out;
  for (std::string factor; out.size() < static_cast<std::size_t>(b.nodes());) {
    Checked x;
    std::size_t more = 0;
    if (!(in >> x.passed >> factor >> more))
      throw std::runtime_error("unreadable residuals from the simulation child: " + text);
    x.factor = std::strtod(factor.c_str(), nullptr);
    for (std::size_t i = 0; i < more; ++i) {
      std::string name, value;
      in >> name >> value;
      x.more.emplace_back(name, std::strtod(value.c_str(), nullptr));
    }
    out.push_back(x);
  }
  return out;
}

template <class T>
Checked sequential_residual(const Case& c) {
  const Factorization& f = factorization(c.algo);
  const TileLayout L = c.shape.layout();
  TileMatrix<T> a(L);
  generate(a, f.default_matrix(), kSeed);
  const std::vector<T> original = a.to_dense();
  const std::unique_ptr<FactorData<T>> data = f.data(a, kIb, {});
  kernels::set_blas_threads(1);
  {
    SequentialSink sink(data->executor(), kernels::cpu_kernel_pair());
    f.tasks(L, sink);
  }
  // BLAS threads as run_local sets them: one in the kernels of the check's
  // task graphs, the run's --threads in the dense products of the residual.
  const int blas = c.backend.threads;
  const LocalGraphRun run = [blas](std::size_t, const Generator& g, Executor& ex) {
    kernels::set_blas_threads(1);
    SequentialSink sink(ex, kernels::cpu_kernel_pair());
    g(sink);
    kernels::set_blas_threads(blas);
  };
  kernels::set_blas_threads(blas);
  const Checked out = checked(data->residual(original, run));
  kernels::set_blas_threads(1);
  return out;
}

template <class T>
std::string describe(const Case& c, std::size_t d, const std::string& ref, const std::string& got) {
  const TileLayout L = c.shape.layout();
  const std::size_t tiles = static_cast<std::size_t>(L.tile_rows()) * static_cast<std::size_t>(L.tile_cols());
  std::ostringstream s;
  s << "datum " << d;
  if (d < tiles) s << " (tile (" << d % L.tile_rows() << "," << d / L.tile_rows() << ") and what travels with it)";
  else s << " (extra data of the factorization)";
  if (ref.size() != got.size()) {
    s << ": " << got.size() << " bytes, the reference has " << ref.size();
    return s.str();
  }
  std::size_t k = 0;
  while (k < ref.size() && ref[k] == got[k]) ++k;
  const std::size_t e = k / sizeof(T);
  T x{}, y{};
  std::memcpy(&x, ref.data() + e * sizeof(T), sizeof(T));
  std::memcpy(&y, got.data() + e * sizeof(T), sizeof(T));
  s.precision(17);
  s << ", element " << e << " of " << ref.size() / sizeof(T) << ": " << y << ", the reference has " << x;
  return s.str();
}

}  // namespace

Factors reference(const Case& c) {
  return c.precision == 'd' ? sequential<double>(c, true) : sequential<float>(c, true);
}
Factors unfactored(const Case& c) {
  return c.precision == 'd' ? sequential<double>(c, false) : sequential<float>(c, false);
}
Factors run_backend(const Case& c) { return c.precision == 'd' ? backend<double>(c) : backend<float>(c); }

std::vector<bool> scratch_data(const Case& c) {
  // The generator's own word (TaskSink::discard), recorded from its task sequence.
  struct Recorder final : TaskSink {
    std::vector<bool> scratch;
    void insert(const TaskDesc&) override {}
    void discard(DataId d) override {
      if (d >= scratch.size()) scratch.resize(d + 1, false);
      scratch[d] = true;
    }
  } r;
  factorization(c.algo).tasks(c.shape.layout(), r);
  return r.scratch;
}

std::string first_difference(const Case& c, const Factors& ref, const Factors& got) {
  if (ref.size() != got.size())
    return std::to_string(got.size()) + " data, the reference has " + std::to_string(ref.size());
  const std::vector<bool> scratch = scratch_data(c);
  std::string out;
  std::size_t differing = 0;
  for (std::size_t d = 0; d < ref.size(); ++d)
    if (!(d < scratch.size() && scratch[d]) && ref[d] != got[d] && differing++ == 0)
      out = c.precision == 'd' ? describe<double>(c, d, ref[d], got[d]) : describe<float>(c, d, ref[d], got[d]);
  if (differing > 1) out += " (and " + std::to_string(differing - 1) + " more data differ)";
  return out;
}

std::string Checked::text() const {
  std::ostringstream s;
  s << "residual " << factor;
  for (const auto& [name, value] : more) s << ", " << name << " " << value;
  s << (passed ? " (passed)" : " (FAILED)");
  return s.str();
}

std::vector<Checked> run_checked(const Case& c, const std::string& test_fault) {
  if (c.backend.kind == Kind::Sim) return driver_simulated(c, test_fault);
  std::vector<Checked> out = driver_native(c, test_fault);
  // run_local leaves OpenBLAS at --threads threads after its check: a
  // tile kernel called later in this process would run multithreaded BLAS
  // and give other bytes.
  kernels::set_blas_threads(1);
  return out;
}

Checked reference_residual(const Case& c) {
  return c.precision == 'd' ? sequential_residual<double>(c) : sequential_residual<float>(c);
}

}  // namespace tessera::equivalence
