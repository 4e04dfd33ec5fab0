#pragma once
// DataStore implementations: what one node of a distributed run sends for a
// datum, and where a received copy goes (000 §5.5: the tile tables point at
// it, so kernels find alien copies exactly where they find local tiles).
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "algorithms/qr.hpp"
#include "base/spinlock.hpp"
#include "base/tile_matrix.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Tiles of tile matrices (optionally each with its QR T factor), QR panel
// copies and buffers of a pointer table (LU's candidate sets and plans),
// each a contiguous range of data ids.
template <class T>
class TileDataStore final : public DataStore {
 public:
  TileDataStore() = default;
  TileDataStore(const TileDataStore&) = delete;
  TileDataStore& operator=(const TileDataStore&) = delete;
  // Alien copies are freed here: clear the table entries that point at them.
  ~TileDataStore() override {
    for (auto& [d, m] : held_) point(d, nullptr);
  }

  // Data [base, base + p*q): the tiles of `m` (datum base + i + j*p), each
  // followed on the wire by its T factor in `f` when given.
  void add_tiles(DataId base, TileMatrix<T>& m, QrFactors<T>* f = nullptr) {
    segments_.push_back({base, static_cast<DataId>(m.p() * m.q()), &m, f, false});
  }
  // Data [base, base + q): the panel copies of `f` (V and T of each GEQRT).
  void add_panels(DataId base, QrFactors<T>& f, int q) {
    segments_.push_back({base, static_cast<DataId>(q), nullptr, &f, true});
  }
  // Data [base, base + table.size()): the buffers table[x] of elems(x)
  // elements each (a null entry: not held by this node).
  void add_buffers(DataId base, std::vector<T*>& table, std::function<std::size_t(std::size_t)> elems) {
    segments_.push_back({base, static_cast<DataId>(table.size()), nullptr, nullptr, false, &table, std::move(elems)});
  }

  bool has_data() const override { return true; }
  std::size_t word_bytes() const override { return sizeof(T); }
  // Alien copies held now (received and not yet released or replaced).
  std::size_t alien_copies() {
    std::lock_guard lk(lock_);
    return held_.size();
  }

  std::size_t bytes(DataId d) const override {
    const Ref r = find(d);
    if (r.s->panels) return r.s->f->v_elems(r.j) * sizeof(T);
    if (r.s->buffers) return r.s->buf_elems(static_cast<std::size_t>(r.j)) * sizeof(T);
    const TileLayout& L = r.s->m->layout();
    std::size_t n = static_cast<std::size_t>(L.row_height(r.i) * L.col_width(r.j));
    if (r.s->f) n += r.s->f->t_elems(r.i, r.j);
    return n * sizeof(T);
  }

  void pack(DataId d, std::byte* out) const override { copy(d, out, true); }
  void host_ranges(DataId d, std::vector<platform::HostRange>& out) override {
    for_each_range(d, [&](T* mine, std::size_t n) {
      out.push_back({reinterpret_cast<std::byte*>(mine), n * sizeof(T)});
    });
  }
  bool holds(DataId d) const override {
    bool all = true;
    for_each_piece(d, [&](T* mine, std::size_t n) { all &= n == 0 || mine != nullptr; });
    return all;
  }
  void point_at(DataId d, std::byte* at) override { point(d, reinterpret_cast<T*>(at)); }
  void unpack_own(DataId d, const std::byte* in) override { copy(d, const_cast<std::byte*>(in), false); }

  void release_alien(DataId d) override {
    point(d, nullptr);
    std::lock_guard lk(lock_);
    held_.erase(d);
  }

  void adopt_alien(DataId d, platform::Message&& m) override {
    point(d, reinterpret_cast<T*>(m.payload()));
    std::lock_guard lk(lock_);
    held_[d] = std::move(m);  // frees the previous copy, whose readers have finished
  }

 private:
  struct Segment {
    DataId base, count;
    TileMatrix<T>* m;
    QrFactors<T>* f;
    bool panels;
    std::vector<T*>* buffers = nullptr;
    std::function<std::size_t(std::size_t)> buf_elems = {};
  };
  struct Ref {
    const Segment* s;
    int i, j;  // tile (i,j), or panel or buffer j
  };

  Ref find(DataId d) const {
    for (const Segment& s : segments_)
      if (d >= s.base && d < s.base + s.count) {
        const DataId x = d - s.base;
        if (s.panels || s.buffers) return {&s, 0, static_cast<int>(x)};
        const int p = s.m->p();
        return {&s, static_cast<int>(x % p), static_cast<int>(x / p)};
      }
    throw std::logic_error("data store: datum " + std::to_string(d) + " belongs to no segment");
  }

  void point(DataId d, T* at) {
    const Ref r = find(d);
    Segment& s = const_cast<Segment&>(*r.s);
    if (s.panels) {
      s.f->set_v(r.j, at);
      return;
    }
    if (s.buffers) {
      (*s.buffers)[static_cast<std::size_t>(r.j)] = at;
      return;
    }
    s.m->set_tile(r.i, r.j, at);
    if (s.f && s.f->t_elems(r.i, r.j) > 0) {
      const TileLayout& L = s.m->layout();
      s.f->set_t(r.i, r.j, at ? at + L.row_height(r.i) * L.col_width(r.j) : nullptr);
    }
  }

  // Calls fn(pointer, elements) for each piece of this node's copy of d, in
  // wire order: a panel copy, or a tile then its T factor.
  template <class Fn>
  void for_each_range(DataId d, Fn&& fn) const {
    for_each_piece(d, [&](T* mine, std::size_t n) {
      if (n == 0) return;  // a datum of no elements (one a variant does not use)
      if (!mine) throw std::logic_error("data store: datum " + std::to_string(d) + " is not held by this node");
      fn(mine, n);
    });
  }
  // The same pieces, null where this node holds none.
  template <class Fn>
  void for_each_piece(DataId d, Fn&& piece) const {
    const Ref r = find(d);
    if (r.s->panels) {
      piece(r.s->f->v(r.j), r.s->f->v_elems(r.j));
      return;
    }
    if (r.s->buffers) {
      const std::size_t x = static_cast<std::size_t>(r.j);
      piece((*r.s->buffers)[x], r.s->buf_elems(x));
      return;
    }
    const TileLayout& L = r.s->m->layout();
    piece(r.s->m->tile(r.i, r.j), static_cast<std::size_t>(L.row_height(r.i) * L.col_width(r.j)));
    if (r.s->f && r.s->f->t_elems(r.i, r.j) > 0) piece(r.s->f->t(r.i, r.j), r.s->f->t_elems(r.i, r.j));
  }

  // Between this node's copy of d and `buf`: to the buffer when `out`.
  void copy(DataId d, std::byte* buf, bool out) const {
    for_each_range(d, [&](T* mine, std::size_t n) {
      if (out) std::memcpy(buf, mine, n * sizeof(T));
      else std::memcpy(mine, buf, n * sizeof(T));
      buf += n * sizeof(T);
    });
  }

  std::vector<Segment> segments_;
  SpinLock lock_;
  std::unordered_map<DataId, platform::Message> held_;
};

}  // namespace tessera
