// Task-window throughput: the Cholesky DAG with empty kernels, so the time is
// all runtime (APPEND, FIRE, ready queue, thread hand-offs).
#include <benchmark/benchmark.h>

#include "platform/native/native_platform.hpp"
#include "runtime/algorithms/cholesky.hpp"
#include "runtime/distribution.hpp"
#include "runtime/protocol.hpp"

namespace {

class NopExecutor final : public tessera::Executor {
 public:
  void execute(const tessera::TaskDesc&, tessera::WorkerContext&) override {}
};

void BM_CholeskyDagEmptyKernels(benchmark::State& state) {
  const int tiles = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const tessera::TileLayout layout(tiles, tiles, 1, 1, 0);  // 1×1 tiles: a tiles×tiles tile grid
  tessera::platform::NativePlatform platform;
  tessera::RuntimeOptions opt;
  opt.threads = threads;
  opt.window_capacity = 16384;
  tessera::NodeRuntime rt(platform, opt);
  NopExecutor nop;
  std::uint64_t tasks = 0;
  for (auto _ : state) {
    auto st = rt.run(tessera::cholesky_data_count(layout), [&](tessera::TaskSink& s) { tessera::cholesky_tasks(layout, s); }, nop);
    tasks += st.tasks;
  }
  state.counters["tasks_per_s"] = benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsRate);
  state.counters["tasks_per_run"] = static_cast<double>(tasks) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_CholeskyDagEmptyKernels)->Args({100, 1})->Args({100, 2})->Args({200, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

// The protocol's cost per task on one node of a 10×10 grid: every generator
// walks the whole loop nest, and most tasks touch nothing of the node.
void BM_ProtocolInstancesPerTask(benchmark::State& state) {
  const int tiles = 200;
  const tessera::TileLayout layout(tiles, tiles, 1, 1, 0);
  const tessera::MultiLevelBlockCyclic dist(layout, 10, 10, 0);
  const tessera::Placement where = [&](tessera::DataId d) { return dist.owner(static_cast<int>(d) % tiles, static_cast<int>(d) / tiles); };
  struct Collect final : tessera::TaskSink {
    std::vector<tessera::TaskDesc> tasks;
    void insert(const tessera::TaskDesc& t) override { tasks.push_back(t); }
  } all;
  tessera::cholesky_tasks(layout, all);
  std::vector<tessera::Instance> out;
  std::size_t kept = 0;
  for (auto _ : state) {
    for (const auto& t : all.tasks) {
      out.clear();
      tessera::node_instances(t, where, 37, out);
      kept += out.size();
    }
  }
  benchmark::DoNotOptimize(kept);
  // Time per task = 1 / tasks_per_s.
  state.counters["tasks_per_s"] = benchmark::Counter(static_cast<double>(all.tasks.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ProtocolInstancesPerTask)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
