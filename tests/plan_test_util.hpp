#pragma once
// A node's runtime state with nothing running it: the generator's protocol
// (runtime/protocol_sink.hpp) plans into its window, where each slot's list
// (TaskWindow::list_of) shows the plan, and a test may drive one of the
// runtime's threads on it (the device communication thread, say) by hand.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "platform/native/emulated_device.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/node_runtime.hpp"
#include "runtime/phantom_data_store.hpp"
#include "runtime/protocol_sink.hpp"
#include "runtime/run_state.hpp"

namespace tessera::test {

// `n_data` data of 1 KiB placed by `where`, on node 0 with one emulated GPU
// (options `gpu`) of each memory in `gpu_memory`, planned by a sink with
// Release_Tile honoured. Given the whole task graph, `graph`, the sink
// evicts by next use (it replays the graph to learn the future); without,
// least recently used. The test inserts the tasks.
struct Plan {
  const std::size_t n_data;
  const std::vector<TaskDesc> graph;
  const std::function<void(TaskSink&)> replay = [this](TaskSink& to) {
    for (const TaskDesc& t : graph) to.insert(t);
  };
  platform::NativePlatform platform;
  std::vector<std::unique_ptr<platform::EmulatedDevice>> devices;
  PhantomDataStore store{[](DataId) { return std::size_t{1024}; }, 8};
  DistContext ctx;
  RuntimeOptions options;
  std::unique_ptr<detail::RunState> state;
  std::unique_ptr<detail::ProtocolSink> sink;

  Plan(std::size_t n, Placement where, const std::vector<std::size_t>& gpu_memory, std::vector<TaskDesc> tasks = {},
       platform::EmulatedDeviceOptions gpu = {})
      : n_data(n), graph(std::move(tasks)) {
    ctx.self = 0;
    ctx.where = std::move(where);
    ctx.store = &store;
    options.dist = &ctx;
    for (const std::size_t bytes : gpu_memory) {
      gpu.memory_bytes = bytes;
      devices.push_back(std::make_unique<platform::EmulatedDevice>(static_cast<int>(devices.size()) + 1, gpu));
      // (The phantom store's tile tables point nowhere.)
      options.gpus.push_back(GpuContext{devices.back().get(), nullptr, &store});
    }
    state = std::make_unique<detail::RunState>(n_data, options, platform);
    state->dist = &ctx;
    sink = std::make_unique<detail::ProtocolSink>(*state, n_data, static_cast<int>(devices.size()), true,
                                                  Broadcast::Binomial, graph.empty() ? nullptr : &replay);
  }

  // The tasks planned on slot (x, dev), in window order.
  std::vector<const Task*> on(DataId x, int dev) const { return state->window.list_of(dev * n_data + x); }
  // How many of them run `kernel` (and, for copies, in direction `dir`; -1: either).
  int count(DataId x, int dev, std::uint16_t kernel, int dir = -1) const {
    int n = 0;
    for (const Task* t : on(x, dev)) n += t->desc.kernel == kernel && (dir < 0 || t->desc.arg[3] == dir);
    return n;
  }
};

}  // namespace tessera::test
