// The device communication thread (runtime/device_comm.cpp, 000 §5.4)
// driven by hand: copies are posted to a node's mailboxes before the thread
// starts, and the order and times in which it reports them done show how it
// serves them. A run cannot show either: its results and its copy counts
// are the same in any order, and its times are the machine's.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "base/kernel_table.hpp"
#include "plan_test_util.hpp"
#include "runtime/device_comm.hpp"

namespace tessera {
namespace {

using platform::EmulatedDeviceOptions;
using test::Plan;

// The copies the thread reported done, in that order (a stream's copies
// leave in the order they were queued on it).
struct CopyLog final : RuntimeObserver {
  struct Copy {
    DataId x;
    bool to_device;
    double start, end;
  };
  std::vector<Copy> copies;
  void on_copy(int, bool to_device, DataId x, std::size_t, double start, double end) override {
    copies.push_back({x, to_device, start, end});
  }
};

// Every datum lives on GPU 1 of node 0.
Location on_gpu_1(DataId) { return Location{0, 1}; }

// Gives GPU 1 a buffer for datum x (as a buffer-only copy does) and posts a
// copy of x in direction `dir` with priority `priority`; nothing orders it
// after another task, so it is ready at once.
void post(Plan& plan, DataId x, int dir, std::int32_t priority) {
  TaskDesc c;
  c.kernel = kRuntimeCopy;
  c.arg[0] = 1;
  c.arg[1] = static_cast<std::int32_t>(x);
  c.arg[3] = kCopyBufferOnly;
  std::vector<platform::HostRange> ranges;
  plan.state->start_copy(c, 0, ranges, [](std::exception_ptr) {});
  c.arg[3] = dir;
  c.priority = priority;
  const DataId host = x, gpu = static_cast<DataId>(plan.n_data + x);
  const bool in = dir == kCopyToDevice;
  c.add(in ? host : gpu, AccessMode::Read).add(in ? gpu : host, AccessMode::Write);
  Task* t = plan.state->window.append(c);
  ASSERT_NE(t, nullptr) << "the copy of datum " << x << " waits for nothing";
  plan.state->post_copy(t);
}

// Runs the device communication thread until the `copies` posted are done.
void drain(Plan& plan, CopyLog& log, std::uint64_t copies) {
  plan.state->total = copies;
  std::thread thread([&] { detail::device_communication(*plan.state, plan.platform, &log); });
  thread.join();
  ASSERT_EQ(log.copies.size(), copies);
}

// A mailbox is a heap by priority (000 §5.4): of the copies waiting for a
// stream that takes one at a time, the most urgent goes first, whatever the
// order they were posted in (a panel's tile before the trailing matrix's).
TEST(CopyStreams, AStreamTakesTheMostUrgentCopyFirst) {
  Plan plan(5, on_gpu_1, {std::size_t{1} << 20});
  const std::int32_t priority[] = {2, 0, 3, 1, 4};
  for (DataId x = 0; x < 5; ++x) post(plan, x, kCopyToDevice, priority[x]);
  CopyLog log;
  drain(plan, log, 5);
  std::vector<DataId> order;
  for (const CopyLog::Copy& c : log.copies) order.push_back(c.x);
  EXPECT_EQ(order, (std::vector<DataId>{4, 2, 0, 3, 1}));
}

// An emulated GPU has a copy engine per direction, as the GPUs of 000 §5.4
// do: a copy in and a copy out, each taking 0.25 s, run side by side and
// both end about 0.25 s after they start (one engine: 0.5 s).
TEST(CopyStreams, TheTwoDirectionsHaveAnEngineEach) {
  EmulatedDeviceOptions o;
  o.latency_s = 0.25;
  Plan plan(2, on_gpu_1, {std::size_t{1} << 20}, {}, o);
  post(plan, 0, kCopyToDevice, 0);
  post(plan, 1, kCopyToHost, 0);
  CopyLog log;
  drain(plan, log, 2);
  double first = log.copies[0].start, last = 0;
  for (const CopyLog::Copy& c : log.copies) {
    EXPECT_GE(c.end - c.start, 0.25 - 1e-3) << (c.to_device ? "in" : "out") << ": shorter than its latency";
    first = std::min(first, c.start);
    last = std::max(last, c.end);
  }
  EXPECT_LT(last - first, 0.45) << "the two copies ran one after the other";
}

}  // namespace
}  // namespace tessera
