#include "runtime/relevance.hpp"

#include <stdexcept>
#include <string>

namespace tessera {
namespace {

// Marks, for each task, every datum it accesses as relevant to the node its
// main output is placed on.
class RelevanceRecorder final : public TaskSink {
 public:
  RelevanceRecorder(std::size_t n_data, int nodes, const Placement& where, const std::function<void(int, DataId)>& mark)
      : n_(n_data), nodes_(nodes), where_(where), mark_(mark) {}
  void insert(const TaskDesc& t) override {
    ++tasks;
    const int main = t.main_output();
    if (main < 0)
      throw std::logic_error("DataRelevance: a task without an output (kernel " + std::to_string(t.kernel) + ")");
    const int at = where_(t.access[main].data).node;
    if (at < 0 || at >= nodes_)
      throw std::logic_error("DataRelevance: a task placed on node " + std::to_string(at) + " of " +
                             std::to_string(nodes_));
    for (int a = 0; a < t.n_access; ++a) {
      const DataId x = t.access[a].data;
      if (x >= n_) throw std::logic_error("DataRelevance: datum " + std::to_string(x) + " beyond the run's data");
      mark_(at, x);
    }
  }
  std::uint64_t tasks = 0;

 private:
  std::size_t n_;
  int nodes_;
  const Placement& where_;
  const std::function<void(int, DataId)>& mark_;
};

}  // namespace

DataRelevance::DataRelevance(std::size_t n_data, int nodes, const Generator& generate, const Placement& where)
    : n_(n_data), nodes_(nodes), words_((n_data + 63) / 64) {
  if (nodes < 1) throw std::logic_error("DataRelevance: " + std::to_string(nodes) + " nodes");
  bits_.assign(static_cast<std::size_t>(nodes) * words_, 0);
  // Each datum is relevant to its home node.
  for (std::size_t x = 0; x < n_; ++x) {
    const int home = where(static_cast<DataId>(x)).node;
    if (home < 0 || home >= nodes)
      throw std::logic_error("DataRelevance: datum " + std::to_string(x) + " placed on node " + std::to_string(home) +
                             " of " + std::to_string(nodes));
    set(home, static_cast<DataId>(x));
  }
  const std::function<void(int, DataId)> mark = [this](int node, DataId x) { set(node, x); };
  RelevanceRecorder rec(n_, nodes, where, mark);
  generate(rec);
  tasks_ = rec.tasks;
}

std::size_t DataRelevance::count(int node) const {
  std::size_t c = 0;
  for (std::size_t w = 0; w < words_; ++w)
    c += static_cast<std::size_t>(__builtin_popcountll(bits_[node * words_ + w]));
  return c;
}

}  // namespace tessera
