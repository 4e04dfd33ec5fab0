#include "runtime/next_use.hpp"

#include <stdexcept>
#include <utility>

namespace tessera::detail {

namespace {

// Each accepted task's (datum, index) pairs, in insertion order.
class UseRecorder final : public TaskSink {
 public:
  UseRecorder(std::size_t n_data, const std::function<bool(const TaskDesc&)>& mine) : n_(n_data), mine_(mine) {}
  void insert(const TaskDesc& t) override {
    if (index_ == NextUse::kNever) throw std::logic_error("NextUse: more than 2^32 - 1 tasks");
    if (mine_(t))
      for (int a = 0; a < t.n_access; ++a) {
        const DataId x = t.access[a].data;
        if (x >= n_) throw std::logic_error("NextUse: datum " + std::to_string(x) + " beyond the run's data");
        pairs.emplace_back(x, index_);  // twice for a datum accessed twice: after() skips equal indices
      }
    ++index_;
  }
  std::vector<std::pair<DataId, std::uint32_t>> pairs;

 private:
  std::size_t n_;
  const std::function<bool(const TaskDesc&)>& mine_;
  std::uint32_t index_ = 0;
};

}  // namespace

NextUse::NextUse(std::size_t n_data, const std::function<void(TaskSink&)>& generate,
                 const std::function<bool(const TaskDesc&)>& mine)
    : start_(n_data + 1, 0), cursor_(n_data, 0) {
  UseRecorder rec(n_data, mine);
  generate(rec);
  // Counting sort by datum; indices stay ascending within a datum.
  for (const auto& [x, i] : rec.pairs) ++start_[x + 1];
  for (std::size_t x = 0; x < n_data; ++x) start_[x + 1] += start_[x];
  uses_.resize(rec.pairs.size());
  std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
  for (const auto& [x, i] : rec.pairs) uses_[fill[x]++] = i;
  for (std::size_t x = 0; x < n_data; ++x) cursor_[x] = start_[x];
}

std::uint32_t NextUse::after(DataId x, std::uint32_t now) {
  std::uint32_t& c = cursor_[x];
  while (c < start_[x + 1] && uses_[c] <= now) ++c;
  return c < start_[x + 1] ? uses_[c] : kNever;
}

}  // namespace tessera::detail
