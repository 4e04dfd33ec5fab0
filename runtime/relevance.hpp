#pragma once
// Which data each node's protocol has to follow.
//
// 000 §6 builds the task graph without communication: every node's generator
// walks every task and keeps, per datum, its version, writer and holders, so
// that the nodes agree on who sends what without a message. In a simulated
// cluster of P nodes that is P walks of the whole graph, and at 100 nodes the
// walks, not the kernels, were most of the simulator's own time. Yet a node
// acts only on data it owns or that a task running on it accesses:
//
//   D(k) = { x : x's home is node k } ∪ { x : some task whose main output
//          is placed on node k accesses x }.
//
// A node holds, writes, sends, relays (a broadcast tree's inner nodes are
// earlier readers) or receives only data of its D(k), so its protocol reads
// the state of no other datum, and it may skip every task that accesses none
// of them (ProtocolSink::insert): the state it keeps for the data of D(k)
// is still updated by every task that touches them, so it is exactly what
// the full walk gives, and so is every task and message it makes. A task it
// still follows for one datum may touch others outside D(k); the node keeps
// no state for them (its tables hold D(k) alone, numbered by index()) and
// needs none: such a datum is not this node's (no placement), was never
// written here (writer) and never received here (holders), so this node is
// never its source.
//
// D(k) depends only on the placement and the task graph, so one pass of the
// generator gives every node's set (a bit per node and datum). A simulated
// cluster computes it once for all its nodes (DistContext::relevance); a
// rank under mpirun computes it in its run, inside the run's time
// (NodeRuntime::run, RuntimeOptions::follow_own_data).
#include <cassert>
#include <cstdint>
#include <vector>

#include "runtime/node_runtime.hpp"

namespace tessera {

class DataRelevance {
 public:
  // One pass of `generate` over a run of `nodes` nodes with `n_data` data
  // placed by `where`. Throws std::logic_error for a task without an output
  // or a datum or node out of range.
  DataRelevance(std::size_t n_data, int nodes, const Generator& generate, const Placement& where);

  bool relevant(int node, DataId x) const {
    const std::size_t i = static_cast<std::size_t>(node) * words_ + x / 64;
    return (bits_[i] >> (x % 64)) & 1u;
  }
  // x's number among the data of D(node) in increasing order, for x in
  // D(node): a node keeps its protocol's per-datum state in tables of
  // count(node) entries (a node of a 10x10 grid follows 5-10% of the
  // data), and the rank costs the word relevant() reads, one more, and a
  // count of bits.
  std::size_t index(int node, DataId x) const {
    const std::size_t w = static_cast<std::size_t>(node) * words_ + x / 64;
    const std::uint64_t below = (std::uint64_t{1} << (x % 64)) - 1;
    return rank_[w] + ones(bits_[w] & below);
  }
  // Data in D(node).
  std::size_t count(int node) const { return counts_[static_cast<std::size_t>(node)]; }
  // Tasks the generator inserted.
  std::uint64_t tasks() const { return tasks_; }
  std::size_t data() const { return n_; }
  int nodes() const { return nodes_; }

 private:
  // The set bits of v, inline: without -mpopcnt (the build targets any
  // x86-64) std::popcount is a call into libgcc.
  static std::size_t ones(std::uint64_t v) {
    v -= (v >> 1) & 0x5555555555555555u;
    v = (v & 0x3333333333333333u) + ((v >> 2) & 0x3333333333333333u);
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return static_cast<std::size_t>((v * 0x0101010101010101u) >> 56);
  }
  void set(int node, DataId x) {
    bits_[static_cast<std::size_t>(node) * words_ + x / 64] |= std::uint64_t{1} << (x % 64);
  }

  std::size_t n_;
  int nodes_;
  std::size_t words_;
  std::vector<std::uint64_t> bits_;
  // rank_[node·words + w]: the data of D(node) in its words before w;
  // counts_[node]: all of them.
  std::vector<std::uint32_t> rank_;
  std::vector<std::size_t> counts_;
  std::uint64_t tasks_ = 0;
};

// The data one node follows, as its tables number them: D(node) by
// DataRelevance::index, or, without a relevance (one node, or a run that
// follows every datum), all of the run's data as they are numbered.
class FollowedData {
 public:
  FollowedData(const DataRelevance* relevance, int node, std::size_t n_data) : r_(relevance), node_(node), n_(n_data) {}
  bool has(DataId x) const { return !r_ || r_->relevant(node_, x); }
  std::size_t index(DataId x) const {
    assert(has(x));  // another datum's number is a followed datum's, or one past the last
    return r_ ? r_->index(node_, x) : x;
  }
  std::size_t count() const { return r_ ? r_->count(node_) : n_; }
  // f(x) for every followed datum x, in increasing order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t x = 0; x < n_; ++x)
      if (has(static_cast<DataId>(x))) f(static_cast<DataId>(x));
  }

 private:
  const DataRelevance* r_;
  int node_;
  std::size_t n_;
};

}  // namespace tessera
