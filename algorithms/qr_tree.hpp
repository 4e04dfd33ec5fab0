#pragma once
// QR's reduction tree down a tile column (--qr-tree).
//
// Flat (001 Alg. 2, 000 App. A.2.2): the column's top tile row t is the head
// of one chain; TSQRT folds every tile row below it into R_t, one after
// another. Its critical path is p - t kernels per column, and on a grid with
// Pr > 1 node rows the chain crosses a node boundary once per virtual tile.
//
// Binary (hierarchical QR: Hadri, Ltaief, Agullo, Dongarra, "Tile QR
// factorization with parallel panel processing for multicore architectures",
// IPDPS 2010; Dongarra, Faverge, Hérault, Jacquelin, Langou, Robert,
// "Hierarchical QR factorization algorithms for multi-core cluster systems",
// IPDPS 2012): a column's domains are its node rows. Node row r holds the
// virtual tiles b ≡ r (mod Pr) (runtime/distribution.hpp); its first tile
// row at or below t is the domain's head, and the flat chain runs from there
// through the node row's other tile rows of the column (all on one node
// row: no message). The Pr heads' triangles are then reduced by TTQRT (both
// operands triangular) in a binary tree, t's domain first:
//
//   column k, top row t, heads t < h1 < h2 < ... (one per other node row)
//     domains:  t's node row, h1's, h2's, ...   flat chains, in parallel
//     level 1:  heads 0+1, 2+3, ...;  level 2: 0+2, 4+6, ...;  ...
//
// so a column's critical path is about p/Pr + ⌈log2 Pr⌉ kernels instead of
// p, its R crosses node rows ⌈log2 Pr⌉ times instead of once per virtual
// tile below it, and the tree adds Pr - 1 TT pairs a column (TTQRT and its
// TTMQRs: about half of TSQRT's and SSRFB's work each). With one node row the
// tree is flat. A head must be tall enough to hold a column's R: a node
// row whose only tile row of the column is a short last row joins t's chain.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/tile_layout.hpp"

namespace tessera {

enum class QrTreeKind { Flat, Binary };
QrTreeKind parse_qr_tree(const std::string& name);  // InputError naming --qr-tree
const char* to_string(QrTreeKind k);

class QrTree {
 public:
  QrTree() = default;  // flat
  // Binary over the node rows of a grid with `grid_rows` node rows and
  // virtual tiles of v tile rows, each node row's rows of a column cut into
  // domains of `a` tile rows (0: one domain per node row). Flat when
  // grid_rows == 1 and a == 0.
  QrTree(const TileLayout& layout, int grid_rows, int v, int a = 0);

  bool flat() const { return flat_; }
  // The domain heads of a column with top row t below t, ascending.
  const std::vector<int>& heads_below(int t) const;
  // Whether tile row i heads a domain of a column with top row t (i > t).
  bool is_head(int i, int t) const;
  // The head of the chain that tile row i (> t) joins in a column with top row t.
  int chain_head(int i, int t) const;
  // The reduction of a column with top row t: pairs (a, b), a < b, b's
  // triangle folded into a's, in an order every dependency respects.
  std::vector<std::pair<int, int>> pairs(int t) const;

  // Head panel copies (GEQRT's V and T of a head, for its LARFBs; 000 §5.2's
  // rename, as for the top row's): one per column k and head h below its
  // top row, numbered column by column. count, index of (k, h), and back.
  std::size_t head_panels() const { return panel_k_.size(); }
  std::size_t head_panel(int k, int h) const;
  std::pair<int, int> head_panel_at(std::size_t x) const { return {panel_k_[x], panel_h_[x]}; }

 private:
  bool flat_ = true;
  int Pr_ = 1, v_ = 1, a_ = 0;
  std::vector<std::vector<int>> heads_;  // per top row t
  std::vector<int> rank_;                // tile row i's place among its node row's rows
  std::vector<std::vector<int>> rows_;   // per node row, its tile rows ascending
  std::vector<char> tall_;               // whether a tile row can hold a column's R
  std::vector<int> col_top_;             // per column
  std::vector<std::size_t> panel_offset_;
  std::vector<int> panel_k_, panel_h_;
  int node_row(int i) const { return (i / v_) % Pr_; }
};

}  // namespace tessera
