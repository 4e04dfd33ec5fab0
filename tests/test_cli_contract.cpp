// The exit-status contract of `tessera run` (README "Command line"): every
// documented status is produced here by the real binary, and each test pins
// the exact status, that stdout carries no summary line (or, for a failed
// --check, the summary line that says FAILED) and that stderr is the one
// documented message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "cli_expect.hpp"
#include "platform/device.hpp"

namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;
using tessera::test::Outcome;
using tessera::test::TempDir;
using namespace tessera::test::cli;

// Status 0: one summary line that ends in "ok", nothing on stderr.
TEST(CliExitStatus, SuccessIsZero) {
  const Outcome o = run_tessera(base({"--n", "64", "--B", "16", "--check"}));
  expect_success(o);
  EXPECT_THAT(o.out, EndsWith(" ok\n")) << o;
}

// Status 1: a --check that fails. The run still reports its result (the
// summary line, ending in FAILED) and says why on stderr in one line.
// --test-fault corrupt-factor perturbs the factor between the factorization
// and the check, on every path that has one.
TEST(CliExitStatus, FailedCheckIsOne) {
  const std::vector<std::vector<std::string>> runs = {
      base({"--n", "100", "--B", "32", "--threads", "2"}),
      base({"--n", "100", "--m", "130", "--B", "32", "--threads", "2"}, "qr"),
      base({"--n", "100", "--impl", "lapack"}),
      base({"--n", "100", "--impl", "lapack"}, "qr"),
      base({"--n", "120", "--B", "40", "--s", "2", "--b", "10", "--gpus", "1", "--threads", "1"}),
      base({"--n", "100", "--B", "32", "--precision", "s"}, "qr"),
  };
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--check", "--test-fault", "corrupt-factor"});
    SCOPED_TRACE("tessera" + join(args));
    const Outcome o = run_tessera(args);
    ASSERT_TRUE(o.exited) << o;
    EXPECT_EQ(o.status, 1) << o;
    EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << "expected the summary line: " << o;
    EXPECT_THAT(o.out, EndsWith(" FAILED\n")) << o;
    EXPECT_THAT(o.err, MatchesRegex("tessera: error: --check failed: residual [0-9.e+]+(, orthogonality [0-9.e+-]+)? "
                                    "\\(a run passes below 30\\)\n"))
        << o;
  }
  // Without the fault the same run passes: the fault, not the run, failed it.
  expect_success(run_tessera(base({"--n", "100", "--B", "32", "--threads", "2", "--check"})));
}

// A corrupted factor with nothing to see it, and an unknown fault: exit 2.
TEST(CliExitStatus, TestFaultNeedsCheckAndAKnownKind) {
  expect_rejected(kInvalidInput, base({"--n", "50", "--test-fault", "corrupt-factor"}),
                  {"--test-fault corrupt-factor", "--check"});
  expect_rejected(kInvalidInput, base({"--n", "50", "--check", "--test-fault", "bitflip"}),
                  {"--test-fault 'bitflip'", "corrupt-factor, internal-error"});
}

// Status 2: invalid input names the option and its value (many more cases in test_cli.cpp).
TEST(CliExitStatus, InvalidInputIsTwo) {
  expect_rejected(kInvalidInput, base({"--n", "100", "--window", "0"}), {"--window 0"});
}

// Status 3: a Cholesky input that is not positive definite, naming the column.
TEST(CliExitStatus, NotPositiveDefiniteIsThree) {
  TempDir dir;
  const auto f = dir.write("indefinite.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n4\n1\n0\n-2\n1\n4\n");
  expect_rejected(kNotPositiveDefinite, base({"--input", f, "--B", "1"}),
                  {"not positive definite", "leading minor of order 2"});
}

// A simulated cluster with data: the input is not positive definite from
// column 250 on, so on a 1x2 grid node 1 breaks down at 250 and node 0,
// whose kernels ran on with what that left, at a later column. The first
// breakdown in column order names the cause (NodeRuntime::run), once.
TEST(CliExitStatus, OnASimulatedClusterTheFirstBreakdownInColumnOrderIsReported) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n300 300 599\n";
  for (int j = 1; j <= 300; ++j) {
    text += std::to_string(j) + " " + std::to_string(j) + (j >= 250 ? " -1\n" : " 4\n");
    if (j < 300) text += std::to_string(j + 1) + " " + std::to_string(j) + " -1\n";
  }
  const auto f = dir.write("notpd_tail.mtx", text);
  const std::string machine = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
  for (const char* grid : {"1x2", "2x2"})
    expect_rejected(
        kNotPositiveDefinite,
        base({"--input", f, "--B", "64", "--backend", "sim", "--machine", machine, "--grid", grid, "--sim-data"}),
        {"not positive definite", "(factorization failed at global column 250, 1-based)"});
}

// Status 4: out of memory, naming what did not fit (host memory:
// CliBadInput.MatrixTooLargeForMemoryNamesTheSize).
TEST(CliExitStatus, OutOfMemoryIsFour) {
  expect_rejected(kOutOfMemory, base({"--n", "600", "--B", "120", "--gpus", "1", "--gpu-memory", "200000"}),
                  {"GPU 1 (emulated): out of memory", "200000"});
}

// Status 5: an internal error, reported as such on every path.
TEST(CliExitStatus, InternalErrorIsFive) {
  for (const auto& args : {base({"--n", "64", "--B", "16", "--threads", "2", "--test-fault", "internal-error"}),
                           base({"--n", "64", "--B", "16", "--gpus", "1", "--test-fault", "internal-error"}, "qr"),
                           base({"--n", "64", "--impl", "lapack", "--test-fault", "internal-error"})})
    expect_rejected(kInternalError, args, {"--test-fault internal-error"});
}

// A malformed command line: CLI11's own status (its ExitCodes), nothing on
// stdout, and its message followed by its pointer to --help on stderr.
TEST(CliExitStatus, UsageErrorsExitWithCli11Codes) {
  struct Case {
    std::vector<std::string> args;
    int status;  // CLI::ExitCodes
    std::string message;
  };
  for (const Case& c :
       {Case{{"run", "--n", "10"}, 106, "--algo is required"},
        Case{base({"--n", "ten"}), 104, "Could not convert: --n = ten"},
        Case{base({"--n", "10", "--no-such-option"}), 109, "The following argument was not expected: --no-such-option"},
        Case{{}, 106, "A subcommand is required"}}) {
    SCOPED_TRACE("tessera" + join(c.args));
    const Outcome o = run_tessera(c.args);
    ASSERT_TRUE(o.exited) << o;
    EXPECT_EQ(o.status, c.status) << o;
    EXPECT_EQ(o.out, "") << o;
    EXPECT_EQ(o.err, c.message + "\nRun with --help for more information.\n") << o;
  }
}

// One mapping from error to status serves main() and a rank that ends a
// distributed job (MPI_Abort with that status): a backend left out of the
// build is invalid input (2) on both, as README says.
TEST(ExitStatusMapping, EveryErrorHasItsDocumentedStatus) {
  using tessera::exit_status_of;
  const auto status = [](auto e) { return exit_status_of(std::make_exception_ptr(e)); };
  EXPECT_EQ(status(tessera::InputError("--n 0")), 2);
  EXPECT_EQ(status(tessera::NotCompiled("SimGrid")), 2);
  EXPECT_EQ(status(tessera::NotPositiveDefinite(7)), 3);
  EXPECT_EQ(status(std::bad_alloc()), 4);
  EXPECT_EQ(status(tessera::DeviceOutOfMemory("GPU 1: out of memory")), 4);
  EXPECT_EQ(status(tessera::RemoteFailure(1, 3)), 3);
  EXPECT_EQ(status(tessera::RemoteFailure(2, 4)), 4);
  EXPECT_EQ(status(std::logic_error("a bug")), 5);
  EXPECT_EQ(status(42), 5);
}

}  // namespace
