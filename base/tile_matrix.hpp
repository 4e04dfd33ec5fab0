#pragma once
// A matrix stored as tiles of a TileLayout, reached through the indirect p×q
// table of 000 §5.5: one pointer per tile, null where this process does not
// hold the tile. Tiles are column-major with leading dimension equal to the
// tile's height, and 64-byte aligned.
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "base/tile_layout.hpp"

namespace tessera {

template <class T>
class TileMatrix {
 public:
  static constexpr std::size_t kAnyThreads = ~std::size_t{0};  // max_threads: as many as parallel_units gives

  // Allocates every tile when `allocate_all`, none otherwise.
  explicit TileMatrix(const TileLayout& layout, bool allocate_all = true);
  // Allocates (zeroed) the tiles (i,j) for which keep(i, j): a node's own tiles.
  template <class Keep>
  TileMatrix(const TileLayout& layout, Keep&& keep) : TileMatrix(layout, false) {
    std::vector<std::pair<int, int>> tiles;
    for (int j = 0; j < q(); ++j)
      for (int i = 0; i < p(); ++i)
        if (keep(i, j)) tiles.emplace_back(i, j);
    allocate_zeroed(tiles);
  }
  // A copy of the tiles this matrix holds (its own, not copies it points at
  // through set_tile).
  TileMatrix clone() const;
  // Every tile of `layout`, filled from a column-major dense matrix with
  // leading dimension lda: no zeroing first, each page first touched by the
  // thread that copies into it (see from_dense).
  static TileMatrix from_dense(const TileLayout& layout, const T* a, index_t lda,
                               std::size_t max_threads = kAnyThreads);

  const TileLayout& layout() const { return layout_; }
  int p() const { return layout_.tile_rows(); }
  int q() const { return layout_.tile_cols(); }

  T* tile(int i, int j) { return table_[i + static_cast<std::size_t>(j) * p()]; }
  const T* tile(int i, int j) const { return table_[i + static_cast<std::size_t>(j) * p()]; }
  index_t ld(int i) const { return layout_.row_height(i); }
  // Tile (i,j), zeroed, unless it is allocated already.
  void allocate(int i, int j);
  // Points tile (i,j)'s table entry at storage the caller keeps (a received
  // alien copy), or back at nothing.
  void set_tile(int i, int j, T* ptr) { table_[i + static_cast<std::size_t>(j) * p()] = ptr; }

  // Element (r, c) in global coordinates; the tile must be allocated.
  T& at(index_t r, index_t c);
  T at(index_t r, index_t c) const;

  // Copies to / from a column-major dense matrix with leading dimension lda,
  // a tile column per unit of work on up to max_threads of the process's
  // threads (parallel_units: one where the matrix is small).
  void from_dense(const T* a, index_t lda, std::size_t max_threads = kAnyThreads);
  void to_dense(T* a, index_t lda, std::size_t max_threads = kAnyThreads) const;
  // The whole matrix as a new column-major m×n array (leading dimension m).
  std::vector<T> to_dense() const;

 private:
  // The tiles listed (those not allocated yet), zeroed by the machine's
  // threads when they are many bytes: the pages are first touched there.
  void allocate_zeroed(const std::vector<std::pair<int, int>>& tiles);
  // How many threads a pass over every tile may take: at most max_threads, one per 2^22 entries.
  std::size_t pass_threads(std::size_t max_threads) const;
  // Tile (i,j)'s storage, uninitialized, or null if it had some; its bytes.
  T* allocate_uninitialized(int i, int j, std::size_t& bytes);
  struct FreeDeleter {
    void operator()(T* p) const { std::free(p); }
  };
  TileLayout layout_;
  std::vector<T*> table_;
  std::vector<bool> owned_;  // table_ entries pointing at storage_
  std::vector<std::unique_ptr<T[], FreeDeleter>> storage_;
};

extern template class TileMatrix<float>;
extern template class TileMatrix<double>;

}  // namespace tessera
