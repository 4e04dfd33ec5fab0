// Still more README claims that no other test pinned (issue 17 point 6), each
// through the program a user runs: --window's and the emulated GPU's defaults
// in the JSON (and in the copies' timing), --impl cusolver's copy_s (on a GPU
// machine), one trace schema on both backends, a simulated cluster's trace per
// node, what ./setup.sh and .ci/run do (with stub tools: nothing is installed
// or built), `tessera experiment list` and its bad names, and bad values the
// README says exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_expect.hpp"
#include "cli_json.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "test_helpers.hpp"

namespace tessera::test::cli {
namespace {

using tessera::test::TempDir;
using ::testing::HasSubstr;
using nlohmann::json;

const std::string kSource = TESSERA_SOURCE_DIR;

// Every host/GPU copy of a trace takes at least --gpu-latency + bytes / --gpu-bandwidth.
void expect_copies_take_at_least(const json& trace, double latency_s, double bandwidth_Bps) {
  int copies = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.value("cat", "") != "transfer") continue;
    ++copies;
    const double modeled_us = (latency_s + e.at("args").at("bytes").get<double>() / bandwidth_Bps) * 1e6;
    EXPECT_GE(e.at("dur").get<double>(), modeled_us * (1 - 1e-9)) << e;
  }
  EXPECT_GT(copies, 0);
}

// README options table: --window 16384, --gpu-memory 4 GiB, --gpu-bandwidth
// 12e9, --gpu-latency 1e-5 by default; the JSON reports the values a run used
// (`window`, `emulated_gpu`), explicit ones as given, and the copies take the
// time they model; the GPU stays within --gpu-memory.
TEST(CliClaims3, WindowAndEmulatedGpuDefaultsAndValues) {
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "600", "--B", "120", "--s", "3", "--b", "24", "--gpus", "1"};
  const std::string t1 = dir.path() + "/default.trace", t2 = dir.path() + "/given.trace";
  auto d_args = base(shape);
  d_args.insert(d_args.end(), {"--trace", t1});
  const json d = run_ok(dir, d_args);
  EXPECT_EQ(d.at("window"), 16384);
  ASSERT_TRUE(d.contains("emulated_gpu")) << d.dump(2);
  EXPECT_EQ(d.at("emulated_gpu").at("memory_bytes"), std::uint64_t{4} << 30);
  EXPECT_EQ(d.at("emulated_gpu").at("bandwidth_Bps").get<double>(), 12e9);
  EXPECT_EQ(d.at("emulated_gpu").at("latency_s").get<double>(), 1e-5);
  expect_copies_take_at_least(read_json(t1), 1e-5, 12e9);

  auto g_args = base(shape);
  g_args.insert(g_args.end(), {"--window", "100", "--gpu-memory", "600000", "--gpu-bandwidth", "1e9", "--gpu-latency",
                               "2e-3", "--trace", t2});
  const json g = run_ok(dir, g_args);
  EXPECT_EQ(g.at("window"), 100);
  EXPECT_EQ(g.at("emulated_gpu").at("memory_bytes"), 600000);
  EXPECT_EQ(g.at("emulated_gpu").at("bandwidth_Bps").get<double>(), 1e9);
  EXPECT_EQ(g.at("emulated_gpu").at("latency_s").get<double>(), 2e-3);
  expect_copies_take_at_least(read_json(t2), 2e-3, 1e9);  // 2 ms each: far above the default's
  const json& stats = g.at("gpu_stats").at(0);
  EXPECT_LE(stats.at("peak_bytes").get<double>(), 600000);
  EXPECT_GT(stats.at("evictions").get<int>(), 0);  // 1.7 MB of GPU tiles in 0.6 MB

  // Without GPUs: the window, no emulated_gpu.
  const json c = run_ok(dir, base({"--n", "200", "--B", "40", "--window", "7"}));
  EXPECT_EQ(c.at("window"), 7);
  EXPECT_FALSE(c.contains("emulated_gpu"));
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  // Simulated GPUs are the machine file's: no emulated_gpu either.
  const json s = run_ok(dir, sim({"--n", "600", "--B", "120", "--s", "3", "--b", "24", "--gpus", "1"}), 2);
  EXPECT_EQ(s.at("device"), "simulated");
  EXPECT_EQ(s.at("window"), 16384);
  EXPECT_FALSE(s.contains("emulated_gpu"));
}

// --impl cusolver: `time_s` the factorization, the JSON's `copy_s` the
// copies to and from the GPU; only that impl reports copy_s. On a machine
// without a CUDA GPU the peer refuses (exit 2) and the rest is skipped.
TEST(CliClaims3, CusolverReportsItsCopies) {
  TempDir dir;
  EXPECT_FALSE(run_ok(dir, base({"--n", "200", "--impl", "lapack"})).contains("copy_s"));
  EXPECT_FALSE(run_ok(dir, base({"--n", "200", "--B", "40"})).contains("copy_s"));
  if (!TESSERA_HAVE_CUDA) GTEST_SKIP() << "built without CUDA";
  if (kernels::cuda_device_count() < 1) {
    expect_rejected(kInvalidInput, base({"--n", "200", "--impl", "cusolver"}),
                    {"--impl cusolver needs a CUDA GPU, and none is present"});
    GTEST_SKIP() << "no CUDA GPU on this machine: --impl cusolver's copy_s is checked on a GPU machine";
  }
  for (const char* algo : {"cholesky", "qr"}) {
    // (Two lines: the summary and the peer's warm-up before its clock.)
    const json j = run_ok(dir, base({"--n", "2048", "--impl", "cusolver", "--check"}, algo), 2);
    EXPECT_EQ(j.at("impl"), "cusolver") << algo;
    EXPECT_EQ(j.at("check_passed"), true) << algo;
    ASSERT_TRUE(j.contains("copy_s")) << j.dump(2);
    const double copy = j.at("copy_s").get<double>(), t = j.at("time_s").get<double>();
    EXPECT_TRUE(std::isfinite(copy) && copy > 0) << algo << " copy_s " << copy;
    EXPECT_TRUE(std::isfinite(t) && t > 0) << algo << " time_s " << t;
    // 32 MiB each way cannot cross PCIe in under 1 ms.
    EXPECT_GT(copy, 1e-3) << algo;
  }
}

// The schema of a trace: the document's and otherData's keys, and per kind of
// event (ph, cat, a metadata event's name) its keys, its args' keys, a task's
// tile keys, a transfer's kinds, and the lanes the metadata names.
std::set<std::string> schema(const json& doc) {
  std::set<std::string> s;
  auto keys = [](const json& o) {
    std::string k;
    for (const auto& [key, value] : o.items()) k += key + ",";
    return k;
  };
  s.insert("doc{" + keys(doc) + "}");
  s.insert("otherData{" + keys(doc.at("otherData")) + "}");
  for (const json& e : doc.at("traceEvents")) {
    std::string kind = e.at("ph").get<std::string>() + "/" + e.value("cat", "-");
    if (e.at("ph") == "M") kind += "/" + e.at("name").get<std::string>();
    s.insert(kind + "{" + keys(e) + "}");
    if (e.contains("args")) s.insert(kind + " args{" + keys(e.at("args")) + "}");
    if (e.value("cat", "") == "task")
      for (const json& t : e.at("args").at("tiles")) s.insert(kind + " tile{" + keys(t) + "}");
    if (e.value("cat", "") == "transfer") s.insert(kind + " kind " + e.at("args").at("kind").get<std::string>());
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      s.insert("lane " + std::to_string(e.at("tid").get<int>()) + " " + e.at("args").at("name").get<std::string>());
  }
  return s;
}

// README --trace: "same schema on both backends": a native run with an
// emulated GPU and the same run simulated write the same kinds of events with
// the same fields (tasks, h2d/d2h copies, metadata, lanes).
TEST(CliClaims3, TraceSchemaIsTheSameOnBothBackends) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::vector<std::string> shape = {"--n", "600", "--B",    "120", "--s",       "3",
                                          "--b", "24",  "--gpus", "1",   "--threads", "2"};
  const std::string nt = dir.path() + "/native.json", st = dir.path() + "/sim.json";
  auto n_args = base(shape), s_args = sim(shape);
  n_args.insert(n_args.end(), {"--trace", nt});
  s_args.insert(s_args.end(), {"--trace", st});
  run_ok(dir, n_args);
  run_ok(dir, s_args, 2);
  const json native = read_json(nt), simulated = read_json(st);
  EXPECT_EQ(native.at("otherData").at("backend"), "native");
  EXPECT_EQ(simulated.at("otherData").at("backend"), "sim");
  const auto a = schema(native), b = schema(simulated);
  for (const char* must : {"X/task{", "X/transfer{", "M/-/process_name{", "X/transfer kind h2d", "X/transfer kind d2h",
                           "lane 1000 gpu1 h2d"})
    EXPECT_TRUE(std::any_of(a.begin(), a.end(), [&](const std::string& x) { return x.rfind(must, 0) == 0; }))
        << "no " << must << " in the native trace";
  std::vector<std::string> only_native, only_sim;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_native));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_sim));
  EXPECT_THAT(only_native, ::testing::IsEmpty());
  EXPECT_THAT(only_sim, ::testing::IsEmpty());
}

// A simulated cluster writes one trace per node: node 0 FILE, node k FILE with
// .nodeK before the extension (no FILE.node0.json); each parses, names its node
// as the trace's process, and together they hold every task once.
TEST(CliClaims3, SimulatedClusterWritesATracePerNode) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string trace = dir.path() + "/t.json";
  run_ok(dir, sim({"--n", "600", "--B", "120", "--threads", "2", "--grid", "2x1", "--trace", trace}), 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/t.node0.json"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/t.node2.json"));
  std::size_t tasks = 0;
  for (int k = 0; k < 2; ++k) {
    const std::string path = k == 0 ? trace : dir.path() + "/t.node1.json";
    SCOPED_TRACE(path);
    ASSERT_TRUE(std::filesystem::exists(path));
    const json t = read_json(path);
    int named = 0;
    for (const json& e : t.at("traceEvents")) {
      EXPECT_EQ(e.at("pid"), k) << e;
      if (e.at("name") == "process_name") {
        ++named;
        EXPECT_THAT(e.at("args").at("name").get<std::string>(), HasSubstr("node " + std::to_string(k)));
      }
      if (e.value("cat", "") == "task") ++tasks;
    }
    EXPECT_EQ(named, 1);
  }
  EXPECT_EQ(tasks, 35u);  // 5 x 5 tiles: p(p+1)(p+2)/6 kernels, each on one node
}

// --- ./setup.sh and .ci/run, with stub tools --------------------------------
// The script is copied into a temporary directory (its logs go under the
// copy's build/setup-logs/), and dpkg-query, apt-get, sudo and id are stubs
// that record their calls: nothing is installed, configured or built.

struct SetupSandbox {
  TempDir dir;
  std::string src = dir.path() + "/src", stubs = dir.path() + "/stubs", calls = dir.path() + "/calls";

  SetupSandbox() {
    std::filesystem::create_directories(src);
    std::filesystem::create_directories(stubs);
    std::filesystem::copy_file(kSource + "/setup.sh", src + "/setup.sh");
    // dpkg-query -W -f='${Status}' PKG: installed unless PKG is in $MISSING.
    stub("dpkg-query",
         "pkg=\"${@: -1}\"\nfor m in $MISSING; do [ \"$m\" = \"$pkg\" ] && exit 1; done\n"
         "printf 'install ok installed'\n");
    stub("apt-get",
         "echo \"apt-get $*\" >> \"$CALLS\"\n[ -z \"$APT_FAIL\" ] || { echo 'E: stub apt failure'; exit 100; }\n");
    stub("sudo", "echo \"sudo $*\" >> \"$CALLS\"\nexec \"$@\"\n");
    stub("id", "if [ \"$1\" = -u ]; then echo \"$FAKE_UID\"; else exec /usr/bin/id \"$@\"; fi\n");
  }
  void stub(const std::string& name, const std::string& body) const { script(stubs + "/" + name, body); }
  static void script(const std::string& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/bash\n" << body;
    ::chmod(path.c_str(), 0755);
  }
  // bash SCRIPT ARGS with the stubs first on PATH and `env` (NAME=VALUE...) set.
  Outcome run(const std::string& script, std::vector<std::string> args, std::vector<std::string> env = {}) const {
    const char* path = std::getenv("PATH");
    std::vector<std::string> a = {"PATH=" + stubs + ":" + (path ? path : "/usr/bin:/bin"), "CALLS=" + calls,
                                  "MISSING=", "APT_FAIL=", "FAKE_UID=0"};
    a.insert(a.end(), env.begin(), env.end());
    a.insert(a.end(), {"bash", script});
    a.insert(a.end(), args.begin(), args.end());
    return run_process("env", a, 60);
  }
  std::string recorded() const { return read_text(calls); }
};

// README: ./setup.sh main | test | deps | build; the usage names each, and a
// command line that is none of them is refused with the usage (none given,
// two given) or one line naming the unknown command.
TEST(CliClaims3, SetupUsageNamesItsCommands) {
  SetupSandbox box;
  const Outcome help = box.run(box.src + "/setup.sh", {"help"});
  EXPECT_TRUE(help.exited && help.status == 0) << help;
  for (const char* cmd : {"main", "test", "deps", "build"})
    EXPECT_THAT(help.out, HasSubstr("./setup.sh " + std::string(cmd))) << help;
  for (const std::vector<std::string>& bad : {std::vector<std::string>{}, {"deps", "build"}}) {
    const Outcome o = box.run(box.src + "/setup.sh", bad);
    EXPECT_TRUE(o.exited && o.status != 0) << join(bad) << o;
    EXPECT_THAT(o.out, HasSubstr("./setup.sh deps")) << join(bad) << o;
  }
  const Outcome bogus = box.run(box.src + "/setup.sh", {"bogus"});
  EXPECT_TRUE(bogus.exited && bogus.status == 2) << bogus;
  EXPECT_THAT(bogus.err, HasSubstr("unknown command 'bogus'")) << bogus;
  EXPECT_EQ(std::count(bogus.err.begin(), bogus.err.end(), '\n'), 1) << bogus;
  EXPECT_FALSE(std::filesystem::exists(box.calls));  // nothing was installed
}

// README: "installed packages are skipped (apt-get runs, through sudo when not
// root, only for missing ones)".
TEST(CliClaims3, SetupDepsInstallsOnlyMissingPackages) {
  SetupSandbox box;
  const Outcome all = box.run(box.src + "/setup.sh", {"deps"});
  EXPECT_TRUE(all.exited && all.status == 0) << all;
  EXPECT_TRUE(std::regex_search(all.out, std::regex("packages: all [0-9]+ installed"))) << all;
  EXPECT_FALSE(std::filesystem::exists(box.calls)) << box.recorded();  // no apt-get, no sudo

  for (const char* uid : {"0", "1000"}) {
    SCOPED_TRACE(std::string("uid ") + uid);
    std::remove(box.calls.c_str());
    const Outcome o =
        box.run(box.src + "/setup.sh", {"deps"}, {"MISSING=libfmt-dev clang-format", std::string("FAKE_UID=") + uid});
    EXPECT_TRUE(o.exited && o.status == 0) << o;
    const std::string calls = box.recorded();
    const bool root = std::string(uid) == "0";
    EXPECT_EQ(calls.find("sudo ") != std::string::npos, !root) << calls;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(calls, m, std::regex("apt-get install -y --no-install-recommends ([^\n]*)\n")))
        << calls;
    EXPECT_EQ(m[1].str(), "libfmt-dev clang-format") << calls;
    EXPECT_THAT(calls, HasSubstr("apt-get update")) << calls;
  }
}

// README: "Tool output is logged under build/setup-logs/; a failing step
// prints its log's tail and the script exits non-zero."
TEST(CliClaims3, SetupFailingStepShowsItsLogAndExitsNonZero) {
  SetupSandbox box;
  const Outcome o = box.run(box.src + "/setup.sh", {"deps"}, {"MISSING=clang-format", "APT_FAIL=1"});
  ASSERT_TRUE(o.exited) << o;
  EXPECT_NE(o.status, 0) << o;
  EXPECT_THAT(o.err, HasSubstr("command failed (exit 100)")) << o;
  EXPECT_THAT(o.err, HasSubstr("E: stub apt failure")) << o;  // the log's tail
  const std::string log = box.src + "/build/setup-logs/apt-update.log";
  ASSERT_TRUE(std::filesystem::exists(log)) << o;
  EXPECT_THAT(read_text(log), HasSubstr("E: stub apt failure"));
}

// README: ".ci/run is the CI entry point and runs ./setup.sh test".
TEST(CliClaims3, CiRunRunsSetupTest) {
  SetupSandbox box;
  std::filesystem::create_directories(box.src + "/.ci");
  std::filesystem::copy_file(kSource + "/.ci/run", box.src + "/.ci/run");
  std::filesystem::remove(box.src + "/setup.sh");
  SetupSandbox::script(box.src + "/setup.sh", "echo \"setup.sh $*\" >> \"$CALLS\"\n");
  const Outcome o = box.run(box.src + "/.ci/run", {});
  EXPECT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_EQ(box.recorded(), "setup.sh test\n");
}

// --- tessera experiment --------------------------------------------------------

bool have_python() { return ::access("/usr/bin/python3", X_OK) == 0; }

// The count of runs a dry run lists ("ID xR  tessera run ...": R repeats) and of points it leaves out.
std::pair<int, int> dry_run_counts(const std::string& text) {
  int runs = 0, skipped = 0;
  std::smatch m;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, std::regex("^[0-9a-f]+ x([0-9]+) +tessera run "))) runs += std::stoi(m[1]);
    if (std::regex_search(line, std::regex("^[0-9a-f]+ skip "))) ++skipped;
  }
  return {runs, skipped};
}

// README: `experiment list` shows every definition (each file in
// experiments/definitions/) with its backend and its runs in the full and
// quick sweep, and the points of the full sweep left out; a dry run of the
// sweep lists as many runs (and writes nothing).
TEST(CliClaims3, ExperimentListShowsEveryDefinitionAndItsSweeps) {
  if (!have_python()) GTEST_SKIP() << "no /usr/bin/python3 (tessera experiment runs it)";
  TempDir dir;
  const Outcome list = run_tessera({"experiment", "list"});
  ASSERT_TRUE(list.exited && list.status == 0) << list;
  EXPECT_EQ(list.err, "") << list;
  std::map<std::string, std::array<int, 3>> counts;  // full, skip, quick per definition
  for (const auto& f : std::filesystem::directory_iterator(kSource + "/experiments/definitions")) {
    if (f.path().extension() != ".json") continue;
    const json d = read_json(f.path());
    const std::string name = d.at("name");
    EXPECT_EQ(name, f.path().stem().string());
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        list.out, m,
        std::regex("(^|\n)" + name + " .*? " + d.at("backend").get<std::string>() + " +([0-9]+) +([0-9]+) +([0-9]+) ")))
        << name << "\n"
        << list.out;
    counts[name] = {std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4])};
  }
  EXPECT_GE(counts.size(), 9u);  // the README's table
  for (const char* name : {"000-fig6-weak-gpu", "001-fig11-imbalance"}) {
    ASSERT_TRUE(counts.count(name)) << name;
    const auto [full, skip, quick] = counts[name];
    const std::string out = dir.path() + "/" + name;
    const Outcome f = run_tessera({"experiment", "run", name, "--dry-run", "--out", out});
    ASSERT_TRUE(f.exited && f.status == 0) << f;
    EXPECT_EQ(dry_run_counts(f.out), std::make_pair(full, skip)) << name << f;
    const Outcome q = run_tessera({"experiment", "run", name, "--quick", "--dry-run", "--out", out});
    ASSERT_TRUE(q.exited && q.status == 0) << q;
    EXPECT_EQ(dry_run_counts(q.out).first, quick) << name << q;
    EXPECT_FALSE(std::filesystem::exists(out + "/runs.jsonl")) << "a dry run ran something";
  }
}

// README: "Bad definitions exit 2 naming the file"; an unknown subcommand exits 2 too.
TEST(CliClaims3, ExperimentBadNamesExit2) {
  if (!have_python()) GTEST_SKIP() << "no /usr/bin/python3 (tessera experiment runs it)";
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const Outcome o = run_tessera({"experiment", "run", "no-such-definition", "--out", out});
  ASSERT_TRUE(o.exited) << o;
  EXPECT_EQ(o.status, 2) << o;
  EXPECT_EQ(o.out, "") << o;
  EXPECT_THAT(o.err, HasSubstr("no-such-definition.json")) << o;
  EXPECT_FALSE(std::filesystem::exists(out + "/runs.jsonl"));
  const Outcome b = run_tessera({"experiment", "bogus"});
  ASSERT_TRUE(b.exited) << b;
  EXPECT_EQ(b.status, 2) << b;
  EXPECT_THAT(b.err, HasSubstr("bogus")) << b;
}

// --- bad values the README says exit 2, naming the option and value ----------

// --broadcast binomial|flat (default binomial), and "the JSON's comm.broadcast says which".
TEST(CliClaims3, BroadcastIsReportedAndCheckedByName) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--broadcast", "tree"}), {"--broadcast", "'tree'"});
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  EXPECT_EQ(run_ok(dir, sim({"--n", "300", "--grid", "2x2"}), 2).at("comm").at("broadcast"), "binomial");
  EXPECT_EQ(run_ok(dir, sim({"--n", "300", "--grid", "2x2", "--broadcast", "flat"}), 2).at("comm").at("broadcast"),
            "flat");
}

// --backend native|sim and --device emulated|cuda: another name exits 2 naming it.
TEST(CliClaims3, BackendAndDeviceNamesAreChecked) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--backend", "mpi"}), {"--backend", "'mpi'"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--gpus", "1", "--device", "opencl"}), {"--device", "'opencl'"});
}

// A simulated run gets at most the machine file's nodes (--grid) and one
// compute thread per core of its node (--threads).
TEST(CliClaims3, SimulatedRunsStayWithinTheMachineFile) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  const std::string one_node = kSource + "/platform/machines/local-example.json";
  auto grid = base({"--n", "300", "--grid", "2x1", "--backend", "sim", "--machine", one_node});
  expect_rejected(kInvalidInput, grid, {"--grid 2x1", one_node, "\"nodes\": 1"});
  expect_rejected(kInvalidInput, sim({"--n", "300", "--threads", "13"}), {"--threads 13", "12 cores", kKeeneland});
  // --json and --trace are opened before the run (an unwritable one fails
  // at once); a run refused after that leaves neither file behind.
  TempDir dir;
  const std::string j = dir.path() + "/r.json", t = dir.path() + "/t.json";
  auto traced =
      base({"--n", "300", "--grid", "2x1", "--backend", "sim", "--machine", one_node, "--json", j, "--trace", t});
  expect_rejected(kInvalidInput, traced, {"--grid 2x1"});
  EXPECT_FALSE(std::filesystem::exists(j)) << "a refused run left an empty --json file";
  EXPECT_FALSE(std::filesystem::exists(t)) << "a refused run left an empty --trace file";
}

// --test-fault corrupt-factor "needs --check"; an emulated GPU's --gpu-latency
// (s, >= 0) and --gpu-memory (bytes, >= 1) are checked.
TEST(CliClaims3, TestFaultAndEmulatedGpuValuesAreChecked) {
  expect_rejected(kInvalidInput, base({"--n", "300", "--test-fault", "corrupt-factor"}), {"--test-fault", "--check"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--gpus", "1", "--gpu-latency", "-1"}), {"--gpu-latency"});
  expect_rejected(kInvalidInput, base({"--n", "300", "--gpus", "1", "--gpu-memory", "0"}), {"--gpu-memory 0"});
  // On a CUDA GPU it caps the memory the runtime may use: checked before any device is opened.
  expect_rejected(kInvalidInput, base({"--n", "300", "--gpus", "1", "--device", "cuda", "--gpu-memory", "0"}),
                  {"--gpu-memory 0"});
}

// An option that would change nothing is refused rather than ignored (README,
// Command line): the tile runtime's options with a peer (whose summary named a
// tournament or a binary tree that never ran), QR's options with another
// factorization even at their defaults, --pageable on GPUs that copy from no
// page-locked memory, empty output paths.
TEST(CliClaims3, OptionsThatChangeNothingAreRefused) {
  const auto peer = [](std::vector<std::string> extra, const std::string& algo) {
    extra.insert(extra.end(), {"--n", "200", "--impl", "lapack"});
    return base(extra, algo);
  };
  expect_rejected(kInvalidInput, peer({"--pivot", "tournament"}, "lu"), {"--pivot tournament", "getrf"});
  expect_rejected(kInvalidInput, peer({"--tslu-tree", "flat"}, "lu"), {"--tslu-tree flat", "--impl lapack"});
  expect_rejected(kInvalidInput, peer({"--qr-tree", "binary"}, "qr"), {"--qr-tree binary", "--impl lapack"});
  expect_rejected(kInvalidInput, peer({"--ib", "16"}, "qr"), {"--ib 16", "--impl lapack"});
  for (const auto& [name, value] : {std::pair{"--window", "100"}, {"--policy", "fifo"}, {"--broadcast", "flat"}})
    expect_rejected(kInvalidInput, peer({name, value}, "cholesky"), {std::string(name) + " " + value, "--impl lapack"});
  TempDir dir;
  const std::string trace = dir.path() + "/t.json";
  expect_rejected(kInvalidInput, peer({"--trace", trace}, "cholesky"), {"--trace", "--impl lapack"});
  EXPECT_FALSE(std::filesystem::exists(trace));
  EXPECT_EQ(run_ok(dir, peer({"--pivot", "partial"}, "lu")).at("impl"), "lapack") << "getrf's own pivoting";
  for (const auto& [name, value] :
       {std::pair{"--ib", "32"}, {"--gpu-qr-panel", "householder"}, {"--gpu-qr-group", "256"}})
    for (const char* algo : {"cholesky", "lu"})
      expect_rejected(kInvalidInput, base({"--n", "200", name, value}, algo),
                      {std::string(name) + " " + value, "QR's kernels", std::string("--algo ") + algo});
  expect_rejected(kInvalidInput, base({"--n", "200", "--gpus", "1", "--pageable"}), {"--pageable", "emulated"});
  expect_rejected(kInvalidInput, base({"--n", "200", "--progress-file", ""}), {"--progress-file ''"});
  // (Native --B auto with GPUs asked for --machine, which a native run then refused.)
  expect_rejected(kInvalidInput, base({"--n", "512", "--gpus", "1", "--B", "auto"}),
                  {"--B auto with --gpus 1", "--tuned T"});
  expect_rejected(kInvalidInput, {"tune", "--algo", "cholesky", "--n", "512", "--ib", "16"},
                  {"--ib 16", "--algo cholesky"});
  expect_rejected(kInvalidInput, {"tune", "--algo", "qr", "--n", "512", "--out", ""}, {"--out ''"});
  expect_rejected(
      kInvalidInput,
      {"model", "comm", "--algo", "qr", "--n", "4096", "--B", "512", "--s", "1", "--grid", "2x2", "--json", ""},
      {"--json ''"});
}

// --B auto tunes the run it is given: with --gpus and no --threads, for the
// threads the run takes (the node's cores less its GPUs' threads: 7 of
// Keeneland's 12 with 3 GPUs, where it tuned for 1), and LU with the run's
// pivoting, and its GPUs' memory. Each choice equals tessera tune's for the same run.
TEST(CliClaims3, BAutoTunesTheRunItIsGiven) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  TempDir dir;
  const std::string local = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local.json";
  const auto tuned_by_run = [&](std::vector<std::string> args) {
    std::string out;
    run_ok(dir, args, 3, &out);
    std::smatch m;
    EXPECT_TRUE(std::regex_search(out, m, std::regex("tuned: --B (\\d+) --s (\\d+)"))) << out;
    return m.size() == 3 ? m[1].str() + "/" + m[2].str() : std::string("none");
  };
  const auto tuned_by_tune = [&](std::vector<std::string> args) {
    const std::string path = dir.path() + "/tuned.json";
    args.insert(args.end(), {"--quiet", "--out", path});
    const Outcome o = run_tessera(args);
    EXPECT_TRUE(o.exited && o.status == 0) << o;
    const json c = read_json(path).at("choice");
    return std::to_string(c.at("B").get<int>()) + "/" + std::to_string(c.at("s").get<int>());
  };
  EXPECT_EQ(tuned_by_run(sim({"--n", "4096", "--gpus", "3", "--B", "auto"})),
            tuned_by_tune({"tune", "--algo", "cholesky", "--n", "4096", "--gpus", "3", "--threads", "7", "--backend",
                           "sim", "--machine", kKeeneland}));
  // That tuning's file fits the same run: no note that it was tuned for other threads (it compared with 1).
  run_ok(dir, sim({"--n", "4096", "--gpus", "3", "--tuned", dir.path() + "/tuned.json"}), 2);
  // The run's GPU options reach every child run: with 200 MB per GPU other tiles fit (B = 1216, where the GPU's
  // full 6 GB gives 1152; before, the children had the machine file's memory and chose 1152 for this run too).
  const std::string small_gpu =
      tuned_by_run(sim({"--n", "8192", "--gpus", "1", "--gpu-memory", "200000000", "--B", "auto"}));
  EXPECT_EQ(small_gpu, tuned_by_tune({"tune", "--algo", "cholesky", "--n", "8192", "--gpus", "1", "--threads", "9",
                                      "--gpu-memory", "200000000", "--backend", "sim", "--machine", kKeeneland}));
  EXPECT_EQ(read_json(dir.path() + "/tuned.json").at("child_args"), json::array({"--gpu-memory", "200000000"}));
  EXPECT_NE(small_gpu, tuned_by_tune({"tune", "--algo", "cholesky", "--n", "8192", "--gpus", "1", "--threads", "9",
                                      "--backend", "sim", "--machine", kKeeneland}));
  // A combination the run refuses is refused before the tuning, not as the failure of every child run.
  const Outcome streams =
      run_tessera(base({"--n", "512", "--gpu-streams", "2", "--B", "auto", "--backend", "sim", "--machine", local}));
  EXPECT_EQ(streams.status, kInvalidInput) << streams;
  EXPECT_THAT(streams.err, ::testing::HasSubstr("--gpu-streams 2: only CUDA GPUs")) << streams;
  EXPECT_THAT(streams.err, ::testing::Not(::testing::HasSubstr("every candidate failed"))) << streams;
  EXPECT_EQ(tuned_by_run(base({"--n", "2048", "--threads", "2", "--pivot", "tournament", "--B", "auto", "--backend",
                               "sim", "--machine", local},
                              "lu")),
            tuned_by_tune({"tune", "--algo", "lu", "--n", "2048", "--threads", "2", "--pivot", "tournament",
                           "--backend", "sim", "--machine", local}));
}

}  // namespace
}  // namespace tessera::test::cli
