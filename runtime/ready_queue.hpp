#pragma once
// Ready tasks of one device. Workers block in pop() until a task is ready or
// the queue is closed. The order among ready tasks is a policy: by priority
// (then serial order), FIFO, or uniformly random (for tests that check the
// result does not depend on the execution order).
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "platform/platform.hpp"
#include "runtime/task_window.hpp"

namespace tessera {

enum class ReadyPolicy { Priority, Fifo, Random };

class ReadyQueue {
 public:
  ReadyQueue(platform::Platform& platform, ReadyPolicy policy, std::uint64_t seed = 1);
  void push(Task* t);
  void push(const std::vector<Task*>& ts);
  // Blocks until a task is ready (returns it) or the queue is closed and empty (returns nullptr).
  Task* pop();
  // A ready task if there is one now, else nullptr (closed or not).
  Task* try_pop();
  void close();

 private:
  void push_locked(Task* t);
  Task* pop_locked();

  ReadyPolicy policy_;
  std::mt19937_64 rng_;
  // A ready task with its order keys beside it: the heap's comparisons read
  // no task (each read was a cache miss in a simulated cluster's thousands
  // of windows: 3% of a 100-node simulation).
  struct Item {
    std::int32_t priority;
    std::uint64_t seq;
    Task* task;
  };
  std::vector<Item> items_;  // heap for Priority, ring for Fifo, bag for Random
  std::size_t fifo_head_ = 0;
  std::unique_ptr<platform::Mutex> mutex_;
  std::unique_ptr<platform::Condition> cond_;
  int sleepers_ = 0;
  bool closed_ = false;
};

}  // namespace tessera
