// Task-window throughput: the Cholesky DAG with empty kernels, so the time is
// all runtime (APPEND, FIRE, ready queue, thread hand-offs).
#include <benchmark/benchmark.h>

#include "platform/native/native_platform.hpp"
#include "runtime/algorithms/cholesky.hpp"

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

}  // namespace

BENCHMARK_MAIN();
