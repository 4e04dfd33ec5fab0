// The eight-rule task-assignment protocol (000 §6) applied by every node to
// every task of small Cholesky and QR factorizations: the union over nodes
// must own each task once and route every input and minor output exactly once.
#include <bit>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <tuple>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "dag_test_util.hpp"
#include "runtime/distribution.hpp"
#include "runtime/protocol.hpp"

namespace tessera {
namespace {

struct Case {
  const char* algo;
  int Pr, Pc, G, s;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algo << " " << c.Pr << "x" << c.Pc << " G=" << c.G << " s=" << c.s;
}

class ProtocolUnion : public ::testing::TestWithParam<Case> {};

TEST_P(ProtocolUnion, EveryTaskOwnedOnceEveryInputAndOutputRoutedOnce) {
  const Case c = GetParam();
  const bool chol = std::string(c.algo) == "cholesky";
  const TileLayout L(chol ? 48 : 60, 48, 8, c.s, c.s > 1 ? 2 : 0);
  const MultiLevelBlockCyclic dist(L, c.Pr, c.Pc, c.G);
  const int p = L.tile_rows(), tiles = p * L.tile_cols();
  const Placement where = [&](DataId d) {
    if (static_cast<int>(d) < tiles) return dist.owner(static_cast<int>(d) % p, static_cast<int>(d) / p);
    const int k = static_cast<int>(d) - tiles;  // QR panel copy: with its diagonal tile
    return dist.owner(L.col_top(k), k);
  };
  test::TaskList rec;
  if (chol) cholesky_tasks(L, rec);
  else qr_tasks(L, rec);
  ASSERT_GT(rec.tasks.size(), 50u);

  const int nodes = c.Pr * c.Pc;
  std::vector<Instance> inst;
  int remote_inputs = 0, sinks = 0;
  for (const TaskDesc& t : rec.tasks) {
    // kind -> list of (node, access) over all nodes
    std::map<InstanceKind, std::vector<std::pair<int, int>>> seen;
    const int main = t.main_output();
    ASSERT_GE(main, 0);
    const Location m = where(t.access[main].data);
    for (int n = 0; n < nodes; ++n) {
      inst.clear();
      node_instances(t, where, n, inst);
      bool touches = false;
      for (int a = 0; a < t.n_access; ++a) touches |= where(t.access[a].data).node == n;
      if (!touches) EXPECT_TRUE(inst.empty()) << "node " << n << " has instances of a task it does not touch";
      for (const Instance& i : inst) seen[i.kind].push_back({n, i.access});
      // Each instance's peer (protocol.hpp): a source minor output names where
      // its datum goes back to (its home); every other instance, the owner.
      for (const Instance& i : inst) {
        const bool source =
            i.kind == InstanceKind::IntraNodeSourceMinorOutput || i.kind == InstanceKind::InterNodeSourceMinorOutput;
        EXPECT_EQ(i.peer, source ? where(t.access[i.access].data) : m)
            << instance_kind_name(i.kind) << " of access " << i.access << " of kernel " << t.kernel << " on node " << n;
      }
    }
    ASSERT_EQ(seen[InstanceKind::Owner].size(), 1u);
    EXPECT_EQ(seen[InstanceKind::Owner][0].first, m.node);

    for (int a = 0; a < t.n_access; ++a) {
      if (a == main) continue;
      const Location x = where(t.access[a].data);
      auto count = [&](InstanceKind k, int node) {
        int n = 0;
        for (auto [nd, acc] : seen[k]) n += nd == node && acc == a;
        return n;
      };
      auto total = [&](InstanceKind k) {
        int n = 0;
        for (auto [nd, acc] : seen[k]) n += acc == a;
        return n;
      };
      if (t.access[a].mode != AccessMode::Write) {
        const int inputs = total(InstanceKind::NativeInput) + total(InstanceKind::IntraNodeAlienInput) +
                           total(InstanceKind::InterNodeAlienInput);
        EXPECT_EQ(inputs, 1) << "input " << a << " of kernel " << t.kernel;
        if (x == m) EXPECT_EQ(count(InstanceKind::NativeInput, m.node), 1);
        else if (x.node == m.node) EXPECT_EQ(count(InstanceKind::IntraNodeAlienInput, m.node), 1);
        else {
          EXPECT_EQ(count(InstanceKind::InterNodeAlienInput, x.node), 1);
          ++remote_inputs;
        }
      }
      if (writes(t.access[a].mode)) {
        if (x == m) {
          EXPECT_EQ(total(InstanceKind::NativeMinorOutput), 1);
          EXPECT_EQ(total(InstanceKind::SinkMinorOutput), 0);
        } else {
          EXPECT_EQ(total(InstanceKind::SinkMinorOutput), 1);
          EXPECT_EQ(count(InstanceKind::SinkMinorOutput, x.node), 1);
          const InstanceKind src =
              x.node == m.node ? InstanceKind::IntraNodeSourceMinorOutput : InstanceKind::InterNodeSourceMinorOutput;
          EXPECT_EQ(count(src, m.node), 1);
          EXPECT_EQ(total(InstanceKind::IntraNodeSourceMinorOutput) + total(InstanceKind::InterNodeSourceMinorOutput),
                    1);
          ++sinks;
        }
      }
    }
  }
  // On more than one node some inputs must cross nodes, or the grid was not used.
  if (nodes > 1) EXPECT_GT(remote_inputs, 0);
  if (!chol && nodes > 1) EXPECT_GT(sinks, 0);  // QR's row-t tiles travel along the TS chains
}

INSTANTIATE_TEST_SUITE_P(Grids, ProtocolUnion,
                         ::testing::Values(Case{"cholesky", 2, 2, 0, 1}, Case{"qr", 2, 2, 0, 1},
                                           Case{"cholesky", 2, 2, 2, 2}, Case{"qr", 2, 2, 2, 3},
                                           Case{"cholesky", 1, 3, 1, 2}, Case{"qr", 3, 1, 3, 2},
                                           Case{"cholesky", 1, 1, 3, 2}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return std::string(c.algo) + "_" + std::to_string(c.Pr) + "x" + std::to_string(c.Pc) + "_G" +
                                  std::to_string(c.G) + "_s" + std::to_string(c.s);
                         });

// A hand-checked task: GSMM A(2,1) -= L(2,0) L(1,0)^T on a 2×2 grid, one tile per
// top-level tile. A(2,1) is on node (2%2)*2 + 1%2 = 1; L(2,0) on node 0; L(1,0) on node 2.
// The broadcast tree of runtime/protocol_sink.hpp: holder k's parent is k
// without its highest bit, so the writer (0) sends to the powers of two,
// every parent precedes its child, and the depth is popcount(k).
TEST(Protocol, BinomialParentsFormATreeRootedAtTheWriter) {
  const std::size_t expect[] = {0, 0, 0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 0};
  for (std::size_t k = 1; k <= 16; ++k) EXPECT_EQ(binomial_parent(k), expect[k]) << k;
  for (std::size_t r : {1u, 5u, 18u, 99u}) {
    std::vector<int> children(r + 1, 0);
    for (std::size_t k = 1; k <= r; ++k) {
      const std::size_t p = binomial_parent(k);
      ASSERT_LT(p, k);
      ++children[p];
      std::size_t hops = 0;
      for (std::size_t j = k; j != 0; j = binomial_parent(j)) ++hops;
      EXPECT_EQ(hops, static_cast<std::size_t>(std::popcount(k)));
    }
    // The writer sends ceil(log2(r + 1)) copies, not r.
    EXPECT_EQ(children[0], std::bit_width(r)) << r << " readers";
  }
}

TEST(Protocol, HandCheckedGsmmOnTwoByTwo) {
  const TileLayout L(4, 4, 1, 1, 0);
  const MultiLevelBlockCyclic dist(L, 2, 2, 0);
  const Placement where = [&](DataId d) { return dist.owner(static_cast<int>(d) % 4, static_cast<int>(d) / 4); };
  TaskDesc t;
  t.add(tile_data(L, 2, 0), AccessMode::Read)
      .add(tile_data(L, 1, 0), AccessMode::Read)
      .add(tile_data(L, 2, 1), AccessMode::ReadWrite);
  ASSERT_EQ(t.main_output(), 2);
  std::vector<Instance> out;
  node_instances(t, where, 1, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, InstanceKind::Owner);
  out.clear();
  node_instances(t, where, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, InstanceKind::InterNodeAlienInput);
  EXPECT_EQ(out[0].access, 0);
  EXPECT_EQ(out[0].peer.node, 1);
  out.clear();
  node_instances(t, where, 2, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, InstanceKind::InterNodeAlienInput);
  EXPECT_EQ(out[0].access, 1);
  out.clear();
  node_instances(t, where, 3, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace tessera
