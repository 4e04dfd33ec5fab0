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
// IPDPS 2012): the rows are cut into domains, each a virtual tile (v tile
// rows that one node row holds, runtime/distribution.hpp). Inside a domain
// the flat chain runs from its first row, the domain's head (a GEQRT there,
// then TSQRTs); the heads' triangles are then reduced pairwise by TTQRT
// (both operands triangular), first among the domains of one node row, then
// across node rows, each level a binary tree:
//
//   column k, top row t, heads h1 < h2 < ... (node row of each in brackets)
//     domains:  [t .. h1)  [h1 .. h2)  [h2 .. h3)  ...   flat chains, in parallel
//     level 1:  inside each node row: heads 0+1, 2+3, ...; then 0+2, ...
//     level 2:  across node rows: their first heads, the same way
//
// so a column's critical path is about v + log2(domains) kernels and its
// R crosses between node rows ⌈log2 Pr⌉ times. A head is a tile row where a
// virtual tile starts (i mod v = 0, i > 0), on a grid of Pr > 1 node rows
// (with one node row there is nothing to cross: the tree is flat), and tall
// enough to hold a column's R (a short last tile row joins the domain above).
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
  // Binary over the domains of a grid with `grid_rows` node rows and
  // virtual tiles of v tile rows (flat when grid_rows == 1).
  QrTree(const TileLayout& layout, int grid_rows, int v);

  bool flat() const { return heads_.empty(); }
  // Whether tile row i heads a domain (a column's top row aside).
  bool is_head(int i) const { return !flat() && head_of_row_[i] == i; }
  // The heads strictly below tile row t, ascending.
  std::span<const int> heads_below(int t) const;
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
  int Pr_ = 1, v_ = 1;
  std::vector<int> heads_;        // ascending
  std::vector<int> head_of_row_;  // the last head <= i (-1: none)
  std::vector<int> col_top_;      // per column
  std::vector<std::size_t> panel_offset_;
  std::vector<int> panel_k_, panel_h_;
  int node_row(int i) const { return (i / v_) % Pr_; }
};

}  // namespace tessera
