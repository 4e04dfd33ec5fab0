// Task-window throughput: the Cholesky DAG with empty kernels, so the time is
// all runtime (APPEND, FIRE, ready queue, thread hand-offs).
#include <benchmark/benchmark.h>

#include "algorithms/cholesky.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/distribution.hpp"
#include "runtime/phantom_data_store.hpp"
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
    auto st = rt.run(
        tessera::cholesky_data_count(layout), [&](tessera::TaskSink& s) { tessera::cholesky_tasks(layout, s); }, nop);
    tasks += st.tasks;
  }
  state.counters["tasks_per_s"] = benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsRate);
  state.counters["tasks_per_run"] = static_cast<double>(tasks) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_CholeskyDagEmptyKernels)
    ->Args({100, 1})
    ->Args({100, 2})
    ->Args({200, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The protocol's cost per task on one node of a 10×10 grid: every generator
// walks the whole loop nest, and most tasks touch nothing of the node.
void BM_ProtocolInstancesPerTask(benchmark::State& state) {
  const int tiles = 200;
  const tessera::TileLayout layout(tiles, tiles, 1, 1, 0);
  const tessera::MultiLevelBlockCyclic dist(layout, 10, 10, 0);
  const tessera::Placement where = [&](tessera::DataId d) {
    return dist.owner(static_cast<int>(d) % tiles, static_cast<int>(d) / tiles);
  };
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
  state.counters["tasks_per_s"] =
      benchmark::Counter(static_cast<double>(all.tasks.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ProtocolInstancesPerTask)->Unit(benchmark::kMillisecond);

// The whole generator path of a distributed node for tasks that touch none
// of its data: the serial loop nest, the protocol's classification and the
// per-datum version bookkeeping, through NodeRuntime. Every tile lives on
// node 1; node 0 keeps nothing, so its run ends when its generator does.
void BM_DistributedSkipPerTask(benchmark::State& state) {
  const int tiles = 200;
  const tessera::TileLayout layout(tiles, tiles, 1, 1, 0);
  struct Silent final : tessera::platform::NodeNetwork {
    int node() const override { return 0; }
    int nodes() const override { return 2; }
    void start(tessera::platform::DeliverFn) override {}
    void send(int, tessera::platform::Message&&) override { throw std::logic_error("node 0 sends nothing"); }
    void stop() override {}
    void allreduce_sum(std::vector<double>&) override {}
  } net;
  tessera::PhantomDataStore store([](tessera::DataId) { return std::size_t{8}; }, 8);
  tessera::DistContext ctx;
  ctx.self = 0;
  ctx.where = [](tessera::DataId) { return tessera::Location{1, 0}; };
  ctx.network = &net;
  ctx.store = &store;
  tessera::platform::NativePlatform platform;
  tessera::RuntimeOptions opt;
  opt.dist = &ctx;
  tessera::NodeRuntime rt(platform, opt);
  NopExecutor ex;
  std::uint64_t tasks = 0;
  for (auto _ : state) {
    struct Counting final : tessera::TaskSink {
      tessera::TaskSink* inner = nullptr;
      std::uint64_t n = 0;
      void insert(const tessera::TaskDesc& t) override {
        ++n;
        inner->insert(t);
      }
    };
    std::uint64_t walked = 0;
    const tessera::RunStats st = rt.run(
        tessera::cholesky_data_count(layout),
        [&](tessera::TaskSink& s) {
          Counting c;
          c.inner = &s;
          tessera::cholesky_tasks(layout, c);
          walked = c.n;
        },
        ex);
    if (st.tasks != 0) state.SkipWithError("node 0 kept a task");
    tasks = walked;
  }
  state.counters["tasks_per_s"] =
      benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DistributedSkipPerTask)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
