#include "algorithms/cholesky.hpp"

#include "base/error.hpp"
#include "base/kernel_table.hpp"

namespace tessera {

void cholesky_tasks(const TileLayout& L, TaskSink& sink) {
  const int p = L.tile_rows(), q = L.tile_cols();
  constexpr auto R = AccessMode::Read;
  constexpr auto RW = AccessMode::ReadWrite;
  for (int k = 0; k < q; ++k) {
    const int t = L.col_top(k);
    sink.insert(make_task(kPotf2p, k, t, k, column_priority(q, k, k)).add(tile_data(L, t, k), RW));
    // Along tile row t: the other columns of the same top-level block.
    for (int j = k + 1; j < L.first_col_of_top(t + 1); ++j)
      sink.insert(make_task(kGsmmDiag, k, t, j, column_priority(q, j, k))
                      .add(tile_data(L, t, k), R)
                      .add(tile_data(L, t, j), RW));
    // Down tile column k.
    for (int i = t + 1; i < p; ++i)
      sink.insert(
          make_task(kTrsm, k, i, k, column_priority(q, k, k)).add(tile_data(L, t, k), R).add(tile_data(L, i, k), RW));
    // Trailing submatrix, lower part: tile (i,j) with col_top(j) <= i.
    for (int i = t + 1; i < p; ++i)
      for (int j = k + 1; j < L.first_col_of_top(i + 1); ++j) {
        const int tj = L.col_top(j);
        const KernelId kern = tj == i ? kGsmmDiag : kGsmm;
        sink.insert(make_task(kern, k, i, j, column_priority(q, j, k))
                        .add(tile_data(L, i, k), R)
                        .add(tile_data(L, tj, k), R)
                        .add(tile_data(L, i, j), RW));
      }
    // Column k of L is final and read by no later step.
    for (int i = t; i < p; ++i) sink.release(tile_data(L, i, k));
  }
}

KernelShape cholesky_shape(const TileLayout& L, const TaskDesc& d, char precision) {
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k);
  KernelShape s{d.kernel, precision};
  switch (d.kernel) {
    case kPotf2p:
      s.m = L.row_height(L.col_top(k)) - dk;
      s.n = wk;
      break;
    case kTrsm:
      s.m = L.row_height(i);
      s.n = wk;
      break;
    case kGsmmDiag:
      s.m = L.row_height(i) - L.col_local_offset(j);
      s.n = L.col_width(j);
      s.k = wk;
      break;
    case kGsmm:
      s.m = L.row_height(i);
      s.n = L.col_width(j);
      s.k = wk;
      break;
    default: break;
  }
  return s;
}

template <class T>
void CholeskyExecutor<T>::execute(const TaskDesc& d, WorkerContext& w) {
  kernels::TileKernels<T>& K = w.kernels<T>();
  const TileLayout& L = a_.layout();
  const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
  const int t = L.col_top(k);
  const index_t dk = L.col_local_offset(k), wk = L.col_width(k);
  switch (d.kernel) {
    case kPotf2p: {
      // L_tk = POTF2'(A_tk[Δ:, :])
      const int info = K.potf2p(L.row_height(t) - dk, wk, a_.tile(t, k) + dk, a_.ld(t));
      if (info > 0) throw NotPositiveDefinite(L.col_offset(k) + info);
      break;
    }
    case kTrsm:
      // L_ik = A_ik L_kk^{-T}
      K.trsm(L.row_height(i), wk, a_.tile(t, k) + dk, a_.ld(t), a_.tile(i, k), a_.ld(i));
      break;
    case kGsmmDiag: {
      // A_ij[Δj:, :] -= L_ik[Δj:, :] L_ik[Δj:Δj+wj, :]^T   (column j's diagonal block is in tile row i)
      const index_t dj = L.col_local_offset(j);
      K.gsmm_diag(L.row_height(i) - dj, L.col_width(j), wk, a_.tile(i, k) + dj, a_.ld(i), a_.tile(i, j) + dj, a_.ld(i));
      break;
    }
    case kGsmm: {
      // A_ij -= L_ik L_{tj,k}[Δj:Δj+wj, :]^T
      const int tj = L.col_top(j);
      const index_t dj = L.col_local_offset(j);
      K.gsmm(L.row_height(i), L.col_width(j), wk, a_.tile(i, k), a_.ld(i), a_.tile(tj, k) + dj, a_.ld(tj),
             a_.tile(i, j), a_.ld(i));
      break;
    }
    default: throw std::logic_error("Cholesky executor: unexpected kernel " + std::to_string(d.kernel));
  }
}

template class CholeskyExecutor<float>;
template class CholeskyExecutor<double>;

}  // namespace tessera
