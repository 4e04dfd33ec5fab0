#pragma once
// Rectangular tile QR factorization, A = Q R, m >= n (001 Alg. 2), with a
// flat tree down each tile column. For each column k (tile row t, local
// diagonal offset Δ):
//   GEQRT  on tile (t,k) rows Δ..          V, R and T of the panel's diagonal tile
//   LARFB  on tiles (t,j), j > k           rows Δ.. of tile row t
//   TSQRT  on [R_tk; A_ik], i > t
//   SSRFB  on [A_tj rows Δ..Δ+w_k; A_ij], i > t, j > k
// GEQRT also copies its reflectors into a per-column buffer that the LARFBs
// read, so the TSQRTs that overwrite R in the same tile need not wait for
// them (a rename of the write-after-read, 000 §5.2).
//
// As in 000 §6, a task's first written access is its main output, which
// decides where it runs: TSQRT and SSRFB name the tile of row i first, so
// they run where that tile lives and the row-t tile is their minor output.
#include <vector>

#include "runtime/node_runtime.hpp"
#include "runtime/tile_matrix.hpp"

namespace tessera {

// Block-reflector factors and panel copies a QR factorization produces
// besides the overwritten matrix. T of tile (i,k) is ib_k × w_k.
template <class T>
class QrFactors {
 public:
  QrFactors(const TileLayout& layout, index_t ib);
  index_t ib(int k) const;  // inner blocking used for column k
  T* t(int i, int k) { return t_[i + static_cast<std::size_t>(k) * p_].data(); }
  const T* t(int i, int k) const { return t_[i + static_cast<std::size_t>(k) * p_].data(); }
  index_t ldt(int k) const { return ib(k); }
  T* v(int k) { return v_[k].data(); }

 private:
  TileLayout layout_;
  index_t ib_;
  int p_;
  std::vector<std::vector<T>> t_, v_;
};

// Serial Alg. 2; data: p*q tiles, then one panel-copy datum per tile column.
void qr_tasks(const TileLayout& layout, TaskSink& sink);
std::size_t qr_data_count(const TileLayout& l);

// Tasks that overwrite E (same layout, holding [I; 0] on entry) with Q E,
// using the factored tiles and T factors: forms the thin Q for the check.
void qr_form_q_tasks(const TileLayout& layout, TaskSink& sink);

// Dimensions of a QR task's kernel call (factorization and forming Q).
KernelShape qr_shape(const TileLayout& layout, const TaskDesc& t, char precision, index_t ib);

template <class T>
class QrExecutor final : public Executor {
 public:
  QrExecutor(TileMatrix<T>& a, QrFactors<T>& f) : a_(a), f_(f) {}
  void execute(const TaskDesc& t, WorkerContext& w) override;
  KernelShape shape(const TaskDesc& t) const override {
    return qr_shape(a_.layout(), t, sizeof(T) == 8 ? 'd' : 's', f_.ib(t.arg[0]));
  }

 private:
  TileMatrix<T>& a_;
  QrFactors<T>& f_;
};

// Runs the qr_form_q_tasks kernels: reads the factorization, writes E.
template <class T>
class QrFormQExecutor final : public Executor {
 public:
  QrFormQExecutor(const TileMatrix<T>& a, const QrFactors<T>& f, TileMatrix<T>& e) : a_(a), f_(f), e_(e) {}
  void execute(const TaskDesc& t, WorkerContext& w) override;

 private:
  const TileMatrix<T>& a_;
  const QrFactors<T>& f_;
  TileMatrix<T>& e_;
};

extern template class QrFactors<float>;
extern template class QrFactors<double>;
extern template class QrExecutor<float>;
extern template class QrExecutor<double>;
extern template class QrFormQExecutor<float>;
extern template class QrFormQExecutor<double>;

}  // namespace tessera
