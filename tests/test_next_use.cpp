// NextUse (runtime/next_use.hpp): the future uses a GPU's eviction reads are
// exactly the generator's, filtered to the tasks it is told are its own.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/next_use.hpp"

namespace tessera::detail {
namespace {

// Task i accesses data accesses[i] (the first written, the rest read); kernel = i.
void generate(TaskSink& sink, const std::vector<std::vector<DataId>>& accesses) {
  for (std::size_t i = 0; i < accesses.size(); ++i) {
    TaskDesc t;
    t.kernel = static_cast<std::uint16_t>(i);
    for (std::size_t a = 0; a < accesses[i].size(); ++a)
      t.add(accesses[i][a], a == 0 ? AccessMode::ReadWrite : AccessMode::Read);
    sink.insert(t);
  }
}

TEST(NextUse, FollowsTheGeneratorsOrder) {
  const std::vector<std::vector<DataId>> tasks = {{0, 1}, {2}, {1, 0, 1}, {3}, {0}, {2, 1}};
  NextUse next(
      4, [&](TaskSink& s) { generate(s, tasks); }, [](const TaskDesc&) { return true; });
  EXPECT_EQ(next.after(0, 0), 2u);
  EXPECT_EQ(next.after(1, 0), 2u);
  EXPECT_EQ(next.after(2, 0), 1u);
  EXPECT_EQ(next.after(3, 0), 3u);
  EXPECT_EQ(next.after(2, 1), 5u);
  EXPECT_EQ(next.after(1, 2), 5u) << "a datum accessed twice by task 2 is next used by task 5";
  EXPECT_EQ(next.after(0, 2), 4u);
  EXPECT_EQ(next.after(3, 3), NextUse::kNever);
  EXPECT_EQ(next.after(0, 4), NextUse::kNever);
  EXPECT_EQ(next.after(1, 5), NextUse::kNever);
}

// Only the tasks `mine` accepts count (a node's GPU tasks), but every task counts in the numbering.
TEST(NextUse, CountsOnlyOwnTasksButNumbersAll) {
  const std::vector<std::vector<DataId>> tasks = {{0}, {0}, {1, 0}, {0}};
  NextUse next(
      2, [&](TaskSink& s) { generate(s, tasks); }, [](const TaskDesc& t) { return t.kernel % 2 == 1; });
  EXPECT_EQ(next.uses(), 2u);
  EXPECT_EQ(next.after(0, 0), 1u);
  EXPECT_EQ(next.after(0, 1), 3u) << "task 2 is not this GPU's";
  EXPECT_EQ(next.after(1, 0), NextUse::kNever);
}

}  // namespace
}  // namespace tessera::detail
