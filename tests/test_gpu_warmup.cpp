// A run's GPU warm-up (experiments/gpu_warmup.hpp): which kernel shapes it
// calls (per kernel, precision and inner blocking the most frequent and the
// largest, GPU kernels only), that it calls each once per compute stream a
// task of it may take, that a shape that does not fit is skipped and named,
// and that it leaves the device's memory as it found it. On emulated GPUs:
// the same code warms a CUDA one (whose first calls are what it is for).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "algorithms/factorization.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/calibrate_device.hpp"
#include "experiments/driver.hpp"
#include "experiments/gpu_warmup.hpp"
#include "experiments/kernel_call.hpp"
#include "platform/kernel_lanes.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/native/host_memory_device.hpp"
#include "platform/native/native_platform.hpp"

namespace tessera {
namespace {

using driver::plan_warmup;
using driver::warm_up_gpus;
using driver::WarmupPlan;

const auto kEveryTask = [](const TaskDesc&) { return true; };

// The plan's shapes for a factorization's whole graph (every task on a GPU).
std::vector<KernelShape> shapes_of(const Factorization& F, const TileLayout& L, char precision, index_t ib) {
  return plan_warmup([&](TaskSink& s) { F.tasks(L, s); },
                     [&](const TaskDesc& t) { return F.shape(L, t, precision, ib); }, kEveryTask)
      .shapes;
}

TaskDesc task(std::uint16_t kernel, int tag) {
  TaskDesc t{};
  t.kernel = kernel;
  t.arg[0] = tag;
  return t;
}

bool same(const KernelShape& a, const KernelShape& b) {
  return a.kernel == b.kernel && a.precision == b.precision && a.m == b.m && a.n == b.n && a.k == b.k && a.ib == b.ib;
}

std::string text(const KernelShape& s) {
  return std::string(kernel_name(s.kernel)) + " " + s.precision + " " + std::to_string(s.m) + "x" +
         std::to_string(s.n) + " k" + std::to_string(s.k) + " ib" + std::to_string(s.ib);
}

// Tasks tagged 0..7; the shape function maps each tag to a shape.
TEST(GpuWarmup, ShapesAreEachKernelsMostFrequentAndLargest) {
  const std::vector<KernelShape> by_tag = {
      {kGsmm, 'd', 100, 100, 100, 0},  // 0: three GEMMs of 100
      {kGsmm, 'd', 300, 300, 300, 0},  // 1: one of 300 (the largest)
      {kGsmm, 'd', 200, 100, 100, 0},  // 2: one between them: neither
      {kPotf2p, 'd', 100, 100, 0, 0},  // 3: a POTF2' of 100, twice (frequent and largest: once)
      {kLuLeaf, 'd', 500, 100, 0, 0},  // 4: LU's candidate selection runs on CPU cores only
      {kGeqrt, 'd', 100, 100, 0, 32},  // 5: GEQRT at two inner blockings: one per ib
      {kGeqrt, 'd', 100, 100, 0, 64},  // 6
      {kGsmm, 'd', 900, 900, 900, 0},  // 7: the largest GEMM of all, three of them, on the host: not warmed
  };
  const auto generate = [&](TaskSink& s) {
    for (int tag : {0, 3, 7, 0, 1, 4, 0, 2, 7, 3, 5, 6, 4, 7}) s.insert(task(by_tag[tag].kernel, tag));
  };
  const WarmupPlan plan = plan_warmup(
      generate, [&](const TaskDesc& t) { return by_tag[static_cast<std::size_t>(t.arg[0])]; },
      [](const TaskDesc& t) { return t.arg[0] != 7; });
  const std::vector<KernelShape>& got = plan.shapes;
  // LU_LEAF went to a GPU here, which the warm-up cannot call (in a run it never does): named, not warmed.
  EXPECT_EQ(plan.cold, std::vector<std::string>{"LU_LEAF"});
  // Kernel-table order: POTF2', GSMM (frequent, then largest), GEQRT per ib.
  const std::vector<KernelShape> want = {by_tag[3], by_tag[0], by_tag[1], by_tag[5], by_tag[6]};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same(got[i], want[i])) << i << ": " << text(got[i]);
}

// A Cholesky of 1000 in tiles of 300: four tile rows, the last of 100.
// POTF2': three of 300, one of 100. TRSM (rows below the diagonal) and
// GSMM_DIAG: three of 300 rows and three of 100 (a tie: the larger). GSMM:
// one of 300 x 300 (tile row 2 by column 1), three of 100 x 300 (row 3): the
// frequent shape and the largest differ.
TEST(GpuWarmup, CholeskyOfUnevenTilesWarmsFiveShapes) {
  const Factorization& F = factorization("cholesky");
  const TileLayout L(1000, 1000, 300, 1, 0);
  const std::vector<KernelShape> got = shapes_of(F, L, 'd', 32);
  ASSERT_EQ(got.size(), 5u);
  const std::uint16_t kernel[] = {kPotf2p, kTrsm, kGsmmDiag, kGsmm, kGsmm};
  const std::int64_t m[] = {300, 300, 300, 100, 300};
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].kernel, kernel[i]) << text(got[i]);
    EXPECT_EQ(got[i].m, m[i]) << text(got[i]);
    EXPECT_EQ(got[i].n, 300) << text(got[i]);
  }
}

// An emulated GPU that says it has `streams` compute streams and records,
// per task, whether it was queued as a panel and the stream a CUDA GPU
// would give it (platform/kernel_lanes.hpp, with the tasks outstanding),
// and what it was asked to free.
class StreamsDevice final : public platform::HostMemoryDevice {
 public:
  StreamsDevice(int streams, std::size_t capacity) : HostMemoryDevice(1, capacity, true), streams_(streams) {}
  std::string name() const override { return "GPU 1 (warm-up test)"; }
  int kernel_streams() const override { return streams_; }
  int kernel_depth() const override { return streams_; }
  void begin_kernels(bool panel) override {
    panels.push_back(panel);
    std::vector<int> busy(static_cast<std::size_t>(streams_), 0);
    for (const auto& [mark, lane] : outstanding_) ++busy[lane];
    open_lane_ = platform::choose_lane(panel, busy, next_mark_);
    lanes.push_back(static_cast<int>(open_lane_));
  }
  std::uint64_t end_kernels() override {
    outstanding_[next_mark_] = open_lane_;
    return next_mark_++;
  }
  void wait_kernels(std::uint64_t mark) override { outstanding_.erase(mark); }
  void free_kept() override { ++freed; }
  std::vector<bool> panels;
  std::vector<int> lanes;
  int freed = 0;

 private:
  void transfer(int, std::size_t, bool, double) override {}
  void launch(int, std::function<void()> job) override { job(); }
  int streams_;
  std::map<std::uint64_t, std::size_t> outstanding_;
  std::size_t open_lane_ = 0;
  std::uint64_t next_mark_ = 0;
};

TEST(GpuWarmup, CallsEachShapeOnEveryStreamItsTasksMayTake) {
  const std::vector<KernelShape> shapes = {
      {kPotf2p, 'd', 64, 64, 0, 0},   // a panel: its stream, then beside a panel there, the other two
      {kGsmm, 's', 64, 64, 64, 0},    // an update: the two streams after the panels'
      {kSsrfb, 'd', 64, 48, 64, 16},  // its V and T made on the device first
  };
  StreamsDevice three(3, std::size_t{64} << 20);
  const driver::GpuWarmup w = warm_up_gpus({&three}, WarmupPlan{shapes, {}});
  EXPECT_EQ(w.calls, 3 + 2 + 2);
  EXPECT_TRUE(w.skipped.empty());
  EXPECT_EQ(three.panels, (std::vector<bool>{true, false, false, false, false, false, false}));
  // POTF2' on streams 0, 1 and 2; GSMM and SSRFB each on 1 and 2 (in turn: the device's marks go on).
  EXPECT_EQ(three.lanes, (std::vector<int>{0, 2, 1, 2, 1, 2, 1}));
  EXPECT_EQ(three.in_use(), 0u);  // every scratch buffer released
  EXPECT_GT(three.peak(), 0u);
  EXPECT_EQ(three.freed, 1);  // and what the device kept of them freed
  // One stream: one call per shape; each of two GPUs warmed, and each frees what it kept, once.
  StreamsDevice one(1, std::size_t{64} << 20), other(1, std::size_t{64} << 20);
  EXPECT_EQ(warm_up_gpus({&one, &other}, WarmupPlan{shapes, {}}).calls, 3 + 3);
  EXPECT_EQ(one.panels.size(), 3u);
  EXPECT_EQ(other.panels.size(), 3u);
  EXPECT_EQ(one.freed, 1);
  EXPECT_EQ(other.freed, 1);
}

// A shape whose operands do not fit the device is skipped and named; the
// others are still called.
TEST(GpuWarmup, AShapeThatDoesNotFitIsSkippedAndNamed) {
  // A GEMM of 512 needs three 2 MiB operands: in 5 MiB the third does not fit (the first two go back); one
  // of 64 fits.
  StreamsDevice small(1, std::size_t{5} << 20);
  const driver::GpuWarmup w =
      warm_up_gpus({&small}, WarmupPlan{{{kGsmm, 'd', 512, 512, 512, 0}, {kGsmm, 'd', 64, 64, 64, 0}}, {}});
  EXPECT_EQ(w.calls, 1);
  ASSERT_EQ(w.skipped.size(), 1u);
  EXPECT_NE(w.skipped[0].find("GPU 1 (warm-up test): GSMM d 512x512 k 512"), std::string::npos) << w.skipped[0];
  EXPECT_NE(w.skipped[0].find("does not fit"), std::string::npos) << w.skipped[0];
  EXPECT_EQ(small.in_use(), 0u);
}

// Every kernel a GPU runs for Cholesky, QR and LU, in both precisions, through
// the emulated device's kernels: the scratch operands suit each call (a
// POTF2' that met a matrix that is not SPD, or an LU_DIAG a zero pivot, would
// throw) and every buffer goes back.
TEST(GpuWarmup, EveryFactorizationsShapesRunOnAnEmulatedGpu) {
  for (const char* algo : {"cholesky", "qr", "lu"})
    for (const char precision : {'d', 's'}) {
      const Factorization& F = factorization(algo);
      const TileLayout L(200, 200, 64, 2, 16);
      const std::vector<KernelShape> shapes = shapes_of(F, L, precision, 8);
      ASSERT_FALSE(shapes.empty()) << algo;
      platform::EmulatedDevice gpu(1, platform::EmulatedDeviceOptions{});
      const driver::GpuWarmup w = warm_up_gpus({&gpu}, WarmupPlan{shapes, {}});
      EXPECT_EQ(w.calls, static_cast<int>(shapes.size())) << algo << " " << precision;
      EXPECT_TRUE(w.skipped.empty()) << algo;
      EXPECT_EQ(gpu.in_use(), 0u) << algo;
    }
}

// The warm-up calls every kernel a calibration times on a device (the
// kernels a GPU runs for Cholesky, QR and LU's panels and updates), and the
// binary tree's TTQRT and TTMQR besides.
TEST(GpuWarmup, EveryKernelACalibrationTimesOnADeviceHasACall) {
  for (const KernelInfo& k : kernel_table())
    if (kernels::runs_on_device(k.id)) EXPECT_TRUE(kernels::calibration::has_device_call(k.id)) << k.name;
  EXPECT_TRUE(kernels::calibration::has_device_call(kTtqrt));
  EXPECT_TRUE(kernels::calibration::has_device_call(kTtmqr));
  EXPECT_FALSE(kernels::calibration::has_device_call(kLuLeaf));
}

// Through the driver (tessera run --gpus 1 --gpu-warmup on, an emulated GPU):
// only what runs on the GPU is warmed. LU with --d 1 factors its panels on
// the cores (002 Alg. 2), so its GPU is warmed without LU_PANEL; with --d 0
// the GPU factors them too. QR's binary tree runs TTQRT and TTMQR on the GPU:
// warmed too. LU's row interchanges on the GPU are tessera's own small
// kernels, which the warm-up cannot call: named cold.
TEST(GpuWarmup, TheDriverWarmsWhatRunsOnTheGpuAndNamesWhatItCannot) {
  const auto run = [](const std::string& algo, const std::string& d, const std::string& tree) {
    RunConfig c;
    c.algo = algo;
    c.n = 250;  // a last tile row of 58: TTQRT and TTMQR with m < n too
    c.B = 64;
    c.threads = 1;
    c.gpus = 1;
    c.gpu_warmup = Warmup::On;
    if (algo == "lu") c.pivot = "partial", c.d = d;
    c.qr_tree = tree;
    if (!tree.empty()) c.qr_domain = 1;  // a binary tree over every tile row
    c.check = true;
    platform::NativePlatform plat;
    const RunResult r = run_factorization(c, plat);
    EXPECT_TRUE(r.residuals && r.residuals->passed()) << algo << " --d " << d << " --qr-tree " << tree;
    EXPECT_TRUE(r.gpu_warmup.has_value());
    return r.gpu_warmup.value_or(driver::GpuWarmup{});
  };
  const auto has = [](const driver::GpuWarmup& w, const std::string& kernel) {
    for (const std::string& s : w.shapes)
      if (s.rfind(kernel + " ", 0) == 0) return true;
    return false;
  };
  const driver::GpuWarmup lu1 = run("lu", "1", "");
  EXPECT_FALSE(has(lu1, "LU_PANEL")) << lu1.shapes.size();
  EXPECT_TRUE(has(lu1, "LU_GEMM"));
  // The GPU's row interchanges (tessera's own kernels) are no kernel the warm-up calls.
  EXPECT_EQ(lu1.cold, (std::vector<std::string>{"LU_SWAP", "LU_EXCHANGE"}));
  const driver::GpuWarmup lu0 = run("lu", "0", "");
  EXPECT_TRUE(has(lu0, "LU_PANEL"));
  EXPECT_EQ(lu0.calls, static_cast<int>(lu0.shapes.size()));
  const driver::GpuWarmup binary = run("qr", "", "binary");
  EXPECT_TRUE(has(binary, "LARFB"));
  EXPECT_TRUE(has(binary, "TTQRT"));
  EXPECT_TRUE(has(binary, "TTMQR"));
  EXPECT_TRUE(binary.cold.empty());
  EXPECT_EQ(binary.calls, static_cast<int>(binary.shapes.size()));
  EXPECT_TRUE(run("qr", "", "").cold.empty());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Operands past what a process can address are OutOfMemory (exit 4), not
// std::length_error (an internal error, exit 5: calibrate --sizes
// 2000000000), and 3037000500^2 no longer wraps r * c in int64; a set's
// bytes are counted in double.
TEST(KernelCall, OperandsPastTheAddressSpaceAreOutOfMemory) {
  using kernels::calibration::KernelCall;
  for (const std::int64_t b : {std::int64_t{2'000'000'000}, std::int64_t{3'037'000'500}}) {
    SCOPED_TRACE(b);
    EXPECT_THROW(KernelCall<double>(KernelShape{kGsmm, 'd', b, b, b, 0}, 0, 2, 1), OutOfMemory);
    const double e = static_cast<double>(b) * static_cast<double>(b);
    EXPECT_DOUBLE_EQ(KernelCall<double>::set_bytes(KernelShape{kGsmm, 'd', b, b, b, 0}, 0), 3 * e * 8);
  }
}

// A calibration times many calls on the same operands (experiments/
// kernel_call.hpp), so each call must find what the first found: a kernel
// that overwrites an input it reads (the factorizations and solves: POTF2',
// TRSM, GEQRT, TSQRT, TTQRT, LU's PANEL, DIAG and both TRSMs) gets it back
// from prepare(), and a second call gives the first's bytes; otherwise TRSM,
// for one, would solve with L again on its own result, shrinking its operand
// by the diagonal each call until the numbers are subnormal and slow. The
// updates (GSMM, GSMM_DIAG, LARFB, SSRFB, TTMQR, LU_GEMM) only accumulate
// into C (SSRFB and TTMQR also into the block above it, A), whose values do
// not change their speed: their other operands stay as the first call found
// them.
TEST(KernelCall, EveryCallFindsTheOperandsTheFirstFound) {
  using kernels::calibration::KernelCall;
  using Op = KernelCall<double>::Operand;
  const std::vector<std::uint16_t> overwriting = {kPotf2p,  kTrsm,   kGeqrt,   kTsqrt,  kTtqrt,
                                                  kLuPanel, kLuDiag, kLuTrsmL, kLuTrsmU};
  const std::vector<std::uint16_t> updating = {kGsmm, kGsmmDiag, kLarfb, kSsrfb, kTtmqr, kLuGemm};
  const auto snapshot = [](KernelCall<double>& call) {
    std::vector<std::vector<double>> all;
    for (int w = 0; w < Op::kOperands; ++w) all.push_back(call.operand(0, w));
    return all;
  };
  for (const std::uint16_t kernel : overwriting) {
    SCOPED_TRACE(kernel_name(kernel));
    const bool has_k = kernel_info(kernel)->has_k;
    KernelCall<double> call(KernelShape{kernel, 'd', 48, 48, has_k ? 48 : 0, 16}, 16, 1, 7);
    call.prepare(0);
    call.run(0);
    const auto first = snapshot(call);
    call.prepare(0);
    call.run(0);
    EXPECT_EQ(snapshot(call), first);
  }
  for (const std::uint16_t kernel : updating) {
    SCOPED_TRACE(kernel_name(kernel));
    KernelCall<double> call(KernelShape{kernel, 'd', 48, 48, 48, 16}, 16, 1, 7);
    call.prepare(0);
    call.run(0);
    auto first = snapshot(call);
    call.prepare(0);
    call.run(0);
    auto second = snapshot(call);
    first[Op::kC].clear();  // C accumulates; so does SSRFB's and TTMQR's top block, A
    second[Op::kC].clear();
    if (kernel == kSsrfb || kernel == kTtmqr) {
      first[Op::kA].clear();
      second[Op::kA].clear();
    }
    EXPECT_EQ(second, first);
  }
}

}  // namespace
}  // namespace tessera
