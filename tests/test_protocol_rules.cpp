// Rule 7 of 000 §6 as the generator plans it (runtime/protocol_sink.hpp): a
// version a task writes away from its datum's home device goes back to that
// device at once, and a task pinned to a device (TaskDesc::device, 002's
// moving CPU/GPU split) leaves what it wrote where it ran. Results cannot
// show the rule (every reader finds the current version wherever it is, and
// the end of generation brings each datum home): the plan can. The shipped
// algorithms reach it only where a task's outputs live on two devices of a
// node (LU's panel buffer beside the step's plan with two GPUs), and a plan
// without it passed every other test.
//
// Then eviction: what goes home when a GPU's buffer is reused.
//
// The sink plans into a RunState no thread runs (tests/plan_test_util.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "base/kernel_table.hpp"
#include "plan_test_util.hpp"

namespace tessera {
namespace {

using platform::EmulatedDeviceOptions;
using test::Plan;

// One node, two GPUs, three data: 0 and 1 homed on GPU 1, 2 on GPU 2. A task
// whose main output is datum 2 (so it runs on GPU 2, rule 1) and which also
// writes datum 0 (`device`: -1, or the device it is pinned to).
struct OneTask : Plan {
  explicit OneTask(int device)
      : Plan(3,
             [](DataId x) {
               return Location{0, x == 2 ? 2 : 1};
             },
             {EmulatedDeviceOptions{}.memory_bytes, EmulatedDeviceOptions{}.memory_bytes}) {
    TaskDesc t = make_task(kGsmm, 0, 0, 0, 0);
    t.add(2, AccessMode::ReadWrite).add(0, AccessMode::ReadWrite).add(1, AccessMode::Read);
    t.device = static_cast<std::int8_t>(device);
    sink->insert(t);
  }
};

// The copy task of `tasks` that brings datum x's version v onto device `to`
// (nullptr: none).
const Task* copy_to(const std::vector<const Task*>& tasks, DataId x, int to, std::uint32_t v) {
  for (const Task* t : tasks)
    if (t->desc.kernel == kRuntimeCopy && t->desc.arg[0] == to && t->desc.arg[1] == static_cast<std::int32_t>(x) &&
        t->desc.arg[2] == static_cast<std::int32_t>(v) && t->desc.arg[3] != kCopyToHost)
      return t;
  return nullptr;
}

TEST(ProtocolRules, AVersionWrittenAwayFromItsHomeDeviceGoesBackAtOnce) {
  const OneTask run(-1);
  // The task ran on GPU 2: it is the writer of datum 2's and datum 0's slots there.
  const std::vector<const Task*> on_g2 = run.on(0, 2);
  const Task* task = nullptr;
  for (const Task* t : run.on(2, 2))
    if (t->desc.kernel == kGsmm) task = t;
  ASSERT_NE(task, nullptr) << "the task was not planned on GPU 2, the device of its main output";
  // Datum 0's new version (1) goes back to GPU 1, its home, after the task, through host memory (000 §5.4).
  const Task* back = copy_to(run.on(0, 1), 0, 1, 1);
  ASSERT_NE(back, nullptr) << "rule 7: datum 0, written on GPU 2, must be copied back to GPU 1 at once";
  EXPECT_GT(back->seq, task->seq);
  bool to_host = false;
  for (const Task* t : run.on(0, 0))
    to_host |= t->desc.kernel == kRuntimeCopy && t->desc.arg[0] == 2 && t->desc.arg[3] == kCopyToHost &&
               t->seq > task->seq && t->seq < back->seq;
  EXPECT_TRUE(to_host) << "the copy home is relayed through host memory";
  // The main output is home already, and datum 1 was only read: nothing else moves back.
  EXPECT_EQ(copy_to(run.on(2, 2), 2, 2, 1), nullptr);
  EXPECT_EQ(copy_to(run.on(1, 1), 1, 1, 0), nullptr);
}

// A task pinned to the host (device 0: the cores' columns of 002's split)
// runs there, on host slots, although its main output lives on GPU 2.
TEST(ProtocolRules, ATaskPinnedToTheHostRunsOnTheHost) {
  const OneTask run(0);
  EXPECT_EQ(run.count(2, 0, kGsmm), 1);
  EXPECT_EQ(run.count(2, 2, kGsmm), 0);
}

TEST(ProtocolRules, APinnedTaskLeavesWhatItWroteOnItsDevice) {
  const OneTask run(2);
  EXPECT_EQ(copy_to(run.on(0, 1), 0, 1, 1), nullptr)
      << "a task pinned to GPU 2 (TaskDesc::device) leaves datum 0 there until a task elsewhere needs it";
  EXPECT_TRUE(run.on(0, 1).empty());
}

// Eviction (issue 12 point 2): a copy the GPU alone holds goes home before
// its buffer is reused, a clean one is dropped. One GPU with room for two
// 1 KiB data; data 0 and 1 homed on host memory, 2 and 3 on the GPU. Task A
// (on the GPU: datum 2 its main output) updates 2 reading 0; task B updates
// 3 reading 1, and its two buffers evict A's, least recently used first:
// datum 2, whose new version only the GPU holds (written back), then datum
// 0, an input copy host memory holds as well (dropped, no copy).
TEST(ProtocolRules, AnEvictedCopyGoesHomeOnlyWhenTheGpuAloneHoldsIt) {
  Plan plan(4, [](DataId x) { return Location{0, x >= 2 ? 1 : 0}; }, {2048});
  plan.sink->insert(make_task(kGsmm, 0, 0, 0, 0).add(2, AccessMode::ReadWrite).add(0, AccessMode::Read));
  plan.sink->insert(make_task(kGsmm, 1, 0, 0, 0).add(3, AccessMode::ReadWrite).add(1, AccessMode::Read));
  EXPECT_EQ(plan.count(2, 0, kRuntimeCopy, kCopyToHost), 1)
      << "datum 2's new version, on the GPU alone, must go home before its buffer is reused";
  EXPECT_EQ(plan.count(0, 0, kRuntimeCopy, kCopyToHost), 0)
      << "datum 0's copy on the GPU is the version host memory holds: dropped, not copied";
  EXPECT_EQ(plan.state->gpu_stats[0].evictions.load(), 2u);
  EXPECT_EQ(plan.state->gpu_stats[0].bytes_written_back.load(), 1024u);
}

// Release_Tile of another node's datum (000 §5.5): the copy this node
// received for its task is freed at the release, not kept to the end. Two
// nodes, one datum each; node 0's task updates its datum 0 reading node 1's
// datum 1, which it receives; releasing datum 1 frees the received copy.
TEST(ProtocolRules, AReleasedCopyOfAnotherNodesDatumIsFreedAtTheRelease) {
  Plan plan(2, [](DataId x) { return Location{static_cast<int>(x), 0}; }, {});
  plan.sink->insert(make_task(kGsmm, 0, 0, 0, 0).add(0, AccessMode::ReadWrite).add(1, AccessMode::Read));
  ASSERT_EQ(plan.count(1, 0, kRuntimeRecv), 1) << "node 0 receives datum 1 for its task";
  EXPECT_EQ(plan.count(1, 0, kRuntimeRelease), 0);
  plan.sink->release(1);
  EXPECT_EQ(plan.count(1, 0, kRuntimeRelease), 1) << "the received copy is freed at Release_Tile";
}

// Which copy a full GPU frees (runtime/protocol_sink.hpp): the one its GPUs
// use again furthest ahead; of two used again equally late, the one used
// longest ago. Data 0, 1, 2 live on the GPU, which has room for two; tasks
// update 0, then 1, then 2 (which must evict), then 0 reading 1: 0 and 1
// are both next used by the last task, and 0, used first, goes (written
// back: the GPU alone holds its new version).
TEST(ProtocolRules, OfCopiesUsedAgainEquallyLateTheOldestIsEvicted) {
  const std::vector<TaskDesc> graph = {
      make_task(kGsmm, 0, 0, 0, 0).add(0, AccessMode::ReadWrite),
      make_task(kGsmm, 1, 0, 0, 0).add(1, AccessMode::ReadWrite),
      make_task(kGsmm, 2, 0, 0, 0).add(2, AccessMode::ReadWrite),
      make_task(kGsmm, 3, 0, 0, 0).add(0, AccessMode::ReadWrite).add(1, AccessMode::Read)};
  Plan plan(
      3,
      [](DataId) {
        return Location{0, 1};
      },
      {2048}, graph);
  for (int i = 0; i < 3; ++i) plan.sink->insert(graph[i]);
  EXPECT_EQ(plan.state->gpu_stats[0].evictions.load(), 1u);
  EXPECT_EQ(plan.count(0, 1, kRuntimeRelease), 1) << "datum 0, used longest ago, is the one evicted";
  EXPECT_EQ(plan.count(1, 1, kRuntimeRelease), 0) << "datum 1, used later and needed as soon, stays";
  EXPECT_EQ(plan.count(0, 0, kRuntimeCopy, kCopyToHost), 1) << "datum 0's new version goes home first";
}

// The future that decides an eviction is the GPU's: a task the host runs
// (its main output lives in host memory) does not keep a tile on the GPU.
// Datum 0 lives in host memory, 2 and 3 on the GPU, which has room for two.
// A (GPU) updates 2 reading 0; B (GPU) updates 3 and must evict 2 or 0;
// C, run by the host, updates 0; D (GPU) updates 2; E (GPU) updates 3
// reading 0. The GPU needs 0 at E, after 2 at D: its copy of 0 goes (clean,
// no write-back), although the host uses 0 before D.
TEST(ProtocolRules, TheHostsTasksDoNotKeepACopyOnTheGpu) {
  const std::vector<TaskDesc> graph = {
      make_task(kGsmm, 0, 0, 0, 0).add(2, AccessMode::ReadWrite).add(0, AccessMode::Read),
      make_task(kGsmm, 1, 0, 0, 0).add(3, AccessMode::ReadWrite),
      make_task(kGsmm, 2, 0, 0, 0).add(0, AccessMode::ReadWrite),
      make_task(kGsmm, 3, 0, 0, 0).add(2, AccessMode::ReadWrite),
      make_task(kGsmm, 4, 0, 0, 0).add(3, AccessMode::ReadWrite).add(0, AccessMode::Read)};
  Plan plan(
      4,
      [](DataId x) {
        return Location{0, x >= 2 ? 1 : 0};
      },
      {2048}, graph);
  for (int i = 0; i < 2; ++i) plan.sink->insert(graph[i]);
  ASSERT_EQ(plan.state->gpu_stats[0].evictions.load(), 1u);
  EXPECT_EQ(plan.count(0, 1, kRuntimeRelease), 1) << "the GPU's copy of datum 0, needed there last, is evicted";
  EXPECT_EQ(plan.count(2, 1, kRuntimeRelease), 0) << "datum 2, which the GPU updates next, stays";
  EXPECT_EQ(plan.state->gpu_stats[0].bytes_written_back.load(), 0u);
}

// A copy of another node's datum goes as soon as another node writes a new
// version (runtime/protocol_sink.hpp), not at its Release_Tile: on two
// nodes, node 0's task updates its datum 0 and node 1's datum 1 (a minor
// output: node 0 receives 1, writes it and keeps it); then node 1
// overwrites datum 1. Node 0, the former writer, is told, and frees its
// copy, on host memory and on the GPU the task ran on.
TEST(ProtocolRules, ACopyOfAnotherNodesDatumGoesWhenAnotherNodeWritesIt) {
  for (const bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "one GPU" : "no GPU");
    const int dev = gpu ? 1 : 0;
    Plan plan(
        2,
        [dev](DataId x) {
          return Location{static_cast<int>(x), x == 0 ? dev : 0};
        },
        gpu ? std::vector<std::size_t>{4096} : std::vector<std::size_t>{});
    plan.sink->insert(make_task(kGsmm, 0, 0, 0, 0).add(0, AccessMode::ReadWrite).add(1, AccessMode::ReadWrite));
    ASSERT_EQ(plan.count(1, 0, kRuntimeRecv), 1);
    ASSERT_EQ(plan.count(1, dev, kRuntimeRelease), 0) << "node 0 holds the version it wrote";
    plan.sink->insert(make_task(kGsmm, 1, 0, 0, 0).add(1, AccessMode::Write));
    EXPECT_EQ(plan.count(1, 0, kRuntimeSend), 0) << "node 1 overwrites datum 1: nothing to send";
    for (int d = 0; d <= dev; ++d)
      EXPECT_EQ(plan.count(1, d, kRuntimeRelease), 1) << "node 0's stale copy on device " << d << " is freed now";
  }
}

}  // namespace
}  // namespace tessera
