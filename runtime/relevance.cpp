#include "runtime/relevance.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera {

DataRelevance::DataRelevance(std::size_t n_data, int nodes, const Generator& generate, const Placement& where)
    : n_(n_data), nodes_(nodes), words_((n_data + 63) / 64) {
  if (nodes < 1) throw std::logic_error("DataRelevance: " + std::to_string(nodes) + " nodes");
  if (n_data > UINT32_MAX) throw std::logic_error("DataRelevance: " + std::to_string(n_data) + " data exceed 32 bits");
  bits_.assign(static_cast<std::size_t>(nodes) * words_, 0);
  // Each datum is relevant to its home node.
  for (std::size_t x = 0; x < n_; ++x) {
    const int home = where(static_cast<DataId>(x)).node;
    if (home < 0 || home >= nodes)
      throw std::logic_error("DataRelevance: datum " + std::to_string(x) + " placed on node " + std::to_string(home) +
                             " of " + std::to_string(nodes));
    set(home, static_cast<DataId>(x));
  }
  // And every datum a task accesses to the node its main output is placed on.
  struct Recorder final : TaskSink {
    DataRelevance& r;
    const Placement& where;
    explicit Recorder(DataRelevance& rel, const Placement& w) : r(rel), where(w) {}
    void insert(const TaskDesc& t) override {
      ++r.tasks_;
      const int main = t.main_output();
      if (main < 0)
        throw std::logic_error("DataRelevance: a task without an output (kernel " + std::to_string(t.kernel) + ")");
      const int at = where(t.access[main].data).node;
      if (at < 0 || at >= r.nodes_)
        throw std::logic_error("DataRelevance: a task placed on node " + std::to_string(at) + " of " +
                               std::to_string(r.nodes_));
      for (int a = 0; a < t.n_access; ++a) {
        const DataId x = t.access[a].data;
        if (x >= r.n_) throw std::logic_error("DataRelevance: datum " + std::to_string(x) + " beyond the run's data");
        r.set(at, x);
      }
    }
  } rec(*this, where);
  generate(rec);
  rank_.resize(bits_.size());
  counts_.assign(static_cast<std::size_t>(nodes), 0);
  for (int k = 0; k < nodes; ++k) {
    std::size_t c = 0;
    for (std::size_t w = 0; w < words_; ++w) {
      const std::size_t i = static_cast<std::size_t>(k) * words_ + w;
      rank_[i] = static_cast<std::uint32_t>(c);
      c += ones(bits_[i]);
    }
    counts_[static_cast<std::size_t>(k)] = c;
  }
}

}  // namespace tessera
