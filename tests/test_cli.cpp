// The real `tessera` binary on bad and good input: bad input stops with one
// clear message on stderr naming the value, a non-zero exit status and no
// crash; good input produces the summary line and the JSON result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_expect.hpp"

namespace {

using ::testing::HasSubstr;
using tessera::test::read_text;
using tessera::test::Outcome;
using tessera::test::TempDir;

using namespace tessera::test::cli;

// The cuSOLVER peer factors on one GPU by itself: --gpus contradicts it.
TEST(CliBadInput, CusolverPeerWithGpus) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--impl", "cusolver", "--gpus", "1"}),
                  {"--impl cusolver", "--gpus 1"});
}

TEST(CliBadInput, NonPositiveN) {
  expect_rejected(kInvalidInput, base({"--n", "0"}), {"--n 0"});
  expect_rejected(kInvalidInput, base({"--n", "-5"}), {"-5"});
  expect_rejected(kInvalidInput, base({"--n", "20", "--m", "-4"}, "qr"), {"-4"});
}

TEST(CliBadInput, NonPositiveB) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "-3"}), {"-3"});
  // B = 0 is not a tile size either; the default applies only when --B is absent.
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "0"}), {"B", "0"});
}

TEST(CliBadInput, ZeroIsNotAnImplicitDefault) {
  // Leaving an option out selects its default; giving 0 is an invalid value
  // (the same rule as --B 0 above).
  expect_rejected(kInvalidInput, base({"--n", "10", "--m", "0"}, "qr"), {"--m", "0"});
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "32", "--s", "2", "--b", "0"}), {"b", "0"});
}

TEST(CliBadInput, NarrowColumnsTooWide) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "32", "--s", "3", "--b", "16"}), {"32"});
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "30", "--s", "4", "--b", "11"}), {"33"});
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "32", "--s", "2", "--b", "-2"}), {"-2"});
  expect_rejected(kInvalidInput, base({"--n", "100", "--B", "32", "--s", "0"}), {"--s 0"});
}

TEST(CliBadInput, UnknownAlgoAndPrecision) {
  expect_rejected(kInvalidInput, {"run", "--algo", "ldlt", "--n", "10"}, {"'ldlt'"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--precision", "q"}), {"'q'"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--precision", "double"}), {"'double'"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--policy", "lifo"}), {"'lifo'"});
}

TEST(CliBadInput, NonPositiveThreadsWindowIb) {
  expect_rejected(kInvalidInput, base({"--n", "10", "--threads", "0"}), {"--threads 0"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--threads", "-2"}), {"-2"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--window", "0"}), {"--window 0"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--ib", "0"}, "qr"), {"--ib 0"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--gpus", "1", "--gpu-kernel-depth", "-1"}),
                  {"--gpu-kernel-depth -1", "must be >= 0"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--gpu-trsm-inverse", "-1"}), {"--gpu-trsm-inverse -1"});
  expect_rejected(kInvalidInput, base({"--n", "10", "--gpu-streams", "0"}), {"--gpu-streams 0"});
  // A simulated run builds its GPUs before it resolves the configuration: 0 streams once reached the simulated
  // GPU's own check, an internal error (exit 5; tests/cli_fuzz.py found it).
  const std::string keeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
  expect_rejected(
      kInvalidInput,
      base({"--n", "64", "--B", "16", "--gpus", "1", "--gpu-streams", "0", "--backend", "sim", "--machine", keeneland}),
      {"--gpu-streams 0", "must be >= 1"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "32", "--gpus", "1", "--gpu-streams", "2"}),
                  {"--gpu-streams 2", "--device cuda"});
  expect_rejected(kInvalidInput,
                  base({"--n", "64", "--B", "32", "--gpus", "1", "--device", "cuda", "--gpu-streams", "2",
                        "--gpu-kernel-depth", "1"}),
                  {"--gpu-streams 2", "--gpu-kernel-depth 1"});
  // Only CUDA's TRSM has it: an emulated GPU would ignore it silently.
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "32", "--gpus", "1", "--gpu-trsm-inverse", "16"}),
                  {"--gpu-trsm-inverse 16", "--device cuda"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "32", "--gpus", "1", "--gpu-qr-panel", "cholqr"}, "qr"),
                  {"--gpu-qr-panel cholqr", "--device cuda"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-qr-panel", "givens"}, "qr"),
                  {"--gpu-qr-panel 'givens'", "householder, cholqr"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-qr-group", "-5"}, "qr"), {"--gpu-qr-group -5", ">= 0"});
  // A value equal to a field's internal "not given" marker is refused as any other out of range (it ran with the
  // default).
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-qr-group", "-1073741824"}, "qr"),
                  {"--gpu-qr-group -1073741824", ">= 0"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--v", "-1073741824"}, "qr"), {"--v -1073741824", ">= 1"});
  // One node row: the virtual tile height would change nothing.
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "16", "--v", "2"}, "qr"), {"--v 2", "--grid 1x1"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "32", "--gpus", "1", "--gpu-qr-group", "512"}, "qr"),
                  {"--gpu-qr-group 512", "--device cuda"});
  // QR's kernel options in another factorization would change nothing (checked before the GPU is looked for).
  for (const char* opt : {"--gpu-qr-group", "--gpu-qr-panel"})
    expect_rejected(kInvalidInput,
                    base({"--n", "64", "--B", "32", "--gpus", "1", "--device", "cuda", opt,
                          std::string_view(opt) == "--gpu-qr-group" ? "512" : "cholqr"}),
                    {opt, "--algo cholesky"});
}

// CLI11 reads a whole number beyond int64 as 2^63 - 1: the run then went on with a value the user never gave
// (and was refused as out of memory for a 9223372036854775807 x 9223372036854775807 matrix).
TEST(CliBadInput, IntegersBeyondInt64NameTheValueGiven) {
  expect_rejected(kInvalidInput, base({"--n", "99999999999999999999"}), {"--n 99999999999999999999", "2^63 - 1"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--ib", "-99999999999999999999"}, "qr"),
                  {"--ib -99999999999999999999"});
  expect_rejected(kInvalidInput, {"tune", "--algo", "cholesky", "--n", "99999999999999999999"},
                  {"--n 99999999999999999999"});
}

TEST(CliBadInput, MatrixTooLargeForMemoryNamesTheSize) {
  // 3e9 x 3e9 doubles can not be allocated; the address-space cap keeps a
  // machine that overcommits from trying.
  constexpr rlim_t k4GiB = rlim_t{4} << 30;
  expect_rejected(kOutOfMemory, base({"--n", "3000000000", "--B", "1000000"}), {"3000000000"}, k4GiB);
  // A window too large names the window, not the matrix; one whose size overflows is refused outright.
  expect_rejected(kOutOfMemory, base({"--n", "100", "--window", "100000000000"}), {"task window", "--window"}, k4GiB);
  expect_rejected(kInvalidInput, base({"--n", "100", "--window", "100000000000000000"}), {"more tasks than memory"});
}

TEST(CliBadInput, QrNeedsMAtLeastN) {
  expect_rejected(kInvalidInput, base({"--n", "10", "--m", "5"}, "qr"), {"m = 5", "n = 10"});
}

TEST(CliBadInput, UnreadableInputAndUnwritableJson) {
  TempDir dir;
  const std::string missing = dir.path() + "/no-such-file.mtx";
  expect_rejected(kInvalidInput, base({"--n", "10", "--input", missing}), {missing});
  // A directory is not a readable Matrix Market file either.
  expect_rejected(kInvalidInput, base({"--n", "10", "--input", dir.path()}), {dir.path()});
  const std::string bad_json = dir.path() + "/no-such-dir/result.json";
  expect_rejected(kInvalidInput, base({"--n", "10", "--json", bad_json}), {bad_json});
}

TEST(CliBadInput, MalformedMatrixMarket) {
  TempDir dir;
  const auto banner = dir.write("banner.mtx", "%%MatrixMarket matrix array real\n2 2\n1\n2\n3\n4\n");
  expect_rejected(kInvalidInput, base({"--n", "2", "--input", banner}), {banner, "line 1"});
  const auto value = dir.write("value.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n% c\n0.x5\n3\n4\n");
  expect_rejected(kInvalidInput, base({"--n", "2", "--input", value}), {value, "line 5", "'0.x5'"});
  const auto few = dir.write("few.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 1\n3 3 1\n");
  expect_rejected(kInvalidInput, base({"--n", "3", "--input", few}), {few, "3 of 4"});
  const auto range = dir.write("range.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 2 1\n");
  expect_rejected(kInvalidInput, base({"--n", "3", "--input", range}), {range, "line 4", "(4, 2)"});
  // A size no node's dense copy can hold (10^10 entries, 80 GB) is refused naming the file before anything is
  // allocated; the address-space cap makes an attempt exit 4 instead of swapping.
  const auto big = dir.write("big.mtx", "%%MatrixMarket matrix coordinate real general\n100000 100000 0\n");
  for (const char* algo : {"cholesky", "lu"})
    expect_rejected(kInvalidInput, base({"--input", big}, algo), {big, "100000 x 100000", "too large"},
                    rlim_t{4} << 30);
}

// A symmetric n×n Matrix Market file (coordinate, lower triangle): diagonal
// `diag(j)` and -1 on the first subdiagonal.
std::string tridiagonal(int n, const std::function<double(int)>& diag) {
  std::ostringstream s;
  s << "%%MatrixMarket matrix coordinate real symmetric\n% tridiagonal test matrix\n"
    << n << " " << n << " " << (2 * n - 1) << "\n";
  for (int j = 1; j <= n; ++j) {
    s << j << " " << j << " " << diag(j) << "\n";
    if (j < n) s << j + 1 << " " << j << " -1\n";
  }
  return s.str();
}

TEST(CliBadInput, NotPositiveDefiniteNamesTheColumn) {
  TempDir dir;
  // Column 27 has a negative diagonal: the leading minors of order 1..26 are
  // positive (diagonally dominant), order 27 is not.
  const auto f = dir.write("nonspd.mtx", tridiagonal(40, [](int j) { return j == 27 ? -3.0 : 4.0; }));
  expect_rejected(kNotPositiveDefinite,
                  base({"--n", "40", "--input", f, "--B", "16", "--s", "2", "--b", "4", "--threads", "2"}),
                  {"column 27"});
  expect_rejected(kNotPositiveDefinite, base({"--n", "40", "--input", f, "--B", "8", "--threads", "3"}), {"column 27"});
  // The failing pivot on an emulated GPU (s = 1: every column lives on a GPU).
  expect_rejected(kNotPositiveDefinite, base({"--n", "40", "--input", f, "--B", "8", "--gpus", "2", "--threads", "1"}),
                  {"column 27"});
  // A generated-size mismatch does not matter: the file gives the size.
  const auto g = dir.write("nonspd1.mtx", tridiagonal(5, [](int j) { return j == 1 ? 0.0 : 4.0; }));
  expect_rejected(kNotPositiveDefinite, base({"--n", "5", "--input", g}), {"column 1"});
}

// A matrix that is not positive definite whose elimination overflows: L(3,1)
// = 1e200 / 1e-150 is infinite and L(3,3) = sqrt(1 - inf^2) NaN, a pivot
// OpenBLAS's POTRF lets through with info 0 (it tests only ajj <= 0). Every
// path names column 3 (base/numerics.hpp) instead of a NaN factor and
// success; in single precision the same at 1e-30 and 1e30.
TEST(CliBadInput, APivotThatOverflowsToNanIsNotPositiveDefinite) {
  TempDir dir;
  const auto file = [&](const char* name, const char* tiny, const char* huge) {
    return dir.write(name, std::string("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 ") + tiny +
                               "\n2 2 1\n3 3 1\n3 1 " + huge + "\n");
  };
  const auto d = file("nan_d.mtx", "1e-300", "1e200"), s = file("nan_s.mtx", "1e-30", "1e30");
  const std::string keeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
  std::vector<std::vector<std::string>> hows = {{"--B", "1"},
                                                {"--B", "2"},
                                                {"--impl", "lapack"},
                                                {"--B", "2", "--s", "2", "--b", "1", "--gpus", "1", "--threads", "1"}};
  if (TESSERA_HAVE_SIMGRID)  // built without, --backend sim exits 2 (tessera_SimGrid_not_built)
    hows.push_back(
        {"--B", "1", "--backend", "sim", "--machine", keeneland, "--grid", "1x2", "--sim-data", "--threads", "1"});
  for (const std::vector<std::string>& how : hows) {
    std::vector<std::string> args = base({"--input", d});
    args.insert(args.end(), how.begin(), how.end());
    expect_rejected(kNotPositiveDefinite, args, {"column 3"});
  }
  expect_rejected(kNotPositiveDefinite, base({"--input", s, "--precision", "s"}), {"column 3"});
  expect_rejected(kNotPositiveDefinite, base({"--input", s, "--precision", "s", "--impl", "lapack"}), {"column 3"});
}

// A value the run's precision cannot hold is refused naming the entry: in
// single precision 1e300 became an infinity (NaN factors) and 1e-50 zero (a
// pivot that is not there); in double, strtod's underflow 1e-400 became 0.
TEST(CliBadInput, AnInputValueOutsideThePrecisionsRange) {
  TempDir dir;
  const auto diag = [&](const char* name, const char* third) {
    return dir.write(name, std::string("%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n1 1 1\n2 2 1\n3 3 ") +
                               third + "\n4 4 1\n");
  };
  const auto over = diag("over.mtx", "1e300"), under = diag("under.mtx", "1e-50"), gone = diag("gone.mtx", "1e-400");
  for (const std::string& impl : {"tile", "lapack"}) {
    expect_rejected(kInvalidInput, base({"--input", over, "--precision", "s", "--impl", impl}),
                    {"A(3,3) = 1e+300", "single precision"});
    expect_rejected(kInvalidInput, base({"--input", under, "--precision", "s", "--impl", impl}),
                    {"A(3,3) = 1e-50", "single precision"});
  }
  expect_success(run_tessera(base({"--input", over, "--check"})));
  expect_success(run_tessera(base({"--input", under, "--check"})));
  expect_rejected(kInvalidInput, base({"--input", gone}), {"line 5", "'1e-400'", "read as 0"});
}

TEST(CliBadInput, SizeOptionsThatContradictTheInputFile) {
  TempDir dir;
  const auto f = dir.write("small.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n4\n1\n4\n");
  expect_rejected(kInvalidInput, base({"--n", "13", "--input", f}), {f, "13"});
}

TEST(CliBadInput, NonSymmetricCholeskyInput) {
  TempDir dir;
  const auto f = dir.write("nonsym.mtx",
                           "%%MatrixMarket matrix array real general\n3 3\n"
                           "4\n0.5\n0\n"
                           "0.25\n4\n0\n"
                           "0\n0\n4\n");
  expect_rejected(kInvalidInput, base({"--n", "3", "--input", f}), {f, "A(2,1)", "0.5", "A(1,2)", "0.25"});
}

// --matrix: an unknown kind, a kind that does not suit the factorization, and
// a generated kind beside --input or in a run without data: exit 2 naming --matrix.
TEST(CliBadInput, MatrixKindThatDoesNotSuitTheRun) {
  expect_rejected(kInvalidInput, base({"--n", "60", "--matrix", "hilbert"}),
                  {"--matrix 'hilbert'", "spd, graded, illcond, rankdef, general"});
  expect_rejected(kInvalidInput, base({"--n", "60", "--matrix", "general"}), {"--matrix general", "not symmetric"});
  expect_rejected(kInvalidInput, base({"--n", "60", "--matrix", "rankdef"}), {"--matrix rankdef", "singular"});
  expect_rejected(kInvalidInput, base({"--n", "60", "--m", "70", "--matrix", "spd"}, "qr"), {"--matrix spd", "--m 70"});
  TempDir dir;
  const auto f = dir.write("two.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n4\n1\n4\n");
  expect_rejected(kInvalidInput, base({"--input", f, "--matrix", "graded"}), {"--matrix graded", f});
}

// ---------------------------------------------------------------------------
// Good runs
// ---------------------------------------------------------------------------

TEST(CliGoodRun, JsonResultHasTheDocumentedFields) {
  TempDir dir;
  const std::string json_path = dir.path() + "/result.json";
  const Outcome o = run_tessera({"run", "--algo", "cholesky", "--n", "150", "--B", "32", "--s", "2", "--b", "8",
                                 "--threads", "2", "--check", "--json", json_path});
  expect_success(o);
  EXPECT_THAT(o.out, HasSubstr("ok"));
  const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  for (const char* key :
       {"algo", "m", "n", "B", "s", "b", "precision", "threads", "time_s", "gflops", "residual", "check_passed"})
    EXPECT_TRUE(j.contains(key)) << "missing " << key << " in " << j.dump();
  EXPECT_EQ(j.at("algo"), "cholesky");
  EXPECT_EQ(j.at("m"), 150);
  EXPECT_EQ(j.at("n"), 150);
  EXPECT_EQ(j.at("B"), 32);
  EXPECT_EQ(j.at("s"), 2);
  EXPECT_EQ(j.at("b"), 8);
  EXPECT_EQ(j.at("precision"), "d");
  EXPECT_EQ(j.at("threads"), 2);
  ASSERT_TRUE(j.at("time_s").is_number());
  EXPECT_GT(j.at("time_s").get<double>(), 0.0);
  ASSERT_TRUE(j.at("gflops").is_number());
  EXPECT_GT(j.at("gflops").get<double>(), 0.0);
  EXPECT_TRUE(std::isfinite(j.at("gflops").get<double>()));
  ASSERT_TRUE(j.at("residual").is_number());
  EXPECT_GE(j.at("residual").get<double>(), 0.0);
  EXPECT_LT(j.at("residual").get<double>(), 30.0);
  EXPECT_EQ(j.at("check_passed"), true);
}

TEST(CliGoodRun, QrJsonInSinglePrecision) {
  TempDir dir;
  const std::string json_path = dir.path() + "/qr.json";
  const Outcome o = run_tessera({"run", "--algo", "qr", "--m", "130", "--n", "70", "--B", "32", "--precision", "s",
                                 "--threads", "3", "--check", "--json", json_path});
  expect_success(o);
  const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  EXPECT_EQ(j.at("algo"), "qr");
  EXPECT_EQ(j.at("m"), 130);
  EXPECT_EQ(j.at("n"), 70);
  EXPECT_EQ(j.at("precision"), "s");
  EXPECT_EQ(j.at("check_passed"), true);
  ASSERT_TRUE(j.contains("orthogonality"));
  EXPECT_LT(j.at("orthogonality").get<double>(), 30.0);
}

// Every kind passes the check where it suits; the JSON names the matrix.
TEST(CliGoodRun, GeneratedMatrixKindsPassTheCheck) {
  TempDir dir;
  const std::string json_path = dir.path() + "/r.json";
  for (const auto& [algo, kind] : std::vector<std::pair<std::string, std::string>>{{"cholesky", "spd"},
                                                                                   {"cholesky", "graded"},
                                                                                   {"cholesky", "illcond"},
                                                                                   {"qr", "general"},
                                                                                   {"qr", "graded"},
                                                                                   {"qr", "illcond"},
                                                                                   {"qr", "rankdef"},
                                                                                   {"qr", "spd"}}) {
    SCOPED_TRACE(algo + " " + kind);
    const Outcome o = run_tessera(
        base({"--n", "150", "--B", "32", "--threads", "2", "--matrix", kind, "--check", "--json", json_path}, algo));
    expect_success(o);
    EXPECT_THAT(o.out, HasSubstr(" ok"));
    EXPECT_EQ(nlohmann::json::parse(read_text(json_path)).at("matrix"), kind);
  }
  // The defaults, and a file's matrix (null).
  expect_success(run_tessera(base({"--n", "50", "--json", json_path}, "qr")));
  EXPECT_EQ(nlohmann::json::parse(read_text(json_path)).at("matrix"), "general");
  const auto f = dir.write("two.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n4\n1\n4\n");
  expect_success(run_tessera(base({"--input", f, "--json", json_path})));
  EXPECT_TRUE(nlohmann::json::parse(read_text(json_path)).at("matrix").is_null());
}

TEST(CliGoodRun, UncheckedRunHasNullResidual) {
  TempDir dir;
  const std::string json_path = dir.path() + "/r.json";
  const Outcome o = run_tessera({"run", "--algo", "cholesky", "--n", "64", "--json", json_path});
  expect_success(o);
  const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  EXPECT_TRUE(j.at("residual").is_null());
  EXPECT_TRUE(j.at("check_passed").is_null());
}

// The JSON names the OpenBLAS kernel set that ran, and OPENBLAS_CORETYPE
// (which the child inherits) changes it.
TEST(CliGoodRun, JsonRecordsBlasKernelSet) {
  TempDir dir;
  const std::string json_path = dir.path() + "/r.json";
  const std::vector<std::string> args = {"run", "--algo", "qr", "--n", "64", "--json", json_path};
  expect_success(run_tessera(args));
  const std::string chosen = nlohmann::json::parse(read_text(json_path)).at("blas_core").get<std::string>();
  EXPECT_FALSE(chosen.empty());
#if defined(__x86_64__)
  // Every x86-64 CPU this project builds for has AVX2, so the Haswell set runs anywhere.
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  const Outcome forced = run_tessera(args);
  ::unsetenv("OPENBLAS_CORETYPE");
  expect_success(forced);
  EXPECT_EQ(nlohmann::json::parse(read_text(json_path)).at("blas_core"), "Haswell");
#endif
}

// A small SPD matrix, 12×12, written in array and in coordinate format.
std::string spd_array(int n) {
  std::ostringstream s;
  s << "%%MatrixMarket matrix array real symmetric\n% lower triangle, column by column\n" << n << " " << n << "\n";
  for (int c = 0; c < n; ++c)
    for (int r = c; r < n; ++r) s << (r == c ? 2.0 * n : 1.0 / (1 + r + c)) << "\n";
  return s.str();
}

std::string spd_coordinate(int n) {
  std::ostringstream s;
  s << "%%MatrixMarket matrix coordinate real general\n" << n << " " << n << " " << n * n << "\n";
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < n; ++r) s << r + 1 << " " << c + 1 << " " << (r == c ? 2.0 * n : 1.0 / (1 + r + c)) << "\n";
  return s.str();
}

TEST(CliGoodRun, MatrixMarketInputsPassTheCheck) {
  TempDir dir;
  const auto arr = dir.write("spd_array.mtx", spd_array(12));
  const auto coo = dir.write("spd_coordinate.mtx", spd_coordinate(12));
  for (const auto& f : {arr, coo})
    for (const std::vector<std::string>& tiles :
         {std::vector<std::string>{"--B", "5", "--s", "2", "--b", "2"}, std::vector<std::string>{}}) {
      SCOPED_TRACE(f + join(tiles));
      const std::string json_path = f + ".json";
      // The size comes from the file; --n is optional with --input.
      std::vector<std::string> args = {"run",       "--algo", "cholesky", "--input", f,
                                       "--threads", "2",      "--check",  "--json",  json_path};
      args.insert(args.end(), tiles.begin(), tiles.end());
      const Outcome o = run_tessera(args);
      expect_success(o);
      EXPECT_THAT(o.out, HasSubstr("ok"));
      const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
      EXPECT_EQ(j.at("n"), 12);
      EXPECT_EQ(j.at("m"), 12);
      EXPECT_EQ(j.at("input"), f);
      EXPECT_EQ(j.at("check_passed"), true);
    }
  // The same files through QR.
  for (const auto& f : {arr, coo}) {
    const Outcome o =
        run_tessera({"run", "--algo", "qr", "--n", "12", "--input", f, "--B", "4", "--s", "2", "--b", "1", "--check"});
    expect_success(o);
    EXPECT_THAT(o.out, HasSubstr("ok"));
  }
}

TEST(CliGoodRun, LapackPeerPassesTheCheck) {
  for (const std::string algo : {"cholesky", "qr"}) {
    const Outcome o = run_tessera({"run", "--algo", algo, "--n", "90", "--m", algo == "qr" ? "120" : "90", "--impl",
                                   "lapack", "--threads", "2", "--check"});
    expect_success(o);
    EXPECT_THAT(o.out, HasSubstr("ok"));
  }
  expect_rejected(kInvalidInput, base({"--n", "10", "--impl", "scalapack"}), {"'scalapack'"});
  TempDir dir;
  const auto f = dir.write("nonspd.mtx", tridiagonal(12, [](int j) { return j == 9 ? -3.0 : 4.0; }));
  expect_rejected(kNotPositiveDefinite, base({"--input", f, "--impl", "lapack"}), {"column 9"});
}

// --progress-file: created once the factorization runs, the trace it wraps
// still written whole; a file that exists already, or a directory that does
// not, is refused before the run.
TEST(CliGoodRun, ProgressFileMarksTheFactorization) {
  TempDir dir;
  const std::string marker = dir.path() + "/factoring", trace = dir.path() + "/trace.json";
  expect_success(
      run_tessera(base({"--n", "200", "--B", "40", "--threads", "2", "--progress-file", marker, "--trace", trace})));
  EXPECT_TRUE(std::filesystem::exists(marker));
  const nlohmann::json t = nlohmann::json::parse(read_text(trace));
  EXPECT_EQ(std::count_if(t.at("traceEvents").begin(), t.at("traceEvents").end(),
                          [](const nlohmann::json& e) { return e.value("cat", "") == "task"; }),
            35);  // 5 x 5 tiles: p(p+1)(p+2)/6 kernels
  expect_rejected(kInvalidInput, base({"--n", "200", "--progress-file", marker}),
                  {"--progress-file " + marker, "exists"});
  const std::string nowhere = dir.path() + "/no-such-dir/factoring";
  expect_rejected(kInvalidInput, base({"--n", "200", "--progress-file", nowhere}), {nowhere, "not writable"});
}

TEST(CliGoodRun, UncheckedRunSucceedsAndSaysSo) {
  const Outcome o = run_tessera({"run", "--algo", "qr", "--n", "40", "--B", "8"});
  expect_success(o);
  EXPECT_THAT(o.out, HasSubstr("unchecked"));
}

}  // namespace

namespace {

// `tessera model comm`: the rows of 000 App. A.2 / Table 1 for the case
// hand-computed in test_comm_model.cpp (n = 8, B = 2, s = 1, grid 2x2).
TEST(CliModelComm, CholeskyTableAndJson) {
  TempDir dir;
  const std::string json_path = dir.path() + "/comm.json";
  const Outcome o = run_tessera({"model", "comm", "--algo", "cholesky", "--n", "8", "--B", "2", "--s", "1", "--grid",
                                 "2x2", "--json", json_path});
  ASSERT_TRUE(o.exited) << o;
  ASSERT_EQ(o.status, 0) << o;
  EXPECT_EQ(o.err, "") << o;
  // msg sum 14, closed 12; words sum 48, closed 40; PDPOTRF 12 msgs, 72 words; bounds 2 and 32.
  for (const char* row : {"msg   (summation, A.2.1)", "msg   (closed form, A.2.1)", "words (summation, A.2.1)",
                          "words (closed form, A.2.1)", "PDPOTRF msg (Table 1)", "PDPOTRF words (Table 1)",
                          "lower bound msg (Omega)", "lower bound words (Omega)"})
    EXPECT_THAT(o.out, HasSubstr(row)) << o;
  for (const char* value : {" 14.000\n", " 12.000\n", " 48.000\n", " 40.000\n", " 72.000\n", " 2.000\n", " 32.000\n"})
    EXPECT_THAT(o.out, HasSubstr(value)) << o;
  const nlohmann::json j = nlohmann::json::parse(read_text(json_path));
  EXPECT_EQ(j.at("algo"), "cholesky");
  EXPECT_EQ(j.at("grid"), nlohmann::json::array({2, 2}));
  EXPECT_EQ(j.at("nb"), 2);
  EXPECT_TRUE(j.at("v").is_null());
  EXPECT_DOUBLE_EQ(j.at("tessera").at("messages_summation").get<double>(), 14.0);
  EXPECT_DOUBLE_EQ(j.at("tessera").at("messages_closed_form").get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(j.at("tessera").at("words_summation").get<double>(), 48.0);
  EXPECT_DOUBLE_EQ(j.at("tessera").at("words_closed_form").get<double>(), 40.0);
  EXPECT_EQ(j.at("scalapack").at("routine"), "PDPOTRF");
  EXPECT_DOUBLE_EQ(j.at("scalapack").at("words").get<double>(), 72.0);
  EXPECT_DOUBLE_EQ(j.at("lower_bound").at("messages").get<double>(), 2.0);
}

TEST(CliModelComm, QrRowsWithDefaultVirtualTiles) {
  // The default v is tessera run's for the shape: max(1, p/(8 Pr)) = 1 for 4 tile rows on 2 node rows.
  const Outcome d = run_tessera({"model", "comm", "--algo", "qr", "--n", "8", "--B", "2", "--s", "1", "--grid", "2x2"});
  ASSERT_TRUE(d.exited) << d;
  ASSERT_EQ(d.status, 0) << d;
  EXPECT_THAT(d.out, HasSubstr("v=1 nb=2"));
  // v = n/(B Pr) = 2, the paper's: msg sum 8.75, words sum 35; PDGEQRF with --nb 4: 34 msgs.
  const Outcome o = run_tessera(
      {"model", "comm", "--algo", "qr", "--n", "8", "--B", "2", "--s", "1", "--grid", "2x2", "--v", "2", "--nb", "4"});
  ASSERT_TRUE(o.exited) << o;
  ASSERT_EQ(o.status, 0) << o;
  EXPECT_THAT(o.out, HasSubstr("v=2 nb=4"));
  for (const char* value : {" 8.750\n", " 35.000\n", " 34.000\n"}) EXPECT_THAT(o.out, HasSubstr(value)) << o;
  EXPECT_THAT(o.out, HasSubstr("PDGEQRF msg (Table 1)"));
  // The binary tree's count (models/comm_model.hpp): 2x1, v = 1, 32 tile rows: 527 messages.
  const Outcome t = run_tessera({"model", "comm", "--algo", "qr", "--n", "8192", "--B", "256", "--s", "1", "--grid",
                                 "2x1", "--v", "1", "--qr-tree", "binary"});
  ASSERT_TRUE(t.exited) << t;
  ASSERT_EQ(t.status, 0) << t;
  EXPECT_THAT(t.out, HasSubstr("tree=binary ib=32"));
  EXPECT_THAT(t.out, HasSubstr("msg   (summation, binary tree)                  527.000\n")) << t;
}

// A binary tree's domains are part of the variant (summary line and JSON), so a sweep over --qr-domain keeps its
// points apart.
TEST(CliQrTree, TheVariantNamesTheDomains) {
  const Outcome o = run_tessera({"run", "--algo", "qr", "--n", "400", "--m", "1200", "--B", "100", "--qr-tree",
                                 "binary", "--qr-domain", "3", "--threads", "1", "--check"});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_THAT(o.out, HasSubstr(" tree=binary domain=3 ")) << o;
}

TEST(CliModelComm, BadInputExitsTwoNamingTheOption) {
  const std::vector<std::string> cmd = {"model", "comm", "--algo", "cholesky", "--n", "8", "--B", "2", "--s", "1"};
  const auto with = [&cmd](std::vector<std::string> extra) {
    std::vector<std::string> a = cmd;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, with({"--grid", "0x2"}), {"--grid 0x2", "Pr must be >= 1"});
  expect_rejected(kInvalidInput, with({"--grid", "axb"}), {"--grid axb"});
  expect_rejected(kInvalidInput, with({"--grid", "2x2", "--v", "3"}), {"--v 3"});
  expect_rejected(kInvalidInput, with({"--grid", "2x2", "--qr-tree", "binary"}), {"--qr-tree binary", "qr only"});
  expect_rejected(
      kInvalidInput,
      {"model", "comm", "--algo", "qr", "--n", "8", "--B", "2", "--s", "1", "--grid", "2x2", "--qr-tree", "ternary"},
      {"--qr-tree 'ternary'"});
  expect_rejected(kInvalidInput, {"model", "comm", "--algo", "lu", "--n", "8", "--B", "2", "--s", "1", "--grid", "2x2"},
                  {"'lu'"});
  expect_rejected(kInvalidInput,
                  {"model", "comm", "--algo", "qr", "--n", "8", "--B", "16", "--s", "1", "--grid", "2x2"},
                  {"--B 16", "n = 8"});
}

}  // namespace
