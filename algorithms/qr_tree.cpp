#include "algorithms/qr_tree.hpp"

#include <algorithm>
#include <map>

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
  const int p = L.tile_rows(), q = L.tile_cols();
  if (grid_rows == 1) return;  // nothing to cross: flat
  index_t widest = 0;
  for (int k = 0; k < q; ++k) widest = std::max(widest, L.col_width(k));
  for (int i = v; i < p; i += v)
    if (L.row_height(i) >= widest) heads_.push_back(i);
  if (heads_.empty()) return;
  head_of_row_.assign(static_cast<std::size_t>(p), -1);
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    const int end = h + 1 < heads_.size() ? heads_[h + 1] : p;
    for (int i = heads_[h]; i < end; ++i) head_of_row_[i] = heads_[h];
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

std::span<const int> QrTree::heads_below(int t) const {
  const auto first = std::upper_bound(heads_.begin(), heads_.end(), t);
  return {first, heads_.end()};
}

int QrTree::chain_head(int i, int t) const {
  if (flat()) return t;
  const int h = head_of_row_[i];
  return h > t ? h : t;
}

std::size_t QrTree::head_panel(int k, int h) const {
  const auto below = heads_below(col_top_[k]);
  const auto at = std::lower_bound(below.begin(), below.end(), h);
  if (at == below.end() || *at != h)
    throw std::logic_error("tile row " + std::to_string(h) + " heads no domain of column " + std::to_string(k));
  return panel_offset_[k] + static_cast<std::size_t>(at - below.begin());
}

namespace {

// Binary tree over `rows` (ascending): level s pairs positions x and x + s,
// x a multiple of 2s; everything folds into rows[0].
void binary(const std::vector<int>& rows, std::vector<std::pair<int, int>>& out) {
  for (std::size_t s = 1; s < rows.size(); s *= 2)
    for (std::size_t x = 0; x + s < rows.size(); x += 2 * s) out.emplace_back(rows[x], rows[x + s]);
}

}  // namespace

std::vector<std::pair<int, int>> QrTree::pairs(int t) const {
  std::vector<std::pair<int, int>> out;
  if (flat()) return out;
  // The domain heads of this column by node row (t's node row first: t is
  // the column's first row), then the node rows' first heads.
  std::map<int, std::vector<int>> by_row;
  std::vector<int> order;  // node rows in order of their first head
  const auto add = [&](int h) {
    auto& g = by_row[node_row(h)];
    if (g.empty()) order.push_back(node_row(h));
    g.push_back(h);
  };
  add(t);
  for (const int h : heads_below(t)) add(h);
  std::vector<int> leaders;
  for (const int r : order) {
    binary(by_row[r], out);
    leaders.push_back(by_row[r].front());
  }
  binary(leaders, out);
  return out;
}

}  // namespace tessera
