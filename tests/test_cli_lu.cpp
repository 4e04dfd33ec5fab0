// `tessera run --algo lu` as a process (issue 14 point 7): LU's options
// (--pivot, --tslu-tree, --d) refused with exit 2 naming the option and its
// value, a singular matrix ending every variant, the LAPACK peer and a
// distributed run with exit 3 naming the column, and a general (non-
// symmetric) Matrix Market file factored and checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_expect.hpp"

namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using tessera::test::Outcome;
using tessera::test::TempDir;
using namespace tessera::test::cli;

std::vector<std::string> lu(std::vector<std::string> extra) { return base(std::move(extra), "lu"); }

// ---------------------------------------------------------------------------
// LU's options, exit 2.
// ---------------------------------------------------------------------------

TEST(CliLuBadInput, UnknownPivot) {
  expect_rejected(kInvalidInput, lu({"--n", "100", "--pivot", "bogus"}),
                  {"--pivot", "'bogus'", "partial, tournament, none"});
  expect_rejected(kInvalidInput, lu({"--n", "100", "--pivot", "Partial"}), {"--pivot", "'Partial'"});
}

TEST(CliLuBadInput, UnknownTree) {
  expect_rejected(kInvalidInput, lu({"--n", "100", "--pivot", "tournament", "--tslu-tree", "ternary"}),
                  {"--tslu-tree", "'ternary'"});
}

// The reduction tree is the tournament's: without --pivot tournament (the
// default is partial) it is refused, not ignored.
TEST(CliLuBadInput, TsluTreeNeedsTournament) {
  expect_rejected(kInvalidInput, lu({"--n", "100", "--tslu-tree", "flat"}), {"--tslu-tree flat", "--pivot tournament"});
  expect_rejected(kInvalidInput, lu({"--n", "100", "--pivot", "none", "--tslu-tree", "binary"}),
                  {"--tslu-tree binary", "--pivot tournament"});
}

// n = 700, B = 96: 8 block columns. --d 8 (all on the CPU side) is the
// largest that runs; --d 9 is refused naming --d and the count.
TEST(CliLuBadInput, DLargerThanTheBlockColumns) {
  expect_rejected(kInvalidInput, lu({"--n", "700", "--B", "96", "--gpus", "1", "--d", "9"}),
                  {"--d 9", "8 block columns"});
  const Outcome o = run_tessera(lu({"--n", "700", "--B", "96", "--gpus", "1", "--d", "8", "--check"}));
  expect_success(o);
  EXPECT_THAT(o.out, HasSubstr(" d=8 ")) << o;
  EXPECT_THAT(o.out, EndsWith(" ok\n")) << o;
}

// d splits the columns between the cores and the GPUs: without --gpus there
// is nothing to split.
TEST(CliLuBadInput, DNeedsGpus) {
  expect_rejected(kInvalidInput, lu({"--n", "700", "--B", "96", "--d", "3"}), {"--d 3", "--gpus"});
  expect_rejected(kInvalidInput, lu({"--n", "700", "--B", "96", "--d", "auto"}), {"--d auto", "--gpus"});
  expect_rejected(kInvalidInput, lu({"--n", "700", "--B", "96", "--d", "0"}), {"--d 0", "--gpus"});
}

TEST(CliLuBadInput, DMustBeACount) {
  for (const char* d : {"-2", "three", "00", "1.5"})
    expect_rejected(kInvalidInput, lu({"--n", "700", "--B", "96", "--gpus", "1", "--d", d}),
                    {"--d", std::string("'") + d + "'"});
}

// A native CUDA run does not know its GPU's speed: --d auto is refused,
// naming both ways to give d. (Refused before any device is opened, so this
// holds on a machine without a GPU too.)
TEST(CliLuBadInput, DAutoOnCudaNamesTheChoices) {
  expect_rejected(kInvalidInput, lu({"--n", "100", "--gpus", "1", "--device", "cuda"}),
                  {"--d auto", "CUDA", "--d K", "--d 0"});
}

// --d 0: no block column on the cores; the run says so and checks.
TEST(CliLu, DZeroPutsEveryColumnOnTheGpus) {
  const Outcome o = run_tessera(lu({"--n", "700", "--B", "96", "--gpus", "1", "--d", "0", "--check"}));
  expect_success(o);
  EXPECT_THAT(o.out, HasSubstr(" d=0 ")) << o;
  EXPECT_THAT(o.out, EndsWith(" ok\n")) << o;
}

// On a grid of several node columns each node's GPU g runs the columns the
// distribution puts on it (local top-level column mod G): with the global
// column mod G instead, node 0 of a 1x2 grid with 2 GPUs gave GPU 2 only
// copies, never a kernel.
TEST(CliLu, EveryGpuOfANodeColumnWorks) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string json = dir.path() + "/lu.json";
  std::vector<std::string> a =
      lu({"--n", "1200", "--B", "128", "--s", "2", "--b", "16", "--grid", "1x2", "--gpus", "2", "--backend", "sim",
          "--machine", std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json", "--json", json});
  const Outcome o = run_tessera(a);
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  const nlohmann::json j = nlohmann::json::parse(tessera::test::read_text(json));
  ASSERT_EQ(j.at("gpu_stats").size(), 2u) << j.dump();
  for (const auto& g : j.at("gpu_stats")) EXPECT_GT(g.at("busy_s").get<double>(), 0.0) << j.dump();
}

// LU's options belong to LU: Cholesky and QR refuse them instead of
// silently running without.
TEST(CliLuBadInput, PivotOnOtherFactorizations) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--pivot", "partial"}, "cholesky"), {"--pivot", "cholesky"});
  expect_rejected(kInvalidInput, base({"--n", "100", "--pivot", "tournament"}, "qr"), {"--pivot", "qr"});
}

TEST(CliLuBadInput, TreeAndDOnOtherFactorizations) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--tslu-tree", "flat"}, "cholesky"), {"--tslu-tree", "cholesky"});
  expect_rejected(kInvalidInput, base({"--n", "600", "--B", "120", "--gpus", "1", "--d", "2"}, "cholesky"),
                  {"--d", "cholesky"});
}

TEST(CliLuBadInput, NeedsMAtLeastN) {
  expect_rejected(kInvalidInput, lu({"--n", "100", "--m", "50"}), {"m = 50", "n = 100"});
}

// ---------------------------------------------------------------------------
// Singular input, exit 3 naming the column.
// ---------------------------------------------------------------------------

// A 6×6 general coordinate file whose column 4 is zero (not listed): every
// other entry uniform in [-1, 1] from a fixed seed, the diagonal + 4.
// Columns 1-3 are independent, so the first zero pivot any elimination,
// with or without interchanges, meets is U(4,4).
std::string zero_column_4() {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::ostringstream s;
  s.precision(17);
  s << "%%MatrixMarket matrix coordinate real general\n% column 4 is zero\n6 6 30\n";
  for (int j = 1; j <= 6; ++j)
    for (int i = 1; i <= 6 && j != 4; ++i) s << i << " " << j << " " << u(rng) + (i == j ? 4.0 : 0.0) << "\n";
  return s.str();
}

class CliLuSingular : public ::testing::TestWithParam<std::vector<std::string>> {};

// B = 2 (the zero column inside the second tile column, 3 tile rows) with
// threads, and B = 4 on an emulated GPU in single precision.
TEST_P(CliLuSingular, ZeroColumnExitsThreeNamingColumn4) {
  TempDir dir;
  const std::string f = dir.write("zerocol4.mtx", zero_column_4());
  const std::vector<std::string>& variant = GetParam();
  std::vector<std::string> a = lu({"--input", f, "--B", "2", "--threads", "2", "--check"});
  a.insert(a.end(), variant.begin(), variant.end());
  expect_rejected(kNotPositiveDefinite, a, {"singular", "column 4", "U(4,4)"});
  std::vector<std::string> g = lu({"--input", f, "--B", "4", "--gpus", "1", "--threads", "1", "--precision", "s"});
  g.insert(g.end(), variant.begin(), variant.end());
  expect_rejected(kNotPositiveDefinite, g, {"singular", "column 4"});
}

INSTANTIATE_TEST_SUITE_P(Pivots, CliLuSingular,
                         ::testing::Values(std::vector<std::string>{"--pivot", "partial"},
                                           std::vector<std::string>{"--pivot", "tournament"},
                                           std::vector<std::string>{"--pivot", "tournament", "--tslu-tree", "flat"},
                                           std::vector<std::string>{"--pivot", "none"}),
                         [](const ::testing::TestParamInfo<std::vector<std::string>>& info) {
                           std::string s;
                           for (std::size_t i = 1; i < info.param.size(); i += 2)
                             s += (s.empty() ? "" : "_") + info.param[i];
                           return s;
                         });

// The LAPACK peer (xGETRF's info = 4) reports the same column.
TEST(CliLuSingularPeer, LapackExitsThreeNamingColumn4) {
  TempDir dir;
  const std::string f = dir.write("zerocol4.mtx", zero_column_4());
  expect_rejected(kNotPositiveDefinite, lu({"--input", f, "--impl", "lapack", "--check"}), {"singular", "column 4"});
}

// The pivots matter: A(1,1) = 0 in an otherwise well-conditioned matrix.
// Both pivoting variants factor it; without interchanges the first pivot is
// zero, exit 3 naming column 1.
TEST(CliLuPivoting, ZeroLeadingEntry) {
  TempDir dir;
  const std::string f = dir.write(
      "zero11.mtx", "%%MatrixMarket matrix array real general\n4 4\n0\n1\n2\n3\n1\n5\n1\n0\n2\n1\n6\n1\n3\n0\n1\n7\n");
  for (const char* pivot : {"partial", "tournament"}) {
    SCOPED_TRACE(pivot);
    const Outcome o = run_tessera(lu({"--input", f, "--B", "2", "--pivot", pivot, "--check"}));
    expect_success(o);
    EXPECT_THAT(o.out, StartsWith("lu ")) << o;
    EXPECT_THAT(o.out, HasSubstr(" 4x4 ")) << o;
    EXPECT_THAT(o.out, HasSubstr(std::string("pivot=") + pivot)) << o;
    EXPECT_THAT(o.out, EndsWith(" ok\n")) << o;
  }
  expect_rejected(kNotPositiveDefinite, lu({"--input", f, "--B", "2", "--pivot", "none", "--check"}),
                  {"singular", "column 1", "--pivot none"});
}

// ---------------------------------------------------------------------------
// A general (non-symmetric) Matrix Market file.
// ---------------------------------------------------------------------------

// GEPP's growth factor max|U| / max|A| of a column-major n×n matrix, the
// pivot the first entry of largest magnitude (LAPACK's IxAMAX).
double gepp_growth(std::vector<double> a, int n) {
  double amax = 0;
  for (double x : a) amax = std::max(amax, std::abs(x));
  auto at = [&](int i, int j) -> double& { return a[static_cast<std::size_t>(i + j * n)]; };
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(at(i, k)) > std::abs(at(p, k))) p = i;
    for (int j = 0; j < n; ++j) std::swap(at(k, j), at(p, j));
    for (int i = k + 1; i < n; ++i) {
      at(i, k) /= at(k, k);
      for (int j = k + 1; j < n; ++j) at(i, j) -= at(i, k) * at(k, j);
    }
  }
  double umax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) umax = std::max(umax, std::abs(at(i, j)));
  return umax / amax;
}

// Factored and checked, with the growth factor of GEPP on the file's own
// entries: read as general (both triangles), not as symmetric.
TEST(CliLuInput, GeneralFileIsFactoredAndChecked) {
  const int n = 9;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(static_cast<std::size_t>(n * n));
  for (double& x : a) x = u(rng);
  std::ostringstream s;
  s.precision(17);
  s << "%%MatrixMarket matrix coordinate real general\n" << n << " " << n << " " << n * n << "\n";
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) s << i + 1 << " " << j + 1 << " " << a[static_cast<std::size_t>(i + j * n)] << "\n";
  TempDir dir;
  const std::string f = dir.write("general.mtx", s.str());
  const std::string json = dir.path() + "/r.json";
  const Outcome o = run_tessera(lu({"--input", f, "--B", "4", "--threads", "2", "--check", "--json", json}));
  expect_success(o);
  EXPECT_THAT(o.out, StartsWith("lu ")) << o;
  EXPECT_THAT(o.out, HasSubstr(" 9x9 ")) << o;
  EXPECT_THAT(o.out, EndsWith(" ok\n")) << o;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("input"), f);
  EXPECT_EQ(j.at("check_passed"), true);
  const double expected = gepp_growth(a, n);
  EXPECT_NEAR(j.at("growth_factor").get<double>(), expected, 1e-12 * expected) << j.dump();
}

// ---------------------------------------------------------------------------
// A distributed run (label mpi): the singular matrix on 2 ranks.
// ---------------------------------------------------------------------------

// Column 4 lies in tile row 1 (B = 2), which rank 1 owns on a 2x1 grid: the
// rank that meets the zero pivot ends the job, and mpirun exits 3.
TEST(CliLuMpi, SingularMatrixEndsTheJobWithThree) {
  if (!TESSERA_HAVE_MPI) GTEST_SKIP() << "built without MPI";
  TempDir dir;
  const std::string f = dir.write("zerocol4.mtx", zero_column_4());
  const Outcome o =
      tessera::test::run_process(TESSERA_MPIEXEC,
                                 {"--allow-run-as-root", "--oversubscribe", "-np", "2", TESSERA_BIN, "run", "--algo",
                                  "lu", "--input", f, "--B", "2", "--grid", "2x1", "--pivot", "tournament", "--check"},
                                 60);
  ASSERT_TRUE(o.exited) << o;
  ASSERT_NE(o.status, 124) << "timed out: " << o;
  EXPECT_EQ(o.status, kNotPositiveDefinite) << o;
  EXPECT_THAT(o.err, HasSubstr("tessera: error: input matrix is singular")) << o;
  EXPECT_THAT(o.err, HasSubstr("column 4")) << o;
  EXPECT_THAT(o.out, Not(HasSubstr("lu "))) << "no summary line: " << o;
}

}  // namespace
