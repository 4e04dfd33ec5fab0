#pragma once
// The distributed task-assignment protocol of 000 §6. Every node's generator
// sees every task of the serial algorithm and, from the static distribution
// alone, creates only the task instances that concern it:
//
//   main output M (the first written access) at location L_M = (n_M, d_M)
//   1 Owner                        on n_M
//   each input X at L_X (every read access other than M):
//   2 NativeInput                  on n_M   if L_X == L_M
//   3 IntraNodeAlienInput          on n_M   if n_X == n_M, d_X != d_M
//   4 InterNodeAlienInput          on n_X   if n_X != n_M   (n_X sends X to n_M)
//   each minor output Y at L_Y (every other written access):
//   5 NativeMinorOutput            on n_M   if L_Y == L_M
//   6 SinkMinorOutput              on n_Y   if L_Y != L_M   (Y's new version arrives there)
//   7 IntraNodeSourceMinorOutput   on n_M   if n_Y == n_M, d_Y != d_M
//   8 InterNodeSourceMinorOutput   on n_M   if n_Y != n_M   (n_M sends Y back to n_Y)
//
// No rule needs a message, so the DAG is built without communication. A read-
// write minor output is also an input (rules 2-4 bring its old version to the
// owner; rules 5-8 return the new one).
#include <bit>
#include <cstddef>
#include <functional>
#include <vector>

#include "base/task.hpp"
#include "runtime/distribution.hpp"

namespace tessera {

// How a version that several nodes read reaches them (runtime/protocol_sink.hpp):
// down a binomial tree rooted at its writer, or every copy from the writer.
enum class Broadcast : unsigned char { Binomial, Flat };

// Which copy a full GPU frees first (runtime/protocol_sink.hpp): the one its
// node's GPUs use again furthest ahead (runtime/next_use.hpp), or the one
// used longest ago.
enum class Eviction : unsigned char { NextUse, Lru };

// The binomial tree over a version's holders in the order they got it
// (holder 0: its writer): holder k >= 1 receives from holder k with its
// highest set bit cleared. Holder 0 sends to 1, 2, 4, 8, ...; holder j to
// j + 2^i for every 2^i > j; holder k is popcount(k) hops from the writer.
constexpr std::size_t binomial_parent(std::size_t k) { return k & ~std::bit_floor(k); }

enum class InstanceKind : unsigned char {
  Owner,
  NativeInput,
  IntraNodeAlienInput,
  InterNodeAlienInput,
  NativeMinorOutput,
  SinkMinorOutput,
  IntraNodeSourceMinorOutput,
  InterNodeSourceMinorOutput,
};

const char* instance_kind_name(InstanceKind k);

struct Instance {
  InstanceKind kind;
  int access;     // index into TaskDesc::access (the main output's for Owner)
  Location peer;  // where the data goes (inputs: the owner) or comes from (sinks: the owner)
};

// Where each datum of the task window lives.
using Placement = std::function<Location(DataId)>;

// Appends to `out` the instances node `self` creates for task `t`; returns
// quickly with nothing for a task that touches nothing of this node.
void node_instances(const TaskDesc& t, const Placement& where, int self, std::vector<Instance>& out);

}  // namespace tessera
