// Distributions: the papers' worked examples and load balance.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "runtime/distribution.hpp"

namespace tessera {
namespace {

// 001 Fig. 6b: p = 6, s = 2 gives 12 tile columns on a host and three GPUs.
// With 1-based column j, even columns go to G1, G2, G3, G1, ... and odd ones to the host.
TEST(HeteroColumnCyclic, PaperFigure6b) {
  const TileLayout l(12, 12, 2, 2, 1);  // 6 top-level tiles of width 2, each cut into 1 + 1
  ASSERT_EQ(l.tile_cols(), 12);
  const HeteroColumnCyclic d(l, 3);
  const std::vector<int> expected = {0, 1, 0, 2, 0, 3, 0, 1, 0, 2, 0, 3};
  for (int j = 0; j < 12; ++j)
    for (int i = 0; i < l.tile_rows(); ++i) {
      EXPECT_EQ(d.owner(i, j).device, expected[j]) << "tile column " << j + 1;
      EXPECT_EQ(d.owner(i, j).node, 0);
    }
}

TEST(HeteroColumnCyclic, NoGpuKeepsEverythingOnTheHost) {
  const TileLayout l(100, 100, 20, 3, 5);
  const HeteroColumnCyclic d(l, 0);
  for (int j = 0; j < l.tile_cols(); ++j) EXPECT_EQ(d.owner(0, j), (Location{0, 0}));
}

// 000 §3.1 on a 2×3 grid with 2 GPUs per node and s = 3: node from the
// top-level tile's position in the grid, device from the column's role.
TEST(MultiLevelBlockCyclic, FormulaOnAGrid) {
  const int Pr = 2, Pc = 3, G = 2, s = 3;
  const TileLayout l(70, 70, 10, s, 2);  // 7×7 top-level tiles, 21 tile columns
  const MultiLevelBlockCyclic d(l, Pr, Pc, G);
  EXPECT_EQ(d.nodes(), 6);
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      const int top = j / s;
      const Location want{(i % Pr) * Pc + top % Pc, j % s == s - 1 ? (top / Pc) % G + 1 : 0};
      EXPECT_EQ(d.owner(i, j), want) << "tile (" << i << "," << j << ")";
    }
  // Hand-checked: tile (3, 14) is in top-level column 4 -> node (3 mod 2)*3 + 4 mod 3 = 4;
  // column 14 is position 2 = s-1 of its top-level tile -> GPU (4/3 mod 2) + 1 = 2.
  EXPECT_EQ(d.owner(3, 14), (Location{4, 2}));
  EXPECT_EQ(d.owner(3, 13), (Location{4, 0}));
}

// --dist gpu-columns on a 2x2 grid, 2 GPUs per node, s = 3, n = 73 (the
// last top-level tile 3 wide: two tile columns): the same nodes as
// multi-level, and each node's tile columns dealt to its GPUs in order.
TEST(MultiLevelBlockCyclic, EveryColumnOnTheGpus) {
  const int Pr = 2, Pc = 2, G = 2;
  const TileLayout l(73, 73, 10, 3, 2);  // 8 top-level columns: 7 of 3 tile columns, then 2
  ASSERT_EQ(l.tile_cols(), 23);
  const MultiLevelBlockCyclic ml(l, Pr, Pc, G);
  const MultiLevelBlockCyclic all(l, Pr, Pc, G, 1, MultiLevelBlockCyclic::Columns::AllOnGpus);
  // Hand-counted: node column 0 holds top-level columns 0, 2, 4, 6 (tile
  // columns 0-2, 6-8, 12-14, 18-20), node column 1 top-level columns 1, 3, 5,
  // 7 (3-5, 9-11, 15-17 and the short 21-22); a node's k-th tile column goes
  // to GPU (k mod 2) + 1.
  const std::vector<int> want = {1, 2, 1, 1, 2, 1, 2, 1, 2, 2, 1, 2, 1, 2, 1, 1, 2, 1, 2, 1, 2, 2, 1};
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      EXPECT_EQ(all.owner(i, j).node, ml.owner(i, j).node) << "tile (" << i << "," << j << ")";
      EXPECT_EQ(all.owner(i, j).device, want[j]) << "tile (" << i << "," << j << ")";
    }
  // Each node's GPUs share its columns evenly: 6 + 6 on node column 0, 6 + 5 on 1.
  std::map<std::pair<int, int>, int> count;
  for (int j = 0; j < l.tile_cols(); ++j) ++count[{all.owner(0, j).node, all.owner(0, j).device}];
  EXPECT_EQ(count[std::make_pair(0, 1)], 6);
  EXPECT_EQ(count[std::make_pair(0, 2)], 6);
  EXPECT_EQ(count[std::make_pair(1, 1)], 6);
  EXPECT_EQ(count[std::make_pair(1, 2)], 5);
  EXPECT_NE(all.name().find("every column on the GPUs"), std::string::npos) << all.name();
}

TEST(MultiLevelBlockCyclic, SingleSplitPutsEveryTileOnAGpu) {
  const TileLayout l(40, 40, 10, 1, 0);
  const MultiLevelBlockCyclic d(l, 1, 2, 3);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_GE(d.owner(i, j).device, 1);
}

// Tile counts per node of a p×p top-level grid on Pr×Pc differ by at most one
// row or column of top-level tiles; with Pr | p and Pc | p they are equal.
TEST(MultiLevelBlockCyclic, BalancedTileCounts) {
  const TileLayout l(120, 120, 10, 4, 2);  // 12×12 top-level tiles, 48 tile columns
  for (auto [Pr, Pc] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 4}, {2, 3}, {4, 3}, {6, 2}}) {
    const MultiLevelBlockCyclic d(l, Pr, Pc, 3);
    std::map<int, int> per_node;
    std::map<std::pair<int, int>, int> per_device;
    for (int i = 0; i < l.tile_rows(); ++i)
      for (int j = 0; j < l.tile_cols(); ++j) {
        const Location o = d.owner(i, j);
        ASSERT_GE(o.node, 0);
        ASSERT_LT(o.node, Pr * Pc);
        ++per_node[o.node];
        ++per_device[{o.node, o.device}];
      }
    ASSERT_EQ(static_cast<int>(per_node.size()), Pr * Pc);
    for (auto& [n, c] : per_node) EXPECT_EQ(c, 12 * 48 / (Pr * Pc)) << Pr << "x" << Pc << " node " << n;
    // Host: 3 of every 4 columns. GPUs share the remainder columns cyclically:
    // together all of them, and no GPU more than one top-level column (12/Pr
    // tiles) ahead of another.
    const int node_tiles = 12 * 48 / (Pr * Pc);
    for (int n = 0; n < Pr * Pc; ++n) {
      EXPECT_EQ((per_device[{n, 0}]), node_tiles * 3 / 4);
      int lo = 1 << 30, hi = 0, sum = 0;
      for (int g = 1; g <= 3; ++g) {
        const int c = per_device[{n, g}];
        lo = std::min(lo, c);
        hi = std::max(hi, c);
        sum += c;
      }
      EXPECT_EQ(sum, node_tiles / 4) << Pr << "x" << Pc << " node " << n;
      EXPECT_LE(hi - lo, 12 / Pr) << Pr << "x" << Pc << " node " << n;
    }
  }
}

TEST(BlockCyclic2D, Formula) {
  const BlockCyclic2D d(2, 3);
  EXPECT_EQ(d.owner(0, 0), (Location{0, 0}));
  EXPECT_EQ(d.owner(1, 0), (Location{3, 0}));
  EXPECT_EQ(d.owner(0, 4), (Location{1, 0}));
  EXPECT_EQ(d.owner(3, 5), (Location{5, 0}));
  std::map<int, int> count;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) ++count[d.owner(i, j).node];
  for (auto& [n, c] : count) EXPECT_EQ(c, 6);
}

TEST(Distribution, BadGridNamesTheValue) {
  const TileLayout l(10, 10, 5, 1, 0);
  try {
    MultiLevelBlockCyclic(l, 0, 2, 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Pr = 0"), std::string::npos);
  }
  EXPECT_THROW(BlockCyclic2D(2, -1), InputError);
  EXPECT_THROW(MultiLevelBlockCyclic(l, 1, 1, -2), InputError);
}

// 000 App. A.2.2: v adjacent tile rows form one virtual tile on one node
// (and one device, since the device depends on the column only); virtual
// tiles go to the node rows cyclically.
TEST(MultiLevelBlockCyclic, VirtualTilesStackAdjacentRowsOnOneNode) {
  const int Pr = 3, Pc = 2, G = 2, s = 2, v = 4;
  const TileLayout l(300, 100, 10, s, 3);  // 30 tile rows, 20 tile columns
  const MultiLevelBlockCyclic d(l, Pr, Pc, G, v);
  const MultiLevelBlockCyclic flat(l, Pr, Pc, G);
  EXPECT_EQ(d.virtual_tile_height(), v);
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      const int top = j / s;
      const Location want{((i / v) % Pr) * Pc + top % Pc, j % s == s - 1 ? (top / Pc) % G + 1 : 0};
      EXPECT_EQ(d.owner(i, j), want) << "tile (" << i << "," << j << ")";
      EXPECT_EQ(d.owner(i, j).device, flat.owner(i, j).device) << "the device depends on the column only";
    }
  // Hand-checked: rows 0-3 on node row 0, 4-7 on 1, 8-11 on 2, 12-15 on 0 again.
  EXPECT_EQ(d.owner(3, 0).node, 0);
  EXPECT_EQ(d.owner(4, 0).node, 2);
  EXPECT_EQ(d.owner(11, 2).node, 4 + 1);
  EXPECT_EQ(d.owner(12, 0).node, 0);
  EXPECT_NE(d.name().find("virtual tiles of 4 tile rows"), std::string::npos) << d.name();
}

// The chain of a tile column (QR's TSQRT/SSRFB rows below the diagonal)
// changes node once per virtual tile boundary it crosses: with v rows per
// virtual tile, about (p - t)/v crossings instead of p - t - 1 with v = 1.
TEST(MultiLevelBlockCyclic, ChainCrossingsPerColumnFallWithTheVirtualTileHeight) {
  const TileLayout l(640, 640, 10, 1, 0);  // 64 tile rows
  const int Pr = 4;
  auto crossings = [&](int v, int t) {
    const MultiLevelBlockCyclic d(l, Pr, 1, 0, v);
    int n = 0;
    for (int i = t + 1; i < l.tile_rows(); ++i) n += d.owner(i, t).node != d.owner(i - 1, t).node;
    return n;
  };
  EXPECT_EQ(crossings(1, 0), 63);
  EXPECT_EQ(crossings(4, 0), 15);   // boundaries at rows 4, 8, ..., 60
  EXPECT_EQ(crossings(16, 0), 3);   // one virtual tile per node row: Pr - 1
  EXPECT_EQ(crossings(16, 20), 2);  // from row 21 down: boundaries at 32 and 48
  EXPECT_EQ(crossings(64, 0), 0);   // the whole column on one node row
}

TEST(MultiLevelBlockCyclic, DefaultVirtualTileHeight) {
  EXPECT_EQ(default_virtual_tile_height(64, 1), 1);  // one node row: nothing to cross
  EXPECT_EQ(default_virtual_tile_height(64, 2), 4);  // p/(8 Pr): 8 virtual tiles per node row
  EXPECT_EQ(default_virtual_tile_height(64, 4), 2);
  EXPECT_EQ(default_virtual_tile_height(300, 10), 3);
  EXPECT_EQ(default_virtual_tile_height(10, 8), 1);  // never below one tile row
  EXPECT_THROW(default_virtual_tile_height(0, 2), InputError);
}

TEST(MultiLevelBlockCyclic, BadVirtualTileHeightNamesTheOption) {
  const TileLayout l(10, 10, 5, 1, 0);
  try {
    MultiLevelBlockCyclic(l, 2, 1, 0, 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--v 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
