#pragma once
// Static data distributions: tile (I, J) -> Location{node, device}. Every
// node evaluates the same pure function, so no node ever asks another where
// a tile lives (000 §4, §6). Device 0 is the node's host (its CPU cores);
// device d >= 1 is its d-th GPU.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/tile_layout.hpp"

namespace tessera {

struct Location {
  int node = 0;
  int device = 0;
  bool operator==(const Location&) const = default;
};

class Distribution {
 public:
  virtual ~Distribution() = default;
  virtual Location owner(int i, int j) const = 0;
  virtual int nodes() const = 0;
  virtual int gpus_per_node() const = 0;
  virtual std::string name() const = 0;
};

// 000 §3.1: top-level B×B tiles go to a Pr×Pc node grid 2-D block-cyclically;
// inside a node, the narrow columns of each top-level tile go to the host and
// its remainder column to the node's G GPUs, 1-D cyclically:
//   N = (⌊I / v⌋ mod Pr)·Pc + (J_top mod Pc)
//   D = 0                              if column J is narrow (or G = 0)
//     = ((J_top / Pc) mod G) + 1       if J is its top-level tile's remainder
// With s = 1 every column is a remainder, so with G > 0 the host holds none.
//
// v is the virtual tile height of 000 App. A.2.2: v adjacent tile rows are
// stacked into one virtual tile that one node (and, since D depends on the
// column only, one device) holds, so QR's flat-tree chain down a tile column
// crosses a node boundary once per virtual tile instead of once per tile.
// v = 1 is the plain 2-D block-cyclic map; v ≥ ⌈p/Pr⌉ gives every node row
// one contiguous block of rows (the paper's v = n/(B·Pr)).
//
// Every column on the GPUs (`Columns::AllOnGpus`, --dist gpu-columns): the
// same nodes, and a node's tile columns dealt to its GPUs in order, narrow
// ones too, so that the host holds no tile (as with s = 1):
//   D = ((J_top / Pc)·s + sub(J)) mod G + 1        sub(J): J's place in its top-level tile
// For a node whose GPUs dwarf its cores: with B = n and s > 1 the single
// tile row makes Cholesky and QR the right-looking blocked algorithms of
// LAPACK (one tall panel kernel per column, then GEMM-rich updates of whole
// columns), each panel factored once, where square tiles' flat tree
// factors each column (n/B + 1)/2 times on average (experiments/README.md).
class MultiLevelBlockCyclic final : public Distribution {
 public:
  enum class Columns { NarrowOnHost, AllOnGpus };
  MultiLevelBlockCyclic(const TileLayout& layout, int Pr, int Pc, int G, int v = 1,
                        Columns columns = Columns::NarrowOnHost);
  Location owner(int i, int j) const override;
  int nodes() const override { return Pr_ * Pc_; }
  int gpus_per_node() const override { return G_; }
  int virtual_tile_height() const { return v_; }
  std::string name() const override;

 private:
  Location compute(int i, int j) const;  // the closed form
  TileLayout layout_;
  int Pr_, Pc_, G_, v_;
  Columns columns_;
  // The closed form tabulated per tile row ((⌊I / v⌋ mod Pr)·Pc) and per
  // tile column ((J_top mod Pc) and D): every node's generator asks for
  // every access of every task, and the divisions were a tenth of a
  // 100-node simulation's time.
  std::vector<int> row_node_;
  std::vector<Location> col_;
};

// The virtual tile height QR uses unless told (`--v`), for p tile rows on Pr
// node rows. 000 App. A.2.2 analyses v = n/(B·Pr), one virtual tile per node
// row: fewest messages, but the node rows above the current panel fall idle
// as the factorization moves down (the top node's share of the trailing
// matrix is gone after 1/Pr of the steps). Smaller v keeps every node row in
// the trailing matrix longer at the cost of more chain crossings. The default,
// v = max(1, ⌊p/(8·Pr)⌋), gives every node row at least 8 virtual tiles of a
// column: simulated Keeneland QR (experiments/README.md, "QR virtual tiles")
// ran within 4% of the best v measured on 2x2 and 4x4 grids, with and
// without GPUs, with 2-4x fewer messages than v = 1; v = p/Pr lost 25-60%.
int default_virtual_tile_height(int p, int Pr);

// 001 §3.4, one node: remainder columns to the G GPUs cyclically (in order of
// their top-level tile), every other column to the host. The same map as
// MultiLevelBlockCyclic on a 1×1 grid.
class HeteroColumnCyclic final : public Distribution {
 public:
  HeteroColumnCyclic(const TileLayout& layout, int G);
  Location owner(int i, int j) const override { return inner_.owner(i, j); }
  int nodes() const override { return 1; }
  int gpus_per_node() const override { return inner_.gpus_per_node(); }
  std::string name() const override;

 private:
  MultiLevelBlockCyclic inner_;
};

// Homogeneous 2-D block-cyclic over tile rows and tile columns (ScaLAPACK-like):
// N = (I mod Pr)·Pc + (J mod Pc), always on the host.
class BlockCyclic2D final : public Distribution {
 public:
  BlockCyclic2D(int Pr, int Pc);
  Location owner(int i, int j) const override { return {(i % Pr_) * Pc_ + (j % Pc_), 0}; }
  int nodes() const override { return Pr_ * Pc_; }
  int gpus_per_node() const override { return 0; }
  std::string name() const override;

 private:
  int Pr_, Pc_;
};

// Where each datum of a factorization's task graph lives, for the protocol:
// tile (i,j) (datum i + j·p) where `dist` puts it, and datum p·q + x (a
// factorization's extra data, such as QR's panel copy of column x) with tile
// anchors[x]. `dist` must outlive the returned function.
std::function<Location(std::uint32_t)> anchored_placement(const TileLayout& layout, const Distribution& dist,
                                                          std::vector<std::pair<int, int>> anchors = {});

}  // namespace tessera
