#include "algorithms/lu.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "algorithms/cholesky.hpp"  // tile_data
#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

void require_tall(const TileLayout& l) {
  if (l.m() < l.n())
    throw InputError("LU needs m >= n: m = " + std::to_string(l.m()) + ", n = " + std::to_string(l.n()));
}

DataId cand_data(const TileLayout& l, int i) { return static_cast<DataId>(l.tile_rows() * l.tile_cols() + i); }
DataId panel_data(const TileLayout& l) { return static_cast<DataId>(l.tile_rows() * l.tile_cols() + l.tile_rows()); }
DataId plan_data(const TileLayout& l, int k) {
  return static_cast<DataId>(l.tile_rows() * l.tile_cols() + l.tile_rows() + 1 + k);
}

// First row of tile row i inside column k's panel (the diagonal block's
// offset in the top tile row, 0 below it), and the panel-relative index of
// that row.
index_t panel_first_row(const TileLayout& l, int k, int i) { return i == l.col_top(k) ? l.col_local_offset(k) : 0; }
index_t panel_offset(const TileLayout& l, int k, int i) {
  const int t = l.col_top(k);
  return l.row_offset(i) + panel_first_row(l, k, i) - (l.row_offset(t) + l.col_local_offset(k));
}

// Reorders seq, the panel's rows from its top (at least h, tile row t's
// panel rows, and every row the plan's EXCHANGEs name), as column k's plan
// moves them: SWAP inside the top tile row, then the EXCHANGEs.
template <class T>
void apply_plan(const T* plan, std::size_t B, index_t h, index_t* seq) {
  const std::int64_t w = *lu_ints(plan, 0);
  const std::int64_t* sw = lu_ints(plan, 2 + B);
  const std::int64_t* xch = lu_ints(plan, 2 + 2 * B);
  const std::vector<index_t> top(seq, seq + h);
  for (index_t x = 0; x < h; ++x) seq[x] = top[sw[x]];
  for (std::int64_t r = 0; r < w; ++r)
    if (xch[r] >= 0) std::swap(seq[r], seq[xch[r]]);
}

}  // namespace

std::size_t lu_stride(const TileLayout& L) {
  index_t widest = 0;
  for (int i = 0; i < L.tile_rows(); ++i) widest = std::max(widest, L.row_height(i));
  for (int j = 0; j < L.tile_cols(); ++j) widest = std::max(widest, L.col_width(j));
  return static_cast<std::size_t>(widest);
}

LuPivot parse_lu_pivot(const std::string& name) {
  if (name == "partial") return LuPivot::Partial;
  if (name == "tournament") return LuPivot::Tournament;
  if (name == "none") return LuPivot::None;
  throw InputError("--pivot '" + name + "' is not one of: partial, tournament, none");
}

LuTree parse_lu_tree(const std::string& name) {
  if (name == "binary") return LuTree::Binary;
  if (name == "flat") return LuTree::Flat;
  throw InputError("--tslu-tree '" + name + "' is not one of: binary, flat");
}

const char* to_string(LuPivot p) {
  switch (p) {
    case LuPivot::Partial: return "partial";
    case LuPivot::Tournament: return "tournament";
    case LuPivot::None: return "none";
  }
  return "?";
}

const char* to_string(LuTree t) { return t == LuTree::Binary ? "binary" : "flat"; }

template <class T>
LuBuffers<T>::LuBuffers(const TileLayout& L, LuPivot pivot, const std::function<bool(int, int)>& keep)
    : p_(static_cast<std::size_t>(L.tile_rows())), B_(lu_stride(L)), m_(L.m()), pivot_(pivot),
      ptr_(p_ + 1 + static_cast<std::size_t>(L.tile_cols()), nullptr) {
  require_tall(L);
  auto alloc = [&](std::size_t x, int i, int j) {
    if (keep && !keep(i, j)) return;
    storage_.emplace_back(elems(x), T(0));
    ptr_[x] = storage_.back().data();
  };
  if (pivot == LuPivot::None) return;
  if (pivot == LuPivot::Tournament)
    for (int i = 0; i < L.tile_rows(); ++i) alloc(static_cast<std::size_t>(i), i, 0);
  if (pivot == LuPivot::Partial) alloc(p_, 0, 0);
  for (int k = 0; k < L.tile_cols(); ++k) alloc(p_ + 1 + static_cast<std::size_t>(k), L.col_top(k), k);
}

std::size_t lu_data_count(const TileLayout& l) {
  return static_cast<std::size_t>(l.tile_rows()) * l.tile_cols() + l.tile_rows() + 1 + l.tile_cols();
}

std::vector<std::pair<int, int>> lu_anchors(const TileLayout& l) {
  std::vector<std::pair<int, int>> a;
  for (int i = 0; i < l.tile_rows(); ++i) a.emplace_back(i, 0);
  a.emplace_back(0, 0);
  for (int k = 0; k < l.tile_cols(); ++k) a.emplace_back(l.col_top(k), k);
  return a;
}

void lu_tasks(const TileLayout& L, const LuOptions& o, TaskSink& sink) {
  require_tall(L);
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto W = AccessMode::Write;
  constexpr auto RW = AccessMode::ReadWrite;
  // 002 Alg. 2: at step k the CPU side holds columns [k, k + d); the others
  // are the GPUs' (column j on GPU 1 + (its top-level block / Pc mod G), where
  // the distribution puts its tiles), and the
  // panel's kernels run on the cores. With d = 0 the GPUs hold every column
  // and factor the panels too, except the tournament's candidate selection
  // (LEAF, MERGE, PIVOTS), which stays on the cores. Without GPUs: -1, where
  // the task's main output lives.
  // column_device(k, j): where column j's tasks of step k run, the finished
  // columns j < k included (the cores' with d >= 1, where they were factored).
  const bool split = o.gpus > 0;
  const auto column_device = [&](int k, int j) -> std::int8_t {
    if (!split) return -1;
    return o.d > 0 && j < k + o.d ? 0
                                  : static_cast<std::int8_t>(1 + (L.col_top(j) / std::max(1, o.grid_cols)) % o.gpus);
  };
  const auto on = [&](TaskDesc t, std::int8_t dev) {
    t.device = dev;
    return t;
  };
  const std::int8_t cores = split ? 0 : -1;
  const auto node_row = [&](int i) { return (i / std::max(1, o.v)) % std::max(1, o.grid_rows); };
  for (int k = 0; k < q; ++k) {
    const int t = L.col_top(k);
    const std::int32_t panel_prio = column_priority(q, k, k);
    const std::int8_t panel = column_device(k, k);  // column k's factorization
    if (o.pivot != LuPivot::None) {
      if (o.pivot == LuPivot::Partial) {
        for (int i = t; i < p; ++i)
          sink.insert(
              on(make_task(kLuGather, k, i, 0, panel_prio).add(panel_data(L), RW).add(tile_data(L, i, k), R), panel));
        sink.insert(on(make_task(kLuPanel, k, t, 0, panel_prio).add(plan_data(L, k), W).add(panel_data(L), RW), panel));
        // The factored panel goes back to its tiles in the plan's row order.
        for (int i = t; i < p; ++i)
          sink.insert(
              on(make_task(kLuScatter, k, i, 0, panel_prio).add(tile_data(L, i, k), RW).add(panel_data(L), R), panel));
      } else {
        for (int i = t; i < p; ++i)
          sink.insert(
              on(make_task(kLuLeaf, k, i, 0, panel_prio).add(cand_data(L, i), W).add(tile_data(L, i, k), R), cores));
        if (o.tree == LuTree::Binary) {
          for (int stride = 1; t + stride < p; stride *= 2)
            for (int a = t; a + stride < p; a += 2 * stride)
              sink.insert(on(make_task(kLuMerge, k, a, a + stride, panel_prio)
                                 .add(cand_data(L, a), RW)
                                 .add(cand_data(L, a + stride), R),
                             cores));
        } else {
          for (int b = t + 1; b < p; ++b)
            sink.insert(
                on(make_task(kLuMerge, k, t, b, panel_prio).add(cand_data(L, t), RW).add(cand_data(L, b), R), cores));
        }
        sink.insert(
            on(make_task(kLuPivots, k, t, 0, panel_prio).add(plan_data(L, k), W).add(cand_data(L, t), R), cores));
      }
      // The interchanges: the panel's column first, then the trailing
      // columns in order, then (off the critical path) the finished ones.
      // Tile rows below t, node row by node row starting with t's own.
      std::vector<int> below;
      for (int off = 0; off < std::max(1, o.grid_rows); ++off)
        for (int i = t + 1; i < p; ++i)
          if (node_row(i) == (node_row(t) + off) % o.grid_rows) below.push_back(i);
      const auto interchange = [&](int j) {
        const std::int32_t prio = j >= k ? column_priority(q, j, k) : column_priority(q, q, k);
        const std::int8_t dev = column_device(k, j);
        sink.insert(on(make_task(kLuSwap, k, t, j, prio).add(tile_data(L, t, j), RW).add(plan_data(L, k), R), dev));
        for (const int i : below)
          sink.insert(on(make_task(kLuExchange, k, i, j, prio)
                             .add(tile_data(L, i, j), RW)
                             .add(tile_data(L, t, j), RW)
                             .add(plan_data(L, k), R),
                         dev));
      };
      // (Partial pivoting's panel column is already in place: scattered.)
      for (int j = o.pivot == LuPivot::Partial ? k + 1 : k; j < q; ++j) interchange(j);
      for (int j = 0; j < k; ++j) interchange(j);
      sink.release(plan_data(L, k));
    }
    if (o.pivot != LuPivot::Partial) {
      sink.insert(on(make_task(kLuDiag, k, t, k, panel_prio).add(tile_data(L, t, k), RW), panel));
      for (int i = t + 1; i < p; ++i)
        sink.insert(
            on(make_task(kLuTrsmL, k, i, k, panel_prio).add(tile_data(L, i, k), RW).add(tile_data(L, t, k), R), panel));
    }
    for (int j = k + 1; j < q; ++j) {
      const std::int32_t prio = column_priority(q, j, k);
      const std::int8_t dev = column_device(k, j);
      sink.insert(on(make_task(kLuTrsmU, k, t, j, prio).add(tile_data(L, t, j), RW).add(tile_data(L, t, k), R), dev));
      if (L.row_height(t) > L.col_local_offset(k) + L.col_width(k))
        sink.insert(on(make_task(kLuGemm, k, t, j, prio).add(tile_data(L, t, j), RW).add(tile_data(L, t, k), R), dev));
      for (int i = t + 1; i < p; ++i)
        sink.insert(on(make_task(kLuGemm, k, i, j, prio)
                           .add(tile_data(L, i, j), RW)
                           .add(tile_data(L, i, k), R)
                           .add(tile_data(L, t, j), R),
                       dev));
    }
  }
}

KernelShape lu_shape(const TileLayout& L, const TaskDesc& d, char precision) {
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const int t = L.col_top(k);
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k);
  const index_t mk = L.m() - L.row_offset(t) - dk;  // the panel's rows
  KernelShape s{d.kernel, precision};
  s.n = wk;
  switch (d.kernel) {
    case kLuLeaf:
    case kLuGather:
    case kLuScatter: s.m = L.row_height(i) - panel_first_row(L, k, i); break;
    case kLuMerge: s.m = 2 * wk; break;
    case kLuPanel: s.m = mk; break;
    case kLuDiag: s.m = L.row_height(t) - dk; break;
    case kLuTrsmL: s.m = L.row_height(i); break;
    case kLuSwap:
      s.m = L.row_height(t) - dk;
      s.n = L.col_width(j);
      break;
    case kLuExchange:
    case kLuTrsmU:
      s.m = wk;
      s.n = L.col_width(j);
      break;
    case kLuGemm:
      s.m = i == t ? L.row_height(t) - dk - wk : L.row_height(i);
      s.n = L.col_width(j);
      s.k = wk;
      break;
    default: break;
  }
  return s;
}

template <class T>
std::vector<index_t> lu_row_permutation(const TileLayout& L, LuPivot pivot,
                                        const std::function<const T*(int)>& plan_of) {
  std::vector<index_t> perm(static_cast<std::size_t>(L.m()));
  for (index_t x = 0; x < L.m(); ++x) perm[x] = x;
  if (pivot == LuPivot::None) return perm;
  for (int k = 0; k < L.tile_cols(); ++k) {
    const int t = L.col_top(k);
    const index_t r0 = L.row_offset(t) + L.col_local_offset(k), h = L.row_height(t) - L.col_local_offset(k);
    const T* plan = plan_of(k);
    if (!plan) throw std::logic_error("LU permutation: the plan of column " + std::to_string(k) + " is not here");
    apply_plan(plan, lu_stride(L), h, perm.data() + r0);
  }
  return perm;
}

template <class T>
std::vector<T> LuExecutor<T>::write_plan(kernels::TileKernels<T>& K, int k, const index_t* rows, index_t info) {
  std::vector<T> plan = make_plan(k, rows, info);
  K.from_host(b_.plan(k), plan.data(), plan.size() * sizeof(T));
  return plan;
}

template <class T>
std::vector<T> LuExecutor<T>::make_plan(int k, const index_t* rows, index_t info) const {
  const TileLayout& L = a_.layout();
  const index_t wk = L.col_width(k), h = L.row_height(L.col_top(k)) - L.col_local_offset(k);
  if (info > 0) throw SingularMatrix(L.col_offset(k) + info, to_string(pivot_));
  std::vector<T> out(b_.plan_elems(), T(0));
  T* plan = out.data();
  const std::size_t B = b_.B();
  std::int64_t* sel = lu_ints(plan, 2);
  std::int64_t* sw = lu_ints(plan, 2 + B);
  std::int64_t* xch = lu_ints(plan, 2 + 2 * B);
  *lu_ints(plan, 0) = wk;
  *lu_ints(plan, 1) = info;
  // SWAP: position r < w of the top tile's panel rows receives selected row
  // rows[r] when that row is in the top tile; the other positions take the
  // top tile's unselected rows in order. EXCHANGE then trades each position
  // r whose row lies below (xch[r]) with that row.
  std::vector<char> placed(static_cast<std::size_t>(h), 0), used(static_cast<std::size_t>(h), 0);
  for (index_t r = 0; r < wk; ++r) {
    sel[r] = rows[r];
    xch[r] = rows[r] < h ? -1 : rows[r];
    if (rows[r] < h) {
      sw[r] = rows[r];
      placed[r] = used[rows[r]] = 1;
    }
  }
  index_t next = 0;
  for (index_t x = 0; x < h; ++x) {
    if (placed[x]) continue;
    while (used[next]) ++next;
    sw[x] = next++;
  }
  return out;
}

template <class T>
std::vector<index_t> LuExecutor<T>::plan_order(const T* plan, int k, index_t mk) const {
  const TileLayout& L = a_.layout();
  std::vector<index_t> order(static_cast<std::size_t>(mk));
  for (index_t x = 0; x < mk; ++x) order[x] = x;
  apply_plan(plan, b_.B(), L.row_height(L.col_top(k)) - L.col_local_offset(k), order.data());
  return order;
}

template <class T>
void LuExecutor<T>::execute(const TaskDesc& d, WorkerContext& w) {
  kernels::TileKernels<T>& K = w.kernels<T>();
  const TileLayout& L = a_.layout();
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const int t = L.col_top(k);
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k), ht = L.row_height(t);
  const std::size_t B = b_.B();
  // Column k's diagonal block, looked up only by the tasks that access tile (t, k): another task's lookup would
  // read a GPU table's slot that the device communication thread may be changing (a buffer freed or placed).
  const auto top = [&] { return a_.tile(t, k) + dk; };
  switch (d.kernel) {
    case kLuLeaf: {
      // C_i = the rows GEPP pivots on in tile (i,k)'s panel rows, with their values (002 §2.4 Steps 1-2)
      const index_t r1 = panel_first_row(L, k, i), h = L.row_height(i) - r1;
      const T* a = a_.tile(i, k) + r1;
      T* c = b_.cand(i);
      std::vector<index_t> rows(static_cast<std::size_t>(std::min(h, wk)));
      const index_t info = K.lu_select(h, wk, a, a_.ld(i), rows.data());
      const index_t base = panel_offset(L, k, i);
      T* vals = c + LuBuffers<T>::ints(2 + B);
      *lu_ints(c, 0) = static_cast<std::int64_t>(rows.size());
      *lu_ints(c, 1) = info;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        lu_ints(c, 2)[r] = base + rows[r];
        for (index_t col = 0; col < wk; ++col) vals[r + col * B] = a[rows[r] + col * a_.ld(i)];
      }
      break;
    }
    case kLuMerge: {
      // C_i = the rows GEPP pivots on in [C_i; C_j] (002 §2.4 Step 3)
      T* ca = b_.cand(i);
      const T* cb = b_.cand(j);
      const index_t na = *lu_ints(ca, 0), nb = *lu_ints(cb, 0), n = na + nb;
      std::vector<T> stack(static_cast<std::size_t>(n * wk));
      std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
      const T* va = ca + LuBuffers<T>::ints(2 + B);
      const T* vb = cb + LuBuffers<T>::ints(2 + B);
      for (index_t r = 0; r < na; ++r) ids[r] = lu_ints(ca, 2)[r];
      for (index_t r = 0; r < nb; ++r) ids[na + r] = lu_ints(cb, 2)[r];
      for (index_t col = 0; col < wk; ++col) {
        std::copy(va + col * B, va + col * B + na, stack.data() + col * n);
        std::copy(vb + col * B, vb + col * B + nb, stack.data() + col * n + na);
      }
      std::vector<index_t> rows(static_cast<std::size_t>(std::min(n, wk)));
      const index_t info = K.lu_select(n, wk, stack.data(), n, rows.data());
      T* vals = ca + LuBuffers<T>::ints(2 + B);
      *lu_ints(ca, 0) = static_cast<std::int64_t>(rows.size());
      *lu_ints(ca, 1) = info;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        lu_ints(ca, 2)[r] = ids[rows[r]];
        for (index_t col = 0; col < wk; ++col) vals[r + col * B] = stack[rows[r] + col * n];
      }
      break;
    }
    case kLuGather: {
      // G[rows of tile i] = A_ik's panel rows (002 Alg. 1: the panel goes to the CPU as one block)
      const index_t r1 = panel_first_row(L, k, i);
      K.copy(L.row_height(i) - r1, wk, a_.tile(i, k) + r1, a_.ld(i), b_.panel() + panel_offset(L, k, i), L.m());
      break;
    }
    case kLuPanel: {
      // (P_k, L, U) = GEPP(G): partial pivoting on the whole panel (002 Alg. 1's cpu_dgetrf;
      // on a GPU with --d 0, cuSOLVER's). G and P_k are in the worker's device memory: the
      // host sees only the pivots, and writes the plan and the row order through the kernels.
      const index_t mk = L.m() - L.row_offset(t) - dk;
      T* g = b_.panel();
      std::vector<index_t> ipiv(static_cast<std::size_t>(wk));
      const index_t info = K.lu_getrf(mk, wk, g, L.m(), ipiv.data());
      // at[x]: the panel row GEPP's swaps bring to row x.
      std::vector<index_t> at(static_cast<std::size_t>(mk));
      for (index_t x = 0; x < mk; ++x) at[x] = x;
      for (index_t r = 0; r < wk; ++r) std::swap(at[r], at[ipiv[r]]);
      const std::vector<T> plan = write_plan(K, k, at.data(), info);
      // The plan puts the same w rows on top but the others elsewhere: G's
      // rows below w follow the plan's order, as every other column will.
      // Row x >= w of the plan's order is GEPP's row row_of[order[x]] >= w.
      const std::vector<index_t> order = plan_order(plan.data(), k, mk);
      std::vector<index_t> row_of(static_cast<std::size_t>(mk));
      for (index_t x = 0; x < mk; ++x) row_of[at[x]] = x;
      std::vector<std::int64_t> from(static_cast<std::size_t>(mk - wk));
      for (index_t x = wk; x < mk; ++x) from[x - wk] = row_of[order[x]] - wk;
      K.lu_permute_from_host(mk - wk, wk, g + wk, L.m(), from.data());
      break;
    }
    case kLuScatter: {
      // A_ik's panel rows = the factored panel's (L below the diagonal, U on and above it)
      const index_t r1 = panel_first_row(L, k, i);
      K.copy(L.row_height(i) - r1, wk, b_.panel() + panel_offset(L, k, i), L.m(), a_.tile(i, k) + r1, a_.ld(i));
      break;
    }
    case kLuPivots: {
      // P_k = the tournament root's rows (002 §2.4 Step 3's result)
      const T* c = b_.cand(t);
      std::vector<index_t> rows(lu_ints(c, 2), lu_ints(c, 2) + *lu_ints(c, 0));
      if (static_cast<index_t>(rows.size()) != wk)
        throw std::logic_error("LU tournament: the root of column " + std::to_string(k) + " holds " +
                               std::to_string(rows.size()) + " rows, not " + std::to_string(wk));
      write_plan(K, k, rows.data(), *lu_ints(c, 1));
      break;
    }
    case kLuSwap:
      // A_tj[Δ:, :] = its rows in the plan's order (002 §2.4 Step 4, inside the top tile)
      K.lu_permute(ht - dk, L.col_width(j), a_.tile(t, j) + dk, ht, lu_ints(b_.plan(k), 2 + B));
      break;
    case kLuExchange: {
      // A_tj[Δ + r, :] <-> A_ij[xch[r] - lo, :] for the selected rows in tile row i (Step 4)
      const index_t lo = panel_offset(L, k, i);
      K.lu_exchange(wk, L.col_width(j), a_.tile(t, j) + dk, ht, a_.tile(i, j), a_.ld(i), lu_ints(b_.plan(k), 2 + 2 * B),
                    lo, lo + L.row_height(i));
      break;
    }
    case kLuDiag: {
      // (L_kk, U_kk) = LU(A_tk[Δ:Δ+w, :]), and the L rows below it in tile t (Step 5)
      const index_t info = K.lu_getrf_nopiv(ht - dk, wk, top(), ht);
      if (info > 0) throw SingularMatrix(L.col_offset(k) + info, to_string(pivot_));
      break;
    }
    case kLuTrsmL:
      // L_ik = A_ik U_kk^{-1}
      K.lu_trsm_l(L.row_height(i), wk, top(), ht, a_.tile(i, k), a_.ld(i));
      break;
    case kLuTrsmU:
      // U_kj = L_kk^{-1} A_tj[Δ:Δ+w, :]
      K.lu_trsm_u(wk, L.col_width(j), top(), ht, a_.tile(t, j) + dk, ht);
      break;
    case kLuGemm: {
      // A_ij -= L_ik U_kj (in tile row t: the rows below the diagonal block)
      const T* u = a_.tile(t, j) + dk;
      if (i == t) K.lu_gemm(ht - dk - wk, L.col_width(j), wk, top() + wk, ht, u, ht, a_.tile(t, j) + dk + wk, ht);
      else K.lu_gemm(L.row_height(i), L.col_width(j), wk, a_.tile(i, k), a_.ld(i), u, ht, a_.tile(i, j), a_.ld(i));
      break;
    }
    default: throw std::logic_error("LU executor: unexpected kernel " + std::to_string(d.kernel));
  }
}

template class LuBuffers<float>;
template class LuBuffers<double>;
template class LuExecutor<float>;
template class LuExecutor<double>;
template std::vector<index_t> lu_row_permutation<float>(const TileLayout&, LuPivot,
                                                        const std::function<const float*(int)>&);
template std::vector<index_t> lu_row_permutation<double>(const TileLayout&, LuPivot,
                                                         const std::function<const double*(int)>&);

}  // namespace tessera
