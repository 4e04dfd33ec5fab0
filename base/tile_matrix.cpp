#include "base/tile_matrix.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

#include "base/parallel_units.hpp"

namespace tessera {

template <class T>
TileMatrix<T>::TileMatrix(const TileLayout& layout, bool allocate_all)
    : layout_(layout), table_(static_cast<std::size_t>(layout.tile_rows()) * layout.tile_cols(), nullptr),
      owned_(table_.size(), false) {
  if (!allocate_all) return;
  std::vector<std::pair<int, int>> tiles;
  for (int j = 0; j < q(); ++j)
    for (int i = 0; i < p(); ++i) tiles.emplace_back(i, j);
  allocate_zeroed(tiles);
}

template <class T>
T* TileMatrix<T>::allocate_uninitialized(int i, int j, std::size_t& bytes) {
  T*& slot = table_[i + static_cast<std::size_t>(j) * p()];
  if (slot) return nullptr;
  bytes = static_cast<std::size_t>(layout_.row_height(i) * layout_.col_width(j)) * sizeof(T);
  bytes = (bytes + 63) / 64 * 64;
  void* mem = std::aligned_alloc(64, bytes);
  if (!mem) throw std::bad_alloc();
  storage_.emplace_back(static_cast<T*>(mem));
  slot = static_cast<T*>(mem);
  owned_[i + static_cast<std::size_t>(j) * p()] = true;
  return slot;
}

template <class T>
void TileMatrix<T>::allocate(int i, int j) {
  std::size_t bytes = 0;
  if (T* t = allocate_uninitialized(i, j, bytes)) std::memset(t, 0, bytes);
}

template <class T>
void TileMatrix<T>::allocate_zeroed(const std::vector<std::pair<int, int>>& tiles) {
  // Pieces of at most 16 MiB, a thread per 64 MiB of the whole at most.
  constexpr std::size_t kPiece = std::size_t{1} << 24;
  struct Piece {
    std::byte* at;
    std::size_t bytes;
  };
  std::vector<Piece> pieces;
  std::size_t total = 0;
  for (const auto& [i, j] : tiles) {
    std::size_t bytes = 0;
    auto* t = reinterpret_cast<std::byte*>(allocate_uninitialized(i, j, bytes));
    if (!t) continue;
    total += bytes;
    for (std::size_t off = 0; off < bytes; off += kPiece) pieces.push_back({t + off, std::min(kPiece, bytes - off)});
  }
  parallel_units(pieces.size(), total / (4 * kPiece),
                 [&](std::size_t u) { std::memset(pieces[u].at, 0, pieces[u].bytes); });
}

template <class T>
TileMatrix<T> TileMatrix<T>::clone() const {
  TileMatrix<T> c(layout_, false);
  for (std::size_t x = 0; x < table_.size(); ++x) {
    if (!owned_[x]) continue;
    const int i = static_cast<int>(x % p()), j = static_cast<int>(x / p());
    c.allocate(i, j);
    std::copy(table_[x], table_[x] + layout_.row_height(i) * layout_.col_width(j), c.tile(i, j));
  }
  return c;
}

template <class T>
T& TileMatrix<T>::at(index_t r, index_t c) {
  const int i = layout_.tile_row_of(r), j = layout_.tile_col_of(c);
  return tile(i, j)[(r - layout_.row_offset(i)) + (c - layout_.col_offset(j)) * ld(i)];
}

template <class T>
T TileMatrix<T>::at(index_t r, index_t c) const {
  return const_cast<TileMatrix*>(this)->at(r, c);
}

template <class T>
void TileMatrix<T>::from_dense(const T* a, index_t lda) {
  for (int j = 0; j < q(); ++j)
    for (int i = 0; i < p(); ++i) {
      T* t = tile(i, j);
      const index_t h = ld(i), r0 = layout_.row_offset(i), c0 = layout_.col_offset(j);
      for (index_t c = 0; c < layout_.col_width(j); ++c) std::memcpy(t + c * h, a + r0 + (c0 + c) * lda, h * sizeof(T));
    }
}

template <class T>
void TileMatrix<T>::to_dense(T* a, index_t lda) const {
  for (int j = 0; j < q(); ++j)
    for (int i = 0; i < p(); ++i) {
      const T* t = tile(i, j);
      const index_t h = ld(i), r0 = layout_.row_offset(i), c0 = layout_.col_offset(j);
      for (index_t c = 0; c < layout_.col_width(j); ++c) std::memcpy(a + r0 + (c0 + c) * lda, t + c * h, h * sizeof(T));
    }
}

template <class T>
std::vector<T> TileMatrix<T>::to_dense() const {
  std::vector<T> d(static_cast<std::size_t>(layout_.m() * layout_.n()));
  to_dense(d.data(), layout_.m());
  return d;
}

template class TileMatrix<float>;
template class TileMatrix<double>;

}  // namespace tessera
