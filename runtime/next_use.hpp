#pragma once
// When each datum is next used by a task of this node's GPUs: the future a
// GPU's eviction policy needs to evict the copy used again furthest ahead
// (Belady's MIN: L. A. Belady, "A study of replacement algorithms for a
// virtual-storage computer", IBM Systems Journal 5(2), 1966), instead of the
// one used longest ago. A factorization's task graph is known before it runs
// (the generator is a deterministic loop nest), so the future is exact: a
// second pass of the generator records, per datum, the insertion indices of
// the tasks that use it on this node's GPUs.
//
// Why not least recently used: a right-looking factorization sweeps its
// trailing matrix once per step, in the same order every step. When the
// trailing matrix does not fit, least recently used evicts exactly the
// copies the next sweep needs first, and every copy misses at every step
// (a 65,536-order Cholesky in 11.5 GB of GPU memory moved 5.7 times its
// lower triangle in). Evicting the copy used furthest ahead keeps the start
// of each sweep resident, so only what exceeds the memory streams.
#include <cstdint>
#include <functional>
#include <vector>

#include "base/task.hpp"

namespace tessera::detail {

class NextUse {
 public:
  static constexpr std::uint32_t kNever = UINT32_MAX;
  // Runs `generate` once; keeps, for every task that `mine` accepts (0-based
  // in insertion order), its index under each datum it accesses.
  NextUse(std::size_t n_data, const std::function<void(TaskSink&)>& generate,
          const std::function<bool(const TaskDesc&)>& mine);
  // The index of the first task after task `now` that uses x; kNever if none.
  // `now` must not decrease from call to call for the same datum.
  std::uint32_t after(DataId x, std::uint32_t now);
  // Task uses recorded (for tests).
  std::size_t uses() const { return uses_.size(); }

 private:
  std::vector<std::uint32_t> start_;   // per datum: its uses are uses_[start_[x], start_[x + 1])
  std::vector<std::uint32_t> uses_;    // task indices, ascending per datum
  std::vector<std::uint32_t> cursor_;  // per datum: its first use not yet passed
};

}  // namespace tessera::detail
