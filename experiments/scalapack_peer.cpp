// The ScaLAPACK peer of tessera's distributed runs: PDPOTRF or PDGEQRF on a
// block-cyclic matrix over a BLACS process grid.
//
//   mpirun -np P scalapack_peer --algo cholesky|qr --n N --nb NB --grid PrxPc
//                               [--check] [--seed K] [--json FILE]
//
// Every rank generates only its own block-cyclic part of the matrix, from the
// seed and the global indices, so the matrix does not depend on the grid or NB
// and no rank ever holds all of it. Each rank calls OpenBLAS single-threaded
// (openblas_set_num_threads(1) below; OPENBLAS_NUM_THREADS=1 in the environment
// does the same): the parallelism is the ranks, as in tessera's runs.
//
// Exit status: 0 success, 1 a --check failed, 2 invalid input (one message from
// rank 0 naming the option and the value), 3 matrix not positive definite,
// 5 a ScaLAPACK call reported an illegal argument.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

// BLACS (C interface) and ScaLAPACK/PBLAS (Fortran interface) prototypes.
// Debian ships no C header for them. Fortran passes every CHARACTER argument's
// length as a hidden trailing size_t (gfortran >= 8); it is declared and passed
// because omitting it is undefined for the Fortran routines (PDPOTRF, PDLANGE,
// ...); the PBLAS routines (PDGEMM, PDSYRK), written in C, ignore the extra
// arguments, which is harmless in the x86-64 calling convention.
extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int not_done);

int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);

void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desca, int* info,
              std::size_t uplo_len);
void pdgeqrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desca, double* tau,
              double* work, const int* lwork, int* info);
void pdorgqr_(const int* m, const int* n, const int* k, double* a, const int* ia, const int* ja, const int* desca,
              const double* tau, double* work, const int* lwork, int* info);
double pdlange_(const char* norm, const int* m, const int* n, const double* a, const int* ia, const int* ja,
                const int* desca, double* work, std::size_t norm_len);
double pdlansy_(const char* norm, const char* uplo, const int* n, const double* a, const int* ia, const int* ja,
                const int* desca, double* work, std::size_t norm_len, std::size_t uplo_len);
void pdlaset_(const char* uplo, const int* m, const int* n, const double* alpha, const double* beta, double* a,
              const int* ia, const int* ja, const int* desca, std::size_t uplo_len);
void pdlacpy_(const char* uplo, const int* m, const int* n, const double* a, const int* ia, const int* ja,
              const int* desca, double* b, const int* ib, const int* jb, const int* descb, std::size_t uplo_len);
void pdsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
             const int* ia, const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc, std::size_t uplo_len, std::size_t trans_len);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc, std::size_t transa_len, std::size_t transb_len);

void openblas_set_num_threads(int num_threads);
char* openblas_get_corename(void);
}

namespace {

constexpr int kExitCheckFailed = 1;
constexpr int kExitInput = 2;
constexpr int kExitNotPositiveDefinite = 3;
constexpr int kExitInternal = 5;
// LAPACK's test threshold THRESH for xPOT01 and xQRT01 (dtest.in).
constexpr double kResidualThreshold = 30.0;
// Descriptor entries are 1-based in ScaLAPACK's documentation; ia = ja = 1
// addresses the whole matrix in every call below.
constexpr int kOne = 1;

struct Options {
  std::string algo;
  int n = 0;
  int nb = 0;
  std::string grid;
  int prow = 0;
  int pcol = 0;
  bool check = false;
  std::uint64_t seed = 1;
  std::string json;
  int blas_threads = 1;
};

// The process grid and this rank's place in it.
struct Grid {
  int context = -1;
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
};

// An n x n matrix distributed NB x NB block-cyclically from process (0, 0):
// this rank's local column-major part and its descriptor.
struct DistMatrix {
  int n = 0, nb = 0;
  int local_rows = 0, local_cols = 0;
  int desc[9] = {};
  std::vector<double> local;

  // Global 0-based row/column of local row/column l on grid coordinate p of nprocs.
  static std::int64_t global_index(int l, int nb, int p, int nprocs) {
    return (static_cast<std::int64_t>(l / nb) * nprocs + p) * nb + l % nb;
  }
};

// Parses and validates the command line identically on every rank (same argv),
// so every rank takes the same branch and none waits in a collective that the
// others skip. Returns the exit status to leave with, or nothing to go on.
std::optional<int> parse_options(int argc, char** argv, int rank, int world_size, Options& opt) {
  CLI::App app{"ScaLAPACK peer: PDPOTRF / PDGEQRF on a BLACS grid, timed like tessera's runs"};
  app.add_option("--algo", opt.algo, "cholesky or qr")->required();
  app.add_option("--n", opt.n, "matrix order")->required();
  app.add_option("--nb", opt.nb, "block-cyclic block size")->required();
  app.add_option("--grid", opt.grid, "process grid PrxPc, Pr*Pc = number of ranks")->required();
  app.add_flag("--check", opt.check, "compute the scaled residual, exit 1 when it reaches 30");
  app.add_option("--seed", opt.seed, "seed of the generated matrix");
  app.add_option("--json", opt.json, "also write the result as JSON");
  app.add_option("--blas-threads", opt.blas_threads,
                 "OpenBLAS threads per rank (default 1: one core per rank; T for ranks of T cores)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); only rank 0 speaks.
    const int code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : kExitInput);
    return code == 0 ? 0 : kExitInput;
  }
  std::string error;
  std::smatch m;
  const std::regex grid_re{R"(^([0-9]{1,6})x([0-9]{1,6})$)"};
  if (opt.algo != "cholesky" && opt.algo != "qr") {
    error = fmt::format("--algo '{}' is not one of: cholesky, qr", opt.algo);
  } else if (opt.n < 1) {
    error = fmt::format("--n {} must be at least 1", opt.n);
  } else if (opt.nb < 1) {
    error = fmt::format("--nb {} must be at least 1", opt.nb);
  } else if (opt.blas_threads < 1) {
    error = fmt::format("--blas-threads {} must be at least 1", opt.blas_threads);
  } else if (!std::regex_match(opt.grid, m, grid_re) || std::stoi(m[1]) < 1 || std::stoi(m[2]) < 1) {
    error = fmt::format("--grid '{}' is not PrxPc with Pr, Pc >= 1 (e.g. 1x2)", opt.grid);
  } else {
    opt.prow = std::stoi(m[1]);
    opt.pcol = std::stoi(m[2]);
    if (static_cast<long>(opt.prow) * opt.pcol != world_size)
      error = fmt::format("--grid {} needs {} ranks, but {} were started (mpirun -np)", opt.grid,
                          static_cast<long>(opt.prow) * opt.pcol, world_size);
  }
  if (error.empty()) return std::nullopt;
  if (rank == 0) std::fprintf(stderr, "scalapack_peer: error: %s\n", error.c_str());
  return kExitInput;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Entry (i, j) uniform in [-0.5, 0.5), a pure function of the seed and the
// global indices: reproducible whatever the grid, NB or rank count.
double entry(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  const std::uint64_t h =
      splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(i)) ^ static_cast<std::uint64_t>(j));
  return static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
}

DistMatrix make_matrix(const Grid& g, int n, int nb) {
  DistMatrix a;
  a.n = n;
  a.nb = nb;
  const int zero = 0;
  a.local_rows = numroc_(&n, &nb, &g.myrow, &zero, &g.nprow);
  a.local_cols = numroc_(&n, &nb, &g.mycol, &zero, &g.npcol);
  const int lld = std::max(1, a.local_rows);
  int info = 0;
  descinit_(a.desc, &n, &n, &nb, &nb, &zero, &zero, &g.context, &lld, &info);
  a.local.assign(static_cast<std::size_t>(lld) * std::max(1, a.local_cols), 0.0);
  return a;
}

// Fills this rank's part: for Cholesky a random symmetric matrix plus n on the
// diagonal (strictly diagonally dominant with a positive diagonal, hence SPD),
// for QR independent entries in [-0.5, 0.5).
void generate(DistMatrix& a, const Grid& g, const std::string& algo, std::uint64_t seed) {
  const int lld = a.desc[8];
  for (int lc = 0; lc < a.local_cols; ++lc) {
    const std::int64_t j = DistMatrix::global_index(lc, a.nb, g.mycol, g.npcol);
    double* col = a.local.data() + static_cast<std::size_t>(lc) * lld;
    for (int lr = 0; lr < a.local_rows; ++lr) {
      const std::int64_t i = DistMatrix::global_index(lr, a.nb, g.myrow, g.nprow);
      if (algo == "cholesky") {
        col[lr] = entry(seed, std::min(i, j), std::max(i, j)) + (i == j ? a.n : 0.0);
      } else {
        col[lr] = entry(seed, i, j);
      }
    }
  }
}

// Workspace for PDLANGE/PDLANSY with norm '1': PDLANSY needs at most
// 2*Nq0 + Np0 + LDW with LDW <= Np0 + NB; a few spare entries cover the rest.
std::vector<double> norm_workspace(const DistMatrix& a) {
  return std::vector<double>(2 * static_cast<std::size_t>(a.local_cols) + 2 * a.local_rows + a.nb + 16);
}

// ||A - L L^T||_1 / (n ||A||_1 eps) from the original A and the factored matrix,
// whose lower triangle holds L (its upper triangle still holds A's).
double cholesky_residual(const DistMatrix& a0, const DistMatrix& factored) {
  const int n = a0.n;
  DistMatrix l = factored;
  const double zero = 0.0, one = 1.0, minus_one = -1.0;
  // L's strict upper triangle := 0, so PDSYRK sees L, not L plus A's upper half.
  if (n > 1) {
    const int nm1 = n - 1, two = 2;
    pdlaset_("U", &nm1, &nm1, &zero, &zero, l.local.data(), &kOne, &two, l.desc, 1);
  }
  DistMatrix r = a0;
  // R_lower := A_lower - L L^T (PDSYRK updates the lower triangle only; PDLANSY reads only it)
  pdsyrk_("L", "N", &n, &n, &minus_one, l.local.data(), &kOne, &kOne, l.desc, &one, r.local.data(), &kOne, &kOne,
          r.desc, 1, 1);
  std::vector<double> work = norm_workspace(a0);
  const double resid = pdlansy_("1", "L", &n, r.local.data(), &kOne, &kOne, r.desc, work.data(), 1, 1);
  const double anorm = pdlansy_("1", "L", &n, a0.local.data(), &kOne, &kOne, a0.desc, work.data(), 1, 1);
  // numeric_limits epsilon (2^-52), as tessera's own check uses.
  const double eps = std::numeric_limits<double>::epsilon();
  return anorm > 0 ? resid / (n * anorm * eps) : resid / (n * eps);
}

// ||A - Q R||_1 / (n ||A||_1 eps) from the original A and PDGEQRF's output
// (R on and above the diagonal, the Householder vectors below, tau).
double qr_residual(const DistMatrix& a0, DistMatrix& factored, std::vector<double>& tau) {
  const int n = a0.n;
  const double zero = 0.0, one = 1.0, minus_one = -1.0;
  DistMatrix r = factored;
  pdlaset_("A", &n, &n, &zero, &zero, r.local.data(), &kOne, &kOne, r.desc, 1);
  pdlacpy_("U", &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, r.local.data(), &kOne, &kOne, r.desc, 1);
  // Q := H(1) ... H(n) formed in place of the Householder vectors; workspace query first.
  int info = 0, lwork = -1;
  double query = 0.0;
  pdorgqr_(&n, &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, tau.data(), &query, &lwork, &info);
  lwork = static_cast<int>(query) + 1;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  pdorgqr_(&n, &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, tau.data(), work.data(), &lwork, &info);
  if (info != 0) throw std::runtime_error(fmt::format("PDORGQR returned info={}", info));
  DistMatrix diff = a0;
  // diff := A - Q R
  pdgemm_("N", "N", &n, &n, &n, &minus_one, factored.local.data(), &kOne, &kOne, factored.desc, r.local.data(), &kOne,
          &kOne, r.desc, &one, diff.local.data(), &kOne, &kOne, diff.desc, 1, 1);
  std::vector<double> nwork = norm_workspace(a0);
  const double resid = pdlange_("1", &n, &n, diff.local.data(), &kOne, &kOne, diff.desc, nwork.data(), 1);
  const double anorm = pdlange_("1", &n, &n, a0.local.data(), &kOne, &kOne, a0.desc, nwork.data(), 1);
  const double eps = std::numeric_limits<double>::epsilon();
  return anorm > 0 ? resid / (n * anorm * eps) : resid / (n * eps);
}

double flop_count(const std::string& algo, double n) {
  // Cholesky n^3/3; QR 2mn^2 - 2n^3/3 with m = n.
  return algo == "cholesky" ? n * n * n / 3.0 : 2.0 * n * n * n - 2.0 * n * n * n / 3.0;
}

// The largest info over the ranks, so every rank takes the same error branch.
int agree_on_info(int info) {
  int worst = 0;
  MPI_Allreduce(&info, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int run(const Options& opt, int rank) {
  Grid g;
  Cblacs_get(-1, 0, &g.context);
  Cblacs_gridinit(&g.context, "Row", opt.prow, opt.pcol);
  Cblacs_gridinfo(g.context, &g.nprow, &g.npcol, &g.myrow, &g.mycol);

  DistMatrix a = make_matrix(g, opt.n, opt.nb);
  generate(a, g, opt.algo, opt.seed);
  std::optional<DistMatrix> a0;
  if (opt.check) a0 = a;

  const int n = opt.n;
  int info = 0;
  std::vector<double> tau(std::max(1, a.local_cols));
  std::vector<double> work;
  int lwork = 0;
  if (opt.algo == "qr") {
    // Workspace query outside the timed region.
    double query = 0.0;
    lwork = -1;
    pdgeqrf_(&n, &n, a.local.data(), &kOne, &kOne, a.desc, tau.data(), &query, &lwork, &info);
    lwork = static_cast<int>(query) + 1;
    work.resize(static_cast<std::size_t>(lwork));
  }

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (opt.algo == "cholesky") {
    pdpotrf_("L", &n, a.local.data(), &kOne, &kOne, a.desc, &info, 1);
  } else {
    pdgeqrf_(&n, &n, a.local.data(), &kOne, &kOne, a.desc, tau.data(), work.data(), &lwork, &info);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double local_time = MPI_Wtime() - t0;
  double time_s = 0.0;
  MPI_Allreduce(&local_time, &time_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  int status = 0;
  info = agree_on_info(info);
  if (info < 0) {
    if (rank == 0) std::fprintf(stderr, "scalapack_peer: error: argument %d of the factorization is illegal\n", -info);
    status = kExitInternal;
  } else if (info > 0) {
    if (rank == 0)
      std::fprintf(stderr, "scalapack_peer: error: matrix not positive definite (leading minor %d)\n", info);
    status = kExitNotPositiveDefinite;
  }

  std::optional<double> residual;
  if (status == 0 && opt.check) {
    residual = opt.algo == "cholesky" ? cholesky_residual(*a0, a) : qr_residual(*a0, a, tau);
  }
  const bool passed = !residual || *residual < kResidualThreshold;

  if (status == 0 && rank == 0) {
    const double gflops = time_s > 0 ? flop_count(opt.algo, n) / time_s * 1e-9 : 0.0;
    std::string line = fmt::format("scalapack {} n={} nb={} grid={}x{} time={:.4f}s gflops={:.2f}", opt.algo, n, opt.nb,
                                   opt.prow, opt.pcol, time_s, gflops);
    if (residual) line += fmt::format(" residual={:.3g} {}", *residual, passed ? "ok" : "FAILED");
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (!opt.json.empty()) {
      nlohmann::json j;
      j["impl"] = "scalapack";
      j["algo"] = opt.algo;
      j["n"] = n;
      j["nb"] = opt.nb;
      j["grid"] = {opt.prow, opt.pcol};
      j["time_s"] = time_s;
      j["gflops"] = gflops;
      j["seed"] = opt.seed;
      j["blas_core"] = openblas_get_corename();
      j["blas_threads"] = opt.blas_threads;
      j["residual"] = residual ? nlohmann::json(*residual) : nlohmann::json(nullptr);
      j["check_passed"] = residual ? nlohmann::json(passed) : nlohmann::json(nullptr);
      j["residual_threshold"] = kResidualThreshold;
      std::ofstream out(opt.json);
      out << j.dump(2) << '\n';
      if (!out) {
        std::fprintf(stderr, "scalapack_peer: error: cannot write --json %s\n", opt.json.c_str());
        status = kExitInput;
      }
    }
  }
  // Rank 0 alone learns whether the JSON file was written; share its verdict.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status == 0 && !passed) status = kExitCheckFailed;

  Cblacs_gridexit(g.context);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // One BLAS thread per rank: the ranks are the parallelism (see the top comment).
  openblas_set_num_threads(1);

  Options opt;
  int status = 0;
  if (auto early = parse_options(argc, argv, rank, world_size, opt)) {
    status = *early;
  } else {
    openblas_set_num_threads(opt.blas_threads);
    status = run(opt, rank);
    // 1 = leave MPI running: MPI_Finalize below ends it for both paths.
    Cblacs_exit(1);
  }
  MPI_Finalize();
  return status;
}
