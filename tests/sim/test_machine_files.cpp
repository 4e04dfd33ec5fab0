// Machine files: the shipped ones load; bad ones are rejected with a message
// naming the file, the field and the value.
#include <gtest/gtest.h>

#include <string>

#include "../test_helpers.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "models/machine.hpp"

namespace {
using tessera::InputError;
using tessera::platform::Machine;

const std::string kDir = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/";

TEST(MachineFiles, KeenelandLoads) {
  const Machine m = Machine::load(kDir + "keeneland.json");
  EXPECT_EQ(m.name, "keeneland");
  EXPECT_EQ(m.node.cores, 12);
  EXPECT_EQ(m.node.gpus.count, 3);
  EXPECT_EQ(m.node.gpus.memory_bytes, 6e9);
  EXPECT_EQ(m.network.link.latency_s, 1.3e-6);
  EXPECT_TRUE(m.network.calibrated);
  EXPECT_EQ(m.models.size(), 2u);
}

TEST(MachineFiles, LocalExampleLoads) {
  const Machine m = Machine::load(kDir + "local-example.json");
  EXPECT_EQ(m.nodes, 1);
  EXPECT_EQ(m.node.cores, 2);
  EXPECT_EQ(m.node.gpus.count, 0);
}

// The lent GPU node as calibrated (calibrate, then calibrate --device cuda): its 16 cores, one GPU
// with the capacity and link measured there, and a calibrated GPU model whose DGEMM at 4096 runs at
// the 55-56 TFlop/s an H200 reaches (the measurement, not a datasheet).
TEST(MachineFiles, LentH200NodeLoads) {
  const Machine m = Machine::load(kDir + "lent-h200-node.json");
  EXPECT_EQ(m.node.cores, 16);
  EXPECT_EQ(m.node.gpus.count, 1);
  EXPECT_GT(m.node.gpus.memory_bytes, 140e9);
  EXPECT_NEAR(m.node.gpus.pcie.bandwidth_Bps, 55e9, 2e9);
  EXPECT_EQ(m.blas_core, "SkylakeX");
  const double t = m.model(m.node.gpus.model).seconds(tessera::KernelShape{tessera::kGsmm, 'd', 4096, 4096, 4096, 0});
  EXPECT_GT(2.0 * 4096 * 4096 * 4096 / t, 50e12);
  EXPECT_LT(2.0 * 4096 * 4096 * 4096 / t, 60e12);
}

// The lent H100 node as calibrated on 2026-11-26: an 80 GB GPU, its link, its DGEMM at 4096 at the
// 51 TFlop/s measured there, and LU's PANEL timed on the GPU (5.85 ms for a 2048-square panel), so
// that a simulated --d 0 can run on it.
TEST(MachineFiles, LentH100NodeLoadsWithLuPanels) {
  const Machine m = Machine::load(kDir + "lent-h100-node.json");
  EXPECT_EQ(m.node.cores, 16);
  EXPECT_EQ(m.node.gpus.count, 1);
  EXPECT_GT(m.node.gpus.memory_bytes, 80e9);
  EXPECT_LT(m.node.gpus.memory_bytes, 86e9);
  EXPECT_NEAR(m.node.gpus.pcie.bandwidth_Bps, 55e9, 2e9);
  EXPECT_EQ(m.blas_core, "SkylakeX");
  const auto& gpu = m.model(m.node.gpus.model);
  const double t = gpu.seconds(tessera::KernelShape{tessera::kGsmm, 'd', 4096, 4096, 4096, 0});
  EXPECT_GT(2.0 * 4096 * 4096 * 4096 / t, 45e12);
  EXPECT_LT(2.0 * 4096 * 4096 * 4096 / t, 60e12);
  const double panel = gpu.seconds(tessera::KernelShape{tessera::kLuPanel, 'd', 2048, 2048, 0, 0});
  EXPECT_GT(panel, 5e-3);
  EXPECT_LT(panel, 7e-3);
}

const char* kGood = R"({
  "name": "t", "nodes": 2,
  "node": { "cores": { "count": 4, "model": "m" } },
  "network": { "topology": "star", "bandwidth_Bps": 1e9, "latency_s": 1e-6 },
  "kernel_models": { "m": { "type": "peak-efficiency", "peak_gflops": { "default": { "d": 10, "s": 20 } } } }
})";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The message of the InputError that loading `text` from a file named bad.json throws.
// The file lives in a directory of this call's own: ctest runs tests in parallel.
std::string rejection(const std::string& text) {
  const tessera::test::TempDir dir;
  const std::string path = dir.write("bad.json", text);
  try {
    Machine::load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

void expect_names(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST(MachineFiles, GoodTextParses) { EXPECT_EQ(Machine::parse(kGood, "good.json").nodes, 2); }

TEST(MachineFiles, MissingFieldIsNamed) {
  const auto msg = rejection(replaced(kGood, R"("latency_s": 1e-6)", R"("latency": 1e-6)"));
  expect_names(msg, {"bad.json", "latency_s", "missing"});
}

TEST(MachineFiles, NegativeBandwidthIsNamed) {
  const auto msg = rejection(replaced(kGood, "1e9", "-5e9"));
  expect_names(msg, {"bad.json", "network.bandwidth_Bps", "-5000000000", "must be from 1000"});
}

TEST(MachineFiles, NegativeBandwidthWithSourceIsNamed) {
  const auto msg = rejection(replaced(kGood, "1e9", R"({"value": -1, "source": "x"})"));
  expect_names(msg, {"bad.json", "network.bandwidth_Bps", "-1"});
}

TEST(MachineFiles, UnknownKernelModelIsNamed) {
  const auto msg = rejection(replaced(kGood, R"("model": "m")", R"("model": "nosuch")"));
  expect_names(msg, {"bad.json", "node.cores.model", "\"nosuch\"", "unknown kernel model"});
}

TEST(MachineFiles, UnknownModelTypeIsNamed) {
  const auto msg = rejection(replaced(kGood, "peak-efficiency", "magic"));
  expect_names(msg, {"bad.json", "kernel_models.m.type", "\"magic\""});
}

TEST(MachineFiles, MalformedJsonIsNamed) {
  const auto msg = rejection(replaced(kGood, R"("nodes": 2,)", R"("nodes": 2,,)"));
  expect_names(msg, {"bad.json", "malformed JSON"});
}

TEST(MachineFiles, NonIntegerCoreCountIsNamed) {
  const auto msg = rejection(replaced(kGood, R"("count": 4)", R"("count": 2.5)"));
  expect_names(msg, {"bad.json", "node.cores.count", "2.5"});
}

// What a machine may be: links from 1 kB/s to 1 PB/s with at most 1 s of latency, rates from 1 MFlop/s to 1 EFlop/s,
// kernel times up to a day, counts their types hold. Beyond them SimGrid aborted (a link of 0.1 B/s), its clock became
// infinite (a latency of 1e308 s: a segfault), a kernel took forever (a peak of 1e-308 GFlop/s) or a GPU of 1e308
// bytes had 0 (a cast to size_t). A value written {"value": x, "source": ...} is shown as x.
TEST(MachineFiles, ValuesBeyondAnyMachineAreNamed) {
  expect_names(rejection(replaced(kGood, "1e9", "0.1")),
               {"bad.json", "field 'network.bandwidth_Bps' = 0.1", "must be from 1000 to 1e+15"});
  expect_names(rejection(replaced(kGood, "1e-6", "1e308")),
               {"field 'network.latency_s' = 1e+308", "must be from 0 to 1"});
  expect_names(rejection(replaced(kGood, R"("d": 10)", R"("d": 1e-308)")),
               {"field 'kernel_models.m.peak_gflops.default.d'", "must be from 0.001 to 1e+09"});
  expect_names(rejection(replaced(kGood, R"("nodes": 2)", R"("nodes": 40000)")),
               {"field 'nodes' = 40000", "must be an integer from 1 to 32768"});
  expect_names(rejection(replaced(kGood, R"("nodes": 2)", R"("nodes": {"source": "a long source text", "value": 0})")),
               {"field 'nodes' = 0:"});
  expect_names(rejection(replaced(kGood, "1e9", R"({"source": "a long source text", "value": 0.1})")),
               {"field 'network.bandwidth_Bps' = 0.1: must be from 1000"});
  const std::string gpus =
      replaced(kGood, R"("cores": { "count": 4, "model": "m" } })",
               R"("cores": { "count": 4, "model": "m" }, "gpus": { "count": 1, "model": "m", "memory_bytes": 6e9,
         "pcie": { "bandwidth_Bps": 6e9, "latency_s": 1e-5 } } })");
  EXPECT_EQ(Machine::parse(gpus, "good.json").node.gpus.count, 1);
  expect_names(rejection(replaced(gpus, "6e9,", "1e308,")),
               {"field 'node.gpus.memory_bytes' = 1e+308", "must be from 1 to 4.61169e+18"});
  expect_names(rejection(replaced(gpus, R"("count": 1)", R"("count": 5000)")), {"field 'node.gpus.count' = 5000"});
  expect_names(rejection(replaced(gpus, "1e-5", "2")), {"field 'node.gpus.pcie.latency_s' = 2"});
}

// node.gpus.stream_overlap: optional (1), a fraction; outside [0, 1] named.
TEST(MachineFiles, GpuStreamOverlapIsAFraction) {
  const std::string gpus = R"("node": { "cores": { "count": 4, "model": "m" }, "gpus": { "count": 1,
      "memory_bytes": 1e9, "pcie": { "bandwidth_Bps": 1e9, "latency_s": 1e-6 }, "model": "m")";
  const std::string text = replaced(kGood, R"("node": { "cores": { "count": 4, "model": "m" })", gpus + " }");
  EXPECT_EQ(Machine::parse(text, "g.json").node.gpus.stream_overlap, 1.0);
  const std::string half = replaced(text, R"("model": "m" } })", R"("model": "m", "stream_overlap": 0.5 } })");
  EXPECT_EQ(Machine::parse(half, "g.json").node.gpus.stream_overlap, 0.5);
  expect_names(rejection(replaced(half, "0.5", "1.5")),
               {"bad.json", "node.gpus.stream_overlap", "1.5", "between 0 and 1"});
  // node.gpus.host_waits: kernel keys.
  const std::string waits =
      replaced(half, R"("stream_overlap": 0.5)", R"("stream_overlap": 0.5, "host_waits": ["potf2p", "lu_panel"])");
  EXPECT_EQ(Machine::parse(waits, "g.json").node.gpus.host_waits,
            (std::vector<std::uint16_t>{tessera::kPotf2p, tessera::kLuPanel}));
  EXPECT_TRUE(Machine::parse(half, "g.json").node.gpus.host_waits.empty());
  expect_names(rejection(replaced(waits, R"("lu_panel")", R"("getrf")")),
               {"bad.json", "node.gpus.host_waits", "getrf", "known:"});
  expect_names(rejection(replaced(waits, R"(["potf2p", "lu_panel"])", R"("potf2p")")),
               {"node.gpus.host_waits", "list"});
  expect_names(rejection(replaced(half, "0.5", "-0.5")),
               {"bad.json", "node.gpus.stream_overlap", "-0.5", "between 0 and 1"});
}

// network.calibrated: optional (true: the figures are end-to-end measurements,
// SimGrid applies no LV08 correction); false is kept, so the simulator corrects
// them; anything but a boolean is named.
TEST(MachineFiles, NetworkCalibratedIsReadAsGiven) {
  EXPECT_TRUE(Machine::parse(kGood, "good.json").network.calibrated);
  const auto with = [](const char* value) {
    return replaced(kGood, R"("latency_s": 1e-6 })",
                    std::string(R"("latency_s": 1e-6, "calibrated": )") + value + " }");
  };
  EXPECT_FALSE(Machine::parse(with("false"), "f.json").network.calibrated);
  EXPECT_TRUE(Machine::parse(with("true"), "t.json").network.calibrated);
  expect_names(rejection(with("\"no\"")), {"bad.json", "network.calibrated", "\"no\"", "true or false"});
}

// node.cores.model_by_threads: thread counts (>= 1, whole numbers) to models;
// "source" is a note; any other key is named.
TEST(MachineFiles, ModelByThreadsKeysAreThreadCounts) {
  const auto with = [](const std::string& entries) {
    return replaced(kGood, R"("model": "m" } })", R"("model": "m", "model_by_threads": { )" + entries + " } } }");
  };
  const Machine m = Machine::parse(with(R"("1": "m", "3": "m", "source": "test")"), "g.json");
  EXPECT_EQ(m.node.core_model_by_threads.size(), 2u);
  EXPECT_TRUE(m.node.core_model_by_threads.count(1) && m.node.core_model_by_threads.count(3));
  for (const char* key : {"0", "-2", "x", "2a", ""}) {
    SCOPED_TRACE(key);
    expect_names(rejection(with("\"" + std::string(key) + R"(": "m")")),
                 {"bad.json", "node.cores.model_by_threads", "thread count >= 1"});
  }
  expect_names(rejection(with(R"("2": "nosuch")")), {"bad.json", "model_by_threads", "nosuch"});
}

TEST(MachineFiles, MissingFileIsNamed) {
  try {
    Machine::load("/nonexistent/machine.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/machine.json"), std::string::npos);
  }
}

}  // namespace
