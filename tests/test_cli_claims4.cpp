// README "Command line" claims that round 7's mutants (tests/mutant_sets/
// round7.py) showed no test pinned, each through the `tessera` binary as a
// user runs it: the refusals of options a run cannot honour (--nodes or
// --sim-data natively, an empty --trace, --matrix on a phantom run, the
// noise options natively, --noise-seed alone), the bounds the options table
// gives (a sigma of exactly 2, a --B-range of one size, the tuner's cap of
// 1024 candidates, a tile exactly as large as a GPU's memory, a Cholesky
// input symmetric to rounding), JSON values (cpu_s, peak_rss_bytes, the
// default matrix, --d eq1's d, QR's default v, the words of a
// single-precision run, the precision of LU's tasks), and a simulated
// cluster's outputs. (--fail's note on a link nothing crosses is
// tests/sim/test_sim_cluster.cpp's, --d eq1 with several GPUs also
// tests/experiments/test_lu_002_sim.py's, the noisy model's first-call costs
// and in-run calibration's min_calls tests/sim's, the row `tessera tune` marks
// as chosen TuneCli.RealRunsRepeatTheFastestAndKeepEachOnesBest's.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/factorization.hpp"
#include "cli_expect.hpp"
#include "cli_json.hpp"
#include "models/balance.hpp"
#include "models/lu_split.hpp"
#include "models/machine.hpp"
#include "test_helpers.hpp"

namespace tessera::test::cli {
namespace {

using tessera::test::TempDir;
using ::testing::HasSubstr;
using nlohmann::json;

// Options table: --machine, --nodes and --sim-data describe a simulated run
// ("--nodes P: simulated nodes"); a native run refuses each of them alone,
// naming the three and what to add, rather than running one native node.
TEST(CliClaims4, NativeRunsRefuseNodesAndSimData) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--nodes", "4"}), {"--nodes", "add --backend sim"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--nodes", "1"}), {"--nodes", "add --backend sim"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--sim-data"}), {"--sim-data", "add --backend sim"});
}

// "An option that would change nothing is refused rather than ignored: ...
// an empty --json/--trace/--progress-file": `--trace ''` would write no
// trace, so it exits 2 before the run and writes nothing.
TEST(CliClaims4, EmptyTraceIsRefused) {
  expect_rejected(kInvalidInput, base({"--n", "64", "--trace", ""}), {"--trace ''", "give a file"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput, sim({"--n", "256", "--grid", "1x2", "--trace", ""}), {"--trace ''", "give a file"});
}

// JSON `cpu_s`: "the process's CPU seconds during the factorization". With
// --threads 1 the kernels are single-threaded and the settle wait is outside
// it (run_local.cpp), so it lies in [0, 1.5 time_s + 0.05] (the generator
// thread and the runtime add a little; the wall time only grows on a loaded
// machine). A microsecond field read as milliseconds would put it hundreds
// of seconds off either way.
TEST(CliClaims4, CpuSecondsOfASingleThreadedRun) {
  TempDir dir;
  for (const char* algo : {"cholesky", "qr"}) {
    const json j = run_ok(dir, base({"--n", "1500", "--threads", "1"}, algo));
    const double cpu = j.at("cpu_s").get<double>(), t = j.at("time_s").get<double>();
    EXPECT_GE(cpu, 0.0) << algo;
    EXPECT_LE(cpu, 1.5 * t + 0.05) << algo << " time_s " << t;
  }
}

// The peak resident set of `tessera args...` as the kernel counts it at its
// end (ru_maxrss, KiB), or -1: a forked child runs it (run_process waits for
// `timeout`, which waits for tessera, so the child's RUSAGE_CHILDREN holds
// the largest of timeout, a copy of this small test process until its exec,
// and tessera, and nothing of this process's other children) and sends the
// value back through a pipe.
long final_peak_rss_kib(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    long kib = -1;
    try {
      const Outcome o = run_tessera(args);
      rusage u{};
      if (o.exited && o.status == 0 && getrusage(RUSAGE_CHILDREN, &u) == 0) kib = u.ru_maxrss;
    } catch (...) {
    }
    const ssize_t w = write(fds[1], &kib, sizeof kib);
    _exit(w == static_cast<ssize_t>(sizeof kib) ? 0 : 1);
  }
  close(fds[1]);
  long kib = -1;
  ssize_t got = 0;
  while ((got = read(fds[0], &kib, sizeof kib)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return got == static_cast<ssize_t>(sizeof kib) ? kib : -1;
}

// JSON `peak_rss_bytes`: the process's peak resident memory, read after the
// factorization and its check (tessera_main.cpp), in bytes: Linux's
// ru_maxrss is in KiB, so the value is 1024 x the KiB the kernel counted
// then, at most the process's final peak and, on a run whose matrix and
// check copy make it about 100 MB, within 1% of it (what the process does
// after reading it, the report, allocates far less). KiB x 1000 would read
// 2.3% low.
TEST(CliClaims4, PeakRssIsTheProcesssOwnInBytes) {
  TempDir dir;
  const std::string out = dir.path() + "/r.json";
  const long kib = final_peak_rss_kib(base({"--n", "2500", "--check", "--json", out}));
  ASSERT_GT(kib, 0) << "the child run failed or reported nothing";
  const double final_bytes = 1024.0 * static_cast<double>(kib);
  const double reported = read_json(out).at("peak_rss_bytes").get<double>();
  EXPECT_GT(final_bytes, 90e6) << "two 50 MB copies of the matrix";
  EXPECT_LE(reported, final_bytes);
  EXPECT_GE(reported, 0.99 * final_bytes) << "ru_maxrss at its end: " << kib << " KiB";
}

// `--trace FILE` on a simulated cluster writes node k's trace as FILE with
// .nodeK before the extension, k = 1..P-1; a P-node run has no node P, so an
// output named like node P's trace (t.node2.json on 1x2) is no clash and is
// written as given (only t.node1.json would be one file with a trace).
TEST(CliClaims4, AnOutputNamedLikeANodeTheRunLacksIsWritten) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string t = dir.path() + "/t.json";
  const json j = run_ok(dir, sim({"--n", "256", "--grid", "1x2", "--trace", t}), 2, nullptr, "t.node2.json");
  EXPECT_EQ(j.at("nodes"), 2);
  EXPECT_TRUE(std::filesystem::exists(t));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/t.node1.json"));
  EXPECT_EQ(read_json(t).at("traceEvents").is_array(), true);
}

// --input: "Cholesky needs it symmetric": a general file whose triangles
// differ in the 7th digit (A(1,2) = 1.0000001 against A(2,1) = 1) is refused
// naming the entries (the check allows only rounding, 1e-12 relative); one
// that differs in the 16th digit, rounding, factors.
TEST(CliClaims4, CholeskyInputMustBeSymmetricToRounding) {
  TempDir dir;
  const auto head = std::string("%%MatrixMarket matrix array real general\n2 2\n4\n1\n");
  const auto off = dir.write("off.mtx", head + "1.0000001\n4\n");
  expect_rejected(kInvalidInput, base({"--input", off}), {off, "symmetric", "A(2,1) = 1", "A(1,2) = 1"});
  const auto close = dir.write("close.mtx", head + "1.00000000001\n4\n");
  expect_rejected(kInvalidInput, base({"--input", close}), {close, "A(2,1)"});
  const auto rounding = dir.write("rounding.mtx", head + "1.000000000000001\n4\n");
  EXPECT_EQ(run_ok(dir, base({"--input", rounding, "--check"})).at("check_passed"), true);
}

// --matrix KIND "the generated matrix": a simulated run without --sim-data
// has no matrix, so --matrix there is refused (it would name a matrix that
// never existed in the JSON); with --sim-data it is generated and checked.
TEST(CliClaims4, PhantomRunsRefuseMatrix) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput, sim({"--n", "512", "--matrix", "graded"}, "qr"),
                  {"--matrix graded", "fills the matrix", "--sim-data"});
  expect_rejected(kInvalidInput, sim({"--n", "512", "--matrix", "spd"}), {"--matrix spd", "--sim-data"});
  TempDir dir;
  const json j = run_ok(dir, sim({"--n", "512", "--matrix", "graded", "--sim-data", "--check"}, "qr"), 2);
  EXPECT_EQ(j.at("matrix"), "graded");
  EXPECT_EQ(j.at("check_passed"), true);
}

// `tessera tune --B-range MIN:MAX:STEP` with 1 <= MIN <= MAX (its own
// message): MIN = MAX is a search of one size, to tune s at a fixed B: every
// candidate has that B and the curve one point.
TEST(CliClaims4, TuneRangeOfOneSize) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  TempDir dir;
  const std::string out = dir.path() + "/t.json";
  const Outcome o = run_tessera({"tune", "--algo", "cholesky", "--n", "512", "--B-range", "256:256:64", "--backend",
                                 "sim", "--machine", kKeeneland, "--quiet", "--out", out});
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_THAT(o.out, HasSubstr("tuned: --B 256 --s ")) << o;
  const json t = read_json(out);
  ASSERT_EQ(t.at("dominant_kernel").at("curve").size(), 1u) << t.dump(1);
  EXPECT_EQ(t.at("dominant_kernel").at("curve").at(0).at("B"), 256);
  ASSERT_FALSE(t.at("candidates").empty());
  for (const json& c : t.at("candidates")) EXPECT_EQ(c.at("B"), 256) << c;
  EXPECT_EQ(t.at("choice").at("B"), 256);
  expect_rejected(kInvalidInput,
                  {"tune", "--algo", "cholesky", "--n", "512", "--B-range", "256:255:64", "--backend", "sim",
                   "--machine", kKeeneland},
                  {"--B-range '256:255:64'", "1 <= MIN <= MAX"});
}

// The tuner's cap (tune.hpp kMaxTuneCandidates): --B-range's sizes times
// --max-s make at most 1024 candidates, else exit 2 naming the count before
// anything runs (64:576:1 x 3 = 513 x 3 = 1539); exactly 1024 is a tuning.
// The matrix (n = 64) keeps the accepted one cheap: sizes above n are no
// candidates, so it simulates only a few (a range of only those is refused).
TEST(CliClaims4, TuneCandidatesAreCappedAt1024) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid (the candidates are simulated)";
  const std::vector<std::string> t = {"tune",    "--algo",    "cholesky", "--n",       "64",
                                      "--quiet", "--backend", "sim",      "--machine", kKeeneland};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = t;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, with({"--B-range", "64:576:1", "--max-s", "3"}),
                  {"--B-range 64:576:1", "1539 candidates", "more than 1024"});
  expect_rejected(kInvalidInput, with({"--B-range", "1:1025:1", "--max-s", "1"}), {"1025 candidates"});
  const Outcome ok = run_tessera(with({"--B-range", "1:1024:1", "--max-s", "1"}));
  EXPECT_TRUE(ok.exited && ok.status == 0) << ok;
  EXPECT_THAT(ok.out, HasSubstr("tuned: --B ")) << ok;
}

// --d eq1: "002 eq. (1), d/N = P·g1 / (P·g1 + G·g2), applied as a constant
// d": G counts the GPUs, so each GPU added takes columns from the cores. The
// JSON's d is eq. (1) with the machine file's speeds at B (one core's g1,
// one GPU's g2) and G = --gpus.
TEST(CliClaims4, LuEq1CountsEveryGpu) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const int threads = 7, B = 512, q = 32;
  const platform::Machine machine = platform::Machine::load(kKeeneland);
  const std::uint16_t kernel = factorization("lu").dominant_kernel();
  const double g1 = models::dominant_kernel_speed(machine.core_model(threads), kernel, 'd', B);
  const double g2 = models::dominant_kernel_speed(machine.model(machine.node.gpus.model), kernel, 'd', B);
  std::vector<int> d;
  for (int gpus = 1; gpus <= 3; ++gpus) {
    const json j = run_ok(dir,
                          sim({"--n", std::to_string(q * B), "--B", std::to_string(B), "--threads",
                               std::to_string(threads), "--gpus", std::to_string(gpus), "--d", "eq1"},
                              "lu"),
                          2);
    d.push_back(j.at("d").get<int>());
    EXPECT_EQ(d.back(), models::cpu_block_columns(q, threads, g1, gpus * g2)) << gpus << " GPUs";
    EXPECT_THAT(j.at("d_source").get<std::string>(), HasSubstr("002 eq. (1)"));
  }
  EXPECT_GT(d[0], d[1]);
  EXPECT_GT(d[1], d[2]);
}

// --v's default: "max(1, ⌊p/(8·Pr)⌋) for p tile rows", p counting the
// partial last row: m = 2047 with B = 64 has p = 32 tile rows (31 full),
// so on 2x1 v = 32 / 16 = 2 (summary v=2, JSON v).
TEST(CliClaims4, QrDefaultVirtualHeightCountsThePartialRow) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  std::string out;
  const json j = run_ok(dir, sim({"--m", "2047", "--n", "512", "--B", "64", "--grid", "2x1"}, "qr"), 2, &out);
  EXPECT_EQ(j.at("tiles"), json::array({32, 8}));
  EXPECT_EQ(j.at("v"), 2);
  EXPECT_THAT(out, HasSubstr(" v=2 ")) << out;
  // One tile row fewer (m = 1984, 31 rows): v = 1.
  EXPECT_EQ(run_ok(dir, sim({"--m", "1984", "--n", "512", "--B", "64", "--grid", "2x1"}, "qr"), 2).at("v"), 1);
}

// --kernel-noise and --node-noise: "SIGMA at most 2" / "at most 2": 2
// itself runs (and the JSON records it); anything above exits 2 naming the
// option and the value.
TEST(CliClaims4, NoiseSigmaOfTwoIsAllowed) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const json j = run_ok(dir, sim({"--n", "512", "--kernel-noise", "2", "--node-noise", "2"}), 2);
  EXPECT_EQ(j.at("kernel_noise").at("sigma").get<double>(), 2.0);
  EXPECT_EQ(j.at("kernel_noise").at("node_sigma").get<double>(), 2.0);
  expect_rejected(kInvalidInput, sim({"--n", "512", "--kernel-noise", "2.0000001"}),
                  {"--kernel-noise '2.0000001'", "from 0 to 2"});
  expect_rejected(kInvalidInput, sim({"--n", "512", "--node-noise", "2.0000001"}),
                  {"--node-noise '2.0000001'", "from 0 to 2"});
}

// --kernel-noise, --node-noise, --noise-seed: "simulated run only": each
// alone on a native run exits 2 naming the three and what to add
// (--noise-seed without a noise option passes only on simulated runs).
TEST(CliClaims4, NoiseOptionsEachRefusedNatively) {
  for (const std::vector<std::string>& opt :
       {std::vector<std::string>{"--noise-seed", "3"}, {"--node-noise", "0.1"}, {"--kernel-noise", "0"}})
    expect_rejected(kInvalidInput, base({"--n", "64", opt[0], opt[1]}),
                    {"--noise-seed", "add --backend sim --machine FILE"});
}

// "A tile larger than a GPU's memory ... stop[s] with one message (exit 2)":
// larger, not as large: one 64 x 64 double tile (32768 bytes, POTF2' alone)
// runs on a GPU of exactly 32768 bytes, natively and simulated; a byte less
// is refused naming the tile.
TEST(CliClaims4, ATileAsLargeAsTheGpusMemoryFits) {
  TempDir dir;
  const std::vector<std::string> one_tile = {"--n", "64", "--B", "64", "--gpus", "1"};
  auto with = [&](std::vector<std::string> a, std::vector<std::string> extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const json n = run_ok(dir, base(with(one_tile, {"--gpu-memory", "32768", "--check"})));
  EXPECT_EQ(n.at("check_passed"), true);
  EXPECT_EQ(n.at("gpu_stats").at(0).at("peak_bytes"), 32768);
  expect_rejected(kInvalidInput, base(with(one_tile, {"--gpu-memory", "32767"})),
                  {"a tile of 32768 bytes", "32767 bytes of GPU 1"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  EXPECT_EQ(run_ok(dir, sim(with(one_tile, {"--gpu-memory", "32768", "--sim-data", "--check"})), 2).at("check_passed"),
            true);
  expect_rejected(kInvalidInput, sim(with(one_tile, {"--gpu-memory", "32767"})), {"a tile of 32768 bytes"});
}

// --matrix's default: "spd for Cholesky, general for QR and LU", in the
// JSON's `matrix` of a run that names none.
TEST(CliClaims4, DefaultMatrixPerFactorization) {
  TempDir dir;
  EXPECT_EQ(run_ok(dir, base({"--n", "50"})).at("matrix"), "spd");
  EXPECT_EQ(run_ok(dir, base({"--n", "50"}, "qr")).at("matrix"), "general");
  EXPECT_EQ(run_ok(dir, base({"--n", "50"}, "lu")).at("matrix"), "general");
  EXPECT_EQ(run_ok(dir, base({"--n", "50", "--precision", "s", "--check"})).at("matrix"), "spd");
}

// A distributed run's JSON `comm.per_node`: "messages, words and bytes sent
// and received by each node", a word being one matrix element: in single
// precision 4 bytes, on real data (--sim-data) as on a phantom run, whose
// counts are the same messages.
TEST(CliClaims4, SinglePrecisionWordsAreFourBytes) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "960", "--B", "96", "--precision", "s", "--grid", "2x1"};
  auto data_args = shape;
  data_args.insert(data_args.end(), {"--sim-data", "--check"});
  const json data = run_ok(dir, sim(data_args), 2), phantom = run_ok(dir, sim(shape), 2);
  EXPECT_EQ(data.at("check_passed"), true);
  const json &dn = data.at("comm").at("per_node"), &pn = phantom.at("comm").at("per_node");
  ASSERT_EQ(dn.size(), 2u);
  for (std::size_t k = 0; k < dn.size(); ++k) {
    for (const char* key : {"words_sent", "words_received", "bytes_sent", "messages_sent"})
      EXPECT_EQ(dn.at(k).at(key), pn.at(k).at(key)) << "node " << k << " " << key;
    EXPECT_GT(dn.at(k).at("words_sent").get<double>(), 0) << k;
    EXPECT_EQ(dn.at(k).at("bytes_sent").get<double>(), 4 * dn.at(k).at("words_sent").get<double>()) << k;
    EXPECT_EQ(dn.at(k).at("bytes_received").get<double>(), 4 * dn.at(k).at("words_received").get<double>()) << k;
  }
  EXPECT_EQ(data.at("comm").at("max_words"), phantom.at("comm").at("max_words"));
}

// --trace: "one event per task ... same schema on both backends", each
// task's args naming its precision; an LU in double traces "d" on every
// task, in single "s". And, what that precision feeds, a simulated LU takes
// the same time on real data as without (the kernel model reads the run's
// precision either way).
TEST(CliClaims4, LuTasksCarryTheRunsPrecision) {
  TempDir dir;
  for (const char* p : {"d", "s"}) {
    const std::string t = dir.path() + "/lu_" + p + ".json";
    run_ok(dir, base({"--n", "300", "--B", "64", "--precision", p, "--trace", t}, "lu"));
    int tasks = 0;
    const json trace = read_json(t);
    for (const json& e : trace.at("traceEvents"))
      if (e.value("cat", "") == "task") {
        ++tasks;
        EXPECT_EQ(e.at("args").at("precision"), p) << e;
      }
    EXPECT_GT(tasks, 100) << p;
  }
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  for (const char* p : {"d", "s"}) {
    const std::vector<std::string> lu = {"--n", "960", "--B", "96", "--precision", p};
    auto data_args = lu;
    data_args.insert(data_args.end(), {"--sim-data", "--check", "--matrix", "general"});
    const json phantom = run_ok(dir, sim(lu, "lu"), 2), data = run_ok(dir, sim(data_args, "lu"), 2);
    EXPECT_EQ(data.at("check_passed"), true) << p;
    EXPECT_EQ(data.at("time_s").get<double>(), phantom.at("time_s").get<double>()) << p;
  }
}

// experiments/README: a simulated run's results are byte-identical from run to run, `--sim-data --check` with GPUs
// included. Only what the command measures of its own process may differ (wall_s, cpu_s, peak_rss_bytes). unpin_s was
// a clock reading around an empty loop in such a run (its GPUs pin nothing): now exactly 0, as pin_s was.
TEST(CliClaims4, SimulatedRunWithDataAndGpusGivesTheSameJsonTwice) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const auto args = sim({"--n", "1152", "--B", "288", "--gpus", "1", "--sim-data", "--check"});
  json a = run_ok(dir, args, 2), b = run_ok(dir, args, 2);
  EXPECT_EQ(a.at("check_passed"), true);
  EXPECT_EQ(a.at("pin_s"), 0.0);
  EXPECT_EQ(a.at("unpin_s"), 0.0);
  for (json* j : {&a, &b})
    for (const char* wall : {"wall_s", "cpu_s", "peak_rss_bytes"}) j->erase(wall);
  EXPECT_EQ(a.dump(), b.dump());
}

}  // namespace
}  // namespace tessera::test::cli
