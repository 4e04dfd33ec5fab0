#include "algorithms/qr_tree.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/error.hpp"

namespace tessera {

QrTreeKind parse_qr_tree(const std::string& name) {
  if (name == "flat") return QrTreeKind::Flat;
  if (name == "binary") return QrTreeKind::Binary;
  throw InputError("--qr-tree '" + name + "' is not one of: flat, binary");
}

const char* to_string(QrTreeKind k) { return k == QrTreeKind::Binary ? "binary" : "flat"; }

QrTree::QrTree(const TileLayout& L, int grid_rows, int v) : Pr_(grid_rows), v_(v) {
  if (grid_rows < 1 || v < 1)
    throw InputError("QR reduction tree: grid rows " + std::to_string(grid_rows) + " and virtual tile height " +
                     std::to_string(v) + " must be >= 1");
  if (grid_rows == 1) return;  // nothing to cross: flat
  flat_ = false;
  const int p = L.tile_rows(), q = L.tile_cols();
  index_t widest = 0;
  for (int k = 0; k < q; ++k) widest = std::max(widest, L.col_width(k));
  // Per top row t: each other node row's first tile row below t, if tall enough.
  heads_.resize(static_cast<std::size_t>(p));
  for (int t = 0; t < p; ++t) {
    std::vector<int> first(static_cast<std::size_t>(Pr_), -1);
    for (int i = t + 1; i < p; ++i) {
      const int r = node_row(i);
      if (r != node_row(t) && first[r] < 0) first[r] = i;
    }
    for (const int h : first)
      if (h >= 0 && L.row_height(h) >= widest) heads_[t].push_back(h);
    std::sort(heads_[t].begin(), heads_[t].end());
  }
  col_top_.resize(static_cast<std::size_t>(q));
  panel_offset_.resize(static_cast<std::size_t>(q) + 1, 0);
  for (int k = 0; k < q; ++k) {
    col_top_[k] = L.col_top(k);
    for (const int h : heads_below(col_top_[k])) {
      panel_k_.push_back(k);
      panel_h_.push_back(h);
    }
    panel_offset_[k + 1] = panel_k_.size();
  }
}

const std::vector<int>& QrTree::heads_below(int t) const {
  static const std::vector<int> kNone;
  return flat_ ? kNone : heads_[t];
}

bool QrTree::is_head(int i, int t) const {
  const auto& h = heads_below(t);
  return std::binary_search(h.begin(), h.end(), i);
}

int QrTree::chain_head(int i, int t) const {
  for (const int h : heads_below(t))
    if (node_row(h) == node_row(i) && h <= i) return h;
  return t;
}

std::size_t QrTree::head_panel(int k, int h) const {
  const auto& below = heads_below(col_top_.at(k));
  const auto at = std::lower_bound(below.begin(), below.end(), h);
  if (at == below.end() || *at != h)
    throw std::logic_error("tile row " + std::to_string(h) + " heads no domain of column " + std::to_string(k));
  return panel_offset_[k] + static_cast<std::size_t>(at - below.begin());
}

std::vector<std::pair<int, int>> QrTree::pairs(int t) const {
  // Binary tree over t and the heads below it, ascending: level s pairs
  // positions x and x + s, x a multiple of 2s; everything folds into t.
  std::vector<std::pair<int, int>> out;
  std::vector<int> rows{t};
  for (const int h : heads_below(t)) rows.push_back(h);
  for (std::size_t s = 1; s < rows.size(); s *= 2)
    for (std::size_t x = 0; x + s < rows.size(); x += 2 * s) out.emplace_back(rows[x], rows[x + s]);
  return out;
}

}  // namespace tessera
