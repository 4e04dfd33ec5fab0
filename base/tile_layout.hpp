#pragma once
// Two-level hybrid-size tile geometry (001 §3.1).
//
// Rows are cut into top-level tile rows of height B (the last one shorter when
// B does not divide m). Columns are first cut into top-level blocks of width B;
// each top-level block is then cut into s-1 narrow columns of width b and one
// remainder column of width B-(s-1)b. The last top-level block may be narrower
// than B: it keeps as many b-wide columns as fit and puts the rest in its
// remainder, so every element belongs to exactly one tile and no tile is empty.
//
//        <---------- B ---------><---------- B --------->
//        | b | b |   remainder  | b | b |   remainder  |   s = 3
//   B    |   |   |              |   |   |              |
//        +---+---+--------------+---+---+--------------+
//   B    |   |   |              |   |   |              |
#include <cstdint>
#include <vector>

namespace tessera {

using index_t = std::int64_t;

// ceil(a / b) for a >= 0 and b >= 1. (a + b - 1) / b overflows once a + b
// passes 2^63 - 1 (n = B = 2^63 - 1 gave 0 tile rows).
constexpr index_t ceil_div(index_t a, index_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// A run names its data by 32-bit ids (base/task.hpp DataId) and keeps state
// per tile row and column: a grid of more tiles than this is refused.
inline constexpr double kMaxTiles = 1 << 30;
// The tiles of an m x n matrix in B x B top-level tiles, each top-level
// column cut in s: ceil(m/B) ceil(n/B) s, in double (it cannot overflow).
double tile_count(index_t m, index_t n, index_t B, int s);
// Throws InputError when tile_count(m, n, B, s) > kMaxTiles, naming --n
// (and --m where it differs), --B, --s and the count; m, n, B, s >= 1.
void check_tile_count(index_t m, index_t n, index_t B, int s);

class TileLayout {
 public:
  // Throws InputError naming the parameter when m, n, B, s or b is invalid.
  TileLayout(index_t m, index_t n, index_t B, int s, index_t b);

  index_t m() const { return m_; }
  index_t n() const { return n_; }
  index_t B() const { return B_; }
  int s() const { return s_; }
  index_t b() const { return b_; }

  int tile_rows() const { return static_cast<int>(row_offset_.size()) - 1; }  // p
  int tile_cols() const { return static_cast<int>(col_offset_.size()) - 1; }  // q

  index_t row_offset(int i) const { return row_offset_[i]; }
  index_t row_height(int i) const { return row_offset_[i + 1] - row_offset_[i]; }
  index_t col_offset(int j) const { return col_offset_[j]; }
  index_t col_width(int j) const { return col_offset_[j + 1] - col_offset_[j]; }

  // Top-level block a tile column belongs to, and its position d (0-based)
  // inside that block; the remainder column of a full block has d = s-1.
  int col_top(int j) const { return col_top_[j]; }
  int col_sub(int j) const { return col_sub_[j]; }
  // True for the last (remainder) column of its top-level block: the wide
  // column that 001 §3.4 gives to a GPU.
  bool is_remainder(int j) const { return j + 1 == top_first_col_[col_top_[j] + 1]; }
  // Offset of column j's first global column inside its top-level block: the
  // local row where its diagonal starts inside tile row col_top(j) (Δ in Alg. 1).
  index_t col_local_offset(int j) const { return col_offset_[j] - static_cast<index_t>(col_top_[j]) * B_; }
  // Tile columns of top-level block t are [first_col_of_top(t), first_col_of_top(t+1)).
  int first_col_of_top(int t) const { return top_first_col_[t]; }
  int top_cols() const { return static_cast<int>(top_first_col_.size()) - 1; }

  // Tile holding global element (r, c).
  int tile_row_of(index_t r) const { return static_cast<int>(r / B_); }
  int tile_col_of(index_t c) const;

 private:
  index_t m_, n_, B_;
  int s_;
  index_t b_;
  std::vector<index_t> row_offset_, col_offset_;
  std::vector<int> col_top_, col_sub_, top_first_col_;
};

// Tile sizes used when the user gives none: wide enough for BLAS-3 efficiency
// on a CPU core, small enough to leave parallel work for every thread.
struct DefaultTiles {
  index_t B;
  int s;
  index_t b;
};
DefaultTiles default_tiles(index_t m, index_t n, int threads, bool single_precision);

// The narrow columns' width b when the user gives none: 0 with s = 1 (none);
// B/s where every column is a GPU's (--dist gpu-columns: s equal columns);
// otherwise B/(2s), the host's narrow columns; at least 1.
index_t default_narrow_width(index_t B, int s, bool equal_columns);

}  // namespace tessera
