// One node of a distributed run (under mpirun or in a simulated cluster),
// or the one node of a run with GPUs: its tiles of the run's distribution,
// the protocol-driven runtime of 000 §6, and the distributed check.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "experiments/driver_parts.hpp"
#include "experiments/host_pinning.hpp"
#include "experiments/input_matrix.hpp"
#include "experiments/test_fault.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "runtime/phantom_data_store.hpp"

namespace tessera::driver {
namespace {

// GPU g's (0-based) kernel model: its own start-up costs where the driver made them.
const KernelTimeModel* gpu_model_of(const RunConfig& c, int g) {
  return c.gpu_model_each.empty() ? c.gpu_model : c.gpu_model_each.at(static_cast<std::size_t>(g));
}

// The host bytes of this node's own data as the run starts: what its GPUs'
// copies read and write. Data without host memory yet (QR's panel copies:
// made during the run) are left out and copied unpinned.
std::vector<platform::HostRange> own_host_ranges(DataStore& store, std::size_t n_data, const Placement& where,
                                                 int self) {
  std::vector<platform::HostRange> ranges;
  for (std::size_t x = 0; x < n_data; ++x) {
    const DataId d = static_cast<DataId>(x);
    if (where(d).node == self && store.holds(d)) store.host_ranges(d, ranges);
  }
  return ranges;
}

// 001 §5.3: MaxLoad / AvgLoad over the host (its cores' mean kernel time) and
// each GPU. A host whose cores ran no kernel (it holds no tile: --s 1, --dist
// gpu-columns) is not one of the devices the work was shared among: left out,
// where it made every such run's ratio 2 with one GPU.
double imbalance_ratio(const std::vector<double>& cpu_busy, const std::vector<DeviceStats>& gpus) {
  std::vector<double> load;
  double host = 0;
  for (double b : cpu_busy) host += b;
  if (host > 0) load.push_back(host / static_cast<double>(cpu_busy.size()));
  for (const DeviceStats& g : gpus) load.push_back(g.busy_s);
  double mx = 0, sum = 0;
  for (double l : load) mx = std::max(mx, l), sum += l;
  return sum > 0 ? mx / (sum / static_cast<double>(load.size())) : 0.0;
}

// Every node's numbers of one run, summed over nodes into per-node slots: its
// time, messages and words, tasks, load imbalance and GPUs' peak memory. The
// reporting node's own GPU and thread statistics stay its own (RunResult).
void gather_nodes(RunResult& r, const RunStats& st, platform::NodeNetwork& net) {
  constexpr int kFields = 10;
  const int P = net.nodes(), self = net.node();
  std::vector<double> v(static_cast<std::size_t>(P) * kFields, 0.0);
  double* mine = v.data() + static_cast<std::size_t>(self) * kFields;
  const CommStats& c = st.comm;
  std::size_t gpu_peak = 0;
  for (const DeviceStats& g : st.gpus) gpu_peak = std::max(gpu_peak, g.peak_bytes);
  const double fields[kFields] = {st.elapsed_s,
                                  double(c.messages_sent),
                                  double(c.words_sent),
                                  double(c.bytes_sent),
                                  double(c.messages_received),
                                  double(c.words_received),
                                  double(c.bytes_received),
                                  double(st.tasks),
                                  imbalance_ratio(st.busy_s, st.gpus),
                                  double(gpu_peak)};
  std::copy(fields, fields + kFields, mine);
  net.allreduce_sum(v);
  r.node = self;
  r.nodes = P;
  r.comm.assign(P, CommStats{});
  r.node_time_s.assign(P, 0.0);
  r.node_tasks.assign(P, 0);
  r.node_imbalance.assign(P, 0.0);
  r.node_gpu_peak_bytes.assign(P, 0);
  for (int n = 0; n < P; ++n) {
    const double* x = v.data() + static_cast<std::size_t>(n) * kFields;
    r.node_time_s[n] = x[0];
    CommStats& s = r.comm[n];
    s.messages_sent = static_cast<std::uint64_t>(x[1]);
    s.words_sent = static_cast<std::uint64_t>(x[2]);
    s.bytes_sent = static_cast<std::uint64_t>(x[3]);
    s.messages_received = static_cast<std::uint64_t>(x[4]);
    s.words_received = static_cast<std::uint64_t>(x[5]);
    s.bytes_received = static_cast<std::uint64_t>(x[6]);
    r.node_tasks[n] = static_cast<std::uint64_t>(x[7]);
    r.node_imbalance[n] = x[8];
    r.node_gpu_peak_bytes[n] = static_cast<std::size_t>(x[9]);
  }
  r.time_s = *std::max_element(r.node_time_s.begin(), r.node_time_s.end());
}

// Every datum a GPU holds must fit in its memory. Checked for every node's
// GPUs (all nodes' GPU g have this node's capacity), not only this node's:
// a refusal only some ranks met would leave the others waiting for them in
// the run's first collective.
void require_fits(const DataStore& store, std::size_t n_data, const Placement& where, int /*self*/,
                  const std::vector<platform::Device*>& gpus) {
  for (std::size_t x = 0; x < n_data; ++x) {
    const Location l = where(static_cast<DataId>(x));
    if (l.device == 0) continue;
    const platform::Device& d = *gpus[l.device - 1];
    if (store.bytes(static_cast<DataId>(x)) > d.capacity())
      throw InputError(fmt::format("a tile of {} bytes does not fit in the {} bytes of {}: use a smaller --B",
                                   store.bytes(static_cast<DataId>(x)), d.capacity(), d.name()));
  }
}

// The run's distribution (--dist; checked by resolve()).
std::unique_ptr<Distribution> make_distribution(const RunConfig& c, const TileLayout& L) {
  if (c.dist == kDistBlockCyclic2D) return std::make_unique<BlockCyclic2D>(c.pr, c.pc);
  if (c.dist == kDistColumnCyclic) return std::make_unique<HeteroColumnCyclic>(L, c.gpus);
  if (c.dist == kDistGpuColumns)
    return std::make_unique<MultiLevelBlockCyclic>(L, c.pr, c.pc, c.gpus, c.v,
                                                   MultiLevelBlockCyclic::Columns::AllOnGpus);
  return std::make_unique<MultiLevelBlockCyclic>(L, c.pr, c.pc, c.gpus, c.v);
}

}  // namespace

template <class T>
void run_distributed(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  const Factorization& F = c.factor ? *c.factor : factorization(c.algo);
  platform::NodeNetwork& net = *c.network;
  const int self = net.node();
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  r.p = L.tile_rows();
  r.q = L.tile_cols();
  const int G = c.gpus;
  const std::unique_ptr<Distribution> dist_ptr = make_distribution(c, L);
  const Distribution& dist = *dist_ptr;
  const Placement where = F.placement(L, dist);
  const auto own = [&](int i, int j) { return dist.owner(i, j).node == self; };
  const RuntimeOptions opt = runtime_options(c);
  const std::size_t n_data = F.data_count(L);
  const Generator gen = [&](TaskSink& s) { F.tasks(L, s); };
  auto run_graph = [&](std::size_t n, const Generator& g, Executor& ex, DataStore& store, const Placement& w,
                       const RuntimeOptions& o, const DataRelevance* relevance = nullptr) {
    // A graph run without GPUs (the checks) keeps every datum on its node's host.
    const Placement placed = o.gpus.empty() && G > 0 ? Placement([&w](DataId d) { return Location{w(d).node, 0}; }) : w;
    const DistContext ctx{self, placed, &net, &store, relevance};
    RuntimeOptions oo = o;
    oo.dist = &ctx;
    return NodeRuntime(platform, oo).run(n, g, ex);
  };
  // The data this node's protocol follows: a simulated cluster's nodes share
  // one; an MPI rank's run makes its own (NodeRuntime::run).
  const DataRelevance* relevance = nullptr;
  if (c.relevance && net.nodes() > 1) {
    std::lock_guard<std::mutex> lk(c.relevance->mutex);
    if (!c.relevance->relevance)
      c.relevance->relevance = std::make_unique<DataRelevance>(n_data, net.nodes(), gen, where);
    relevance = c.relevance->relevance.get();
  }
  // The factorization: every node starts it together (after building its
  // input), so time_s, the slowest node's, is measured from a common start.
  auto factor = [&](Executor& ex, DataStore& store, std::vector<GpuContext> gpus) {
    require_fits(store, n_data, where, self, c.devices);
    if (G > 0 && store.has_data() && c.machine.empty() && c.gpu_warmup == Warmup::On) {  // (simulated: the models)
      // A task runs on its main output's node, on the device it names or else its output's (000 §6 rule 1).
      const auto on_gpu = [&](const TaskDesc& t) {
        const int out = t.main_output();
        if (out < 0) return false;
        const Location loc = where(t.access[out].data);
        return loc.node == self && (t.device >= 0 ? t.device : loc.device) > 0;
      };
      const auto shape = [&](const TaskDesc& t) { return F.shape(L, t, c.precision, c.ib); };
      r.gpu_warmup = warm_up_gpus(c.devices, plan_warmup(gen, shape, on_gpu));
    }
    RuntimeOptions fo = opt;
    fo.gpus = std::move(gpus);
    fo.release_tiles = !c.keep_tiles;
    std::optional<HostPinning> pinned;
    if (G > 0 && store.has_data() && !c.pageable) {
      pinned.emplace(*c.devices[0], own_host_ranges(store, n_data, where, self));
      r.pinned_bytes = pinned->bytes();
      r.pin_s = pinned->pin_s();
    }
    // Every node has built its input (or says why not: a node whose set-up failed ends every node here); each then
    // lets its process's other threads stop (Platform::settle: not the other nodes' set-up, with several nodes in one
    // process) and all start together.
    if (const auto [failed, status] = net.agree_set_up(0); failed >= 0) throw RemoteFailure(failed, status);
    r.settle_s = platform.settle();
    net.barrier();
    const double cpu0 = process_cpu_s();
    const RunStats st = run_graph(n_data, gen, ex, store, where, fo, relevance);
    r.cpu_s = process_cpu_s() - cpu0;
    if (pinned) r.unpin_s = pinned->unpin();
    gather_nodes(r, st, net);
    r.tasks = st.tasks;
    r.busy_s = st.busy_s;
    r.gpus = st.gpus;
  };
  if (c.phantom) {
    PhantomExecutor ex(F, L, c);
    PhantomDataStore store(F.phantom_bytes(L, c.ib, sizeof(T)), sizeof(T));
    std::vector<GpuContext> gpus;
    for (int g = 0; g < G; ++g) gpus.push_back({c.devices[g], &ex, &store, gpu_model_of(c, g)});
    factor(ex, store, gpus);
    return;
  }
  TileMatrix<T> a(L, own);
  fill(a, c, input);
  std::optional<TileMatrix<T>> original;
  if (c.check) original = a.clone();
  kernels::set_blas_threads(1);
  const std::unique_ptr<FactorData<T>> data = F.data(a, c.ib, own);
  {
    TileDataStore<T> store;
    data->add_to(store);
    std::vector<std::unique_ptr<GpuTables<T>>> tables;
    std::vector<GpuContext> gpus;
    for (int g = 0; g < G; ++g) {
      tables.push_back(F.gpu_tables(L, c.ib, T{}));
      gpus.push_back({c.devices[g], &tables.back()->executor(), &tables.back()->tables, gpu_model_of(c, g)});
    }
    factor(data->executor(), store, gpus);
  }
  apply_test_fault(c, a);
  if (c.check) {
    RuntimeOptions copt = opt;
    copt.observer = nullptr;
    copt.model = nullptr;
    const DistGraphRun check_run = [&](std::size_t n, const Generator& g, Executor& ex, DataStore& store,
                                       const Placement& w) { run_graph(n, g, ex, store, w, copt); };
    const SumOverNodes sum = [&](std::vector<double>& v) { net.allreduce_sum(v); };
    r.residuals = data->residual_distributed(*original, dist, self, check_run, sum);
  }
}

template void run_distributed<double>(RunResult&, platform::Platform&, const DenseMatrix*);
template void run_distributed<float>(RunResult&, platform::Platform&, const DenseMatrix*);

}  // namespace tessera::driver
