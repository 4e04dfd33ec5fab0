// GPUs with too little memory (emulated): a tile that does not fit, or a task
// whose tiles do not fit together, stops the run with DeviceOutOfMemory naming
// the device, instead of hanging or crashing; with room for a few tiles the
// runtime evicts and writes back copies and still gives the serial result
// bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "gpu_test_util.hpp"

namespace tessera {
namespace {

using namespace test;

// Runs `body` on its own thread and fails (ending the test program) when it
// has not returned after `seconds`: a run that hangs must not look like one
// that is merely slow.
template <class F>
void within(double seconds, F body) {
  auto task = std::async(std::launch::async, body);
  if (task.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "the run did not end within %.0f s: it hangs\n", seconds);
    std::fflush(stderr);
    std::abort();
  }
  task.get();
}

// A tile that does not fit in a GPU: the run stops with DeviceOutOfMemory
// naming the device, instead of hanging or crashing.
TEST(GpuRuntimeOutOfMemory, ATileThatDoesNotFitThrows) {
  const TileLayout L(480, 480, 120, 1, 0);  // tiles of 120*120*8 = 115200 bytes
  const Reference<double> ref(true, L);
  const TileLayout L_qr(600, 480, 120, 1, 0);
  const Reference<double> ref_qr(false, L_qr);
  for (const bool chol : {true, false})
    for (const Net net : {Net::None, Net::Local}) {
      RunSpec r;
      r.chol = chol;
      r.net = net;
      r.G = 2;
      r.device = fast(100000);  // smaller than one tile
      within(60, [&] {
        try {
          if (chol) run_gpus<double>(r, L, ref);
          else run_gpus<double>(r, L_qr, ref_qr);
          ADD_FAILURE() << (chol ? "cholesky" : "qr") << ": a run whose tiles do not fit must throw";
        } catch (const DeviceOutOfMemory& e) {
          EXPECT_NE(std::string(e.what()).find("GPU "), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("100000"), std::string::npos) << e.what();
        }
      });
    }
}

// One node, one GPU with room for three Cholesky tiles of the ten it owns
// (and, with --keep-tiles, every copy it ever made kept otherwise): the
// generator evicts copies (the runtime's default: the one used again furthest
// ahead, runtime/next_use.hpp), writing back those the GPU
// alone holds, so the run completes within the device's memory with the
// serial result; with room for two tiles, a GSMM's three cannot be resident
// at once, and the run stops with DeviceOutOfMemory, frees its buffers and ends.
void run_one_node(std::size_t memory, bool release_tiles, Net net,
                  const std::function<void(NodeRuntime&, CholeskyExecutor<double>&, const TileLayout&, EmulatedDevice&,
                                           TileMatrix<double>&)>& body,
                  EmulatedDeviceOptions device = fast(), int fail_copy_at = 0, int* released_in_copy = nullptr) {
  const TileLayout L(480, 480, 120, 1, 0);
  const MultiLevelBlockCyclic dist(L, 1, 1, 1);
  const Placement where = factorization("cholesky").placement(L, dist);
  TileMatrix<double> a(L);
  generate(a, MatrixKind::Spd, kMatrixSeed);
  TileDataStore<double> store;
  store.add_tiles(0, a);
  device.memory_bytes = memory;
  auto owned = std::make_unique<EmulatedDevice>(1, device);
  EmulatedDevice& dev = *owned;
  const std::atomic<std::uint64_t> no_count{0};
  WatchedDevice watched(std::move(owned), no_count);
  watched.fail_copy_at = fail_copy_at;
  const auto tables = factorization("cholesky").gpu_tables(L, kIb, double{});
  std::optional<platform::LocalCluster> cluster;
  if (net == Net::Local) cluster.emplace(1);
  DistContext ctx;
  ctx.self = 0;
  ctx.where = where;
  ctx.network = cluster ? &cluster->node(0) : nullptr;
  ctx.store = &store;
  RuntimeOptions opt;
  opt.threads = 2;
  opt.dist = &ctx;
  opt.release_tiles = release_tiles;
  opt.gpus.push_back({&watched, &tables->executor(), &tables->tables, nullptr});
  platform::NativePlatform platform;
  CholeskyExecutor<double> ex(a);
  NodeRuntime rt(platform, opt);
  body(rt, ex, L, dev, a);
  if (released_in_copy) *released_in_copy = watched.released_in_copy;
}

// The Cholesky run must stop with an E whose message holds `message`.
template <class E>
void expect_run_fails(NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, const std::string& message,
                      const std::string& what) {
  within(60, [&] {
    try {
      rt.run(
          cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
      ADD_FAILURE() << what << ": the run succeeded";
    } catch (const E& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(message)) << what;
    }
  });
}

TEST(GpuRuntimeOutOfCore, ThreeTilesOfRoomEvictAndMatchTheSerialResult) {
  const std::size_t tile = 120 * 120 * 8, memory = 3 * tile + 100;
  const Reference<double> ref(true, TileLayout(480, 480, 120, 1, 0));
  for (const bool release : {true, false})
    for (const Net net : {Net::None, Net::Local})
      run_one_node(memory, release, net,
                   [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice& dev,
                       TileMatrix<double>& a) {
                     RunStats st;
                     within(60, [&] {
                       st = rt.run(
                           cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
                     });
                     ASSERT_EQ(st.gpus.size(), 1u);
                     EXPECT_LE(dev.peak(), memory) << "resident bytes above the GPU's capacity";
                     EXPECT_GT(st.gpus[0].evictions, 0u) << "ten tiles in the room of three need evictions";
                     // Every datum lives on the GPU here: what an eviction writes back is a
                     // version only the GPU held, and it must be current for the result to match.
                     EXPECT_GT(st.gpus[0].bytes_written_back, 0u);
                     // Evicted tiles come back: more crosses than the distinct data, all
                     // ten tiles of the lower triangle at least once each way.
                     EXPECT_EQ(st.gpus[0].distinct_bytes_in, 10 * tile);
                     EXPECT_EQ(st.gpus[0].distinct_bytes_out, 10 * tile);
                     EXPECT_GT(st.gpus[0].bytes_in, st.gpus[0].distinct_bytes_in);
                     // Each version goes to host memory at most once: an evicted copy whose
                     // version the host holds already is dropped, not written back. The 20
                     // tasks of 4x4 tiles write 20 versions.
                     EXPECT_LE(st.gpus[0].bytes_out, 20 * tile);
                     EXPECT_EQ(dev.in_use(), 0u);
                     for (int j = 0; j < L.tile_cols(); ++j)
                       for (int i = j; i < L.tile_rows(); ++i)
                         EXPECT_EQ(std::memcmp(a.tile(i, j), ref.a.tile(i, j), tile), 0)
                             << "tile (" << i << "," << j << "), release " << release;
                   });
}

// With room for every tile, the data that live on the GPU cross PCIe once
// in and once out (issue 15's residency), whatever the window and the
// network: bytes_in equals the distinct data's bytes.
TEST(GpuRuntimeOutOfCore, AmpleRoomMovesEachTileOnceEachWay) {
  const std::size_t tile = 120 * 120 * 8;
  // Room for two more tiles, and for the ten exactly: a buffer that fits
  // exactly is no reason to evict.
  for (const std::size_t memory : {12 * tile, 10 * tile})
    for (const bool release : {true, false})
      for (const Net net : {Net::None, Net::Local})
        run_one_node(memory, release, net,
                     [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice&,
                         TileMatrix<double>&) {
                       RunStats st;
                       within(60, [&] {
                         st = rt.run(
                             cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
                       });
                       ASSERT_EQ(st.gpus.size(), 1u);
                       const DeviceStats& d = st.gpus[0];
                       EXPECT_EQ(d.evictions, 0u);
                       EXPECT_EQ(d.bytes_in, 10 * tile) << "release " << release;
                       EXPECT_EQ(d.distinct_bytes_in, 10 * tile);
                       EXPECT_EQ(d.bytes_out, 10 * tile);
                       EXPECT_EQ(d.distinct_bytes_out, 10 * tile);
                     });
}

// Two copies queued per stream, and the n-th copy refused when it is
// handed to the device: the run stops with that error, every copy already
// on the device ends before its task finishes (so no buffer is freed under
// a copy), and every buffer is freed at the end.
TEST(GpuRuntimeOutOfCore, AFailedCopyWithTwoQueuedFreesNoBufferUnderACopy) {
  const std::size_t tile = 120 * 120 * 8;
  EmulatedDeviceOptions slow = fast();
  slow.bandwidth_Bps = 2e8;  // 0.6 ms a tile: copies queue up
  slow.copy_depth = 2;
  for (const int n : {2, 5, 9, 14}) {
    int released_in_copy = -1;
    run_one_node(
        12 * tile, true, Net::None,
        [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice& dev,
            TileMatrix<double>&) {
          expect_run_fails<std::runtime_error>(rt, ex, L, "copy refused", "copy " + std::to_string(n) + " refused");
          EXPECT_EQ(dev.in_use(), 0u) << "copy " << n;
        },
        slow, n, &released_in_copy);
    EXPECT_EQ(released_in_copy, 0) << "copy " << n << " refused: buffers freed while a copy used them";
  }
}

TEST(GpuRuntimeOutOfCore, ATaskWhoseTilesDoNotFitTogetherThrowsAndFreesTheBuffers) {
  const std::size_t tile = 120 * 120 * 8;
  for (const Net net : {Net::None, Net::Local})
    run_one_node(2 * tile + 100, true, net,
                 [&](NodeRuntime& rt, CholeskyExecutor<double>& ex, const TileLayout& L, EmulatedDevice& dev,
                     TileMatrix<double>&) {
                   expect_run_fails<DeviceOutOfMemory>(
                       rt, ex, L, "GPU 1 (emulated): out of memory: a buffer of 115200 bytes does not fit",
                       "a GSMM's three tiles in the room of two");
                   EXPECT_EQ(dev.in_use(), 0u) << "a failed run leaves buffers allocated on the device";
                 });
}

// Bit for bit on every grid with GPUs of little memory: room for four tiles
// (less than half of what a GPU's own tiles need on one node, more than one
// task's), so the plan evicts
// and writes back throughout; never an input of a queued task (the result
// would differ or a kernel would find no buffer), peak within the capacity.
// With a CUDA GPU's depths too (two copies queued per stream, two tasks'
// kernels queued at once, the kernels deferred to the wait for their task,
// tests/deferred_kernels.hpp): buffers admitted together must fit together,
// and no tile may be written back or its buffer reused before the kernels
// that write it have run.
TEST(GpuRuntimeOutOfCore, SmallGpusMatchSerialBitForBitOnEveryGrid) {
  // Under both evictions; at depth 2 the deferred kernels run on two lanes, tasks in turn.
  for (const Eviction eviction : {Eviction::NextUse, Eviction::Lru})
    for (const int depth : {1, 2})
      for (const bool chol : {true, false}) {
        const TileLayout L(chol ? 480 : 600, 480, 120, 3, 24);
        const Reference<double> ref(chol, L);
        const std::vector<TaskKey> serial = serial_keys(chol, L);
        // Two GPUs on one node too: each plans and evicts its own copies, and a
        // tile one GPU wrote and the other reads passes through the host.
        for (const auto& [g, G] :
             {std::pair{Grid{1, 1}, 1}, std::pair{Grid{1, 2}, 1}, std::pair{Grid{2, 1}, 1}, std::pair{Grid{1, 1}, 2}}) {
          RunSpec r;
          r.chol = chol;
          r.grid = g;
          r.G = G;
          // (Two GPUs share the node's tiles: room for three each, one task's, so both evict.)
          const std::size_t memory = (G == 1 ? 4 : 3) * (120 * 120 + kIb * 120) * 8;
          r.device = fast(memory);
          r.device.copy_depth = depth;
          r.device_kernel_depth = depth;
          r.defer_kernels = depth > 1;
          r.kernel_lanes = depth;
          r.eviction = eviction;
          const std::string what = std::string(chol ? "cholesky " : "qr ") + std::to_string(g.pr) + "x" +
                                   std::to_string(g.pc) + " GPUs " + std::to_string(G) + " depth " +
                                   std::to_string(depth) + (eviction == Eviction::Lru ? " lru" : " next-use");
          GpuOutcome o;
          within(120, [&] { o = run_gpus<double>(r, L, ref); });
          expect_correct(o, serial, what);
          std::uint64_t evictions = 0;
          for (const DeviceOutcome& d : o.devices) {
            EXPECT_LE(d.peak, memory) << what << " node " << d.node << " GPU " << d.gpu;
            if (r.defer_kernels) EXPECT_GT(d.deferred_calls, 0u) << what << " node " << d.node << ": kernels deferred";
            evictions += d.stats.evictions;
            if (g.pr * g.pc == 1) EXPECT_GT(d.stats.evictions, 0u) << what << " GPU " << d.gpu << " evicts";
          }
          if (g.pr * g.pc == 1) EXPECT_GT(evictions, 0u) << what;
        }
      }
}

}  // namespace
}  // namespace tessera
