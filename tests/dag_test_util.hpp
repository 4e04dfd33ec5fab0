#pragma once
// Helpers shared by the task-graph, task-window and runtime tests
// (test_dag.cpp, test_task_window.cpp, test_node_runtime.cpp and those that
// read a generator's tasks): short names for the access modes, a no-op task
// tagged with its serial position, and a sink that keeps every task.
#include <initializer_list>
#include <utility>
#include <vector>

#include "base/kernel_table.hpp"
#include "base/task.hpp"

namespace tessera::test {

inline constexpr auto R = AccessMode::Read;
inline constexpr auto W = AccessMode::Write;
inline constexpr auto RW = AccessMode::ReadWrite;

// A kNop task whose arg[0] is `tag`, with the given accesses.
inline TaskDesc desc(int tag, std::initializer_list<std::pair<DataId, AccessMode>> acc) {
  TaskDesc d;
  d.kernel = kNop;
  d.arg[0] = tag;
  for (auto [id, m] : acc) d.add(id, m);
  return d;
}

// The tasks a generator inserts, in order (Release_Tile and discards ignored).
struct TaskList final : TaskSink {
  std::vector<TaskDesc> tasks;
  void insert(const TaskDesc& t) override { tasks.push_back(t); }
};

}  // namespace tessera::test
