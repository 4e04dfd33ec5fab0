// The StarPU peer of tessera's runs (000 §7.3, Fig. 8 compares the paper's
// runtime with StarPU on one node): the same tile Cholesky as
// `tessera run --algo cholesky --s 1` (001 Alg. 1 with square tiles), on the
// same tiles, with the same kernels (tessera's CPU tile kernels,
// kernels/cpu/tile_kernels.hpp, one OpenBLAS thread each): the tasks that
// tessera's generator (cholesky_tasks) inserts, in its order with its
// priorities, submitted to StarPU's runtime
// (starpu_task_insert, dependencies inferred from the data accesses) instead
// of tessera's. What differs between the two runs is the runtime alone.
//
//   starpu_peer --n N --nb NB [--threads T] [--precision d|s] [--sched POLICY]
//               [--no-prio] [--check] [--matrix KIND] [--seed K] [--json FILE]
//   mpirun -np P starpu_peer --grid PrxPc ...          (StarPU-MPI, P = Pr x Pc)
//
// With --grid the tiles are placed as tessera places them on that grid
// (runtime/distribution.hpp, 2-D block-cyclic for s = 1) and every rank
// submits every task through starpu_mpi_task_insert: a task runs on the rank
// that owns the tile it writes, and StarPU-MPI sends the tiles it reads from
// their owners, as tessera's nodes decide without coordination (000 §6) what
// moves where.
//
// The matrix is tessera's (base/matrix_gen.hpp: --matrix spd, the default,
// graded or illcond; general, whose lower triangle is not positive definite,
// shows the breakdown's exit), the check tessera's (||A - L L^T||_1 /
// (N ||A||_1 eps) < 30, algorithms/check.hpp; with --grid on rank 0, the
// factor gathered there after the timing). The time runs from the first
// task's submission to the end of the last (starpu_task_wait_for_all; with
// --grid from a barrier to starpu_mpi_wait_for_all, the slowest rank's), the
// tiles registered before, as tessera times its factorization after
// generating the matrix. StarPU's CPU workers are --threads (per rank; at most
// STARPU_MAXCPUS, 4 in Debian's build); no CUDA or OpenCL worker. --sched names
// a StarPU scheduling policy (lws, prio, eager, ...); without it StarPU's
// default. The options take precedence over StarPU's environment variables
// (STARPU_NCPU, STARPU_SCHED), and a run that StarPU starts otherwise stops
// (exit 4), so a run is what its output line says. StarPU
// keeps its bus calibration under $STARPU_HOME (else $HOME)/.starpu. Debian
// builds StarPU with non-blocking drivers: an idle worker polls for work.
//
// Exit status: 0 success, 1 a --check failed, 2 invalid input (one message,
// rank 0's, naming the option and the value), 3 the matrix is not positive
// definite, 4 out of memory for the matrix, or StarPU could not start or
// refused a task (its return code in the message).
#include <starpu.h>
#ifdef TESSERA_STARPU_MPI
#include <mpi.h>
#include <starpu_mpi.h>
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/cholesky.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/matrix_gen.hpp"
#include "base/tile_layout.hpp"
#include "base/tile_matrix.hpp"
#include "experiments/output_path.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "runtime/distribution.hpp"

namespace {

using tessera::index_t;

struct Options {
  index_t n = 0, nb = 0;
  int threads = 1;
  std::string precision = "d", sched, json;
  bool no_prio = false, check = false;
  std::string matrix = "spd";
  std::uint64_t seed = 1;
  std::string grid;  // empty: one process, StarPU without MPI
  int pr = 1, pc = 1;
};

// Where this process stands: its rank and the ranks' count (0 and 1 without
// --grid), and whether it started MPI, which it then finalizes before exiting.
struct Process {
  int rank = 0, size = 1;
  bool mpi = false;
  // Every rank calls this together: one message (rank 0's) and the exit status.
  [[noreturn]] void fail(int status, const std::string& message) const {
    if (rank == 0) std::fprintf(stderr, "starpu_peer: error: %s\n", message.c_str());
#ifdef TESSERA_STARPU_MPI
    if (mpi) MPI_Finalize();
#endif
    std::exit(status);
  }
  // One rank alone: its message, and with MPI every rank ends (MPI_Abort).
  [[noreturn]] void abort(int status, const std::string& message) const {
    std::fprintf(stderr, "starpu_peer: error: %s%s\n", mpi ? fmt::format("rank {}: ", rank).c_str() : "",
                 message.c_str());
#ifdef TESSERA_STARPU_MPI
    if (mpi) MPI_Abort(MPI_COMM_WORLD, status);
#endif
    std::exit(status);
  }
};

// What a POTF2' codelet gets besides its tile: the tile's first global column
// and where to record the first column (1-based, global) whose pivot was not
// positive (0 while none was). A codelet cannot throw into StarPU.
struct PotfArgs {
  index_t col0;
  std::atomic<index_t>* breakdown;
};

// A tile as StarPU hands it to a codelet: pointer, leading dimension, rows, columns.
template <class T>
struct Tile {
  T* p;
  index_t ld, m, n;
};
template <class T>
Tile<T> tile_of(void* buffer) {
  return {reinterpret_cast<T*>(STARPU_MATRIX_GET_PTR(buffer)), static_cast<index_t>(STARPU_MATRIX_GET_LD(buffer)),
          static_cast<index_t>(STARPU_MATRIX_GET_NX(buffer)), static_cast<index_t>(STARPU_MATRIX_GET_NY(buffer))};
}

// The codelets: each calls the tessera kernel the tile executor calls for the
// same task (algorithms/cholesky.cpp, square tiles, so every offset Δ is 0).
template <class T>
void potf2p_cpu(void* buffers[], void* arg) {
  const Tile<T> a = tile_of<T>(buffers[0]);
  PotfArgs args{};
  starpu_codelet_unpack_args(arg, &args);
  const int info = tessera::kernels::potf2p<T>(a.m, a.n, a.p, a.ld);
  index_t none = 0;
  if (info > 0) args.breakdown->compare_exchange_strong(none, args.col0 + info);
}
template <class T>
void trsm_cpu(void* buffers[], void*) {  // L_ik = A_ik L_kk^{-T}
  const Tile<T> l = tile_of<T>(buffers[0]), a = tile_of<T>(buffers[1]);
  tessera::kernels::trsm<T>(a.m, a.n, l.p, l.ld, a.p, a.ld);
}
template <class T>
void diag_cpu(void* buffers[], void*) {  // A_jj -= L_jk L_jk^T (lower)
  const Tile<T> l = tile_of<T>(buffers[0]), c = tile_of<T>(buffers[1]);
  tessera::kernels::gsmm_diag<T>(c.m, c.n, l.n, l.p, l.ld, c.p, c.ld);
}
template <class T>
void gemm_cpu(void* buffers[], void*) {  // A_ij -= L_ik L_jk^T
  const Tile<T> a = tile_of<T>(buffers[0]), b = tile_of<T>(buffers[1]), c = tile_of<T>(buffers[2]);
  tessera::kernels::gsmm<T>(c.m, c.n, a.n, a.p, a.ld, b.p, b.ld, c.p, c.ld);
}

template <class T>
struct Codelets {
  starpu_codelet potf2p, trsm, diag, gemm;
  Codelets() {
    const auto make = [](starpu_codelet& c, starpu_cpu_func_t f, int nbuffers, const char* name) {
      starpu_codelet_init(&c);
      c.cpu_funcs[0] = f;
      c.nbuffers = nbuffers;
      c.name = name;
    };
    make(potf2p, potf2p_cpu<T>, 1, "potf2p");
    make(trsm, trsm_cpu<T>, 2, "trsm");
    make(diag, diag_cpu<T>, 2, "gsmm_diag");
    make(gemm, gemm_cpu<T>, 3, "gsmm");
  }
};

// tessera's own generator feeding StarPU: each task cholesky_tasks inserts
// (square tiles, so POTF2', TRSM, the diagonal update and GEMM) becomes one
// StarPU task on the same tiles (a tile's data id is its handle's index), in
// the generator's order, with its priority, mapped onto the scheduler's range
// when that is narrower.
template <class T>
class StarpuSink final : public tessera::TaskSink {
 public:
  StarpuSink(const Process& proc, const tessera::TileLayout& L, std::vector<starpu_data_handle_t>& h, bool prio,
             std::atomic<index_t>& breakdown)
      : proc_(proc), L_(L), h_(h), prio_(prio), breakdown_(breakdown), lo_(starpu_sched_get_min_priority()),
        hi_(starpu_sched_get_max_priority()), top_(tessera::column_priority(L.tile_cols(), 0, 0)) {
  }  // the largest priority of the run

  void insert(const tessera::TaskDesc& t) override {
    const auto handle = [&](int a) { return h_[t.access[a].data]; };
    const int priority = this->priority(t.priority);
    int rc = 0;
    switch (t.kernel) {
      case tessera::kPotf2p: {
        const PotfArgs args{L_.col_offset(t.arg[0]), &breakdown_};
        rc = insert_task(&cl_.potf2p, STARPU_RW, handle(0), STARPU_PRIORITY, priority, STARPU_VALUE, &args,
                         sizeof(args), 0);
        break;
      }
      case tessera::kTrsm:  // L_kk, A_ik
        rc = insert_task(&cl_.trsm, STARPU_R, handle(0), STARPU_RW, handle(1), STARPU_PRIORITY, priority, 0);
        break;
      case tessera::kGsmmDiag:  // L_ik (read twice, one access: TaskDesc::add merges a repeated datum), A_ii
        rc = insert_task(&cl_.diag, STARPU_R, handle(0), STARPU_RW, handle(t.n_access - 1), STARPU_PRIORITY, priority,
                         0);
        break;
      case tessera::kGsmm:  // L_ik, L_jk, A_ij
        rc = insert_task(&cl_.gemm, STARPU_R, handle(0), STARPU_R, handle(1), STARPU_RW, handle(2), STARPU_PRIORITY,
                         priority, 0);
        break;
      default: proc_.abort(4, fmt::format("no StarPU codelet for tessera's kernel {}", t.kernel));
    }
    if (rc != 0) proc_.abort(4, fmt::format("starpu_task_insert (kernel {}) returned {}", t.kernel, rc));
    ++tasks_;
  }
  std::int64_t tasks() const { return tasks_; }

 private:
  int priority(long p) const {
    if (!prio_) return 0;
    if (hi_ - lo_ >= top_) return static_cast<int>(std::min(hi_, lo_ + p));
    return static_cast<int>(lo_ + p * (hi_ - lo_) / std::max(top_, 1L));
  }
  // starpu_task_insert, or with --grid starpu_mpi_task_insert (every rank
  // submits every task; the owner of the written tile runs it).
  template <class... A>
  int insert_task(starpu_codelet* cl, A... args) {
#ifdef TESSERA_STARPU_MPI
    if (proc_.mpi) return starpu_mpi_task_insert(MPI_COMM_WORLD, cl, args...);
#endif
    return starpu_task_insert(cl, args...);
  }

  static inline Codelets<T> cl_;
  const Process& proc_;
  const tessera::TileLayout& L_;
  std::vector<starpu_data_handle_t>& h_;
  bool prio_;
  std::atomic<index_t>& breakdown_;
  long lo_, hi_, top_;
  std::int64_t tasks_ = 0;
};

// The factor's lower tiles, each from the rank that owns it, in rank 0's
// `whole` (other ranks send theirs; plain MPI after StarPU-MPI has shut down).
template <class T>
void gather(const Process& proc, const tessera::Distribution& dist, tessera::TileMatrix<T>& mine,
            tessera::TileMatrix<T>* whole) {
  const tessera::TileLayout& L = mine.layout();
  const int q = L.tile_cols();
  for (int j = 0; j < q; ++j)
    for (int i = j; i < q; ++i) {
      const int owner = dist.owner(i, j).node;
      const std::size_t count = static_cast<std::size_t>(L.row_height(i) * L.col_width(j));
      if (proc.rank == 0 && owner == 0) std::copy_n(mine.tile(i, j), count, whole->tile(i, j));
#ifdef TESSERA_STARPU_MPI
      const MPI_Datatype type = sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT;
      if (proc.rank == 0 && owner != 0)
        MPI_Recv(whole->tile(i, j), static_cast<int>(count), type, owner, i + j * q, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else if (proc.rank != 0 && owner == proc.rank)
        MPI_Send(mine.tile(i, j), static_cast<int>(count), type, 0, i + j * q, MPI_COMM_WORLD);
#endif
    }
}

template <class T>
int run(const Options& o, Process& proc) {
  const tessera::TileLayout L(o.n, o.n, o.nb, 1, 0);
  const int q = L.tile_cols();
  const tessera::MultiLevelBlockCyclic dist(L, o.pr, o.pc, 0);
  const auto owner = [&](int i, int j) { return dist.owner(i, j).node; };
  const tessera::MatrixKind kind = *tessera::matrix_kind_from_name(o.matrix);
  // This rank's tiles of the lower triangle, generated where they live.
  tessera::TileMatrix<T> a(L, [&](int i, int j) { return j <= i && owner(i, j) == proc.rank; });
  tessera::generate(a, kind, o.seed);
  std::vector<T> original;
  std::optional<tessera::TileMatrix<T>> whole;  // rank 0 with --check: the factor, gathered
  if (o.check && proc.rank == 0) {
    whole.emplace(L);
    tessera::generate(*whole, kind, o.seed);
    original = whole->to_dense();
  }
  tessera::kernels::set_blas_threads(1);

  // StarPU 1.3 lets STARPU_SCHED win over the configuration's policy: --sched removes it.
  if (!o.sched.empty()) unsetenv("STARPU_SCHED");
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = o.threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.precedence_over_environment_variables = 1;
  if (!o.sched.empty()) conf.sched_policy_name = o.sched.c_str();
#ifdef TESSERA_STARPU_MPI
  const int rc = proc.mpi ? starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf) : starpu_init(&conf);
#else
  const int rc = starpu_init(&conf);
#endif
  if (rc != 0) proc.abort(4, fmt::format("starting StarPU returned {}", rc));
  if (const unsigned workers = starpu_cpu_worker_get_count(); workers != static_cast<unsigned>(o.threads))
    proc.abort(4, fmt::format("StarPU started {} CPU workers, not --threads {}", workers, o.threads));
  // Every tile of the lower triangle has a handle on every rank: its owner's
  // memory there, elsewhere a buffer StarPU allocates when a task needs it.
  std::vector<starpu_data_handle_t> h(static_cast<std::size_t>(q) * q, nullptr);
  for (int j = 0; j < q; ++j)
    for (int i = j; i < q; ++i) {
      starpu_data_handle_t& x = h[static_cast<std::size_t>(i + j * q)];
      const bool here = owner(i, j) == proc.rank;
      starpu_matrix_data_register(&x, here ? STARPU_MAIN_RAM : -1, here ? reinterpret_cast<uintptr_t>(a.tile(i, j)) : 0,
                                  static_cast<std::uint32_t>(L.row_height(i)),
                                  static_cast<std::uint32_t>(L.row_height(i)),
                                  static_cast<std::uint32_t>(L.col_width(j)), sizeof(T));
#ifdef TESSERA_STARPU_MPI
      if (proc.mpi) starpu_mpi_data_register(x, i + j * q, owner(i, j));
#endif
    }
  // The policy that runs (--sched, STARPU_SCHED or StarPU's default), as
  // StarPU names it; context 0 is the initial, global one.
  const starpu_sched_policy* ran = starpu_sched_ctx_get_sched_policy(0);
  const std::string sched = ran && ran->policy_name ? ran->policy_name : "?";
  if (!o.sched.empty() && sched != o.sched)
    proc.abort(4, fmt::format("StarPU runs scheduling policy {}, not --sched {}", sched, o.sched));
  const int lo = starpu_sched_get_min_priority(), hi = starpu_sched_get_max_priority();
  std::atomic<index_t> breakdown{0};
#ifdef TESSERA_STARPU_MPI
  if (proc.mpi) starpu_mpi_barrier(MPI_COMM_WORLD);
#endif
  const auto t0 = std::chrono::steady_clock::now();
  StarpuSink<T> sink(proc, L, h, !o.no_prio, breakdown);
  tessera::cholesky_tasks(L, sink);
  const std::int64_t tasks = sink.tasks();
#ifdef TESSERA_STARPU_MPI
  if (proc.mpi) starpu_mpi_wait_for_all(MPI_COMM_WORLD);
#endif
  starpu_task_wait_for_all();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (starpu_data_handle_t x : h)
    if (x) starpu_data_unregister(x);  // an owner's tile holds its last version again
#ifdef TESSERA_STARPU_MPI
  index_t column = breakdown.load();
  if (proc.mpi) {
    starpu_mpi_shutdown();
    // The slowest rank's time, and the first breakdown any rank met: the
    // lowest column, since the tasks after a breakdown still run on what it
    // left, and a later diagonal tile, on another rank, may break down too
    // (1x2, n = 40, nb = 2, --matrix general --seed 4: column 3, and 5 on
    // the other rank).
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long long c = column > 0 ? static_cast<long long>(column) : LLONG_MAX;
    MPI_Allreduce(MPI_IN_PLACE, &c, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    column = c == LLONG_MAX ? 0 : static_cast<index_t>(c);
  } else {
    starpu_shutdown();
  }
#else
  starpu_shutdown();
  const index_t column = breakdown.load();
#endif
  if (column) proc.fail(3, fmt::format("the matrix is not positive definite (column {})", column));
  if (o.check) gather(proc, dist, a, whole ? &*whole : nullptr);
  int status = 0;
  if (proc.rank == 0) {
    const double n = static_cast<double>(o.n), gflops = n * n * n / 3.0 / seconds / 1e9;
    std::optional<double> residual;
    if (o.check) residual = tessera::cholesky_residual(original, *whole).factor;
    const bool passed = !residual || *residual < tessera::kResidualThreshold;
    status = passed ? 0 : 1;
    const std::string grid = proc.mpi ? fmt::format(" grid={}x{}", o.pr, o.pc) : "";
    std::printf(
        "starpu cholesky %s n=%lld nb=%lld threads=%d%s sched=%s prio=%s tasks=%lld time=%.4fs gflops=%.2f residual=%s "
        "%s\n",
        o.precision.c_str(), static_cast<long long>(o.n), static_cast<long long>(o.nb), o.threads, grid.c_str(),
        sched.c_str(), o.no_prio ? "off" : "on", static_cast<long long>(tasks), seconds, gflops,
        residual ? fmt::format("{:.3g}", *residual).c_str() : "-",
        residual ? (passed ? "passed" : "FAILED") : "unchecked");
    std::fflush(stdout);
    if (!o.json.empty()) {
      nlohmann::json j{{"impl", "starpu"},
                       {"algo", "cholesky"},
                       {"precision", o.precision},
                       {"n", o.n},
                       {"nb", o.nb},
                       {"threads", o.threads},
                       {"grid", {o.pr, o.pc}},
                       {"sched", sched},
                       {"priorities", !o.no_prio},
                       {"tasks", tasks},
                       {"sched_priority_range", {lo, hi}},
                       {"starpu_version",
                        fmt::format("{}.{}.{}", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION)},
                       {"blas_core", tessera::kernels::blas_core()},
                       {"time_s", seconds},
                       {"gflops", gflops},
                       {"residual", residual ? nlohmann::json(*residual) : nlohmann::json(nullptr)},
                       {"check_passed", residual ? nlohmann::json(passed) : nlohmann::json(nullptr)},
                       {"residual_threshold", tessera::kResidualThreshold}};
      try {
        tessera::write_output({"--json", o.json}, [&](std::ostream& f) { f << j.dump(1) << "\n"; });
      } catch (const tessera::InputError& e) {
        std::fprintf(stderr, "starpu_peer: error: %s\n", e.what());
        status = 2;
      }
    }
  }
#ifdef TESSERA_STARPU_MPI
  if (proc.mpi) MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);  // every rank exits with rank 0's verdict
#endif
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  Process proc;
  CLI::App app{"StarPU peer of tessera's tile Cholesky (same tiles, kernels, task order and priorities)"};
  app.add_option("--n", o.n, "matrix order")->required();
  app.add_option("--nb", o.nb, "tile order (tessera's --B, with --s 1)")->required();
  app.add_option("--threads", o.threads, "StarPU CPU workers (per rank)");
  app.add_option("--precision", o.precision, "d or s");
  app.add_option("--grid", o.grid, "PrxPc: StarPU-MPI on Pr x Pc ranks (mpirun -np Pr*Pc), tessera's placement");
  app.add_option("--sched", o.sched, "StarPU scheduling policy (lws, prio, eager, ...); default StarPU's");
  app.add_flag("--no-prio", o.no_prio, "submit every task at priority 0");
  app.add_flag("--check", o.check, "compute the scaled residual, exit 1 when it reaches 30");
  app.add_option("--matrix", o.matrix, "spd (default), graded, illcond or general (tessera's --matrix)");
  app.add_option("--seed", o.seed, "matrix seed (tessera's --seed)");
  app.add_option("--json", o.json, "write the result as JSON (rank 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!o.grid.empty()) {
#ifdef TESSERA_STARPU_MPI
    // StarPU-MPI's own thread calls MPI while the main thread submits; it asks for SERIALIZED.
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    proc.mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &proc.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &proc.size);
    char x = 0, rest = 0;
    if (std::sscanf(o.grid.c_str(), "%d%c%d%c", &o.pr, &x, &o.pc, &rest) != 3 || x != 'x' || o.pr < 1 || o.pc < 1)
      proc.fail(2, fmt::format("--grid {}: must be PrxPc with Pr, Pc >= 1 (e.g. 1x2)", o.grid));
    if (o.pr * o.pc != proc.size)
      proc.fail(
          2, fmt::format("--grid {} needs {} ranks, but {} were started (mpirun -np)", o.grid, o.pr * o.pc, proc.size));
#else
    proc.fail(2, fmt::format("--grid {}: this starpu_peer was built without StarPU-MPI (apt-get install libstarpu-dev "
                             "libopenmpi-dev, then reconfigure)",
                             o.grid));
#endif
  }
  if (o.n < 1) proc.fail(2, fmt::format("--n {}: must be >= 1", o.n));
  if (o.nb < 1) proc.fail(2, fmt::format("--nb {}: must be >= 1", o.nb));
  if (o.threads < 1) proc.fail(2, fmt::format("--threads {}: must be >= 1", o.threads));
  if (o.threads > STARPU_MAXCPUS)
    proc.fail(
        2, fmt::format("--threads {}: this StarPU ({}.{}.{}) runs at most {} CPU workers per process "
                       "(STARPU_MAXCPUS; with --grid, more ranks)",
                       o.threads, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION, STARPU_MAXCPUS));
  if (o.precision != "d" && o.precision != "s")
    proc.fail(2, fmt::format("--precision {}: must be d or s", o.precision));
  const std::optional<tessera::MatrixKind> kind = tessera::matrix_kind_from_name(o.matrix);
  if (!kind || *kind == tessera::MatrixKind::RankDeficient)
    proc.fail(2, fmt::format("--matrix {}: must be spd, graded, illcond or general", o.matrix));
  if (!o.sched.empty()) {
    std::string known;
    bool found = false;
    for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p) {
      known += std::string(known.empty() ? "" : ", ") + (*p)->policy_name;
      found |= o.sched == (*p)->policy_name;
    }
    if (!found)
      proc.fail(2, fmt::format("--sched {}: not a StarPU scheduling policy (StarPU {}.{} has: {})", o.sched,
                               STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, known));
  }
  // --json is rank 0's to write: checked there, the verdict shared.
  std::string bad_json;
  try {
    if (!o.json.empty() && proc.rank == 0) tessera::check_output_path({"--json", o.json});
  } catch (const tessera::InputError& e) {
    bad_json = e.what();
  }
  int refused = bad_json.empty() ? 0 : 1;
#ifdef TESSERA_STARPU_MPI
  if (proc.mpi) MPI_Bcast(&refused, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  if (refused) proc.fail(2, bad_json);
  int status = 0;
  try {
    status = o.precision == "d" ? run<double>(o, proc) : run<float>(o, proc);
  } catch (const std::bad_alloc&) {
    const double bytes = static_cast<double>(o.n) * static_cast<double>(o.n) * (o.precision == "d" ? 8 : 4);
    proc.abort(4, fmt::format("out of memory for the {} x {} matrix ({:.3g} GB, --n {})", o.n, o.n, bytes / 1e9, o.n));
  }
#ifdef TESSERA_STARPU_MPI
  if (proc.mpi) MPI_Finalize();
#endif
  return status;
}
