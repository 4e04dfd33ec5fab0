#pragma once
// Rectangular tile Cholesky factorization, A = L L^T (001 Alg. 1).
//
// Column k of the tile layout lives in tile row t = col_top(k), where its
// diagonal block starts at local row Δ = col_local_offset(k). For each k:
//   POTF2'  on tile (t,k) rows Δ..      factor the diagonal block, solve below it
//   GSMM    on tiles (t,j), j > k in the same top-level block
//   TRSM    on tiles (i,k), i > t
//   GSMM    on tiles (i,j), i > t, j > k with col_top(j) <= i (lower part only)
// Only the lower triangle of A is referenced and overwritten by L.
#include "base/tile_matrix.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Datum of tile (i,j) in the task window.
inline DataId tile_data(const TileLayout& l, int i, int j) { return static_cast<DataId>(i + j * l.tile_rows()); }

// Serial Alg. 1: inserts every task into `sink`. n_data = p*q.
void cholesky_tasks(const TileLayout& layout, TaskSink& sink);
inline std::size_t cholesky_data_count(const TileLayout& l) {
  return static_cast<std::size_t>(l.tile_rows()) * l.tile_cols();
}

// Dimensions of a Cholesky task's kernel call.
KernelShape cholesky_shape(const TileLayout& layout, const TaskDesc& t, char precision);

// Runs Cholesky kernels on a TileMatrix. Throws NotPositiveDefinite with the
// global column of the failed pivot.
template <class T>
class CholeskyExecutor final : public Executor {
 public:
  explicit CholeskyExecutor(TileMatrix<T>& a) : a_(a) {}
  void execute(const TaskDesc& t, WorkerContext& w) override;
  KernelShape shape(const TaskDesc& t) const override {
    return cholesky_shape(a_.layout(), t, sizeof(T) == 8 ? 'd' : 's');
  }

 private:
  TileMatrix<T>& a_;
};

extern template class CholeskyExecutor<float>;
extern template class CholeskyExecutor<double>;

}  // namespace tessera
