#include "base/tile_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "base/error.hpp"

namespace tessera {

TileLayout::TileLayout(index_t m, index_t n, index_t B, int s, index_t b) : m_(m), n_(n), B_(B), s_(s), b_(b) {
  if (m < 1) throw InputError("matrix rows m = " + std::to_string(m) + " must be >= 1");
  if (n < 1) throw InputError("matrix size n = " + std::to_string(n) + " must be >= 1");
  if (B < 1) throw InputError("tile size B = " + std::to_string(B) + " must be >= 1");
  if (s < 1) throw InputError("tile split s = " + std::to_string(s) + " must be >= 1");
  if (s > 1 && b < 1) throw InputError("narrow tile width b = " + std::to_string(b) + " must be >= 1 when s > 1");
  if (static_cast<index_t>(s - 1) * b >= B)
    throw InputError("(s-1)*b = " + std::to_string((s - 1) * b) + " must be < B = " + std::to_string(B) +
                     " (s = " + std::to_string(s) + ", b = " + std::to_string(b) + ")");

  // Counted, not stepped: r += B passes 2^63 - 1 after the last row for m near it.
  for (index_t i = 0, rows = ceil_div(m, B); i < rows; ++i) row_offset_.push_back(i * B);
  row_offset_.push_back(m);

  const index_t tops = ceil_div(n, B);
  for (index_t t = 0; t < tops; ++t) {
    const int top = static_cast<int>(t);
    const index_t c0 = t * B, W = std::min(B, n - c0);
    top_first_col_.push_back(static_cast<int>(col_offset_.size()));
    index_t c = c0;
    for (int d = 0; d < s - 1 && b < c0 + W - c; ++d, c += b) {
      col_offset_.push_back(c);
      col_top_.push_back(top);
      col_sub_.push_back(d);
    }
    // The remainder (or, in a narrow last block, whatever is left) closes the block.
    col_offset_.push_back(c);
    col_top_.push_back(top);
    col_sub_.push_back(static_cast<int>(col_offset_.size()) - 1 - top_first_col_.back());
  }
  top_first_col_.push_back(static_cast<int>(col_offset_.size()));
  col_offset_.push_back(n);
}

double tile_count(index_t m, index_t n, index_t B, int s) {
  return static_cast<double>(ceil_div(m, B)) * static_cast<double>(ceil_div(n, B)) * s;
}

void check_tile_count(index_t m, index_t n, index_t B, int s) {
  const double tiles = tile_count(m, n, B, s);
  if (tiles <= kMaxTiles) return;
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", tiles);
  throw InputError("--n " + std::to_string(n) + (m != n ? " --m " + std::to_string(m) : std::string()) + " with --B " +
                   std::to_string(B) + " and --s " + std::to_string(s) + " makes " + count +
                   " tiles, more than the 2^30 a run can name: use a larger --B or a smaller --n");
}

int TileLayout::tile_col_of(index_t c) const {
  auto it = std::upper_bound(col_offset_.begin(), col_offset_.end(), c);
  return static_cast<int>(it - col_offset_.begin()) - 1;
}

DefaultTiles default_tiles(index_t m, index_t n, int threads, bool single_precision) {
  // Large tiles amortize the per-task cost and run GEMM near peak; keep at
  // least ~2 tile columns per thread so the DAG has parallel work.
  index_t B = single_precision ? 384 : 320;
  const index_t mn = std::min(m, n);
  while (B > 64 && mn / B < 4 * std::max(1, threads) / 2) B -= 64;
  if (mn < B) B = std::max<index_t>(1, mn);
  return {B, 1, 0};
}

index_t default_narrow_width(index_t B, int s, bool equal_columns) {
  if (s <= 1) return 0;
  return std::max<index_t>(1, equal_columns ? B / s : B / (2 * s));
}

}  // namespace tessera
