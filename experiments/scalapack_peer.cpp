// The ScaLAPACK peer of tessera's distributed runs: PDPOTRF, PDGEQRF or PDGETRF
// (PSPOTRF, PSGEQRF, PSGETRF with --precision s) on a block-cyclic matrix over
// a BLACS process grid.
//
//   mpirun -np P scalapack_peer --algo cholesky|qr|lu --n N --nb NB --grid PrxPc
//                               [--precision d|s] [--matrix KIND|zerocol]
//                               [--check] [--seed K] [--json FILE]
//
// Every rank generates only its own block-cyclic part of the matrix, tessera's
// matrix of the kind and seed (the same entries as tessera's runs get), from
// the global indices, so the matrix does not depend on the grid or NB and no
// rank ever holds all of it. Each rank calls OpenBLAS single-threaded
// (openblas_set_num_threads(1) below; OPENBLAS_NUM_THREADS=1 in the environment
// does the same): the parallelism is the ranks, as in tessera's runs.
//
// Exit status: 0 success, 1 a --check failed, 2 invalid input (one message from
// rank 0 naming the option and the value), 3 matrix not positive definite
// (Cholesky) or an exactly zero pivot (LU; the message names the column),
// 5 a ScaLAPACK call reported an illegal argument.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "base/numerics.hpp"
#include "experiments/output_path.hpp"
#include "experiments/scalapack_api.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kExitCheckFailed = 1;
constexpr int kExitInput = 2;
constexpr int kExitNotPositiveDefinite = 3;
constexpr int kExitZeroPivot = 3;
constexpr int kExitInternal = 5;
// LAPACK's test threshold THRESH for xPOT01, xQRT01 and xGET01 (dtest.in).
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
  std::string precision = "d";
  std::string matrix;  // after parsing: spd, general or zerocol (unset: spd for Cholesky, general otherwise)
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
template <typename T>
struct DistMatrix {
  int n = 0, nb = 0;
  int local_rows = 0, local_cols = 0;
  int desc[9] = {};
  std::vector<T> local;
};

// Global 0-based row/column of local row/column l on grid coordinate p of nprocs.
std::int64_t global_index(int l, int nb, int p, int nprocs) {
  return (static_cast<std::int64_t>(l / nb) * nprocs + p) * nb + l % nb;
}

// Parses and validates the command line identically on every rank (same argv),
// so every rank takes the same branch and none waits in a collective that the
// others skip. Returns the exit status to leave with, or nothing to go on.
std::optional<int> parse_options(int argc, char** argv, int rank, int world_size, Options& opt) {
  CLI::App app{"ScaLAPACK peer: PDPOTRF / PDGEQRF / PDGETRF on a BLACS grid, timed like tessera's runs"};
  app.add_option("--algo", opt.algo, "cholesky, qr or lu")->required();
  app.add_option("--n", opt.n, "matrix order")->required();
  app.add_option("--nb", opt.nb, "block-cyclic block size")->required();
  app.add_option("--grid", opt.grid, "process grid PrxPc, Pr*Pc = number of ranks")->required();
  app.add_option("--precision", opt.precision, "d (PDxxxxx, default) or s (PSxxxxx)");
  app.add_option(
      "--matrix", opt.matrix,
      "generated matrix, tessera's --matrix kinds: spd (Cholesky's default) | general (QR's and LU's default) | "
      "graded | illcond | rankdef, the same entries for the same --seed; or zerocol (test input: the default "
      "matrix with column n/2+1 zero, an exactly zero pivot there: exit 3 naming it)");
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
  if (opt.algo != "cholesky" && opt.algo != "qr" && opt.algo != "lu") {
    error = fmt::format("--algo '{}' is not one of: cholesky, qr, lu", opt.algo);
  } else if (opt.n < 1) {
    error = fmt::format("--n {} must be at least 1", opt.n);
  } else if (opt.nb < 1) {
    error = fmt::format("--nb {} must be at least 1", opt.nb);
  } else if (opt.precision != "d" && opt.precision != "s") {
    error = fmt::format("--precision '{}' is not one of: d, s", opt.precision);
  } else if (!opt.matrix.empty() && opt.matrix != "zerocol" && !tessera::matrix_kind_from_name(opt.matrix)) {
    error = fmt::format("--matrix '{}' is not one of: general, spd, graded, illcond, rankdef, zerocol", opt.matrix);
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
  if (opt.matrix.empty()) opt.matrix = opt.algo == "cholesky" ? "spd" : "general";  // tessera's defaults
  // --json is written by rank 0 after the factorization: checked by it now
  // (append mode creates nothing that stays and truncates nothing), its
  // verdict shared, so a long run's result is never lost to a bad path.
  if (error.empty() && !opt.json.empty()) {
    // --json is written by rank 0 after the factorization: checked by it now
    // (experiments/output_path.hpp: nothing created, nothing truncated), its
    // verdict shared, so a long run's result is never lost to a bad path.
    std::string why;
    if (rank == 0) {
      try {
        tessera::check_output_path({"--json", opt.json});
      } catch (const tessera::InputError& e) {
        why = e.what();
      }
    }
    int bad = why.empty() ? 0 : 1;
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) error = rank == 0 ? why : "--json";
  }
  if (error.empty()) return std::nullopt;
  if (rank == 0) std::fprintf(stderr, "scalapack_peer: error: %s\n", error.c_str());
  return kExitInput;
}

template <typename T>
DistMatrix<T> make_matrix(const Grid& g, int n, int nb) {
  DistMatrix<T> a;
  a.n = n;
  a.nb = nb;
  const int zero = 0;
  a.local_rows = numroc_(&n, &nb, &g.myrow, &zero, &g.nprow);
  a.local_cols = numroc_(&n, &nb, &g.mycol, &zero, &g.npcol);
  const int lld = std::max(1, a.local_rows);
  int info = 0;
  descinit_(a.desc, &n, &n, &nb, &nb, &zero, &zero, &g.context, &lld, &info);
  a.local.assign(static_cast<std::size_t>(lld) * std::max(1, a.local_cols), T(0));
  return a;
}

// What to generate: tessera's own matrix of the kind and seed (base/matrix_gen.hpp, the same entries as `tessera
// run --matrix KIND --seed K`, so that a ratio compares factorizations of one matrix: LU's partial pivoting picks
// its rows from them). zero_col >= 0 (--matrix zerocol, 0-based) takes the default kind and makes that column
// zero, so LU meets an exactly zero pivot U(j,j) there: the column of P A is zero, hence so is U's (L is
// nonsingular), and every update of it multiplies by those exact zeros; Cholesky's leading minor of order j+1 is
// then not positive.
struct MatrixChoice {
  tessera::MatrixKind kind = tessera::MatrixKind::General;
  std::int64_t zero_col = -1;
};

tessera::MatrixKind default_kind(const Options& opt) {
  return opt.algo == "cholesky" ? tessera::MatrixKind::Spd : tessera::MatrixKind::General;
}

MatrixChoice matrix_choice(const Options& opt) {
  if (opt.matrix == "zerocol") return {default_kind(opt), opt.n / 2};
  return {*tessera::matrix_kind_from_name(opt.matrix), -1};
}

// Fills this rank's part, computed in double and rounded to T.
template <typename T>
void generate(DistMatrix<T>& a, const Grid& g, const MatrixChoice& choice, std::uint64_t seed) {
  const tessera::MatrixGenerator entry(choice.kind, seed, a.n, a.n, sizeof(T) == 4 ? 's' : 'd');
  const int lld = a.desc[8];
  for (int lc = 0; lc < a.local_cols; ++lc) {
    const std::int64_t j = global_index(lc, a.nb, g.mycol, g.npcol);
    T* col = a.local.data() + static_cast<std::size_t>(lc) * lld;
    for (int lr = 0; lr < a.local_rows; ++lr) {
      const std::int64_t i = global_index(lr, a.nb, g.myrow, g.nprow);
      col[lr] = static_cast<T>(j == choice.zero_col ? 0.0 : entry(i, j));
    }
  }
}

// Workspace for PDLANGE/PDLANSY/PDLANTR with norm '1' or 'M': PDLANSY needs at
// most 2*Nq0 + Np0 + LDW with LDW <= Np0 + NB; a few spare entries cover the rest.
template <typename T>
std::vector<T> norm_workspace(const DistMatrix<T>& a) {
  return std::vector<T>(2 * static_cast<std::size_t>(a.local_cols) + 2 * a.local_rows + a.nb + 16);
}

// resid / (n anorm eps), eps the unit roundoff of T (2^-53, 2^-24), through tessera's own check's ratio.
template <typename T>
double scaled(double resid, double anorm, int n) {
  return tessera::scaled_ratio(resid, anorm, n, tessera::unit_roundoff<T>());
}

// ||A - L L^T||_1 / (n ||A||_1 eps) from the original A and the factored matrix,
// whose lower triangle holds L (its upper triangle still holds A's).
template <typename T>
double cholesky_residual(const DistMatrix<T>& a0, const DistMatrix<T>& factored) {
  using S = Scalapack<T>;
  const int n = a0.n;
  DistMatrix<T> l = factored;
  const T zero = 0, one = 1, minus_one = -1;
  // L's strict upper triangle := 0, so PDSYRK sees L, not L plus A's upper half.
  if (n > 1) {
    const int nm1 = n - 1, two = 2;
    S::laset("U", &nm1, &nm1, &zero, &zero, l.local.data(), &kOne, &two, l.desc, 1);
  }
  DistMatrix<T> r = a0;
  // R_lower := A_lower - L L^T (PDSYRK updates the lower triangle only; PDLANSY reads only it)
  S::syrk("L", "N", &n, &n, &minus_one, l.local.data(), &kOne, &kOne, l.desc, &one, r.local.data(), &kOne, &kOne,
          r.desc, 1, 1);
  std::vector<T> work = norm_workspace(a0);
  const double resid = S::lansy("1", "L", &n, r.local.data(), &kOne, &kOne, r.desc, work.data(), 1, 1);
  const double anorm = S::lansy("1", "L", &n, a0.local.data(), &kOne, &kOne, a0.desc, work.data(), 1, 1);
  return scaled<T>(resid, anorm, n);
}

// A workspace query's answer as LWORK, rounded up: in single precision it comes back as a float, exact only to 2^24
// (33,554,433 reads as 33,554,432, and from 2^25 the spacing is 4, which the +1 alone would not cover).
template <typename T>
int workspace_elements(T query) {
  const double elements = std::ceil(static_cast<double>(query) * (1 + 4 * std::numeric_limits<T>::epsilon())) + 1;
  if (!(elements <= std::numeric_limits<int>::max()))
    throw std::runtime_error(fmt::format("a ScaLAPACK workspace of {:.0f} elements exceeds its int LWORK", elements));
  return static_cast<int>(elements);
}

// ||A - Q R||_1 / (n ||A||_1 eps) from the original A and PDGEQRF's output
// (R on and above the diagonal, the Householder vectors below, tau).
template <typename T>
double qr_residual(const DistMatrix<T>& a0, DistMatrix<T>& factored, std::vector<T>& tau) {
  using S = Scalapack<T>;
  const int n = a0.n;
  const T zero = 0, one = 1, minus_one = -1;
  DistMatrix<T> r = factored;
  S::laset("A", &n, &n, &zero, &zero, r.local.data(), &kOne, &kOne, r.desc, 1);
  S::lacpy("U", &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, r.local.data(), &kOne, &kOne, r.desc, 1);
  // Q := H(1) ... H(n) formed in place of the Householder vectors; workspace query first.
  int info = 0, lwork = -1;
  T query = 0;
  S::orgqr(&n, &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, tau.data(), &query, &lwork, &info);
  lwork = workspace_elements(query);
  std::vector<T> work(static_cast<std::size_t>(lwork));
  S::orgqr(&n, &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, tau.data(), work.data(), &lwork, &info);
  if (info != 0) throw std::runtime_error(fmt::format("PxORGQR returned info={}", info));
  DistMatrix<T> diff = a0;
  // diff := A - Q R
  S::gemm("N", "N", &n, &n, &n, &minus_one, factored.local.data(), &kOne, &kOne, factored.desc, r.local.data(), &kOne,
          &kOne, r.desc, &one, diff.local.data(), &kOne, &kOne, diff.desc, 1, 1);
  std::vector<T> nwork = norm_workspace(a0);
  const double resid = S::lange("1", &n, &n, diff.local.data(), &kOne, &kOne, diff.desc, nwork.data(), 1);
  const double anorm = S::lange("1", &n, &n, a0.local.data(), &kOne, &kOne, a0.desc, nwork.data(), 1);
  return scaled<T>(resid, anorm, n);
}

struct LuCheck {
  double residual = 0;
  double growth = 0;
};

// ||P A - L U||_1 / (n ||A||_1 eps) (LAPACK's xGET01 ratio) and the growth
// factor max|U| / max|A| from the original A (overwritten with P A - L U) and
// PDGETRF's output: U on and above the diagonal, L's strict lower triangle
// below (its unit diagonal implied), the pivots in ipiv. Every step is a
// distributed ScaLAPACK/PBLAS call on this rank's blocks; nothing is gathered.
template <typename T>
LuCheck lu_residual(DistMatrix<T>& a, const DistMatrix<T>& factored, std::vector<int>& ipiv, const Grid& g) {
  using S = Scalapack<T>;
  const int n = a.n;
  const T zero = 0, one = 1, minus_one = -1;
  std::vector<T> work = norm_workspace(a);
  // Row interchanges change no column sum, so ||P A||_1 = ||A||_1.
  const double anorm = S::lange("1", &n, &n, a.local.data(), &kOne, &kOne, a.desc, work.data(), 1);
  const double amax = S::lange("M", &n, &n, a.local.data(), &kOne, &kOne, a.desc, work.data(), 1);
  const double umax =
      S::lantr("M", "U", "N", &n, &n, factored.local.data(), &kOne, &kOne, factored.desc, work.data(), 1, 1, 1);
  // a := P A: the pivots applied forward to the rows, ipiv distributed over a
  // process column with the descriptor PDGETRS builds for it (PDLASWP only
  // handles pivots within one block; PDLAPIV handles the whole matrix).
  int descip[9];
  const int zero_i = 0, ip_rows = n + a.nb * g.nprow, ip_lld = a.nb + a.local_rows;
  descset_(descip, &ip_rows, &kOne, &a.nb, &kOne, &zero_i, &g.mycol, &g.context, &ip_lld);
  int iwork_unused[1] = {0};  // referenced only when ipiv must be transposed
  S::lapiv("F", "R", "C", &n, &n, a.local.data(), &kOne, &kOne, a.desc, ipiv.data(), &kOne, &kOne, descip, iwork_unused,
           1, 1, 1);
  // lu := U (a copy with the strict lower triangle zeroed), then lu := L U with
  // PDTRMM reading L's strict lower triangle from the factored matrix, unit diagonal.
  DistMatrix<T> lu = factored;
  if (n > 1) {
    const int nm1 = n - 1, two = 2;
    S::laset("L", &nm1, &nm1, &zero, &zero, lu.local.data(), &two, &kOne, lu.desc, 1);
  }
  S::trmm("L", "L", "N", "U", &n, &n, &one, factored.local.data(), &kOne, &kOne, factored.desc, lu.local.data(), &kOne,
          &kOne, lu.desc, 1, 1, 1, 1);
  // a := P A - L U
  S::geadd("N", &n, &n, &minus_one, lu.local.data(), &kOne, &kOne, lu.desc, &one, a.local.data(), &kOne, &kOne, a.desc,
           1);
  const double resid = S::lange("1", &n, &n, a.local.data(), &kOne, &kOne, a.desc, work.data(), 1);
  return {scaled<T>(resid, anorm, n), amax > 0 ? umax / amax : 0.0};
}

double flop_count(const std::string& algo, double n) {
  // Cholesky n^3/3; QR 2mn^2 - 2n^3/3 with m = n; LU mn^2 - n^3/3 with m = n.
  if (algo == "cholesky") return n * n * n / 3.0;
  return algo == "qr" ? 2.0 * n * n * n - 2.0 * n * n * n / 3.0 : 2.0 * n * n * n / 3.0;
}

// The largest info over the ranks, so every rank takes the same error branch.
int agree_on_info(int info) {
  int worst = 0;
  MPI_Allreduce(&info, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

template <typename T>
int run(const Options& opt, int rank, const Grid& g) {
  using S = Scalapack<T>;
  DistMatrix<T> a = make_matrix<T>(g, opt.n, opt.nb);
  generate(a, g, matrix_choice(opt), opt.seed);
  std::optional<DistMatrix<T>> a0;
  if (opt.check) a0 = a;

  const int n = opt.n;
  int info = 0;
  std::vector<T> tau(std::max(1, a.local_cols));
  std::vector<T> work;
  int lwork = 0;
  // PDGETRF's pivots: LOCr(n) + NB entries, tied to A's rows.
  std::vector<int> ipiv(opt.algo == "lu" ? a.local_rows + a.nb : 0);
  if (opt.algo == "qr") {
    // Workspace query outside the timed region.
    T query = 0;
    lwork = -1;
    S::geqrf(&n, &n, a.local.data(), &kOne, &kOne, a.desc, tau.data(), &query, &lwork, &info);
    lwork = workspace_elements(query);
    work.resize(static_cast<std::size_t>(lwork));
  }

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (opt.algo == "cholesky") {
    S::potrf("L", &n, a.local.data(), &kOne, &kOne, a.desc, &info, 1);
  } else if (opt.algo == "qr") {
    S::geqrf(&n, &n, a.local.data(), &kOne, &kOne, a.desc, tau.data(), work.data(), &lwork, &info);
  } else {
    S::getrf(&n, &n, a.local.data(), &kOne, &kOne, a.desc, ipiv.data(), &info);
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
  } else if (info > 0 && opt.algo == "lu") {
    // PxGETRF's info is the first i with U(i,i) exactly zero (it factors on).
    if (rank == 0)
      std::fprintf(stderr,
                   "scalapack_peer: error: matrix singular: the pivot U(%d,%d) is exactly zero (P%sGETRF failed at "
                   "global column %d, 1-based)\n",
                   info, info, opt.precision == "s" ? "S" : "D", info);
    status = kExitZeroPivot;
  } else if (info > 0) {
    if (rank == 0)
      std::fprintf(stderr, "scalapack_peer: error: matrix not positive definite (leading minor %d)\n", info);
    status = kExitNotPositiveDefinite;
  }

  std::optional<double> residual, growth;
  if (status == 0 && opt.check) {
    if (opt.algo == "cholesky") {
      residual = cholesky_residual(*a0, a);
    } else if (opt.algo == "qr") {
      residual = qr_residual(*a0, a, tau);
    } else {
      const LuCheck c = lu_residual(*a0, a, ipiv, g);
      residual = c.residual;
      growth = c.growth;
    }
  }
  const bool passed = !residual || *residual < kResidualThreshold;

  if (status == 0 && rank == 0) {
    const double gflops = time_s > 0 ? flop_count(opt.algo, n) / time_s * 1e-9 : 0.0;
    std::string line = fmt::format("scalapack {} {} n={} nb={} grid={}x{} time={:.4f}s gflops={:.2f}", opt.algo,
                                   opt.precision, n, opt.nb, opt.prow, opt.pcol, time_s, gflops);
    if (residual) {
      line += fmt::format(" residual={:.3g}", *residual);
      // Reported, not checked: a growth factor has no threshold (algorithms/check.hpp).
      if (growth) line += fmt::format(" growth={:.3g}", *growth);
      line += passed ? " ok" : " FAILED";
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (!opt.json.empty()) {
      nlohmann::json j;
      j["impl"] = "scalapack";
      j["algo"] = opt.algo;
      j["precision"] = opt.precision;
      j["matrix"] = opt.matrix;
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
      if (opt.algo == "lu") j["growth_factor"] = growth ? nlohmann::json(*growth) : nlohmann::json(nullptr);
      try {
        tessera::write_output({"--json", opt.json}, [&](std::ostream& f) { f << j.dump(2) << '\n'; });
      } catch (const tessera::InputError& e) {
        std::fprintf(stderr, "scalapack_peer: error: %s\n", e.what());
        status = kExitInput;
      }
    }
  }
  // Rank 0 alone learns whether the JSON file was written; share its verdict.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status == 0 && !passed) status = kExitCheckFailed;
  return status;
}

int run(const Options& opt, int rank) {
  Grid g;
  Cblacs_get(-1, 0, &g.context);
  Cblacs_gridinit(&g.context, "Row", opt.prow, opt.pcol);
  Cblacs_gridinfo(g.context, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  const int status = opt.precision == "s" ? run<float>(opt, rank, g) : run<double>(opt, rank, g);
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
    try {
      status = run(opt, rank);
    } catch (const std::bad_alloc&) {
      // Only this rank knows: it names itself and ends the job (exit 4, as tessera's out of memory).
      const double share = static_cast<double>(opt.n) * opt.n * (opt.precision == "s" ? 4 : 8) / world_size;
      std::fprintf(stderr,
                   "scalapack_peer: error: rank %d: out of memory for its share (about %.1f GiB) of the %d x %d "
                   "matrix (--n %d)\n",
                   rank, share / 1073741824.0, opt.n, opt.n, opt.n);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
    // 1 = leave MPI running: MPI_Finalize below ends it for both paths.
    Cblacs_exit(1);
  }
  MPI_Finalize();
  return status;
}
