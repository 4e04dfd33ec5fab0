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
#include <functional>
#include <vector>

#include "base/tile_matrix.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Block-reflector factors and panel copies a QR factorization produces
// besides the overwritten matrix. T of tile (i,k) is ib_k × w_k; the panel
// copy of column k holds its GEQRT's V (m_k × w_k, m_k the rows from the
// diagonal down) followed by that GEQRT's T, so that it travels as one datum.
// Like TileMatrix, both are reached through pointer tables: a distributed
// node allocates those of its own tiles and points the others at the copies
// it receives.
template <class T>
class QrFactors {
 public:
  // Allocates the T factor of every tile (i,k), i >= col_top(k), and every
  // panel copy; with `keep`, only those of tiles (i,k) (panel: (col_top(k),k))
  // for which keep(i, k) is true.
  QrFactors(const TileLayout& layout, index_t ib, const std::function<bool(int, int)>& keep = {});
  index_t ib(int k) const;  // inner blocking used for column k
  T* t(int i, int k) { return t_[i + static_cast<std::size_t>(k) * p_]; }
  const T* t(int i, int k) const { return t_[i + static_cast<std::size_t>(k) * p_]; }
  index_t ldt(int k) const { return ib(k); }
  T* v(int k) { return v_[k]; }
  const T* v(int k) const { return v_[k]; }
  // The panel copy's T (after its V).
  T* v_t(int k) { return v_[k] + panel_rows(k) * layout_.col_width(k); }
  // Elements of T of tile (i,k) (0 above column k's top tile row) and of panel copy k.
  std::size_t t_elems(int i, int k) const;
  std::size_t v_elems(int k) const;
  index_t panel_rows(int k) const { return layout_.row_height(layout_.col_top(k)) - layout_.col_local_offset(k); }
  void set_t(int i, int k, T* p) { t_[i + static_cast<std::size_t>(k) * p_] = p; }
  void set_v(int k, T* p) { v_[k] = p; }

 private:
  TileLayout layout_;
  index_t ib_;
  int p_;
  std::vector<T*> t_, v_;
  std::vector<std::vector<T>> storage_;
};

// Serial Alg. 2; data: p*q tiles, then one panel-copy datum per tile column.
void qr_tasks(const TileLayout& layout, TaskSink& sink);
std::size_t qr_data_count(const TileLayout& l);

// Tasks that overwrite E (same layout, holding [I; 0] on entry) with Q E,
// using the factored tiles and T factors: forms the thin Q for the check.
// Data: E's tiles (as tile_data), then the factored tiles of A (p*q + tile_data),
// which the tasks read; n_data = 2*p*q.
void qr_form_q_tasks(const TileLayout& layout, TaskSink& sink);
inline std::size_t qr_form_q_data_count(const TileLayout& l) {
  return 2 * static_cast<std::size_t>(l.tile_rows()) * l.tile_cols();
}

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
