// Numerical tests of the tile LU factorization (algorithms/lu.hpp, issue 14
// point 7) through the driver the command line uses: every pivoting variant
// in both precisions, on irregular shapes, with threads, emulated GPUs (a
// given and the default d) and the simulated backend on real data, checked
// against LAPACK's threshold 30 (algorithms/lu_check.hpp); a zero leading
// entry that only the pivoting variants survive; and partial pivoting
// against LAPACK's GEPP through the growth factor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/lu.hpp"
#include "base/error.hpp"
#include "experiments/driver.hpp"
#include "models/machine.hpp"
#include "platform/native/native_platform.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "sim/sim_test_util.hpp"
#include "test_helpers.hpp"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree (for the machine files)"
#endif

namespace tessera {
namespace {

struct LuCase {
  std::string pivot;  // partial | tournament | none
  std::string tree;   // binary | flat with tournament; empty: not given
  char precision = 'd';
  index_t m = 0, n = 0, B = 0;
  int s = 1;
  index_t b = 0;
  int threads = 1;
  int gpus = 0;
  std::string d;       // --d; empty: not given (auto with GPUs)
  std::string matrix;  // --matrix; empty: LU's default (general)
};

std::string case_name(const LuCase& c) {
  std::string s = c.pivot + (c.tree.empty() ? "" : "_" + c.tree) + "_" + c.precision + "_m" + std::to_string(c.m) +
                  "_n" + std::to_string(c.n) + "_B" + std::to_string(c.B) + "_s" + std::to_string(c.s) +
                  (c.s > 1 ? "_b" + std::to_string(c.b) : "") + "_t" + std::to_string(c.threads);
  if (c.gpus > 0) s += "_g" + std::to_string(c.gpus) + "_d" + (c.d.empty() ? "auto" : c.d);
  if (!c.matrix.empty()) s += "_" + c.matrix;
  return s;
}

void PrintTo(const LuCase& x, std::ostream* os) { *os << case_name(x); }

RunConfig config_of(const LuCase& c) {
  RunConfig cfg;
  cfg.algo = "lu";
  cfg.pivot = c.pivot;
  cfg.tslu_tree = c.tree;
  cfg.precision = c.precision;
  cfg.m = c.m;
  cfg.n = c.n;
  cfg.B = c.B;
  cfg.s = c.s;
  cfg.b = c.b;
  cfg.threads = c.threads;
  cfg.gpus = c.gpus;
  cfg.d = c.d;
  cfg.matrix = c.matrix;
  cfg.check = true;
  return cfg;
}

RunResult run_lu(const LuCase& c) {
  platform::NativePlatform plat;
  return run_factorization(config_of(c), plat);
}

// What every checked LU run must show: a finite backward error below the
// threshold, the solve ratio of a square matrix below it too (and present),
// a growth factor, and the variant it was asked for.
void expect_checked(const LuCase& c, const RunResult& r) {
  ASSERT_TRUE(r.residuals.has_value()) << "check = true produced no residuals";
  const Residuals& res = *r.residuals;
  EXPECT_TRUE(std::isfinite(res.factor)) << res.factor;
  EXPECT_GE(res.factor, 0.0);
  EXPECT_LT(res.factor, kResidualThreshold);
  EXPECT_TRUE(res.passed()) << "backward error " << res.factor << ", solve " << res.value("solve") << ", growth "
                            << res.value("growth");
  if (c.m == c.n) {
    EXPECT_GT(res.value("solve"), 0.0) << "no solve ratio for a square matrix";
    EXPECT_LT(res.value("solve"), kResidualThreshold);
  }
  const double growth = res.value("growth");
  EXPECT_TRUE(std::isfinite(growth) && growth > 0) << growth;
  ASSERT_TRUE(r.config.factor);
  const std::string variant = r.config.factor->variant();
  EXPECT_NE(variant.find("pivot=" + c.pivot), std::string::npos) << variant;
  if (c.pivot == "tournament")
    EXPECT_NE(variant.find("tree=" + (c.tree.empty() ? std::string("binary") : c.tree)), std::string::npos) << variant;
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  EXPECT_EQ(r.p, L.tile_rows());
  EXPECT_EQ(r.q, L.tile_cols());
  EXPECT_GT(r.tasks, 0u);
}

// ---------------------------------------------------------------------------
// Every pivoting variant, both precisions, irregular shapes, 1 and 3 threads.
// ---------------------------------------------------------------------------

class LuResiduals : public ::testing::TestWithParam<LuCase> {};

TEST_P(LuResiduals, AreBelowTheThreshold) {
  const LuCase c = GetParam();
  const RunResult r = run_lu(c);
  expect_checked(c, r);
  EXPECT_EQ(r.config.threads, c.threads);
  EXPECT_EQ(r.busy_s.size(), static_cast<std::size_t>(c.threads));
  EXPECT_EQ(r.config.d_columns, 0) << "no GPUs: no CPU/GPU split";
}

// pivot, tree; none runs on a matrix it can factor stably: the strictly
// diagonally dominant Spd kind when square, Graded (D S D with S's square
// block diagonally dominant, so D L D^-1 and D U D exist without
// interchanges) when tall, since a tall Spd is refused.
// In single precision a square one runs on illcond (symmetric positive
// definite, so LU without interchanges exists and is stable): the spd
// matrix's diagonal n + u makes every Schur update O(1/n) of the matrix, and
// its scaled residual stays below 30 in single precision with the diagonal
// tiles' trailing updates left out (tried), as Cholesky's does
// (tests/CMakeLists.txt, check_matrix). The tall graded matrix has the same
// blind spot; no tall kind of the generator suits LU without interchanges
// better.
std::string none_matrix(char precision, bool square) {
  if (!square) return "graded";
  return precision == 's' ? "illcond" : "spd";
}

const std::vector<std::pair<std::string, std::string>> kVariants = {
    {"partial", ""}, {"tournament", "binary"}, {"tournament", "flat"}, {"none", ""}};

std::vector<LuCase> variant_grid() {
  struct Shape {
    index_t m, n, B;
    int s;
    index_t b;
  };
  // N not a multiple of B, tall m > n, N < B (one partial tile), two- and
  // three-level tiles with narrow columns b, and B = 97 with two columns of
  // 48: a single row of the top tile row left below the second one's
  // diagonal block (and a 1-wide remainder column).
  const Shape shapes[] = {{700, 700, 96, 1, 0},  {1000, 333, 96, 1, 0},  {50, 50, 96, 1, 0},   {700, 700, 96, 2, 24},
                          {700, 700, 96, 3, 16}, {1000, 333, 96, 3, 16}, {300, 300, 97, 3, 48}};
  // 1 and 3 threads alternate along the list, so each variant, precision and
  // shape runs once and every variant meets both thread counts in both
  // precisions (the full cross product doubled the suite's LU time for no
  // path the alternation misses: the executor does not branch on threads).
  std::vector<LuCase> out;
  int k = 0;
  for (const auto& [pivot, tree] : kVariants)
    for (char precision : {'d', 's'})
      for (const Shape& sh : shapes) {
        const int threads = (k++ + (precision == 's')) % 2 ? 3 : 1;
        LuCase c{pivot, tree, precision, sh.m, sh.n, sh.B, sh.s, sh.b, threads};
        if (pivot == "none") c.matrix = none_matrix(precision, sh.m == sh.n);
        out.push_back(c);
      }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Variants, LuResiduals, ::testing::ValuesIn(variant_grid()),
                         [](const ::testing::TestParamInfo<LuCase>& info) { return case_name(info.param); });

// ---------------------------------------------------------------------------
// Emulated GPUs: 1 and 2 per node, with --d given and with the default auto.
// ---------------------------------------------------------------------------

class LuGpuResiduals : public ::testing::TestWithParam<LuCase> {};

TEST_P(LuGpuResiduals, AreBelowTheThreshold) {
  const LuCase c = GetParam();
  const RunResult r = run_lu(c);
  expect_checked(c, r);
  EXPECT_EQ(r.gpus.size(), static_cast<std::size_t>(c.gpus));
  const int q = TileLayout(c.m, c.n, c.B, c.s, c.b).tile_cols();
  if (c.d.empty()) {
    // auto: the whole run's balance (models/lu_split.hpp), some of the
    // columns on each side of the split.
    EXPECT_GE(r.config.d_columns, 1);
    EXPECT_LE(r.config.d_columns, q);
    EXPECT_NE(r.config.d_source.find("whole-run balance"), std::string::npos) << r.config.d_source;
  } else {
    EXPECT_EQ(r.config.d_columns, std::stoi(c.d));
    EXPECT_EQ(r.config.d_source, "given");
  }
  EXPECT_NE(r.config.factor->variant().find("d=" + std::to_string(r.config.d_columns)), std::string::npos)
      << r.config.factor->variant();
  double gpu_busy = 0, core_busy = 0;
  for (const auto& g : r.gpus) gpu_busy += g.busy_s;
  for (const double b : r.busy_s) core_busy += b;
  EXPECT_GT(gpu_busy, 0.0) << "the GPUs hold block columns in every case";
  if (c.d == "0") {
    // No block column on the cores: with partial pivoting or none they run
    // nothing; the tournament's candidate selection stays on them.
    if (c.pivot == "tournament") EXPECT_GT(core_busy, 0.0);
    else EXPECT_EQ(core_busy, 0.0) << "a task of --d 0 ran on a core";
  } else {
    EXPECT_GT(core_busy, 0.0) << "d >= 1 columns and the panels are the cores'";
  }
}

std::vector<LuCase> gpu_grid() {
  std::vector<LuCase> out;
  for (const auto& [pivot, tree] : kVariants)
    for (char precision : {'d', 's'})
      for (int gpus : {1, 2})
        for (const std::string d : {"", "3"}) {
          LuCase c{pivot, tree, precision, 700, 700, 96, 1, 0, 2, gpus, d};
          if (pivot == "none") c.matrix = none_matrix(precision, true);
          out.push_back(c);
        }
  // Two-level tiles and a tall matrix with a GPU.
  out.push_back(LuCase{"tournament", "binary", 'd', 700, 700, 96, 2, 24, 1, 1, "2"});
  out.push_back(LuCase{"partial", "", 'd', 1000, 333, 96, 1, 0, 2, 2, ""});
  // --d 0: every column on the GPUs, panels included; 1 and 2 GPUs along
  // the list, a tall matrix and two-level tiles.
  int k = 0;
  for (const auto& [pivot, tree] : kVariants)
    for (char precision : {'d', 's'}) {
      LuCase c{pivot, tree, precision, 700, 700, 96, 1, 0, 2, 1 + k++ % 2, "0"};
      if (pivot == "none") c.matrix = none_matrix(precision, true);
      out.push_back(c);
    }
  out.push_back(LuCase{"partial", "", 'd', 1000, 333, 96, 2, 24, 1, 2, "0"});
  out.push_back(LuCase{"tournament", "flat", 's', 1000, 333, 96, 3, 16, 2, 1, "0"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(EmulatedGpus, LuGpuResiduals, ::testing::ValuesIn(gpu_grid()),
                         [](const ::testing::TestParamInfo<LuCase>& info) { return case_name(info.param); });

// ---------------------------------------------------------------------------
// The simulated backend on real data: 002's machine (Opteron 6172 + one
// Tesla S2050), 12 threads and its GPU, d from the machine file's models.
// ---------------------------------------------------------------------------

class LuSimulated : public ::testing::TestWithParam<LuCase> {};

TEST_P(LuSimulated, ResidualsAreBelowTheThreshold) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  const LuCase c = GetParam();
  const std::string machine_file = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/opteron6172-s2050.json";
  // One SimGrid engine per process: the run happens in a child that sends
  // back what the parent checks.
  const std::string out = test::run_in_child([&] {
    const auto machine = platform::Machine::load(machine_file);
    RunConfig cfg = config_of(c);
    cfg.model = &machine.core_model(cfg.threads);
    cfg.gpu_model = &machine.model(machine.node.gpus.model);
    cfg.machine = machine_file;
    platform::Simulation sim(machine);
    std::vector<std::unique_ptr<platform::Device>> gpus;
    for (int g = 1; g <= c.gpus; ++g) {
      gpus.push_back(platform::make_sim_gpu(sim, 0, g, static_cast<std::size_t>(machine.node.gpus.memory_bytes), true));
      cfg.devices.push_back(gpus.back().get());
    }
    platform::SimGridPlatform node0(sim, 0, /*sim_data=*/true);
    const RunResult r = run_factorization(cfg, node0);
    if (!r.residuals) return std::string("none");
    std::ostringstream s;
    s << test::exact(r.residuals->factor) << ' ' << test::exact(r.residuals->value("solve")) << ' '
      << test::exact(r.residuals->value("growth")) << ' ' << (r.residuals->passed() ? 1 : 0) << ' '
      << r.config.d_columns << ' ' << r.gpus.size() << ' ' << test::exact(r.time_s);
    return s.str();
  });
  ASSERT_NE(out, "none") << "check = true produced no residuals";
  std::istringstream in(out);
  std::string factor, solve, growth, time;
  int passed = 0, d = 0;
  std::size_t gpus = 0;
  in >> factor >> solve >> growth >> passed >> d >> gpus >> time;
  ASSERT_TRUE(in) << "unreadable child result: " << out;
  const double f = std::strtod(factor.c_str(), nullptr), sv = std::strtod(solve.c_str(), nullptr),
               g = std::strtod(growth.c_str(), nullptr);
  EXPECT_TRUE(std::isfinite(f) && f >= 0) << f;
  EXPECT_LT(f, kResidualThreshold);
  EXPECT_GT(sv, 0.0);
  EXPECT_LT(sv, kResidualThreshold);
  EXPECT_TRUE(std::isfinite(g) && g > 0) << g;
  EXPECT_EQ(passed, 1) << out;
  EXPECT_EQ(gpus, static_cast<std::size_t>(c.gpus));
  const int q = TileLayout(c.m, c.n, c.B, c.s, c.b).tile_cols();
  if (c.d.empty()) {
    EXPECT_GE(d, 1);
    EXPECT_LE(d, q);
  } else {
    EXPECT_EQ(d, std::stoi(c.d));
  }
  EXPECT_GT(std::strtod(time.c_str(), nullptr), 0.0) << "a simulated run takes simulated time";
}

std::vector<LuCase> sim_grid() {
  std::vector<LuCase> out;
  for (const auto& [pivot, tree] : kVariants)
    for (char precision : {'d', 's'}) {
      LuCase c{pivot, tree, precision, 700, 700, 96, 1, 0, 12, 1, ""};
      if (pivot == "none") c.matrix = none_matrix(precision, true);
      out.push_back(c);
    }
  // Every column on the simulated GPU, panels included (--d 0).
  out.push_back(LuCase{"partial", "", 'd', 700, 700, 96, 1, 0, 12, 1, "0"});
  out.push_back(LuCase{"tournament", "binary", 's', 700, 700, 96, 1, 0, 12, 1, "0"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Opteron6172S2050, LuSimulated, ::testing::ValuesIn(sim_grid()),
                         [](const ::testing::TestParamInfo<LuCase>& info) { return case_name(info.param); });

// ---------------------------------------------------------------------------
// The pivots matter: a zero leading entry.
// ---------------------------------------------------------------------------

// An n×n general Matrix Market array file (column-major values): entries
// uniform in [-1, 1] from a fixed seed, the diagonal n + 1 (so every leading
// minor but the first is far from singular), except A(1,1) = 0.
std::string zero_leading_entry(int n) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::ostringstream s;
  s.precision(17);
  s << "%%MatrixMarket matrix array real general\n" << n << " " << n << "\n";
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) s << (i == 0 && j == 0 ? 0.0 : i == j ? n + 1.0 : u(rng)) << "\n";
  return s.str();
}

TEST(LuPivoting, ZeroLeadingEntryNeedsPivots) {
  test::TempDir dir;
  const std::string file = dir.write("zero00.mtx", zero_leading_entry(40));
  for (char precision : {'d', 's'})
    for (const auto& [pivot, tree] : kVariants) {
      SCOPED_TRACE(std::string("--pivot ") + pivot + " " + tree + " precision " + precision);
      LuCase c{pivot, tree, precision, 40, 40, 8, 1, 0, 2};
      RunConfig cfg = config_of(c);
      cfg.m = cfg.n = kUnsetSize;  // the file gives the size
      cfg.input = file;
      platform::NativePlatform plat;
      if (pivot != "none") {
        const RunResult r = run_factorization(cfg, plat);
        EXPECT_EQ(r.config.n, 40);
        expect_checked(c, r);
        continue;
      }
      try {
        run_factorization(cfg, plat);
        ADD_FAILURE() << "--pivot none factored a matrix whose (1,1) entry is 0";
      } catch (const SingularMatrix& e) {
        EXPECT_EQ(e.column(), 1);
        EXPECT_EQ(e.exit_status(), 3);
        EXPECT_NE(std::string(e.what()).find("column 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--pivot none"), std::string::npos) << e.what();
      }
    }
}

// ---------------------------------------------------------------------------
// Partial pivoting is GEPP, as LAPACK's xGETRF: the same pivots on the same
// matrix, so the same growth factor max|U| / max|A| up to rounding.
// ---------------------------------------------------------------------------

TEST(LuPivoting, PartialHasLapacksGrowthFactor) {
  const LuCase cases[] = {{"partial", "", 'd', 700, 700, 96, 1, 0, 2},
                          {"partial", "", 'd', 1000, 333, 96, 2, 24, 3},
                          {"partial", "", 'd', 700, 700, 96, 3, 16, 1},
                          {"partial", "", 'd', 700, 700, 96, 1, 0, 2, 2, "3"},
                          {"partial", "", 'd', 700, 700, 96, 1, 0, 2, 2, "0"}};
  for (const LuCase& c : cases) {
    SCOPED_TRACE(case_name(c));
    const RunResult tile = run_lu(c);
    RunConfig peer = config_of(c);
    peer.impl = Impl::Lapack;
    peer.B = kUnsetSize;
    peer.s = 1;
    peer.b = kUnsetSize;
    peer.gpus = 0;
    peer.d.clear();
    platform::NativePlatform plat;
    const RunResult lapack = run_factorization(peer, plat);
    ASSERT_TRUE(tile.residuals && lapack.residuals);
    EXPECT_TRUE(tile.residuals->passed());
    EXPECT_TRUE(lapack.residuals->passed());
    const double g_tile = tile.residuals->value("growth"), g_lapack = lapack.residuals->value("growth");
    ASSERT_GT(g_lapack, 1.0) << "a general random matrix grows under elimination";
    EXPECT_NEAR(g_tile, g_lapack, 1e-12 * g_lapack) << "tile " << g_tile << ", LAPACK " << g_lapack;
  }
}

// A tile size beyond the matrix is one tile of the whole matrix, and LU's
// buffers (the gathered panel, candidate sets, plans) are sized by its
// tallest tile row and widest tile column, not by B: with B = 2^31 and
// n = 192 the panel buffer was m x B elements, 1584 GiB (tests/cli_fuzz.py
// found it through the out-of-memory refusal).
TEST(LuBuffersSize, TileSizeBeyondTheMatrixIsBoundedByIt) {
  const TileLayout one(192, 150, index_t{1} << 31, 1, 0);  // one 192 x 150 tile
  EXPECT_EQ(lu_stride(one), 192u);
  const LuBuffers<double> buffers(one, LuPivot::Partial);
  EXPECT_EQ(buffers.panel_elems(), 192u * 192u);
  // Several columns: the tallest row (64) beyond the widest column (48 = 64 - 16) sizes a plan's permutation.
  EXPECT_EQ(lu_stride(TileLayout(500, 300, 64, 2, 16)), 64u);
  EXPECT_EQ(lu_stride(TileLayout(40, 30, 64, 1, 0)), 40u);
  for (const char* pivot : {"partial", "tournament"}) {
    LuCase c{pivot, "", 'd', 192, 192, index_t{1} << 31};
    expect_checked(c, run_lu(c));
  }
}

}  // namespace
}  // namespace tessera
