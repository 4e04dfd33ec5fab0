// What a command does to the files it is given (experiments/output_path.hpp):
// a refused or failed run leaves every file as it was, an output can be
// neither a directory nor another option's file, and values the command
// line would otherwise wrap or mistake for "not given" are refused, naming
// them. Then the limits that keep a hostile size from hanging a run, and a
// check that cannot be formed failing rather than passing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cli_expect.hpp"
#include "cli_json.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "test_helpers.hpp"

namespace tessera::test::cli {
namespace {

using tessera::test::TempDir;

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// An earlier result at --json or --trace survives a run that is refused
// after the outputs were checked (the old way truncated them at the start
// and removed them on failure).
TEST(CliOutputs, ARefusedRunLeavesExistingOutputsAsTheyWere) {
  TempDir dir;
  const std::string j = dir.path() + "/r.json", t = dir.path() + "/t.json";
  write(j, "{\"earlier\": 1}\n");
  write(t, "[]\n");
  expect_rejected(kInvalidInput, base({"--n", "64", "--matrix", "general", "--json", j, "--trace", t}),
                  {"--matrix general"});
  EXPECT_EQ(read_text(j), "{\"earlier\": 1}\n");
  EXPECT_EQ(read_text(t), "[]\n");
  // A run refused before the outputs are checked (a bad --B) leaves them too.
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "0", "--json", j}), {"--B 0"});
  EXPECT_EQ(read_text(j), "{\"earlier\": 1}\n");
  // One that is not there is not created by a refused run.
  const std::string fresh = dir.path() + "/fresh.json";
  expect_rejected(kInvalidInput, base({"--n", "64", "--matrix", "general", "--json", fresh}), {"--matrix general"});
  EXPECT_FALSE(std::filesystem::exists(fresh));
  // And a good run replaces the earlier result.
  expect_success(run_tessera(base({"--n", "64", "--json", j})));
  EXPECT_THAT(read_text(j), ::testing::HasSubstr("\"gflops\""));
}

// The check creates nothing: a dangling link given as --json stays a link
// with no target when the run is refused, and becomes the result's path
// through the link when it succeeds; devices are outputs like any other.
TEST(CliOutputs, LinksAndDevicesAreLeftToTheWrite) {
  TempDir dir;
  const std::string link = dir.path() + "/r.json", target = dir.path() + "/target.json";
  std::filesystem::create_symlink(target, link);
  expect_rejected(kInvalidInput, base({"--n", "64", "--matrix", "general", "--json", link}), {"--matrix general"});
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_FALSE(std::filesystem::exists(target)) << "the check created the link's target";
  expect_success(run_tessera(base({"--n", "64", "--json", link})));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_THAT(read_text(target), ::testing::HasSubstr("\"gflops\""));
  // Two outputs to /dev/null are not "one file".
  expect_success(run_tessera(base({"--n", "64", "--json", "/dev/null", "--trace", "/dev/null"})));
}

TEST(CliOutputs, ADirectoryIsNoOutputAndStays) {
  TempDir dir;
  const std::string d = dir.path() + "/out";
  std::filesystem::create_directory(d);
  expect_rejected(kInvalidInput, base({"--n", "64", "--json", d}), {"--json", d, "is a directory"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--trace", d}), {"--trace", d, "is a directory"});
  EXPECT_TRUE(std::filesystem::is_directory(d));
  expect_rejected(kInvalidInput, {"tune", "--algo", "cholesky", "--n", "512", "--out", d}, {"--out", d, "directory"});
  EXPECT_TRUE(std::filesystem::is_directory(d));
}

// An output over an input or over another output is refused before
// anything is written: the input stays as it was.
TEST(CliOutputs, AnOutputCannotBeAnInputOrAnotherOutput) {
  TempDir dir;
  const std::string mtx = dir.path() + "/a.mtx";
  write(mtx, "%%MatrixMarket matrix array real general\n2 2\n4\n1\n1\n3\n");
  const std::string before = read_text(mtx);
  expect_rejected(kInvalidInput, base({"--input", mtx, "--json", mtx}), {"--json", "--input", mtx});
  EXPECT_EQ(read_text(mtx), before);
  const std::string j = dir.path() + "/r.json";
  // Another spelling of one path is the same file.
  expect_rejected(kInvalidInput, base({"--n", "64", "--json", j, "--trace", dir.path() + "/./r.json"}),
                  {"--json", "--trace", "one file"});
  EXPECT_FALSE(std::filesystem::exists(j));
  if (TESSERA_HAVE_SIMGRID) {
    const std::string machine = dir.path() + "/m.json";
    std::filesystem::copy_file(kKeeneland, machine);
    const std::string text = read_text(machine);
    expect_rejected(kInvalidInput, base({"--n", "512", "--backend", "sim", "--machine", machine, "--trace", machine}),
                    {"--trace", "--machine", machine});
    EXPECT_EQ(read_text(machine), text);
  }
  // tune's --out is checked the same way against its machine file.
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  const std::string copy = dir.path() + "/local.json";
  std::filesystem::copy_file(local, copy);
  const std::string text = read_text(copy);
  expect_rejected(kInvalidInput,
                  {"tune", "--algo", "cholesky", "--n", "512", "--backend", "sim", "--machine", copy, "--out", copy},
                  {"--out", "--machine", copy});
  EXPECT_EQ(read_text(copy), text);
}

// Unsigned options read as text: a sign, a fraction or an overflow is
// refused, naming the option and the value (CLI11 would wrap -1 to 2^64 - 1).
TEST(CliOutputs, UnsignedAndSizeOptionsRefuseWhatWouldWrap) {
  expect_rejected(kInvalidInput, base({"--n", "64", "--seed", "-1"}), {"--seed '-1'"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--seed", "18446744073709551616"}),
                  {"--seed '18446744073709551616'"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--window", "-1"}), {"--window '-1'"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-memory", "-1"}), {"--gpu-memory '-1'"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-memory", "1.5e9"}), {"--gpu-memory '1.5e9'"});
  // The "not given" marker is no value a user can give.
  expect_rejected(kInvalidInput, base({"--n", "64", "--B", "-4611686018427387904"}), {"--B -4611686018427387904"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--m=-4611686018427387904"}, "qr"),
                  {"--m", "-4611686018427387904"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--qr-tree", "binary", "--qr-domain", "-1"}, "qr"),
                  {"--qr-domain -1"});
  // An emulated link that would sleep for hours, or is no link at all.
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-bandwidth", "1"}), {"--gpu-bandwidth"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-bandwidth", "inf"}), {"--gpu-bandwidth"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-latency", "inf"}), {"--gpu-latency inf"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-latency", "100"}), {"--gpu-latency"});
  if (TESSERA_HAVE_SIMGRID) expect_rejected(kInvalidInput, sim({"--n", "512", "--nodes", "0"}), {"--nodes 0"});
}

// A matrix far beyond the node's memory is refused at once (before the tile
// layout, whose size grows with n, is built); a tile grid that cannot be
// named is refused even where no memory is needed (a simulated run).
TEST(CliOutputs, HostileSizesAreRefusedBeforeAnythingGrowsWithThem) {
  expect_rejected(kOutOfMemory, base({"--n", "100000000000"}), {"--n 100000000000"});
  expect_rejected(kOutOfMemory, base({"--n", "9223372036854775807"}), {"--n 9223372036854775807"});
  if (TESSERA_HAVE_SIMGRID)
    expect_rejected(kInvalidInput, sim({"--n", "100000000", "--B", "64"}), {"--n 100000000", "--B 64", "2^30"});
  // 32,768 x 32,768 tiles are 2^30, which a run can name; --s 2 makes twice as many. (Under 2 GiB of address
  // space: a check that let it through would end in bad_alloc, exit 4, not build 2^31 tiles.)
  if (TESSERA_HAVE_SIMGRID)
    expect_rejected(kInvalidInput, sim({"--n", "2097152", "--B", "64", "--s", "2"}),
                    {"--s 2", "2.15e+09 tiles", "2^30"}, rlim_t{2} << 30);
}

// ceil(n/B) as (n + B - 1) / B wrapped near int64's end and the tile rows
// were cast to int: `model comm` printed negative counts (exit 0), a QR
// default v "of -1 tile rows", v = 37992256 for 10^11 tile rows, and its
// binary tree looped once per tile row (hours); a run's default v "of 0
// tile rows" (n = B = 2^63 - 1) or "of -2147483648" (n = 2^31, B = 1),
// naming no option. The model now applies the run's 2^30-tile bound, with
// its message; the run asks for the matrix's memory, or refuses the tiles.
TEST(CliOutputs, SizesNearInt64sEndAreCountedOrRefused) {
  const std::string kMax = "9223372036854775807";
  const auto comm = [](const std::string& algo, const std::string& n, const std::string& B, const std::string& grid,
                       std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"model", "comm", "--algo", algo, "--n", n, "--B", B, "--s", "1", "--grid", grid};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, comm("cholesky", kMax, "2", "2x2"), {"--n " + kMax + " with --B 2", "2^30"});
  expect_rejected(kInvalidInput, comm("qr", "100000000000", "1", "4x4"), {"--n 100000000000", "1e+22 tiles"});
  expect_rejected(kInvalidInput, comm("qr", "100000000000", "1", "4x4", {"--qr-tree", "binary"}), {"2^30"});
  expect_rejected(kInvalidInput, comm("qr", "2147483648", "1", "4x4"), {"--n 2147483648", "--B 1", "2^30"});
  const Outcome two = run_tessera(comm("qr", kMax, "4611686018427387904", "2x2"));
  ASSERT_EQ(two.status, 0) << two;
  EXPECT_THAT(two.out, HasSubstr(" v=1 ")) << two;
  EXPECT_EQ(two.out.find('-'), std::string::npos) << "a negative count: " << two;
  expect_rejected(kOutOfMemory, base({"--n", kMax, "--B", kMax}, "qr"), {"--n " + kMax});
  if (TESSERA_HAVE_SIMGRID)
    expect_rejected(kInvalidInput, sim({"--n", "2147483648", "--B", "1"}, "qr"), {"--n 2147483648", "--B 1", "2^30"});
}

// Entries near the top of double's range: QR's R overflows, and the check
// must say so (exit 1) instead of dividing by an infinite norm and passing.
TEST(CliOutputs, ACheckThatCannotBeFormedFails) {
  TempDir dir;
  const std::string mtx = dir.path() + "/big.mtx";
  std::string text = "%%MatrixMarket matrix array real general\n4 4\n";
  for (int k = 0; k < 16; ++k) text += std::to_string(0.5 + 0.5 * ((k * 7919) % 97) / 97.0) + "e308\n";
  write(mtx, text);
  for (const std::string algo : {"qr", "lu"}) {
    SCOPED_TRACE(algo);
    const Outcome o = run_tessera({"run", "--algo", algo, "--input", mtx, "--check"});
    ASSERT_TRUE(o.exited) << o;
    EXPECT_EQ(o.status, 1) << o;
    EXPECT_THAT(o.out, ::testing::HasSubstr("FAILED")) << o;
  }
}

// The other commands' values: each refused, naming it, before any work.
TEST(CliOutputs, TuneCalibrateAndModelRefuseWhatTheyCannotDo) {
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  const std::vector<std::string> tune = {"tune", "--algo", "qr", "--n", "512", "--quiet"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = tune;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // Every candidate would fail (the old way chose the plateau and exited 0).
  expect_rejected(kInvalidInput, with({"--ib", "0", "--backend", "sim", "--machine", local}), {"--ib 0"});
  // 0 is no step (it read as "the default"), and a search of thousands is refused.
  expect_rejected(kInvalidInput, with({"--B-range", "128:256:0"}), {"--B-range '128:256:0'"});
  expect_rejected(kInvalidInput, with({"--B-range", "0:256:64"}), {"--B-range '0:256:64'"});
  expect_rejected(kInvalidInput, with({"--max-s", "100000"}), {"--max-s 100000", "candidates"});
  expect_rejected(kInvalidInput, with({"--budget", "nan"}), {"--budget nan"});
  expect_rejected(kInvalidInput, with({"--gpus", "1", "--device", "emulated", "--machine", local}),
                  {"--gpus 1", local});
  expect_rejected(kInvalidInput, {"calibrate", "--for-n", "-5", "--list"}, {"--for-n -5"});
  // Operands beyond memory, refused before any is allocated, naming --sizes and the bytes (2e9 ended in
  // vector's length_error, an internal error; 3037000500 wrapped r * c in int64).
  TempDir dir;
  const std::string json = dir.path() + "/calibration.json";
  for (const std::string size : {"2000000000", "3037000500"})
    expect_rejected(
        kOutOfMemory,
        {"calibrate", "--sizes", size, "--kernels", "gsmm", "--precision", "d", "--for-n", "0", "--out", json},
        {"--sizes " + size, "GiB", "two copies of its operands", "smaller --sizes"});
  expect_rejected(kInvalidInput, {"calibrate", "--threads", "100000", "--list"}, {"--threads 100000"});
  expect_rejected(kInvalidInput, {"calibrate", "--device", "foo", "--base", local, "--list"}, {"--device 'foo'"});
  expect_rejected(kInvalidInput, {"calibrate", "--device", "cuda", "--base", local, "--gpu-cholqr-gram", "512"},
                  {"--gpu-cholqr-gram 512", "add --gpu-qr-panel cholqr"});
  expect_rejected(
      kInvalidInput,
      {"calibrate", "--device", "cuda", "--base", local, "--gpu-qr-panel", "cholqr", "--gpu-cholqr-gram", "100"},
      {"--gpu-cholqr-gram 100", "must be 0 (SYRK) or >= 256"});
  // A machine without a GPU (or its driver) is the user's input, not an internal error (it exited 5).
  if (kernels::cuda_device_count() < 1) {
    TempDir dir;
    expect_rejected(kInvalidInput,
                    {"calibrate", "--device", "cuda", "--base", local, "--sizes", "64", "--for-n", "0", "--out",
                     dir.path() + "/node.json"},
                    {TESSERA_HAVE_CUDA ? "--device cuda: no CUDA device is present" : "CUDA"});
  }
  // A tuning whose every candidate fails (a GPU of 1 MB holds no tile) fails
  // with the first failure's status, where it chose the plateau and exited 0.
  if (TESSERA_HAVE_SIMGRID) {
    TempDir dir;
    const std::string tiny = dir.path() + "/tiny-gpu.json";
    write(tiny,
          std::regex_replace(read_text(kKeeneland), std::regex(R"(("memory_bytes": \{ "value": )6e9)"), "$011e6"));
    expect_rejected(kInvalidInput,
                    {"tune", "--algo", "cholesky", "--n", "2048", "--backend", "sim", "--machine", tiny, "--gpus", "1",
                     "--threads", "2", "--quiet"},
                    {"every candidate failed", "does not fit"});
  }
  // Pr * Pc would wrap an int.
  expect_rejected(kInvalidInput,
                  {"model", "comm", "--algo", "qr", "--n", "4096", "--B", "256", "--s", "1", "--grid", "65536x65536"},
                  {"--grid 65536x65536", "4294967296"});
  expect_rejected(kInvalidInput, {"frobnicate"}, {"'frobnicate' is not a command", "run"});
}

// Files that are no machine file or tune choice: a directory, a number
// beyond double's range.
TEST(CliOutputs, MachineAndTunedFilesThatAreNoFiles) {
  TempDir dir;
  expect_rejected(kInvalidInput, base({"--n", "64", "--tuned", dir.path()}), {"--tuned", "is a directory"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  expect_rejected(kInvalidInput, base({"--n", "64", "--backend", "sim", "--machine", dir.path()}),
                  {"--machine", "is a directory"});
  const std::string huge = dir.path() + "/huge.json";
  write(huge, "{\"name\": \"x\", \"nodes\": 1e999}\n");
  expect_rejected(kInvalidInput, base({"--n", "64", "--backend", "sim", "--machine", huge}), {huge, "1e999"});
}

// A simulated task shorter than SimGrid's timing precision is rounded up to
// it silently: a good run prints nothing on stderr (SimGrid logged a line
// for each such task).
TEST(CliOutputs, TinySimulatedTasksLogNothing) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  const Outcome o = run_tessera(sim({"--n", "64", "--B", "16", "--s", "16", "--b", "auto", "--gpus", "1"}));
  ASSERT_TRUE(o.exited) << o;
  EXPECT_EQ(o.status, 0) << o;
  EXPECT_EQ(o.err, "") << o;
}

// A cluster's node k writes its trace beside node 0's (FILE.nodeK.json):
// those files are outputs too, checked before the run like --trace itself.
TEST(CliOutputs, EveryNodesTraceFileIsCheckedBeforeTheRun) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string t = dir.path() + "/t.json", t1 = dir.path() + "/t.node1.json";
  const auto cluster = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = sim({"--n", "256", "--grid", "1x2", "--trace", t});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_rejected(kInvalidInput, cluster({"--json", t1}), {"--json", "--trace (node 1)", t1});
  expect_rejected(kInvalidInput, cluster({"--progress-file", t1}), {"--progress-file", "--trace (node 1)"});
  std::filesystem::create_directory(t1);
  expect_rejected(kInvalidInput, cluster({}), {"--trace (node 1)", t1, "is a directory"});
  EXPECT_FALSE(std::filesystem::exists(t)) << "node 0's trace was written before node 1's was found unwritable";
}

// Inputs that are no regular file: a device is read forever, a directory
// fails on the first read in the library's words.
TEST(CliOutputs, InputsMustBeRegularFiles) {
  TempDir dir;
  expect_rejected(kInvalidInput, base({"--input", "/dev/zero"}), {"--input /dev/zero", "not a regular file"});
  expect_rejected(kInvalidInput, base({"--input", dir.path()}), {"--input", "is a directory"});
  expect_rejected(kInvalidInput, {"model", "kernels", "--machine", "/dev/zero"}, {"--machine /dev/zero"});
  expect_rejected(kInvalidInput, {"calibrate", "--in-run", "--list", "--base", dir.path()}, {"--base", "directory"});
  expect_rejected(kInvalidInput, {"calibrate", "--device", "emulated", "--base", "/dev/zero", "--list"},
                  {"--base /dev/zero"});
}

// A pipe is an input like a file (`--machine <(zcat m.json.gz)`): read once.
// The writer opens its end only once tessera opens the other (retrying a
// non-blocking open), so a refused pipe fails the test instead of hanging it.
TEST(CliOutputs, AnInputThroughAPipeIsRead) {
  TempDir dir;
  const std::string fifo = dir.path() + "/machine.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  std::ifstream in(local);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    int fd = -1;
    while (!done && (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, 0);  // blocking writes from here
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t w = ::write(fd, text.data() + at, text.size() - at);
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    ::close(fd);
  });
  const Outcome o = run_tessera({"model", "kernels", "--machine", fifo});
  done = true;
  writer.join();
  ASSERT_TRUE(o.exited && o.status == 0) << o;
  // What the same file gives read directly.
  const Outcome direct = run_tessera({"model", "kernels", "--machine", local});
  ASSERT_TRUE(direct.exited && direct.status == 0) << direct;
  EXPECT_THAT(o.out, ::testing::HasSubstr("measurements")) << o;
  EXPECT_EQ(o.out, direct.out);
}

// A run of several nodes opens its --input more than once (each node streams it into its own tiles): a pipe would
// give its data to the first open only, and the next would wait for ever. Refused before any open, naming --input.
TEST(CliOutputs, APipeIsNoInputForARunOfSeveralNodes) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string fifo = dir.path() + "/a.mtx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string keeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
  expect_rejected(kInvalidInput,
                  {"run", "--algo", "cholesky", "--input", fifo, "--B", "64", "--backend", "sim", "--machine",
                   keeneland, "--grid", "1x2", "--sim-data"},
                  {"--input " + fifo, "not a regular file", "save it to a file first"});
}

// An option that would change nothing is refused, not ignored: GPU options
// without GPUs, tile sizes with a dense peer, --b with no narrow columns,
// an empty output path.
TEST(CliOutputs, OptionsThatWouldChangeNothingAreRefused) {
  for (const std::vector<std::string>& gpu_only : {std::vector<std::string>{"--device", "cuda"},
                                                   {"--gpu-memory", "1000000"},
                                                   {"--gpu-bandwidth", "1e9"},
                                                   {"--gpu-latency", "0.1"},
                                                   {"--keep-tiles"},
                                                   {"--pageable"},
                                                   {"--eviction", "lru"},
                                                   {"--gpu-kernel-depth", "1"}}) {
    std::vector<std::string> a = base({"--n", "64"});
    a.insert(a.end(), gpu_only.begin(), gpu_only.end());
    expect_rejected(kInvalidInput, a, {gpu_only[0], "has none: add --gpus G"});
  }
  expect_rejected(kInvalidInput, base({"--n", "64", "--impl", "lapack", "--B", "32"}), {"--B 32", "--impl lapack"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--b", "4"}), {"--b 4", "--s 1"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--json", ""}), {"--json ''"});
  // A GPU that queues one task at a time (emulated; simulated with one stream) has no depth to set.
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-kernel-depth", "1"}),
                  {"--gpu-kernel-depth 1", "queue one"});
  if (TESSERA_HAVE_SIMGRID) {
    const std::string keeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";
    const std::vector<std::string> sim = {"--n", "2304",      "--B", "576",       "--gpus",
                                          "1",   "--backend", "sim", "--machine", keeneland};
    std::vector<std::string> one = sim, two = sim;
    one.insert(one.end(), {"--gpu-kernel-depth", "2"});
    two.insert(two.end(), {"--gpu-kernel-depth", "2", "--gpu-streams", "2"});
    expect_rejected(kInvalidInput, base(one), {"--gpu-kernel-depth 2", "queue one"});
    const Outcome o = run_tessera(base(two));
    EXPECT_TRUE(o.exited && o.status == 0) << o;
  }
  // A Cholesky QR panel's Gram from blocks of rows: QR's, with those panels.
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-cholqr-gram", "512"}),
                  {"--gpu-cholqr-gram 512", "--algo cholesky"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-cholqr-gram", "512"}, "qr"),
                  {"--gpu-cholqr-gram 512", "add --gpu-qr-panel cholqr"});
  for (const char* rows : {"-1", "255"})
    expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-cholqr-gram", rows}, "qr"),
                    {std::string("--gpu-cholqr-gram ") + rows, "must be 0 (SYRK) or >= 256"});
  // The compute threads' priority: a native tile run's, within Linux's 0..19 levels.
  expect_rejected(kInvalidInput, base({"--n", "64", "--compute-nice", "20"}), {"--compute-nice 20", "0..19"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--compute-nice", "-1"}), {"--compute-nice -1", "0..19"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--compute-nice", "3", "--impl", "lapack"}),
                  {"--compute-nice 3", "--impl lapack"});
  expect_rejected(kInvalidInput,
                  base({"--n", "64", "--compute-nice", "3", "--backend", "sim", "--machine",
                        std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json"}),
                  {"--compute-nice 3", "simulated node"});
  // ... and 0, the default, is accepted wherever it changes nothing.
  expect_success(run_tessera(base({"--n", "64", "--compute-nice", "0", "--impl", "lapack"})));
  // The same options with what they describe run.
  expect_success(run_tessera(base({"--n", "64", "--s", "2", "--b", "4"})));
  expect_success(run_tessera(base({"--n", "64", "--gpus", "1", "--keep-tiles", "--eviction", "lru"})));
  const TempDir dir;
  EXPECT_EQ(run_ok(dir, {"run", "--algo", "cholesky", "--n", "64", "--compute-nice", "4"})["compute_nice"], 4);
  EXPECT_EQ(run_ok(dir, {"run", "--algo", "cholesky", "--n", "64"})["compute_nice"], 0);
}

// --gpu-warmup: a native run's GPUs call each kernel shape of the run once
// before the clock (experiments/gpu_warmup.hpp); on by default for CUDA (and
// simulated) GPUs only. The warm-up leaves the factors as they were (the same residual, to
// the bit) and says what it did on the line after the summary.
TEST(CliOutputs, GpuWarmupRunsBeforeTheClockOnNativeGpusOnly) {
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpus", "1", "--gpu-warmup", "maybe"}),
                  {"--gpu-warmup", "maybe", "auto, on, off"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-warmup", "on"}), {"--gpu-warmup on", "(--gpus G)"});
  expect_rejected(kInvalidInput, base({"--n", "64", "--gpu-warmup", "off", "--impl", "lapack"}),
                  {"--gpu-warmup off", "(--gpus G)"});
  // A simulated GPU is warmed by leaving out its model's first-call costs; cold, it pays them, so its model must
  // have them (none of the shipped machine files' GPU models has).
  if (TESSERA_HAVE_SIMGRID) {
    expect_rejected(kInvalidInput, sim({"--n", "2304", "--gpus", "1", "--gpu-warmup", "off"}),
                    {"--gpu-warmup off", "no first-call cost", "--from-traces"});
    const Outcome on = run_tessera(sim({"--n", "2304", "--gpus", "1", "--gpu-warmup", "on"}));
    EXPECT_TRUE(on.exited && on.status == 0) << on;
  }
  const TempDir dir;
  const std::vector<std::string> run = {"run", "--algo", "cholesky", "--n",       "256", "--B",
                                        "64",  "--gpus", "1",        "--threads", "1",   "--check"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  std::string out;
  const nlohmann::json on = run_ok(dir, with({"--gpu-warmup", "on"}), 2, &out);
  // Four tile rows of 64: POTF2', TRSM, GSMM_DIAG and GSMM of 64, one call each (one stream).
  EXPECT_EQ(on["gpu_warmup"]["calls"], 4);
  EXPECT_TRUE(on["gpu_warmup"]["skipped"].empty());
  EXPECT_GT(on["gpu_warmup"]["s"].get<double>(), 0.0);
  EXPECT_NE(out.find("gpu warm-up before the clock: "), std::string::npos) << out;
  EXPECT_NE(out.find(", 4 kernel calls"), std::string::npos) << out;
  const nlohmann::json off = run_ok(dir, with({"--gpu-warmup", "off"}));
  EXPECT_TRUE(off["gpu_warmup"].is_null());
  EXPECT_EQ(on["residual"].get<double>(), off["residual"].get<double>());
  EXPECT_EQ(on["check_passed"], true);
  // Emulated GPUs have no libraries to load: auto leaves them cold.
  EXPECT_TRUE(run_ok(dir, run)["gpu_warmup"].is_null());
}

// Forming Q for a simulated QR's --check runs LARFB_Q and SSRFB_Q, which a
// calibration does not measure: they take LARFB's and SSRFB's rates
// (kernel_rate_proxy), where the run exited 2 on every calibrated file.
TEST(CliOutputs, SimulatedQrChecksOnACalibratedMachine) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  const Outcome o =
      run_tessera({"run", "--algo", "qr", "--n", "300", "--threads", "2", "--backend", "sim", "--machine",
                   std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json", "--sim-data", "--check"});
  ASSERT_TRUE(o.exited) << o;
  EXPECT_EQ(o.status, 0) << o;
  EXPECT_THAT(o.out, ::testing::HasSubstr(" ok\n")) << o;
}

}  // namespace
}  // namespace tessera::test::cli
