// The StarPU peer of tessera's one-node runs (000 §7.3, Fig. 8 compares the
// paper's runtime with StarPU on one node): the same tile Cholesky as
// `tessera run --algo cholesky --s 1` (001 Alg. 1 with square tiles), on the
// same tiles, with the same kernels (tessera's CPU tile kernels,
// kernels/cpu/tile_kernels.hpp, one OpenBLAS thread each), submitted in the
// same order with the same priorities (column_priority), to StarPU's runtime
// (starpu_task_insert, dependencies inferred from the data accesses) instead
// of tessera's. What differs between the two runs is the runtime alone.
//
//   starpu_peer --n N --nb NB [--threads T] [--precision d|s] [--sched POLICY]
//               [--no-prio] [--check] [--matrix KIND] [--seed K] [--json FILE]
//
// The matrix is tessera's (base/matrix_gen.hpp: --matrix spd, the default,
// graded or illcond; general, whose lower triangle is not positive definite,
// shows the breakdown's exit), the check tessera's (||A - L L^T||_1 / (N ||A||_1 eps) < 30, algorithms/check.hpp).
// The time runs from the first task's submission to the end of the last
// (starpu_task_wait_for_all), the tiles registered before, as tessera times
// its factorization after generating the matrix. StarPU's CPU workers are
// --threads; no CUDA or OpenCL worker. --sched names a StarPU scheduling
// policy (lws, prio, eager, dmdas, ...); without it StarPU's default (or
// STARPU_SCHED) applies.
//
// Exit status: 0 success, 1 a --check failed, 2 invalid input (one message
// naming the option and the value), 3 the matrix is not positive definite,
// 4 out of memory for the matrix, or StarPU could not start (its return code
// in the message).
#include <starpu.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/check.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/matrix_gen.hpp"
#include "base/tile_layout.hpp"
#include "base/tile_matrix.hpp"
#include "experiments/output_path.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace {

using tessera::index_t;

struct Options {
  index_t n = 0, nb = 0;
  int threads = 1;
  std::string precision = "d", sched, json;
  bool no_prio = false, check = false;
  std::string matrix = "spd";
  std::uint64_t seed = 1;
};

// The first column (1-based, global) where a POTF2' met a pivot that was not
// positive; 0 while none did. A codelet cannot throw into StarPU.
std::atomic<index_t> g_breakdown{0};

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
  index_t col0 = 0;
  starpu_codelet_unpack_args(arg, &col0);
  const int info = tessera::kernels::potf2p<T>(a.m, a.n, a.p, a.ld);
  index_t none = 0;
  if (info > 0) g_breakdown.compare_exchange_strong(none, col0 + info);
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

[[noreturn]] void fail(int status, const std::string& message) {
  std::fprintf(stderr, "starpu_peer: error: %s\n", message.c_str());
  std::exit(status);
}

// Submits the tasks of tessera's cholesky_tasks (square tiles) in its order,
// with its priorities, mapped onto the scheduler's range when it is narrower.
template <class T>
void submit(const tessera::TileLayout& L, std::vector<starpu_data_handle_t>& h, bool prio) {
  static Codelets<T> cl;
  const int q = L.tile_cols();
  const auto handle = [&](int i, int j) { return h[static_cast<std::size_t>(i + j * q)]; };
  const long lo = starpu_sched_get_min_priority(), hi = starpu_sched_get_max_priority();
  const long top = tessera::column_priority(q, 0, 0);  // the largest priority of the run
  const auto priority = [&](int j, int k) {
    if (!prio) return 0;
    const long p = tessera::column_priority(q, j, k);
    if (hi - lo >= top) return static_cast<int>(std::min(hi, lo + p));
    return static_cast<int>(lo + p * (hi - lo) / std::max(top, 1L));
  };
  const auto check = [](int rc, const char* what) {
    if (rc != 0) fail(4, fmt::format("starpu_task_insert({}) returned {}", what, rc));
  };
  for (int k = 0; k < q; ++k) {
    const index_t col0 = L.col_offset(k);
    check(starpu_task_insert(&cl.potf2p, STARPU_RW, handle(k, k), STARPU_PRIORITY, priority(k, k), STARPU_VALUE, &col0,
                             sizeof(col0), 0),
          "potf2p");
    for (int i = k + 1; i < q; ++i)
      check(starpu_task_insert(&cl.trsm, STARPU_R, handle(k, k), STARPU_RW, handle(i, k), STARPU_PRIORITY,
                               priority(k, k), 0),
            "trsm");
    for (int i = k + 1; i < q; ++i)
      for (int j = k + 1; j <= i; ++j) {
        if (j == i)
          check(starpu_task_insert(&cl.diag, STARPU_R, handle(i, k), STARPU_RW, handle(i, i), STARPU_PRIORITY,
                                   priority(j, k), 0),
                "gsmm_diag");
        else
          check(starpu_task_insert(&cl.gemm, STARPU_R, handle(i, k), STARPU_R, handle(j, k), STARPU_RW, handle(i, j),
                                   STARPU_PRIORITY, priority(j, k), 0),
                "gsmm");
      }
  }
}

template <class T>
int run(const Options& o) {
  const tessera::TileLayout L(o.n, o.n, o.nb, 1, 0);
  tessera::TileMatrix<T> a(L);
  tessera::generate(a, *tessera::matrix_kind_from_name(o.matrix), o.seed);
  std::vector<T> original;
  if (o.check) original = a.to_dense();
  tessera::kernels::set_blas_threads(1);

  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = o.threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  if (!o.sched.empty()) conf.sched_policy_name = o.sched.c_str();
  if (const int rc = starpu_init(&conf); rc != 0) fail(4, fmt::format("starpu_init returned {}", rc));
  const int q = L.tile_cols();
  std::vector<starpu_data_handle_t> h(static_cast<std::size_t>(q) * q, nullptr);
  for (int j = 0; j < q; ++j)
    for (int i = j; i < q; ++i)
      starpu_matrix_data_register(&h[static_cast<std::size_t>(i + j * q)], STARPU_MAIN_RAM,
                                  reinterpret_cast<uintptr_t>(a.tile(i, j)), static_cast<std::uint32_t>(a.ld(i)),
                                  static_cast<std::uint32_t>(L.row_height(i)),
                                  static_cast<std::uint32_t>(L.col_width(j)), sizeof(T));
  const int lo = starpu_sched_get_min_priority(), hi = starpu_sched_get_max_priority();
  const auto t0 = std::chrono::steady_clock::now();
  submit<T>(L, h, !o.no_prio);
  starpu_task_wait_for_all();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The policy that ran (--sched, STARPU_SCHED or StarPU's default), as
  // StarPU names it; context 0 is the initial, global one.
  const starpu_sched_policy* ran = starpu_sched_ctx_get_sched_policy(0);
  const std::string sched = ran && ran->policy_name ? ran->policy_name : "?";
  for (starpu_data_handle_t x : h)
    if (x) starpu_data_unregister(x);
  starpu_shutdown();

  if (const index_t col = g_breakdown.load())
    fail(3, fmt::format("the matrix is not positive definite (column {})", col));
  const double n = static_cast<double>(o.n), gflops = n * n * n / 3.0 / seconds / 1e9;
  std::optional<double> residual;
  if (o.check) residual = tessera::cholesky_residual(original, a).factor;
  const bool passed = !residual || *residual < tessera::kResidualThreshold;
  std::printf("starpu cholesky %s n=%lld nb=%lld threads=%d sched=%s prio=%s time=%.4fs gflops=%.2f residual=%s %s\n",
              o.precision.c_str(), static_cast<long long>(o.n), static_cast<long long>(o.nb), o.threads, sched.c_str(),
              o.no_prio ? "off" : "on", seconds, gflops, residual ? fmt::format("{:.3g}", *residual).c_str() : "-",
              residual ? (passed ? "passed" : "FAILED") : "unchecked");
  if (!o.json.empty()) {
    nlohmann::json j{
        {"impl", "starpu"},
        {"algo", "cholesky"},
        {"precision", o.precision},
        {"n", o.n},
        {"nb", o.nb},
        {"threads", o.threads},
        {"sched", sched},
        {"priorities", !o.no_prio},
        {"sched_priority_range", {lo, hi}},
        {"starpu_version", fmt::format("{}.{}.{}", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION)},
        {"blas_core", tessera::kernels::blas_core()},
        {"time_s", seconds},
        {"gflops", gflops},
        {"residual", residual ? nlohmann::json(*residual) : nlohmann::json(nullptr)},
        {"check_passed", residual ? nlohmann::json(passed) : nlohmann::json(nullptr)},
        {"residual_threshold", tessera::kResidualThreshold}};
    std::ofstream(o.json) << j.dump(1) << "\n";
  }
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"StarPU peer of tessera's one-node tile Cholesky (same tiles, kernels, task order and priorities)"};
  app.add_option("--n", o.n, "matrix order")->required();
  app.add_option("--nb", o.nb, "tile order (tessera's --B, with --s 1)")->required();
  app.add_option("--threads", o.threads, "StarPU CPU workers");
  app.add_option("--precision", o.precision, "d or s");
  app.add_option("--sched", o.sched, "StarPU scheduling policy (lws, prio, eager, dmdas, ...); default StarPU's");
  app.add_flag("--no-prio", o.no_prio, "submit every task at priority 0");
  app.add_flag("--check", o.check, "compute the scaled residual, exit 1 when it reaches 30");
  app.add_option("--matrix", o.matrix, "spd (default), graded, illcond or general (tessera's --matrix)");
  app.add_option("--seed", o.seed, "matrix seed (tessera's --seed)");
  app.add_option("--json", o.json, "write the result as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (o.n < 1) fail(2, fmt::format("--n {}: must be >= 1", o.n));
  if (o.nb < 1) fail(2, fmt::format("--nb {}: must be >= 1", o.nb));
  if (o.threads < 1) fail(2, fmt::format("--threads {}: must be >= 1", o.threads));
  if (o.precision != "d" && o.precision != "s") fail(2, fmt::format("--precision {}: must be d or s", o.precision));
  const std::optional<tessera::MatrixKind> kind = tessera::matrix_kind_from_name(o.matrix);
  if (!kind || *kind == tessera::MatrixKind::RankDeficient)
    fail(2, fmt::format("--matrix {}: must be spd, graded, illcond or general", o.matrix));
  if (!o.sched.empty()) {
    std::string known;
    bool found = false;
    for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); *p; ++p) {
      known += std::string(known.empty() ? "" : ", ") + (*p)->policy_name;
      found |= o.sched == (*p)->policy_name;
    }
    if (!found)
      fail(2, fmt::format("--sched {}: not a StarPU scheduling policy (StarPU {}.{} has: {})", o.sched,
                          STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, known));
  }
  try {
    if (!o.json.empty()) tessera::check_output_path({"--json", o.json});
  } catch (const tessera::InputError& e) {
    fail(2, e.what());
  }
  try {
    return o.precision == "d" ? run<double>(o) : run<float>(o);
  } catch (const std::bad_alloc&) {
    const double bytes = static_cast<double>(o.n) * static_cast<double>(o.n) * (o.precision == "d" ? 8 : 4);
    fail(4, fmt::format("out of memory for the {} x {} matrix ({:.3g} GB, --n {})", o.n, o.n, bytes / 1e9, o.n));
  }
}
