#include "algorithms/qr.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "algorithms/cholesky.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

// Forming Q walks the columns backwards: later steps k first, then left columns.
std::int32_t form_q_priority(int q, int k, int col) { return k * (q + 1) + (q - col); }

DataId panel_data(const TileLayout& l, int k) { return static_cast<DataId>(l.tile_rows() * l.tile_cols() + k); }

void require_tall(const TileLayout& l) {
  if (l.m() < l.n())
    throw InputError("QR needs m >= n: m = " + std::to_string(l.m()) + ", n = " + std::to_string(l.n()));
}

}  // namespace

template <class T>
QrFactors<T>::QrFactors(const TileLayout& layout, index_t ib, const std::function<bool(int, int)>& keep)
    : layout_(layout), ib_(ib), p_(layout.tile_rows()), t_(static_cast<std::size_t>(p_) * layout.tile_cols(), nullptr),
      v_(layout.tile_cols(), nullptr) {
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
}

template <class T>
index_t QrFactors<T>::ib(int k) const {
  return std::min(ib_, layout_.col_width(k));
}

template <class T>
std::size_t QrFactors<T>::t_elems(int i, int k) const {
  return i < layout_.col_top(k) ? 0 : static_cast<std::size_t>(ib(k) * layout_.col_width(k));
}

template <class T>
std::size_t QrFactors<T>::v_elems(int k) const {
  return static_cast<std::size_t>((panel_rows(k) + ib(k)) * layout_.col_width(k));
}

std::size_t qr_data_count(const TileLayout& l) {
  return static_cast<std::size_t>(l.tile_rows()) * l.tile_cols() + l.tile_cols();
}

void qr_tasks(const TileLayout& L, TaskSink& sink) {
  require_tall(L);
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto W = AccessMode::Write;
  constexpr auto RW = AccessMode::ReadWrite;
  for (int k = 0; k < q; ++k) {
    const int t = L.col_top(k);
    sink.insert(
        make_task(kGeqrt, k, t, k, column_priority(q, k, k)).add(tile_data(L, t, k), RW).add(panel_data(L, k), W));
    for (int j = k + 1; j < q; ++j)
      sink.insert(
          make_task(kLarfb, k, t, j, column_priority(q, j, k)).add(panel_data(L, k), R).add(tile_data(L, t, j), RW));
    for (int i = t + 1; i < p; ++i)
      sink.insert(
          make_task(kTsqrt, k, i, k, column_priority(q, k, k)).add(tile_data(L, i, k), RW).add(tile_data(L, t, k), RW));
    for (int i = t + 1; i < p; ++i)
      for (int j = k + 1; j < q; ++j)
        sink.insert(make_task(kSsrfb, k, i, j, column_priority(q, j, k))
                        .add(tile_data(L, i, k), R)
                        .add(tile_data(L, i, j), RW)
                        .add(tile_data(L, t, j), RW));
    // Column k's reflectors and its panel copy are read by no later step.
    for (int i = t; i < p; ++i) sink.release(tile_data(L, i, k));
    sink.release(panel_data(L, k));
    // After the last column whose diagonal tile is in tile row t, row t's
    // tiles right of it hold their final R: no later step touches them. A
    // distributed run brings each home now from the node below that last
    // updated it (000 App. A.2.2's chain), rather than all at the end.
    if (k + 1 == q || L.col_top(k + 1) != t)
      for (int j = k + 1; j < q; ++j) sink.release(tile_data(L, t, j));
  }
}

void qr_form_q_tasks(const TileLayout& L, TaskSink& sink) {
  require_tall(L);
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto RW = AccessMode::ReadWrite;
  const auto a_tile = [&](int i, int k) { return static_cast<DataId>(p * q + tile_data(L, i, k)); };
  // Q E = Q_0 (Q_1 (... (Q_{q-1} E))), Q_k = H_geqrt(k) H_ts(t+1,k) ... H_ts(p-1,k).
  // Columns j < k of E are zero in the rows Q_k touches, so they are skipped.
  for (int k = q - 1; k >= 0; --k) {
    const int t = L.col_top(k);
    for (int i = p - 1; i > t; --i)
      for (int j = k; j < q; ++j)
        sink.insert(make_task(kSsrfbQ, k, i, j, form_q_priority(q, k, j))
                        .add(tile_data(L, i, j), RW)
                        .add(tile_data(L, t, j), RW)
                        .add(a_tile(i, k), R));
    for (int j = k; j < q; ++j)
      sink.insert(
          make_task(kLarfbQ, k, t, j, form_q_priority(q, k, j)).add(tile_data(L, t, j), RW).add(a_tile(t, k), R));
  }
}

KernelShape qr_shape(const TileLayout& L, const TaskDesc& d, char precision, index_t ib) {
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const index_t mk = L.row_height(L.col_top(k)) - L.col_local_offset(k), wk = L.col_width(k);
  KernelShape s{d.kernel, precision};
  s.ib = ib;
  switch (d.kernel) {
    case kGeqrt:
      s.m = mk;
      s.n = wk;
      break;
    case kTsqrt:
      s.m = L.row_height(i);
      s.n = wk;
      break;
    case kLarfb:
    case kLarfbQ:
      s.m = mk;
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
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const int t = L.col_top(k);
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k), ib = f_.ib(k);
  const index_t ht = L.row_height(t), mk = ht - dk;  // rows of the panel's diagonal tile from Δ down
  switch (d.kernel) {
    case kGeqrt: {
      // (V_tk, R_tk, T_tk) = QR(A_tk[Δ:, :])
      T* a = a_.tile(t, k) + dk;
      K.geqrt(mk, wk, ib, a, ht, f_.t(t, k), ib);
      // Copy V and T for the LARFBs (rename, see header).
      K.copy(mk, wk, a, ht, f_.v(k), mk);
      K.copy(ib, wk, f_.t(t, k), ib, f_.v_t(k), ib);
      break;
    }
    case kLarfb: {
      // A_tj[Δ:, :] = Q_tk^T A_tj[Δ:, :]
      const index_t wj = L.col_width(j);
      K.larfb(true, mk, wj, wk, ib, f_.v(k), mk, f_.v_t(k), ib, a_.tile(t, j) + dk, ht);
      break;
    }
    case kTsqrt:
      // (V_ik, T_ik, R_tk) = QR([R_tk; A_ik])
      K.tsqrt(L.row_height(i), wk, ib, a_.tile(t, k) + dk, ht, a_.tile(i, k), a_.ld(i), f_.t(i, k), ib);
      break;
    case kSsrfb: {
      // [A_tj[Δ:Δ+wk, :]; A_ij] = Q_ik^T [A_tj[Δ:Δ+wk, :]; A_ij]
      const index_t wj = L.col_width(j);
      K.ssrfb(true, L.row_height(i), wj, wk, ib, a_.tile(i, k), a_.ld(i), f_.t(i, k), ib, a_.tile(t, j) + dk, ht,
              a_.tile(i, j), a_.ld(i));
      break;
    }
    default: throw std::logic_error("QR executor: unexpected kernel " + std::to_string(d.kernel));
  }
}

template <class T>
void QrFormQExecutor<T>::execute(const TaskDesc& d, WorkerContext& w) {
  kernels::TileKernels<T>& K = w.kernels<T>();
  const TileLayout& L = a_.layout();
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const int t = L.col_top(k);
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k), ib = f_.ib(k), wj = L.col_width(j);
  const index_t ht = L.row_height(t);
  switch (d.kernel) {
    case kLarfbQ:
      // E_tj[Δ:, :] = Q_tk E_tj[Δ:, :]
      K.larfb(false, ht - dk, wj, wk, ib, a_.tile(t, k) + dk, ht, f_.t(t, k), ib, e_.tile(t, j) + dk, ht);
      break;
    case kSsrfbQ:
      // [E_tj[Δ:Δ+wk, :]; E_ij] = Q_ik [E_tj[Δ:Δ+wk, :]; E_ij]
      K.ssrfb(false, L.row_height(i), wj, wk, ib, a_.tile(i, k), a_.ld(i), f_.t(i, k), ib, e_.tile(t, j) + dk, ht,
              e_.tile(i, j), e_.ld(i));
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
