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
  std::unique_ptr<T[], FreeDeleter> mem(static_cast<T*>(std::aligned_alloc(64, bytes)));
  if (!mem) throw std::bad_alloc();
  T* const tile = mem.get();
  storage_.push_back(std::move(mem));  // if this throws, mem still owns the tile and frees it
  slot = tile;
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
  storage_.reserve(storage_.size() + tiles.size());  // no allocation between a tile's and its owner's
  std::vector<std::pair<std::byte*, std::size_t>> ranges;
  for (const auto& [i, j] : tiles) {
    std::size_t bytes = 0;
    if (T* t = allocate_uninitialized(i, j, bytes)) ranges.emplace_back(reinterpret_cast<std::byte*>(t), bytes);
  }
  parallel_zero(ranges);
}

template <class T>
TileMatrix<T> TileMatrix<T>::from_dense(const TileLayout& layout, const T* a, index_t lda, std::size_t max_threads) {
  TileMatrix<T> t(layout, false);
  t.storage_.reserve(t.table_.size());
  for (int j = 0; j < t.q(); ++j)
    for (int i = 0; i < t.p(); ++i) {
      std::size_t bytes = 0;
      t.allocate_uninitialized(i, j, bytes);
    }
  t.from_dense(a, lda, max_threads);
  return t;
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
std::size_t TileMatrix<T>::pass_threads(std::size_t max_threads) const {
  const double entries = static_cast<double>(layout_.m()) * static_cast<double>(layout_.n());
  return std::min(max_threads, static_cast<std::size_t>(entries / double(1 << 22)));
}

template <class T>
void TileMatrix<T>::from_dense(const T* a, index_t lda, std::size_t max_threads) {
  parallel_units(static_cast<std::size_t>(q()), pass_threads(max_threads), [&](std::size_t u) {
    const int j = static_cast<int>(u);
    for (int i = 0; i < p(); ++i) {
      T* t = tile(i, j);
      const index_t h = ld(i), r0 = layout_.row_offset(i), c0 = layout_.col_offset(j);
      for (index_t c = 0; c < layout_.col_width(j); ++c) std::memcpy(t + c * h, a + r0 + (c0 + c) * lda, h * sizeof(T));
    }
  });
}

template <class T>
void TileMatrix<T>::to_dense(T* a, index_t lda, std::size_t max_threads) const {
  parallel_units(static_cast<std::size_t>(q()), pass_threads(max_threads), [&](std::size_t u) {
    const int j = static_cast<int>(u);
    for (int i = 0; i < p(); ++i) {
      const T* t = tile(i, j);
      const index_t h = ld(i), r0 = layout_.row_offset(i), c0 = layout_.col_offset(j);
      for (index_t c = 0; c < layout_.col_width(j); ++c) std::memcpy(a + r0 + (c0 + c) * lda, t + c * h, h * sizeof(T));
    }
  });
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
