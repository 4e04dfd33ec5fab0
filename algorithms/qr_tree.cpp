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

QrTree::QrTree(const TileLayout& L, int grid_rows, int v, int a) : Pr_(grid_rows), v_(v), a_(a) {
  if (grid_rows < 1 || v < 1 || a < 0)
    throw InputError("QR reduction tree: grid rows " + std::to_string(grid_rows) + ", virtual tile height " +
                     std::to_string(v) + " and domain size " + std::to_string(a) + " must be >= 1 (a >= 0)");
  if (grid_rows == 1 && a == 0) return;  // one domain: flat
  flat_ = false;
  const int p = L.tile_rows(), q = L.tile_cols();
  index_t widest = 0;
  for (int k = 0; k < q; ++k) widest = std::max(widest, L.col_width(k));
  rows_.resize(static_cast<std::size_t>(Pr_));
  rank_.resize(static_cast<std::size_t>(p));
  tall_.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    rank_[i] = static_cast<int>(rows_[node_row(i)].size());
    rows_[node_row(i)].push_back(i);
    tall_[i] = L.row_height(i) >= widest;
  }
  heads_.resize(static_cast<std::size_t>(p));
  for (int t = 0; t < p; ++t) {
    for (int i = t + 1; i < p; ++i)
      if (chain_head(i, t) == i) heads_[t].push_back(i);
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
  if (flat_) return t;
  // Node row r's rows at or below t (from t itself in t's node row), cut
  // into domains of a; a domain whose first row is too short to hold R
  // (a short last tile row) joins the one above it in r, or t's chain.
  const auto& rows = rows_[node_row(i)];
  const int first = static_cast<int>(std::lower_bound(rows.begin(), rows.end(), t) - rows.begin());
  const int at = rank_[i] - first;
  int domain = a_ > 0 ? at / a_ : 0;
  for (; domain >= 0; --domain) {
    const int h = rows[first + domain * (a_ > 0 ? a_ : 0)];
    if (h == t || (h > t && tall_[h])) return h;
  }
  return t;
}

std::size_t QrTree::head_panel(int k, int h) const {
  const auto& below = heads_below(col_top_.at(k));
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
  // The heads of each node row (t first in its own), reduced inside the
  // node row; then the node rows' first heads, across node rows.
  std::vector<std::pair<int, int>> out;
  if (flat_) return out;
  std::vector<std::vector<int>> by_row(static_cast<std::size_t>(Pr_));
  by_row[node_row(t)].push_back(t);
  for (const int h : heads_below(t)) by_row[node_row(h)].push_back(h);
  std::vector<int> leaders;
  for (const auto& g : by_row)
    if (!g.empty()) {
      binary(g, out);
      leaders.push_back(g.front());
    }
  std::sort(leaders.begin(), leaders.end());
  binary(leaders, out);
  return out;
}

}  // namespace tessera
