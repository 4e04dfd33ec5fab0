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
// still follows for one datum may touch others outside D(k); their state
// then goes stale on this node, which never reads it: such a datum is not
// this node's (no placement), was never written here (writer) and never
// received here (holders), so this node is never its source.
//
// D(k) depends only on the placement and the task graph, so one pass of the
// generator gives every node's set (a bit per node and datum). A simulated
// cluster computes it once for all its nodes (DistContext::relevance); a
// rank under mpirun computes it in its run, inside the run's time
// (NodeRuntime::run, RuntimeOptions::follow_own_data).
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
  // Data in D(node) (for tests and reports).
  std::size_t count(int node) const;
  // Tasks the generator inserted.
  std::uint64_t tasks() const { return tasks_; }
  std::size_t data() const { return n_; }
  int nodes() const { return nodes_; }

 private:
  void set(int node, DataId x) {
    bits_[static_cast<std::size_t>(node) * words_ + x / 64] |= std::uint64_t{1} << (x % 64);
  }

  std::size_t n_;
  int nodes_;
  std::size_t words_;
  std::vector<std::uint64_t> bits_;
  std::uint64_t tasks_ = 0;
};

}  // namespace tessera
