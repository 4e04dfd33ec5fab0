#include "experiments/driver.hpp"
#include "experiments/test_fault.hpp"
#include "experiments/input_matrix.hpp"

#include <fmt/format.h>
#include <lapacke.h>
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "models/balance.hpp"
#include "platform/native/local_network.hpp"
#include "base/error.hpp"
#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "algorithms/tile_data_store.hpp"
#include "runtime/phantom_data_store.hpp"
#include "algorithms/dist_check.hpp"
#include "runtime/distribution.hpp"
#include "base/error.hpp"
#include "base/matrix_market.hpp"

namespace tessera {
namespace {

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void resolve(RunConfig& c, const DenseMatrix* input) {
  if (c.algo != "cholesky" && c.algo != "qr") throw InputError("--algo '" + c.algo + "' is not one of: cholesky, qr");
  if (c.impl != "tile" && c.impl != "lapack" && c.impl != "cusolver")
    throw InputError("--impl '" + c.impl + "' is not one of: tile, lapack, cusolver");
  if (c.impl == "cusolver" && c.gpus != 0)
    throw InputError("--impl cusolver factors on one GPU by itself: drop --gpus " + std::to_string(c.gpus));
  if (c.precision != 'd' && c.precision != 's')
    throw InputError(std::string("--precision '") + c.precision + "' is not one of: d, s");
  if (c.threads < 1) throw InputError("--threads " + std::to_string(c.threads) + " must be >= 1");
  if (!input && c.n == kUnsetSize) throw InputError("--n is required unless --input FILE gives the matrix");
  if (input) {
    const bool n_differs = c.n != kUnsetSize && c.n != input->n, m_differs = c.m != kUnsetSize && c.m != input->m;
    if (n_differs || m_differs)
      throw InputError("--input " + c.input + " holds a " + std::to_string(input->m) + " x " + std::to_string(input->n) +
                       " matrix, but --" + (m_differs ? "m " + std::to_string(c.m) : "n " + std::to_string(c.n)) +
                       " asks for another size");
    c.m = input->m;
    c.n = input->n;
  }
  if (c.n < 1) throw InputError("--n " + std::to_string(c.n) + " must be >= 1");
  if (c.m == kUnsetSize) c.m = c.n;
  if (c.m < 1) throw InputError("--m " + std::to_string(c.m) + " must be >= 1");
  if (c.algo == "cholesky" && c.m != c.n)
    throw InputError("Cholesky needs a square matrix: m = " + std::to_string(c.m) + ", n = " + std::to_string(c.n));
  if (c.algo == "qr" && c.m < c.n)
    throw InputError("QR needs m >= n: m = " + std::to_string(c.m) + ", n = " + std::to_string(c.n));
  if (c.B != kUnsetSize && c.B < 1) throw InputError("--B " + std::to_string(c.B) + " must be >= 1");
  if (c.s < 1) throw InputError("--s " + std::to_string(c.s) + " must be >= 1");
  if (c.b != kUnsetSize && c.s > 1 && c.b < 1)
    throw InputError("--b " + std::to_string(c.b) + " must be >= 1 when --s " + std::to_string(c.s) + " > 1");
  if (c.impl == "lapack" || c.impl == "cusolver") {
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
      f_core = models::dominant_kernel_speed(*c.model, c.algo.c_str(), c.precision, c.B);
      f_gpu = models::dominant_kernel_speed(*c.gpu_model, c.algo.c_str(), c.precision, c.B);
    } else if (c.device == "cuda") {
      throw InputError("--b auto needs the speed of a CUDA GPU's kernels, which a native run does not know: give --b");
    }
    // The host's cores are its compute threads (the papers' n - g - 2).
    c.b = models::auto_narrow_width(c.B, c.s, f_core, c.threads, f_gpu, c.gpus, c.precision == 's' ? 96 : 64);
  }
  if (c.b == kUnsetSize) c.b = c.s > 1 ? std::max<index_t>(1, c.B / (2 * c.s)) : 0;
  if (c.ib < 1) throw InputError("--ib " + std::to_string(c.ib) + " must be >= 1");
  if (c.window < 1) throw InputError("--window " + std::to_string(c.window) + " must be >= 1");
  if (c.phantom && c.check)
    throw InputError("--check needs the matrix, but a simulated run without --sim-data has none: add --sim-data");
  if (c.phantom && c.impl != "tile") throw InputError("--impl " + c.impl + " has no tasks to simulate: use --impl tile");
  validate_test_fault(c);
  if (c.gpus < 0) throw InputError("--gpus " + std::to_string(c.gpus) + " must be >= 0");
  if (c.device != "emulated" && c.device != "cuda") throw InputError("--device '" + c.device + "' is not one of: emulated, cuda");
  if (c.gpus > 0 && c.impl != "tile") throw InputError("--impl " + c.impl + " runs on the CPU only: GPUs need --impl tile");
  if (c.pr < 1 || c.pc < 1)
    throw InputError("--grid " + std::to_string(c.pr) + "x" + std::to_string(c.pc) + ": Pr and Pc must be >= 1");
  if (c.v != RunConfig::kUnsetV && c.v < 1)
    throw InputError("--v " + std::to_string(c.v) + ": the virtual tile height must be >= 1 tile row");
  if (c.v != RunConfig::kUnsetV && c.algo != "qr")
    throw InputError("--v " + std::to_string(c.v) + ": the virtual tile height applies to --algo qr only");
  if (c.v == RunConfig::kUnsetV)
    c.v = c.algo == "qr" ? default_virtual_tile_height(static_cast<int>((c.m + c.B - 1) / c.B), c.pr) : 1;
  if (c.network) {
    if (c.pr * c.pc != c.network->nodes())
      throw InputError("--grid " + std::to_string(c.pr) + "x" + std::to_string(c.pc) + " has " + std::to_string(c.pr * c.pc) +
                       " nodes, but the run has " + std::to_string(c.network->nodes()));
    if (c.impl != "tile") throw InputError("--impl " + c.impl + " runs on one node: distributed runs use --impl tile");
    if (input) throw InputError("--input " + c.input + ": distributed runs generate their matrix (no node reads the whole of it)");
  }
  resolve_matrix(c, input);
  TileLayout(c.m, c.n, c.B, c.s, c.b);  // validates B, s, b
}

// The tasks of a run whose matrix does not exist: only their shapes, for the kernel model.
class PhantomExecutor final : public Executor {
 public:
  PhantomExecutor(const TileLayout& l, const RunConfig& c) : l_(l), cholesky_(c.algo == "cholesky"), precision_(c.precision), ib_(c.ib) {}
  void execute(const TaskDesc&, WorkerContext&) override {
    throw std::logic_error("a phantom run has no data to run a kernel on");
  }
  KernelShape shape(const TaskDesc& t) const override {
    if (cholesky_) return cholesky_shape(l_, t, precision_);
    return qr_shape(l_, t, precision_, std::min(ib_, l_.col_width(t.arg[0])));
  }

 private:
  const TileLayout& l_;
  bool cholesky_;
  char precision_;
  index_t ib_;
};

RuntimeOptions runtime_options(const RunConfig& c) {
  RuntimeOptions opt;
  opt.threads = c.threads;
  opt.window_capacity = c.window;
  opt.policy = c.policy;
  opt.seed = c.seed;
  opt.observer = c.observer;
  opt.model = c.model;
  return opt;
}

template <class T>
void run_tile(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  r.p = L.tile_rows();
  r.q = L.tile_cols();
  const RuntimeOptions opt = runtime_options(c);
  NodeRuntime rt(platform, opt);
  if (c.phantom) {
    PhantomExecutor ex(L, c);
    const double cpu0 = process_cpu_s();
    const RunStats st = c.algo == "cholesky"
                            ? rt.run(cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex)
                            : rt.run(qr_data_count(L), [&](TaskSink& s) { qr_tasks(L, s); }, ex);
    r.cpu_s = process_cpu_s() - cpu0;  // the simulator's own cost
    r.time_s = st.elapsed_s;
    r.tasks = st.tasks;
    r.busy_s = st.busy_s;
    return;
  }
  TileMatrix<T> a(L);
  fill(a, c, input);
  std::vector<T> original;
  if (c.check) original = a.to_dense();
  kernels::set_blas_threads(1);
  RunStats st;
  const double cpu0 = process_cpu_s();
  if (c.algo == "cholesky") {
    CholeskyExecutor<T> ex(a);
    st = rt.run(cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
    r.cpu_s = process_cpu_s() - cpu0;
    apply_test_fault(c, a);
    if (c.check) {
      kernels::set_blas_threads(c.threads);
      r.residuals = cholesky_residual(original, a);
    }
  } else {
    QrFactors<T> f(L, c.ib);
    QrExecutor<T> ex(a, f);
    st = rt.run(qr_data_count(L), [&](TaskSink& s) { qr_tasks(L, s); }, ex);
    r.cpu_s = process_cpu_s() - cpu0;
    apply_test_fault(c, a);
    if (c.check) {
      TileMatrix<T> e(L);
      for (index_t d = 0; d < c.n; ++d) e.at(d, d) = T(1);
      QrFormQExecutor<T> qex(a, f, e);
      RuntimeOptions qopt = opt;
      qopt.observer = nullptr;
      NodeRuntime(platform, qopt).run(qr_form_q_data_count(L), [&](TaskSink& s) { qr_form_q_tasks(L, s); }, qex);
      kernels::set_blas_threads(c.threads);
      r.residuals = qr_residual(original, a, e.to_dense());
    }
  }
  r.time_s = st.elapsed_s;
  r.tasks = st.tasks;
  r.busy_s = st.busy_s;
}

// Every node's numbers of one run, summed over nodes into per-node slots.
void gather_nodes(RunResult& r, const RunStats& st, platform::NodeNetwork& net) {
  constexpr int kFields = 7;
  const int P = net.nodes(), self = net.node();
  std::vector<double> v(static_cast<std::size_t>(P) * kFields, 0.0);
  double* mine = v.data() + static_cast<std::size_t>(self) * kFields;
  const CommStats& c = st.comm;
  const double fields[kFields] = {st.elapsed_s, double(c.messages_sent), double(c.words_sent), double(c.bytes_sent),
                                  double(c.messages_received), double(c.words_received), double(c.bytes_received)};
  std::copy(fields, fields + kFields, mine);
  net.allreduce_sum(v);
  r.node = self;
  r.nodes = P;
  r.comm.assign(P, CommStats{});
  r.node_time_s.assign(P, 0.0);
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
  }
  r.time_s = *std::max_element(r.node_time_s.begin(), r.node_time_s.end());
}

// Every datum a GPU of this node holds must fit in its memory.
void require_fits(const DataStore& store, std::size_t n_data, const Placement& where, int self,
                  const std::vector<platform::Device*>& gpus) {
  for (std::size_t x = 0; x < n_data; ++x) {
    const Location l = where(static_cast<DataId>(x));
    if (l.node != self || l.device == 0) continue;
    const platform::Device& d = *gpus[l.device - 1];
    if (store.bytes(static_cast<DataId>(x)) > d.capacity())
      throw InputError(fmt::format("a tile of {} bytes does not fit in the {} bytes of {}: use a smaller --B", store.bytes(static_cast<DataId>(x)),
                                   d.capacity(), d.name()));
  }
}

// 001 §5.3: MaxLoad / AvgLoad over the host (its cores' mean kernel time) and each GPU.
double imbalance_ratio(const std::vector<double>& cpu_busy, const std::vector<DeviceStats>& gpus) {
  std::vector<double> load;
  if (!cpu_busy.empty()) {
    double sum = 0;
    for (double b : cpu_busy) sum += b;
    load.push_back(sum / static_cast<double>(cpu_busy.size()));
  }
  for (const DeviceStats& g : gpus) load.push_back(g.busy_s);
  double mx = 0, sum = 0;
  for (double l : load) mx = std::max(mx, l), sum += l;
  return sum > 0 ? mx / (sum / static_cast<double>(load.size())) : 0.0;
}

// One node of a distributed run: its tiles of the multi-level block-cyclic
// distribution, the protocol-driven runtime, and the distributed check.
template <class T>
void run_tile_distributed(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  platform::NodeNetwork& net = *c.network;
  const int self = net.node();
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  const int p = L.tile_rows(), q = L.tile_cols();
  r.p = p;
  r.q = q;
  const int G = c.gpus;
  const MultiLevelBlockCyclic dist(L, c.pr, c.pc, G, c.v);
  const bool chol = c.algo == "cholesky";
  const DataId pq = static_cast<DataId>(p * q);
  const Placement where = factor_placement(L, dist);
  const auto own = [&](int i, int j) { return dist.owner(i, j).node == self; };
  const RuntimeOptions opt = runtime_options(c);
  const std::size_t n_data = chol ? cholesky_data_count(L) : qr_data_count(L);
  const Generator gen = [&](TaskSink& s) {
    if (chol) cholesky_tasks(L, s);
    else qr_tasks(L, s);
  };
  auto run_graph = [&](std::size_t n, const Generator& g, Executor& ex, DataStore& store, const Placement& w,
                       const RuntimeOptions& o) {
    // A graph run without GPUs (the checks) keeps every datum on its node's host.
    const Placement placed = o.gpus.empty() && G > 0 ? Placement([&w](DataId d) { return Location{w(d).node, 0}; }) : w;
    const DistContext ctx{self, placed, &net, &store};
    RuntimeOptions oo = o;
    oo.dist = &ctx;
    return NodeRuntime(platform, oo).run(n, g, ex);
  };
  // The factorization: every node starts it together (after building its
  // input), so time_s, the slowest node's, is measured from a common start.
  auto factor = [&](Executor& ex, DataStore& store, std::vector<GpuContext> gpus) {
    require_fits(store, n_data, where, self, c.devices);
    RuntimeOptions fo = opt;
    fo.gpus = std::move(gpus);
    fo.release_tiles = !c.keep_tiles;
    std::vector<double> barrier{0.0};
    net.allreduce_sum(barrier);
    const double cpu0 = process_cpu_s();
    const RunStats st = run_graph(n_data, gen, ex, store, where, fo);
    r.cpu_s = process_cpu_s() - cpu0;
    gather_nodes(r, st, net);
    r.tasks = st.tasks;
    r.busy_s = st.busy_s;
    r.gpus = st.gpus;
    r.imbalance = imbalance_ratio(st.busy_s, st.gpus);
  };
  auto gpu_contexts = [&](auto& tables) {
    std::vector<GpuContext> v;
    for (int g = 0; g < G; ++g) v.push_back({c.devices[g], tables[g]->ex.get(), &tables[g]->tables, c.gpu_model});
    return v;
  };
  if (c.phantom) {
    PhantomExecutor ex(L, c);
    // The sizes real messages would have: tiles with their T factor (QR),
    // panel copies; a QrFactors that keeps nothing knows them and allocates nothing.
    std::optional<QrFactors<T>> sizes;
    if (!chol) sizes.emplace(L, c.ib, [](int, int) { return false; });
    PhantomDataStore store(
        [&](DataId d) -> std::size_t {
          if (d >= pq) return sizes->v_elems(static_cast<int>(d - pq)) * sizeof(T);
          const int i = static_cast<int>(d % p), j = static_cast<int>(d / p);
          const std::size_t e = static_cast<std::size_t>(L.row_height(i) * L.col_width(j));
          return (e + (sizes ? sizes->t_elems(i, j) : 0)) * sizeof(T);
        },
        sizeof(T));
    std::vector<GpuContext> gpus;
    for (int g = 0; g < G; ++g) gpus.push_back({c.devices[g], &ex, &store, c.gpu_model});
    factor(ex, store, gpus);
    return;
  }
  TileMatrix<T> a(L, own);
  fill(a, c, input);
  std::optional<TileMatrix<T>> original;
  if (c.check) original = a.clone();
  kernels::set_blas_threads(1);
  std::optional<QrFactors<T>> f;
  if (!chol) f.emplace(L, c.ib, own);
  {
    TileDataStore<T> store;
    store.add_tiles(0, a, f ? &*f : nullptr);
    if (f) store.add_panels(pq, *f, q);
    std::vector<std::unique_ptr<GpuTables<T>>> tables;
    for (int g = 0; g < G; ++g) tables.push_back(std::make_unique<GpuTables<T>>(L, c.ib, !chol));
    if (chol) {
      CholeskyExecutor<T> ex(a);
      factor(ex, store, gpu_contexts(tables));
    } else {
      QrExecutor<T> ex(a, *f);
      factor(ex, store, gpu_contexts(tables));
    }
  }
  apply_test_fault(c, a);
  if (c.check) {
    RuntimeOptions copt = opt;
    copt.observer = nullptr;
    copt.model = nullptr;
    const DistGraphRun check_run = [&](std::size_t n, const Generator& g, Executor& ex, DataStore& store, const Placement& w) {
      run_graph(n, g, ex, store, w, copt);
    };
    const SumOverNodes sum = [&](std::vector<double>& v) { net.allreduce_sum(v); };
    r.residuals = chol ? cholesky_residual_distributed(*original, a, dist, self, check_run, sum)
                       : qr_residual_distributed(*original, a, *f, dist, self, check_run, sum);
  }
}

inline lapack_int potrf(index_t n, double* a) { return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a, n); }
inline lapack_int potrf(index_t n, float* a) { return LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', n, a, n); }
inline lapack_int geqrf(index_t m, index_t n, double* a, double* tau) { return LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau); }
inline lapack_int geqrf(index_t m, index_t n, float* a, float* tau) { return LAPACKE_sgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau); }
inline lapack_int orgqr(index_t m, index_t n, double* a, const double* tau) { return LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau); }
inline lapack_int orgqr(index_t m, index_t n, float* a, const float* tau) { return LAPACKE_sorgqr(LAPACK_COL_MAJOR, m, n, n, a, m, tau); }

// The peer: LAPACKE's blocked factorization on one dense matrix, with
// OpenBLAS using as many threads as the tile runtime has compute threads.
template <class T>
void run_lapack(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  const TileLayout whole(c.m, c.n, c.B, 1, 0);  // one tile: the dense matrix itself
  r.p = r.q = 1;
  TileMatrix<T> a(whole);
  fill(a, c, input);
  std::vector<T> original;
  if (c.check) original = a.to_dense();
  T* d = a.tile(0, 0);
  kernels::set_blas_threads(c.threads);
  std::vector<T> tau(static_cast<std::size_t>(c.n));
  lapack_int info = 0;
  if (c.impl == "cusolver") {
    // cuSOLVER on GPU 1 (CUDA device 0): time_s is the factorization alone,
    // with the matrix in device memory; copy_s the copies in and out.
    if (kernels::cuda_device_count() < 1 && TESSERA_HAVE_CUDA)
      throw InputError("--impl cusolver needs a CUDA GPU, and none is present");
    const kernels::CusolverRun g = kernels::cusolver_factor(c.algo == "cholesky", 0, c.m, c.n, d, tau.data());
    r.time_s = g.factor_s;
    r.copy_s = g.copy_s;
    info = g.info;
  } else {
    const double t0 = platform.now(), cpu0 = process_cpu_s();
    info = c.algo == "cholesky" ? potrf(c.n, d) : geqrf(c.m, c.n, d, tau.data());
    r.time_s = platform.now() - t0;
    r.cpu_s = process_cpu_s() - cpu0;
  }
  if (info > 0) throw NotPositiveDefinite(info);
  if (info < 0) throw std::logic_error("LAPACKE returned info " + std::to_string(info));
  apply_test_fault(c, a);
  if (c.check) {
    if (c.algo == "cholesky") {
      r.residuals = cholesky_residual(original, a);
    } else {
      std::vector<T> q(d, d + c.m * c.n);
      orgqr(c.m, c.n, q.data(), tau.data());
      r.residuals = qr_residual(original, a, q);
    }
  }
  kernels::set_blas_threads(1);
}

}  // namespace

std::uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

double flop_count(const std::string& algo, index_t m, index_t n) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  return algo == "cholesky" ? N * N * N / 3.0 : 2.0 * M * N * N - 2.0 * N * N * N / 3.0;
}

std::unique_ptr<platform::Device> make_native_device(const RunConfig& c, int g, int node) {
  if (c.device == "emulated") return std::make_unique<platform::EmulatedDevice>(g, c.emulated);
  if (!TESSERA_HAVE_CUDA) throw NotCompiled("CUDA");
  const int present = kernels::cuda_device_count();
  if (c.gpus > present)
    throw InputError(fmt::format("--gpus {} asks for more GPUs than the {} CUDA device{} present", c.gpus, present, present == 1 ? "" : "s"));
  return kernels::make_cuda_device(g, g - 1, c.gpu_memory_cap);
}

RunResult run_factorization(RunConfig config, platform::Platform& platform) {
  std::optional<DenseMatrix> input;
  if (!config.input.empty()) input = read_matrix_market(config.input);
  resolve(config, input ? &*input : nullptr);
  RunResult r;
  r.config = config;
  const DenseMatrix* in = input ? &*input : nullptr;
  if (config.impl == "lapack" || config.impl == "cusolver") {
    if (config.precision == 'd') run_lapack<double>(r, platform, in);
    else run_lapack<float>(r, platform, in);
  } else if (config.network || config.gpus > 0) {
    // GPUs: the protocol's runtime, on a one-node "cluster" when there is no network.
    std::optional<platform::LocalCluster> one;
    if (!config.network) {
      one.emplace(1);
      r.config.network = &one->node(0);
    }
    std::vector<std::unique_ptr<platform::Device>> own;
    if (r.config.devices.empty())
      for (int g = 1; g <= config.gpus; ++g) own.push_back(make_native_device(config, g, r.config.network->node()));
    for (auto& d : own) r.config.devices.push_back(d.get());
    if (static_cast<int>(r.config.devices.size()) != config.gpus)
      throw std::logic_error("the backend gave " + std::to_string(r.config.devices.size()) + " GPUs for --gpus " + std::to_string(config.gpus));
    if (config.precision == 'd') run_tile_distributed<double>(r, platform, in);
    else run_tile_distributed<float>(r, platform, in);
    r.config.network = config.network;
    r.config.devices = config.devices;
  } else {
    if (config.precision == 'd') run_tile<double>(r, platform, in);
    else run_tile<float>(r, platform, in);
  }
  r.gflops = r.time_s > 0 ? flop_count(config.algo, config.m, config.n) / r.time_s * 1e-9 : 0.0;
  return r;
}

CommMax comm_max(const RunResult& r) {
  CommMax m;
  for (const CommStats& s : r.comm) {
    m.messages_sent = std::max(m.messages_sent, s.messages_sent);
    m.words_sent = std::max(m.words_sent, s.words_sent);
    m.messages = std::max(m.messages, s.messages_sent + s.messages_received);
    m.words = std::max(m.words, s.words_sent + s.words_received);
  }
  return m;
}

std::string cost_note(const RunResult& r) {
  if (r.config.machine.empty()) return "";
  return fmt::format("simulation cost: wall {:.1f} s, peak memory {:.0f} MiB", r.wall_s, static_cast<double>(r.peak_rss_bytes) / (1 << 20));
}

std::string summary_line(const RunResult& r, const char* backend) {
  const RunConfig& c = r.config;
  std::string res = "residual=-", verdict = "unchecked";
  if (r.residuals) {
    res = fmt::format("residual={:.3g}", r.residuals->factor);
    if (c.algo == "qr") res += fmt::format(" orth={:.3g}", r.residuals->orth);
    verdict = r.residuals->passed() ? "ok" : "FAILED";
  }
  std::string grid;
  if (!r.comm.empty() && (r.nodes > 1 || c.gpus == 0)) {  // (a one-node run with GPUs has no network)
    const CommMax mx = comm_max(r);
    grid += fmt::format(" grid={}x{} msgs_max={} words_max={}", c.pr, c.pc, mx.messages, mx.words);
    if (c.algo == "qr" && c.pr > 1) grid += fmt::format(" v={}", c.v);
  }
  if (c.gpus > 0) {
    std::size_t peak = 0;
    for (const DeviceStats& d : r.gpus) peak = std::max(peak, d.peak_bytes);
    grid += fmt::format(" gpus={} imbalance={:.3f} gpu_peak_MiB={:.1f}", c.gpus, r.imbalance, static_cast<double>(peak) / (1 << 20));
  }
  return fmt::format("{:<8} {} {} {}x{} B={} s={} b={} tiles={}x{} threads={}{} backend={} time={:.4f}s gflops={:.2f} {} {}",
                     c.algo, c.impl, c.precision, c.m, c.n, c.B, c.s, c.b, r.p, r.q, c.threads, grid, backend, r.time_s,
                     r.gflops, res, verdict);
}

std::string result_json(const RunResult& r, const char* backend) {
  const RunConfig& c = r.config;
  nlohmann::json j;
  j["algo"] = c.algo;
  j["impl"] = c.impl;
  j["backend"] = backend;
  j["m"] = c.m;
  j["n"] = c.n;
  j["B"] = c.B;
  j["s"] = c.s;
  j["b"] = c.b;
  j["ib"] = c.ib;
  j["precision"] = std::string(1, c.precision);
  j["threads"] = c.threads;
  j["seed"] = c.seed;
  j["blas_core"] = kernels::blas_core();
  j["input"] = c.input.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.input);
  j["matrix"] = c.matrix.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.matrix);
  j["tiles"] = {r.p, r.q};
  j["tasks"] = r.tasks;
  j["time_s"] = r.time_s;
  j["cpu_s"] = r.cpu_s;
  j["gflops"] = r.gflops;
  j["busy_s"] = r.busy_s;
  if (c.impl == "cusolver") j["copy_s"] = r.copy_s;
  if (r.residuals) {
    j["residual"] = r.residuals->factor;
    if (c.algo == "qr") j["orthogonality"] = r.residuals->orth;
    j["check_passed"] = r.residuals->passed();
  } else {
    j["residual"] = nullptr;
    j["check_passed"] = nullptr;
  }
  j["residual_threshold"] = kResidualThreshold;
  j["wall_s"] = r.wall_s;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  if (!r.comm.empty()) {
    j["grid"] = {c.pr, c.pc};
    j["v"] = c.v;
    j["nodes"] = r.nodes;
    j["node_time_s"] = r.node_time_s;
    nlohmann::json per = nlohmann::json::array();
    for (const CommStats& s : r.comm)
      per.push_back({{"messages_sent", s.messages_sent}, {"words_sent", s.words_sent}, {"bytes_sent", s.bytes_sent},
                     {"messages_received", s.messages_received}, {"words_received", s.words_received},
                     {"bytes_received", s.bytes_received}});
    const CommMax mx = comm_max(r);
    j["comm"] = {{"per_node", per},
                 {"max_messages_sent", mx.messages_sent},
                 {"max_words_sent", mx.words_sent},
                 {"max_messages", mx.messages},
                 {"max_words", mx.words}};
  }
  if (c.gpus > 0) {
    j["gpus"] = c.gpus;
    j["device"] = c.machine.empty() ? c.device : "simulated";
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t g = 0; g < r.gpus.size(); ++g) {
      const DeviceStats& d = r.gpus[g];
      per.push_back({{"gpu", g + 1}, {"busy_s", d.busy_s}, {"peak_bytes", d.peak_bytes}, {"bytes_at_end", d.bytes_at_end},
                     {"copies_in", d.copies_in}, {"bytes_in", d.bytes_in}, {"copies_out", d.copies_out}, {"bytes_out", d.bytes_out},
                     {"evictions", d.evictions}, {"bytes_written_back", d.bytes_written_back}});
    }
    j["gpu_stats"] = per;
    j["imbalance_ratio"] = r.imbalance;
    j["release_tiles"] = !c.keep_tiles;
  }
  if (!c.machine.empty()) {
    j["machine"] = c.machine;
    j["sim_data"] = !c.phantom;
  }
  return j.dump(2);
}

}  // namespace tessera
