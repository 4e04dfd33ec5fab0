// What a run asks of the node, checked before any work starts
// (experiments/preflight.hpp): thread counts a native node cannot run exit 2,
// a matrix larger than the memory available exits 4 at once, naming both.
//
// Built twice: in tessera_unit_tests (label unit) the pure functions (the
// thread limit, the byte estimate, /proc parsing and the decision); in
// tessera_cli_tests (label cli, where TESSERA_BIN names the binary) the
// `tessera` binary refusing such runs within seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "experiments/driver_parts.hpp"
#include "experiments/preflight.hpp"
#include "platform/kernel_time_model.hpp"
#include "platform/native/emulated_device.hpp"
#include "platform/network.hpp"
#ifdef TESSERA_BIN
#include "cli_expect.hpp"
#endif

namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace tessera;
using namespace tessera::preflight;

#ifndef TESSERA_BIN

// ---- Threads ---------------------------------------------------------------

TEST(PreflightThreads, LimitIsFourPerCoreAndAtLeast64) {
  EXPECT_EQ(thread_limit(0), 64);  // unknown: counts as 1 core
  EXPECT_EQ(thread_limit(1), 64);
  EXPECT_EQ(thread_limit(2), 64);
  EXPECT_EQ(thread_limit(16), 64);
  EXPECT_EQ(thread_limit(17), 68);
  EXPECT_EQ(thread_limit(64), 256);
}

TEST(PreflightThreads, NodeCountsManagersAndCommunicationThreads) {
  EXPECT_EQ(node_threads(4, 0, false).total(), 4);
  const NodeThreads t = node_threads(4, 3, true);
  EXPECT_EQ(t.compute, 4);
  EXPECT_EQ(t.gpu_managers, 3);
  EXPECT_EQ(t.device_comm, 1);
  EXPECT_EQ(t.network_comm, 1);
  EXPECT_EQ(t.total(), 9);
  EXPECT_EQ(node_threads(100000, 0, false).total(), 100000);
}

TEST(PreflightThreads, RefusalNamesTheOptionTheLimitAndTheCores) {
  EXPECT_THAT(thread_refusal(node_threads(64, 0, false), 2), IsEmpty());
  const std::string why = thread_refusal(node_threads(65, 0, false), 2);
  for (const char* s : {"--threads 65", "65 threads", "limit of 64 = max(4 x 2 cores found, 64)",
                        "threads beyond the cores only take turns",
                        "use --threads 64 or fewer (--threads 2 gives every thread a core of its own)"})
    EXPECT_THAT(why, HasSubstr(s));
  // GPUs' manager threads and the communication threads count too.
  EXPECT_THAT(thread_refusal(node_threads(62, 0, true), 2), IsEmpty());
  EXPECT_THAT(thread_refusal(node_threads(60, 2, true), 2), IsEmpty());
  const std::string gpus = thread_refusal(node_threads(61, 2, true), 2);
  for (const char* s : {"--threads 61 --gpus 2", "65 threads",
                        "2 GPU managers, 1 device communication, 1 MPI communication", "use --threads 60 or fewer"})
    EXPECT_THAT(gpus, HasSubstr(s));
  EXPECT_THAT(thread_refusal(node_threads(1, 100, false), 2), HasSubstr("use fewer --gpus"));
  EXPECT_THAT(thread_refusal(node_threads(65, 0, false), 0), HasSubstr("1 core (the core count is unknown)"));
  EXPECT_THAT(thread_refusal(node_threads(257, 0, false), 64), HasSubstr("limit of 256 = max(4 x 64 cores found, 64)"));
  EXPECT_THAT(thread_refusal(node_threads(256, 0, false), 64), IsEmpty());
}

TEST(PreflightThreads, CoresFoundIsPositiveHere) { EXPECT_GE(cores_found(), 1); }

// ---- Reading /proc and the limits -------------------------------------------

constexpr const char* kMeminfo =
    "MemTotal:       24683620 kB\n"
    "MemFree:         1000000 kB\n"
    "MemAvailable:   24245124 kB\n"
    "Buffers:          123456 kB\n"
    "HugePages_Total:       0\n";
constexpr const char* kStatus =
    "Name:\ttessera\n"
    "VmPeak:\t 2000000 kB\n"
    "VmSize:\t 1500000 kB\n"
    "VmData:\t  300000 kB\n";
constexpr std::uint64_t kUnlimited = ~std::uint64_t{0};

TEST(PreflightMemory, ReadsProcFieldsInBytes) {
  EXPECT_EQ(proc_field_bytes(kMeminfo, "MemAvailable"), std::uint64_t{24245124} * 1024);
  EXPECT_EQ(proc_field_bytes(kMeminfo, "MemTotal"), std::uint64_t{24683620} * 1024);
  EXPECT_EQ(proc_field_bytes(kMeminfo, "HugePages_Total"), std::uint64_t{0});  // a count, no unit
  EXPECT_EQ(proc_field_bytes(kStatus, "VmSize"), std::uint64_t{1500000} * 1024);
  EXPECT_EQ(proc_field_bytes(kMeminfo, "MemAvail"), std::nullopt);  // a prefix is not the field
  EXPECT_EQ(proc_field_bytes(kMeminfo, "Cached"), std::nullopt);
  EXPECT_EQ(proc_field_bytes("", "MemAvailable"), std::nullopt);
  EXPECT_EQ(proc_field_bytes("MemAvailable: lots kB\n", "MemAvailable"), std::nullopt);
  EXPECT_EQ(proc_field_bytes("MemAvailable: 12 MB\n", "MemAvailable"), std::nullopt);
  EXPECT_EQ(proc_field_bytes("MemAvailable:   7 kB", "MemAvailable"), std::uint64_t{7 * 1024});  // no final newline
}

TEST(PreflightMemory, AvailableIsMemAvailableWithoutLimits) {
  const MemoryFacts f = memory_facts(kMeminfo, kStatus, kUnlimited, kUnlimited, kUnlimited, 1);
  EXPECT_EQ(f.as_limit, std::nullopt);
  EXPECT_EQ(f.data_limit, std::nullopt);
  EXPECT_EQ(f.vm_size, std::uint64_t{1500000} * 1024);
  EXPECT_EQ(f.vm_data, std::uint64_t{300000} * 1024);
  const auto a = available_memory(f);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 24245124.0 * 1024);
  EXPECT_EQ(a->source, "MemAvailable in /proc/meminfo");
}

TEST(PreflightMemory, AnAddressSpaceLimitCountsWhatTheProcessMapsAlready) {
  // ulimit -v 3000000: 3000000 KiB, of which 1500000 KiB are mapped already.
  const auto a = available_memory(memory_facts(kMeminfo, kStatus, 3000000ull * 1024, kUnlimited, kUnlimited, 1));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 1500000.0 * 1024);
  EXPECT_THAT(a->source, HasSubstr("ulimit -v"));
  EXPECT_THAT(a->source, HasSubstr("2.86 GiB"));
  EXPECT_THAT(a->source, HasSubstr("1.43 GiB"));
  // A limit already exceeded leaves nothing; a limit above MemAvailable does not bind.
  EXPECT_EQ(available_memory(memory_facts(kMeminfo, kStatus, 1000ull * 1024, kUnlimited, kUnlimited, 1))->bytes, 0.0);
  EXPECT_EQ(available_memory(memory_facts(kMeminfo, kStatus, 1ull << 50, kUnlimited, kUnlimited, 1))->source,
            "MemAvailable in /proc/meminfo");
}

// Under an address-space limit the address space the run's threads will
// reserve is not available to its data: a rank that passed without it hung in
// OpenBLAS's retried mmap.
TEST(PreflightMemory, AnAddressSpaceLimitCountsWhatTheThreadsReserve) {
  MemoryFacts f = memory_facts(kMeminfo, kStatus, 3000000ull * 1024, kUnlimited, kUnlimited, 1);
  f.thread_reserve = 500000ull * 1024;
  f.threads = 3;
  const auto a = available_memory(f);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 1000000.0 * 1024);
  EXPECT_THAT(a->source,
              HasSubstr("less the 1.43 GiB (1536000000 bytes) this process maps already and the 0.48 GiB "
                        "(512000000 bytes) its 3 threads reserve (stacks, malloc arenas, OpenBLAS buffers)"));
  // Without an address-space limit the reserve binds nothing (it is not memory the threads touch).
  f.as_limit.reset();
  EXPECT_EQ(available_memory(f)->source, "MemAvailable in /proc/meminfo");
  // More than the limit leaves nothing.
  f = memory_facts(kMeminfo, kStatus, 1600000ull * 1024, kUnlimited, kUnlimited, 1);
  f.thread_reserve = 500000ull * 1024;
  EXPECT_EQ(available_memory(f)->bytes, 0.0);
}

TEST(PreflightMemory, ThreadsReserveStacksArenasAndBlasBuffers) {
  constexpr std::uint64_t MiB = 1 << 20, stack = 8 * MiB;
  // 2 compute threads, the MPI thread and the generator: 4 stacks and arenas, 2 OpenBLAS buffers.
  const NodeThreads cpu = node_threads(2, 0, true);
  EXPECT_EQ(reserved_threads(cpu, false), 4);
  EXPECT_EQ(thread_reserve(cpu, false, 16, stack), 4 * (stack + kMallocArenaBytes) + 2 * kBlasBufferBytes);
  EXPECT_EQ(kMallocArenaBytes, 64 * MiB);
  EXPECT_EQ(kBlasBufferBytes, 128 * MiB);
  // 2 emulated GPUs add their managers (running CPU kernels), the device
  // communication thread and 2 copy engines each; glibc makes at most 8
  // arenas per core.
  const NodeThreads gpus = node_threads(1, 2, false);
  EXPECT_EQ(reserved_threads(gpus, true), 1 + 2 + 1 + 1 + 4);
  EXPECT_EQ(thread_reserve(gpus, true, 16, stack), 9 * (stack + kMallocArenaBytes) + 3 * kBlasBufferBytes);
  EXPECT_EQ(thread_reserve(gpus, true, 1, stack), 9 * stack + 8 * kMallocArenaBytes + 3 * kBlasBufferBytes);
  // CUDA GPUs' managers run no CPU kernel and have no copy-engine threads.
  EXPECT_EQ(reserved_threads(gpus, false), 5);
  EXPECT_EQ(thread_reserve(gpus, false, 16, stack), 5 * (stack + kMallocArenaBytes) + kBlasBufferBytes);
  EXPECT_GT(default_stack_bytes(), 0u);
}

// A simulated cluster with data runs its nodes as actors in this process, each on a SimGrid stack: under an
// address-space limit they are counted (without them a 1x2 Cholesky whose tiles fitted passed the check, and SimGrid
// aborted at the first actor it could not give a stack). Per node: main, generator, 12 compute threads, 3 GPU
// managers, the device communication actor, 3 GPUs x (2 copy engines + 2 streams), the communication actor and 16
// senders: 2 + 12 + 3 + 1 + 12 + 17 = 47.
TEST(PreflightMemory, ASimulatedClustersActorsReserveTheirStacks) {
  EXPECT_EQ(simulated_actors(1, 2, 0, 1), 4);
  EXPECT_EQ(simulated_actors(2, 2, 0, 1), 2 * (4 + 1 + platform::kSendsInFlight));
  EXPECT_EQ(simulated_actors(4, 12, 3, 2), 4 * 47);
  // Counted in 64 bits: --gpu-streams 2^31 - 1 on 1,000 GPUs wrapped an int.
  EXPECT_EQ(simulated_actors(2, 1, 1000, 2147483647),
            2 * (2 + 1 + 1000 + 1 + std::int64_t{1000} * (2 + 2147483647LL) + 1 + platform::kSendsInFlight));
  MemoryFacts f = memory_facts(kMeminfo, kStatus, 3000000ull * 1024, kUnlimited, kUnlimited, 1);
  f.actors = true;
  f.threads = 40;
  f.thread_reserve = 40 * kSimActorStackBytes;
  const auto a = available_memory(f);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 3000000.0 * 1024 - 1536000000.0 - 40.0 * kSimActorStackBytes);
  EXPECT_THAT(a->source, HasSubstr("this process maps already and the 0.31 GiB (335708160 bytes) the stacks of its "
                                   "40 simulated actors reserve"));
}

TEST(PreflightMemory, ADataLimitCountsTheDataSegment) {
  const auto a = available_memory(memory_facts(kMeminfo, kStatus, kUnlimited, 800000ull * 1024, kUnlimited, 1));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 500000.0 * 1024);
  EXPECT_THAT(a->source, HasSubstr("ulimit -d"));
}

TEST(PreflightMemory, RanksOnOneHostSplitMemAvailable) {
  const auto a = available_memory(memory_facts(kMeminfo, kStatus, kUnlimited, kUnlimited, kUnlimited, 4));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bytes, 24245124.0 * 1024 / 4);
  EXPECT_THAT(a->source, HasSubstr("4 MPI ranks on this host"));
}

TEST(PreflightMemory, NothingKnownIsNoAnswer) {
  EXPECT_EQ(available_memory(memory_facts("", "", kUnlimited, kUnlimited, kUnlimited, 1)), std::nullopt);
  // A limit alone still answers.
  EXPECT_TRUE(available_memory(memory_facts("", "", 1ull << 30, kUnlimited, kUnlimited, 1)));
}

TEST(PreflightMemory, ProbeReadsThisMachine) {
  const MemoryFacts f = probe_memory();
  ASSERT_TRUE(f.mem_available) << "/proc/meminfo has no MemAvailable";
  EXPECT_GT(*f.mem_available, 0u);
  EXPECT_GT(f.vm_size, 0u);
  EXPECT_TRUE(available_memory(f));
}

// ---- The byte estimate --------------------------------------------------------

RunConfig resolved(const std::string& algo, index_t n, index_t B, char precision = 'd') {
  RunConfig c;
  c.algo = algo;
  c.m = c.n = n;
  c.B = B;
  c.b = 0;
  c.precision = precision;
  return c;
}

constexpr double kNoBudget = 1e300;

TEST(PreflightMemory, CholeskyNeedsItsTilesAndTheCheckCopy) {
  RunConfig c = resolved("cholesky", 1000, 128);
  MemoryNeed need = memory_need(c, kNoBudget);
  EXPECT_TRUE(need.checked);
  EXPECT_EQ(need.data, 1000.0 * 1000 * 8);
  EXPECT_EQ(need.check_copy, 0.0);
  EXPECT_EQ(need.total(), 8e6);
  c.check = true;
  EXPECT_EQ(memory_need(c, kNoBudget).total(), 16e6);
  c.precision = 's';
  EXPECT_EQ(memory_need(c, kNoBudget).total(), 8e6);
  c.column_major = true;  // the caller's dense matrix beside the tiles
  EXPECT_EQ(memory_need(c, kNoBudget).dense_copy, 4e6);
  EXPECT_EQ(memory_need(c, kNoBudget).total(), 12e6);
}

TEST(PreflightMemory, QrAddsItsTFactorsAndPanelCopies) {
  // m = n = 1000, B = 100, ib = 32: 10 tile rows; T of tile (i, k), i >= k:
  // ib x B each (55 tiles), and one panel copy per column: (B + ib) x B.
  RunConfig c = resolved("qr", 1000, 100);
  c.ib = 32;
  const double word = 8, tiles = 1000.0 * 1000, t = 55.0 * 32 * 100, panels = 10.0 * (100 + 32) * 100;
  EXPECT_EQ(memory_need(c, kNoBudget).data, (tiles + t + panels) * word);
}

TEST(PreflightMemory, AMatrixAboveTheBudgetIsNotSummedTile_by_tile) {
  // The lower bound (the tiles alone) already says no.
  RunConfig c = resolved("qr", 2000000, 320);
  const MemoryNeed need = memory_need(c, 1e9);
  EXPECT_EQ(need.data, 2e6 * 2e6 * 8);
}

TEST(PreflightMemory, PeersHoldTheDenseMatrix) {
  RunConfig c = resolved("qr", 1000, 1000);
  c.impl = Impl::Lapack;
  c.check = true;
  const MemoryNeed need = memory_need(c, kNoBudget);
  EXPECT_EQ(need.data, 8e6);
  EXPECT_EQ(need.check_copy, 8e6);
}

TEST(PreflightMemory, AnMpiRankNeedsItsShare) {
  RunConfig c = resolved("cholesky", 1000, 100);
  c.pr = 2;
  c.pc = 2;
  c.check = true;
  const MemoryNeed need = memory_need(c, kNoBudget);
  EXPECT_EQ(need.nodes, 4);
  EXPECT_EQ(need.nodes_here, 1);
  EXPECT_EQ(need.data, 2e6);
  EXPECT_EQ(need.check_copy, 2e6);
}

struct ZeroModel final : KernelTimeModel {
  double seconds(const KernelShape&) const override { return 0; }
};

TEST(PreflightMemory, ASimulatedClusterHoldsEveryNodeAndAPhantomOneNothing) {
  const ZeroModel model;
  RunConfig c = resolved("cholesky", 1000, 100);
  c.pr = 2;
  c.pc = 2;
  c.model = &model;
  const MemoryNeed need = memory_need(c, kNoBudget);
  EXPECT_EQ(need.nodes_here, 4);
  EXPECT_EQ(need.data, 8e6);
  c.phantom = true;
  c.m = c.n = 100000000;  // 8e16 bytes, never allocated
  c.B = 100000;
  const MemoryNeed none = memory_need(c, kNoBudget);
  EXPECT_FALSE(none.checked);
  EXPECT_THAT(memory_refusal(c, none, Available{1, "test"}), IsEmpty());
}

// A simulated cluster whose GPUs hold data (--sim-data) keeps every node's
// GPU buffers in this process: one 1e6-byte GPU per node (under each node's
// 2e6 bytes of data) on each of the four nodes.
TEST(PreflightMemory, SimulatedGpusWithDataHoldBuffersOnEveryNode) {
  const ZeroModel model;
  RunConfig c = resolved("cholesky", 1000, 100);
  c.pr = 2;
  c.pc = 2;
  c.model = &model;
  platform::EmulatedDeviceOptions o;
  o.memory_bytes = 1000000;
  platform::EmulatedDevice gpu(1, o);
  c.devices = {&gpu};
  const MemoryNeed need = memory_need(c, kNoBudget);
  EXPECT_EQ(need.nodes_here, 4);
  EXPECT_EQ(need.gpu_buffers, 4e6);
}

TEST(PreflightMemory, EmulatedGpusBuffersAreHostMemory) {
  RunConfig c = resolved("cholesky", 1000, 100);
  c.gpus = 2;
  c.emulated.memory_bytes = 1000000;  // less than the 8e6 bytes of data: each GPU holds at most its memory
  EXPECT_EQ(memory_need(c, kNoBudget).gpu_buffers, 2e6);
  c.emulated.memory_bytes = std::size_t{4} << 30;  // more: at most the node's data
  EXPECT_EQ(memory_need(c, kNoBudget).gpu_buffers, 16e6);
  c.device = DeviceKind::Cuda;  // device memory, not host memory
  EXPECT_EQ(memory_need(c, kNoBudget).gpu_buffers, 0.0);
}

TEST(PreflightMemory, RefusalNamesNeededAndAvailableAndTheOptions) {
  RunConfig c = resolved("cholesky", 2000000, 320);
  c.check = true;
  const MemoryNeed need = memory_need(c, 1e9);
  const Available a{24245124.0 * 1024, "MemAvailable in /proc/meminfo"};
  const std::string why = memory_refusal(c, need, a);
  for (const char* s : {"out of memory: the run needs 59604.64 GiB (64000000000000 bytes) on this node",
                        "but 23.12 GiB (24827006976 bytes) is available (MemAvailable in /proc/meminfo)",
                        "the 2000000 x 2000000 matrix in double (--n 2000000 --precision d)",
                        "--check's copy of the input", "use a smaller --n, --precision s, no --check"})
    EXPECT_THAT(why, HasSubstr(s));
  // Exactly what is available fits.
  EXPECT_THAT(memory_refusal(c, need, Available{need.total(), "test"}), IsEmpty());
  EXPECT_THAT(memory_refusal(c, need, Available{need.total() - 1, "test"}), Not(IsEmpty()));
}

TEST(PreflightMemory, GibFormat) { EXPECT_EQ(gib(1073741824.0 * 1.5), "1.50 GiB (1610612736 bytes)"); }

#else  // TESSERA_BIN: the binary

using namespace tessera::test::cli;
using tessera::test::Outcome;

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `--threads 100000` on any machine of fewer than 25000 cores: refused at
// once (it used to run for minutes), naming the limit and the cores.
TEST(CliPreflight, ThreadsBeyondTheLimitExitTwoAtOnce) {
  const double s = seconds_of([] {
    expect_rejected(kInvalidInput, base({"--n", "100", "--threads", "100000"}),
                    {"--threads 100000", "limit of", "cores found", "take turns"});
  });
  EXPECT_LT(s, 10.0);
  // With GPUs their manager and communication threads count too.
  const int limit = thread_limit(cores_found());
  expect_rejected(kInvalidInput,
                  base({"--n", "100", "--threads", std::to_string(limit - 2), "--gpus", "2", "--B", "64"}),
                  {"--gpus 2", std::to_string(limit + 1) + " threads", "GPU managers"});
}

// The limit itself still runs (64 threads on a small machine: about a second).
TEST(CliPreflight, ThreadsAtTheLimitRun) {
  const int limit = thread_limit(cores_found());
  if (limit > 256) GTEST_SKIP() << "a limit of " << limit << " threads takes too long to start here";
  expect_success(run_tessera(base({"--n", "100", "--threads", std::to_string(limit)})));
  expect_rejected(kInvalidInput, base({"--n", "100", "--threads", std::to_string(limit + 1)}),
                  {"--threads " + std::to_string(limit + 1), "limit of " + std::to_string(limit)});
}

// A matrix no machine here holds: 2e6 x 2e6 doubles are 29.1 TiB. Refused
// before allocating (it used to allocate for 48 s), naming both numbers.
TEST(CliPreflight, AMatrixBeyondTheMemoryExitsFourAtOnce) {
  const double s = seconds_of([] {
    expect_rejected(kOutOfMemory, base({"--n", "2000000"}),
                    {"out of memory: the run needs 29802.32 GiB (32000000000000 bytes)", "is available (",
                     "--n 2000000", "use a smaller --n"});
    expect_rejected(kOutOfMemory, base({"--n", "2000000", "--check"}, "qr"),
                    {"out of memory", "--check's copy of the input", "--n 2000000"});
    expect_rejected(kOutOfMemory, base({"--n", "2000000", "--impl", "lapack"}), {"out of memory", "--n 2000000"});
  });
  EXPECT_LT(s, 15.0);
}

// Under `ulimit -v`, the address space left bounds the run: 20000^2 doubles
// (3.2e9 bytes) exceed a 3000000 KiB limit whatever the process maps already,
// while a matrix well inside it still runs.
TEST(CliPreflight, AnAddressSpaceLimitExitsFourNamingIt) {
  const auto available = tessera::preflight::probe_memory().mem_available;
  if (!available || *available < (std::uint64_t{6} << 30))
    GTEST_SKIP() << "MemAvailable is below 6 GiB: it, not the ulimit, would bind";
  const auto under_ulimit = [](const std::string& args) {
    return std::vector<std::string>{"-c", "ulimit -v 3000000 && exec " + std::string(TESSERA_BIN) + " " + args};
  };
  const Outcome o = tessera::test::run_process("sh", under_ulimit("run --algo cholesky --n 20000"), 60);
  ASSERT_TRUE(o.exited) << o;
  EXPECT_EQ(o.status, kOutOfMemory) << o;
  EXPECT_EQ(o.out, "") << o;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o;
  for (const char* s : {"tessera: error: out of memory: the run needs 2.98 GiB (3200000000 bytes)",
                        "the address-space limit (ulimit -v, RLIMIT_AS) of 2.86 GiB (3072000000 bytes)", "--n 20000"})
    EXPECT_THAT(o.err, HasSubstr(s)) << o;
  expect_success(tessera::test::run_process("sh", under_ulimit("run --algo cholesky --n 1000 --threads 2"), 60));
}

// A simulated run without data allocates no tile, but each of its actors takes a SimGrid stack (8 MiB): 100 nodes of
// 11 threads are 3,000 actors, 23.4 GiB, beyond a 3000000 KiB limit. Refused at once naming them; SimGrid aborted
// (exit 134) at the first actor it could not give a stack. A small cluster under the same limit runs.
TEST(CliPreflight, APhantomSimulationsActorsMustFitTheAddressSpace) {
  if (!TESSERA_HAVE_SIMGRID) GTEST_SKIP() << "built without SimGrid";
  const auto under_ulimit = [](const std::string& args) {
    return std::vector<std::string>{"-c", "ulimit -v 3000000 && exec " + std::string(TESSERA_BIN) + " " + args};
  };
  const std::string sim = "run --backend sim --machine " + std::string(TESSERA_SOURCE_DIR) +
                          "/platform/machines/keeneland.json --algo cholesky --n 12000 --B 1000 --threads 11 --grid ";
  const Outcome o = tessera::test::run_process("sh", under_ulimit(sim + "10x10"), 60);
  ASSERT_TRUE(o.exited) << o;
  EXPECT_EQ(o.status, kOutOfMemory) << o;
  EXPECT_EQ(o.out, "") << o;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o;
  for (const char* s : {"tessera: error: out of memory: the simulated run cannot start its actors (3000 of --grid "
                        "10x10, --threads 11, --gpus 0)",
                        "the stacks of its 3000 simulated actors reserve"})
    EXPECT_THAT(o.err, HasSubstr(s)) << o;
  const Outcome small = tessera::test::run_process("sh", under_ulimit(sim + "2x2"), 60);
  EXPECT_TRUE(small.exited && small.status == 0) << small;
}

#endif

}  // namespace

// Several ranks of one job on a host with CUDA GPUs: each takes devices of
// its own (two ranks on one device each planned against its whole memory);
// too few devices is refused naming the counts; devices the user chose per
// rank (CUDA_VISIBLE_DEVICES) are taken as given.
TEST(CudaOrdinals, EachRankOfAHostTakesDevicesOfItsOwn) {
  using driver::cuda_ordinal;
  EXPECT_EQ(cuda_ordinal(1, 1, 1, 0, 1, false), 0);
  EXPECT_EQ(cuda_ordinal(3, 3, 4, 0, 1, false), 2);
  // Local rank 1 of 2, two GPUs each, on a host with four: devices 2 and 3.
  EXPECT_EQ(cuda_ordinal(1, 2, 4, 1, 2, false), 2);
  EXPECT_EQ(cuda_ordinal(2, 2, 4, 1, 2, false), 3);
  EXPECT_EQ(cuda_ordinal(2, 2, 4, 0, 2, false), 1);
  try {
    cuda_ordinal(1, 2, 3, 1, 2, false);
    ADD_FAILURE() << "two ranks of two GPUs on a host of three devices were not refused";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(),
                testing::HasSubstr("--gpus 2 on each of the 2 ranks of this host needs 4 CUDA devices, and 3"));
  }
  EXPECT_EQ(cuda_ordinal(2, 2, 2, 1, 2, true), 1);  // CUDA_VISIBLE_DEVICES per rank
}
