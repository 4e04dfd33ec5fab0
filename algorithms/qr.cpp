#include "algorithms/qr.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

// Forming Q walks the columns backwards: later steps k first, then left columns.
std::int32_t form_q_priority(int q, int k, int col) { return lexicographic_priority(q, k, q - col); }

DataId panel_data(const TileLayout& l, int k) { return static_cast<DataId>(l.tile_rows() * l.tile_cols() + k); }

// The panel copy of column k's head row h (its top row t or a domain head).
DataId head_panel_data(const TileLayout& l, const QrTree& tree, int k, int h) {
  if (h == l.col_top(k)) return panel_data(l, k);
  return static_cast<DataId>(l.tile_rows() * l.tile_cols() + l.tile_cols() + tree.head_panel(k, h));
}

// Rows of column k's head row h from the diagonal down (Δ only in the top row).
index_t head_offset(const TileLayout& l, int k, int h) { return h == l.col_top(k) ? l.col_local_offset(k) : 0; }

// Rows of b's triangle a TT pair reduces in column k.
index_t tt_rows(const TileLayout& l, int k, int b) { return std::min(l.row_height(b), l.col_width(k)); }

// The domains of a column with top row t: f(h, rows) for each head h (t
// first) with the rows below it in its chain, ascending.
template <class F>
void for_each_domain(const TileLayout& L, const QrTree& tree, int t, F&& f) {
  const auto& heads = tree.heads_below(t);
  std::vector<std::vector<int>> rows(heads.size() + 1);
  for (int i = t + 1; i < L.tile_rows(); ++i) {
    const int h = tree.chain_head(i, t);
    if (h == i) continue;
    const auto at = std::lower_bound(heads.begin(), heads.end(), h);
    rows[h == t ? 0 : 1 + (at - heads.begin())].push_back(i);
  }
  f(t, rows[0]);
  for (std::size_t x = 0; x < heads.size(); ++x) f(heads[x], rows[x + 1]);
}

void require_tall(const TileLayout& l) {
  if (l.m() < l.n())
    throw InputError("QR needs m >= n: m = " + std::to_string(l.m()) + ", n = " + std::to_string(l.n()));
}

}  // namespace

template <class T>
QrFactors<T>::QrFactors(const TileLayout& layout, index_t ib, const std::function<bool(int, int)>& keep, QrTree tree)
    : layout_(layout), tree_(std::move(tree)), ib_(ib), p_(layout.tile_rows()),
      t_(static_cast<std::size_t>(p_) * layout.tile_cols(), nullptr),
      v_(layout.tile_cols() + tree_.head_panels(), nullptr) {
  if (ib < 1) throw InputError("QR inner block size ib = " + std::to_string(ib) + " must be >= 1");
  require_tall(layout);
  auto alloc = [&](std::size_t n) {
    storage_.emplace_back(n, T(0));
    return storage_.back().data();
  };
  for (int k = 0; k < layout.tile_cols(); ++k) {
    const int top = layout.col_top(k);
    for (int i = top; i < p_; ++i)
      if (!keep || keep(i, k)) set_t(i, k, alloc(t_elems(i, k)));
    if (!keep || keep(top, k)) v_[k] = alloc(v_elems(k));
  }
  for (int x = layout.tile_cols(); x < panels(); ++x) {
    const auto [k, h] = tree_.head_panel_at(static_cast<std::size_t>(x - layout.tile_cols()));
    if (!keep || keep(h, k)) v_[x] = alloc(v_elems(x));
  }
}

template <class T>
int QrFactors<T>::panel(int k, int h) const {
  return h == layout_.col_top(k) ? k : layout_.tile_cols() + static_cast<int>(tree_.head_panel(k, h));
}

template <class T>
int QrFactors<T>::panel_col(int x) const {
  return x < layout_.tile_cols() ? x : tree_.head_panel_at(static_cast<std::size_t>(x - layout_.tile_cols())).first;
}

template <class T>
index_t QrFactors<T>::panel_rows(int x) const {
  if (x < layout_.tile_cols()) return layout_.row_height(layout_.col_top(x)) - layout_.col_local_offset(x);
  return layout_.row_height(tree_.head_panel_at(static_cast<std::size_t>(x - layout_.tile_cols())).second);
}

template <class T>
index_t QrFactors<T>::ib(int k) const {
  return std::min(ib_, layout_.col_width(k));
}

template <class T>
std::size_t QrFactors<T>::t_elems(int i, int k) const {
  if (i < layout_.col_top(k)) return 0;
  const std::size_t one = static_cast<std::size_t>(ib(k) * layout_.col_width(k));
  return tree_.is_head(i, layout_.col_top(k)) ? 2 * one : one;
}

template <class T>
std::size_t QrFactors<T>::v_elems(int x) const {
  const int k = panel_col(x);
  return static_cast<std::size_t>((panel_rows(x) + ib(k)) * layout_.col_width(k));
}

std::size_t qr_data_count(const TileLayout& l, const QrTree& tree) {
  return static_cast<std::size_t>(l.tile_rows()) * l.tile_cols() + l.tile_cols() + tree.head_panels();
}

void qr_tasks(const TileLayout& L, TaskSink& sink, const QrTree& tree) {
  require_tall(L);
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto W = AccessMode::Write;
  constexpr auto RW = AccessMode::ReadWrite;
  // Priorities. Flat: leftmost output column first (column_priority: the
  // next panels are the critical path). Binary: earlier steps first, then
  // leftmost column. Under the tree a node row's head tile of column j
  // feeds another node row's TTMQR of j at the same step; leftmost-first
  // lets each node run its chains of the next columns ahead, and its TT
  // partners then wait for one chain after another (simulated Keeneland
  // 4x4, N = 138,240: node 0 idle in gaps of 0.3 s or more for 128 of its
  // 607 s, TTMQRs arriving every 0.56 s); step-major keeps the node rows at
  // the same step: 381 s instead of 618 (experiments/README.md).
  const auto prio = tree.flat() ? column_priority : step_priority;
  for (int k = 0; k < q; ++k) {
    const int t = L.col_top(k);
    // Each domain's flat chain from its head h (the whole column when flat).
    for_each_domain(L, tree, t, [&](int h, const std::vector<int>& chain) {
      const DataId panel = head_panel_data(L, tree, k, h);
      sink.insert(make_task(kGeqrt, k, h, k, prio(q, k, k)).add(tile_data(L, h, k), RW).add(panel, W));
      for (int j = k + 1; j < q; ++j)
        sink.insert(make_task(kLarfb, k, h, j, prio(q, j, k)).add(panel, R).add(tile_data(L, h, j), RW));
      // The LARFBs were the panel copy's readers, and it is no part of the
      // result (the tiles hold V and T too): scratch from here on, so that
      // no eviction writes it back.
      sink.discard(panel);
      for (const int i : chain) {
        TaskDesc ts = make_task(kTsqrt, k, i, k, prio(q, k, k));
        ts.arg[3] = h;
        sink.insert(ts.add(tile_data(L, i, k), RW).add(tile_data(L, h, k), RW));
      }
      for (const int i : chain)
        for (int j = k + 1; j < q; ++j) {
          TaskDesc ss = make_task(kSsrfb, k, i, j, prio(q, j, k));
          ss.arg[3] = h;
          sink.insert(ss.add(tile_data(L, i, k), R).add(tile_data(L, i, j), RW).add(tile_data(L, h, j), RW));
        }
    });
    // The tree over the domains' triangles (none when flat).
    for (const auto& [a, b] : tree.pairs(t)) {
      TaskDesc tt = make_task(kTtqrt, k, b, k, prio(q, k, k));
      tt.arg[3] = a;
      sink.insert(tt.add(tile_data(L, b, k), RW).add(tile_data(L, a, k), RW));
      for (int j = k + 1; j < q; ++j) {
        TaskDesc tm = make_task(kTtmqr, k, b, j, prio(q, j, k));
        tm.arg[3] = a;
        sink.insert(tm.add(tile_data(L, b, k), R).add(tile_data(L, b, j), RW).add(tile_data(L, a, j), RW));
      }
    }
    // Column k's reflectors are read by no later step.
    for (int i = t; i < p; ++i) sink.release(tile_data(L, i, k));
    // After the last column whose diagonal tile is in tile row t, row t's
    // tiles right of it hold their final R: no later step touches them. A
    // distributed run brings each home now from the node below that last
    // updated it (000 App. A.2.2's chain), rather than all at the end.
    if (k + 1 == q || L.col_top(k + 1) != t)
      for (int j = k + 1; j < q; ++j) sink.release(tile_data(L, t, j));
  }
}

void qr_form_q_tasks(const TileLayout& L, TaskSink& sink, const QrTree& tree) {
  require_tall(L);
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto RW = AccessMode::ReadWrite;
  const auto a_tile = [&](int i, int k) { return static_cast<DataId>(p * q + tile_data(L, i, k)); };
  // Q E = Q_0 (Q_1 (... (Q_{q-1} E))), Q_k^T the column's chains (GEQRT, then
  // TSQRTs, in each domain) followed by its tree's pairs, so Q_k applies the
  // pairs in reverse first, then each chain from its bottom up. Columns
  // j < k of E are zero in the rows Q_k touches, so they are skipped.
  for (int k = q - 1; k >= 0; --k) {
    const int t = L.col_top(k);
    const auto pairs = tree.pairs(t);
    for (auto it = pairs.rbegin(); it != pairs.rend(); ++it)
      for (int j = k; j < q; ++j) {
        TaskDesc tm = make_task(kTtmqrQ, k, it->second, j, form_q_priority(q, k, j));
        tm.arg[3] = it->first;
        sink.insert(
            tm.add(tile_data(L, it->second, j), RW).add(tile_data(L, it->first, j), RW).add(a_tile(it->second, k), R));
      }
    for_each_domain(L, tree, t, [&](int h, const std::vector<int>& chain) {
      for (auto row = chain.rbegin(); row != chain.rend(); ++row)
        for (int j = k, i = *row; j < q; ++j) {
          TaskDesc ss = make_task(kSsrfbQ, k, i, j, form_q_priority(q, k, j));
          ss.arg[3] = h;
          sink.insert(ss.add(tile_data(L, i, j), RW).add(tile_data(L, h, j), RW).add(a_tile(i, k), R));
        }
      for (int j = k; j < q; ++j)
        sink.insert(
            make_task(kLarfbQ, k, h, j, form_q_priority(q, k, j)).add(tile_data(L, h, j), RW).add(a_tile(h, k), R));
    });
  }
}

KernelShape qr_shape(const TileLayout& L, const TaskDesc& d, char precision, index_t ib) {
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const index_t mk = L.row_height(L.col_top(k)) - L.col_local_offset(k), wk = L.col_width(k);
  KernelShape s{d.kernel, precision};
  s.ib = ib;
  // GEQRT and LARFB run on a head row i: the top row from Δ down, or a domain head whole.
  const index_t mh = i == L.col_top(k) ? mk : L.row_height(i);
  switch (d.kernel) {
    case kGeqrt:
      s.m = mh;
      s.n = wk;
      break;
    case kTsqrt:
      s.m = L.row_height(i);
      s.n = wk;
      break;
    case kTtqrt:
      s.m = tt_rows(L, k, i);
      s.n = wk;
      break;
    case kLarfb:
    case kLarfbQ:
      s.m = mh;
      s.n = L.col_width(j);
      s.k = wk;
      break;
    case kTtmqr:
    case kTtmqrQ:
      s.m = tt_rows(L, k, i);
      s.n = L.col_width(j);
      s.k = wk;
      break;
    case kSsrfb:
    case kSsrfbQ:
      s.m = L.row_height(i);
      s.n = L.col_width(j);
      s.k = wk;
      break;
    default: break;
  }
  return s;
}

template <class T>
void QrExecutor<T>::execute(const TaskDesc& d, WorkerContext& w) {
  kernels::TileKernels<T>& K = w.kernels<T>();
  const TileLayout& L = a_.layout();
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2], h = d.arg[3];
  const index_t wk = L.col_width(k), ib = f_.ib(k);
  switch (d.kernel) {
    case kGeqrt: {
      // (V_ik, R_ik, T_ik) = QR(A_ik[Δ:, :]), i the column's top row or a domain head
      const index_t di = head_offset(L, k, i), mi = L.row_height(i) - di;
      T* a = a_.tile(i, k) + di;
      K.geqrt(mi, wk, ib, a, a_.ld(i), f_.t(i, k), ib);
      // Copy V and T for the LARFBs (rename, see header).
      const int x = f_.panel(k, i);
      K.copy(mi, wk, a, a_.ld(i), f_.v(x), mi);
      K.copy(ib, wk, f_.t(i, k), ib, f_.v_t(x), ib);
      break;
    }
    case kLarfb: {
      // A_ij[Δ:, :] = Q_ik^T A_ij[Δ:, :]
      const index_t di = head_offset(L, k, i), mi = L.row_height(i) - di;
      const int x = f_.panel(k, i);
      K.larfb(true, mi, L.col_width(j), wk, ib, f_.v(x), mi, f_.v_t(x), ib, a_.tile(i, j) + di, a_.ld(i));
      break;
    }
    case kTsqrt:
      // (V_ik, T_ik, R_hk) = QR([R_hk; A_ik]), h the chain's head
      K.tsqrt(L.row_height(i), wk, ib, a_.tile(h, k) + head_offset(L, k, h), a_.ld(h), a_.tile(i, k), a_.ld(i),
              f_.t(i, k), ib);
      break;
    case kSsrfb:
      // [A_hj[Δ:Δ+wk, :]; A_ij] = Q_ik^T [A_hj[Δ:Δ+wk, :]; A_ij]
      K.ssrfb(true, L.row_height(i), L.col_width(j), wk, ib, a_.tile(i, k), a_.ld(i), f_.t(i, k), ib,
              a_.tile(h, j) + head_offset(L, k, h), a_.ld(h), a_.tile(i, j), a_.ld(i));
      break;
    case kTtqrt:
      // (V_ik, TT_ik, R_hk) = QR([R_hk; R_ik]), h the pair's upper head; V in R_ik's triangle
      K.ttqrt(tt_rows(L, k, i), wk, ib, a_.tile(h, k) + head_offset(L, k, h), a_.ld(h), a_.tile(i, k), a_.ld(i),
              f_.tt(i, k), ib);
      break;
    case kTtmqr:
      // [A_hj[Δ:Δ+wk, :]; A_ij[:wk, :]] = Q_ik^T [A_hj[Δ:Δ+wk, :]; A_ij[:wk, :]]
      K.ttmqr(true, tt_rows(L, k, i), L.col_width(j), wk, ib, a_.tile(i, k), a_.ld(i), f_.tt(i, k), ib,
              a_.tile(h, j) + head_offset(L, k, h), a_.ld(h), a_.tile(i, j), a_.ld(i));
      break;
    default: throw std::logic_error("QR executor: unexpected kernel " + std::to_string(d.kernel));
  }
}

template <class T>
void QrFormQExecutor<T>::execute(const TaskDesc& d, WorkerContext& w) {
  kernels::TileKernels<T>& K = w.kernels<T>();
  const TileLayout& L = a_.layout();
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2], h = d.arg[3];
  const index_t wk = L.col_width(k), ib = f_.ib(k), wj = L.col_width(j);
  switch (d.kernel) {
    case kLarfbQ: {
      // E_ij[Δ:, :] = Q_ik E_ij[Δ:, :], i a head row (V below R's diagonal: the TTQRT's V above it is not read)
      const index_t di = head_offset(L, k, i);
      K.larfb(false, L.row_height(i) - di, wj, wk, ib, a_.tile(i, k) + di, a_.ld(i), f_.t(i, k), ib, e_.tile(i, j) + di,
              e_.ld(i));
      break;
    }
    case kSsrfbQ:
      // [E_hj[Δ:Δ+wk, :]; E_ij] = Q_ik [E_hj[Δ:Δ+wk, :]; E_ij]
      K.ssrfb(false, L.row_height(i), wj, wk, ib, a_.tile(i, k), a_.ld(i), f_.t(i, k), ib,
              e_.tile(h, j) + head_offset(L, k, h), e_.ld(h), e_.tile(i, j), e_.ld(i));
      break;
    case kTtmqrQ:
      // [E_hj[Δ:Δ+wk, :]; E_ij[:wk, :]] = Q_ik [E_hj[Δ:Δ+wk, :]; E_ij[:wk, :]]
      K.ttmqr(false, tt_rows(L, k, i), wj, wk, ib, a_.tile(i, k), a_.ld(i), f_.tt(i, k), ib,
              e_.tile(h, j) + head_offset(L, k, h), e_.ld(h), e_.tile(i, j), e_.ld(i));
      break;
    default: throw std::logic_error("QR form-Q executor: unexpected kernel " + std::to_string(d.kernel));
  }
}

template class QrFactors<float>;
template class QrFactors<double>;
template class QrExecutor<float>;
template class QrExecutor<double>;
template class QrFormQExecutor<float>;
template class QrFormQExecutor<double>;

}  // namespace tessera
