#pragma once
// Rectangular tile QR factorization, A = Q R, m >= n (001 Alg. 2), with a
// flat tree down each tile column or a binary one across domains
// (algorithms/qr_tree.hpp). For each column k (tile row t, local diagonal
// offset Δ), flat:
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
//
// Binary: the same four steps in every domain, with the domain's head h in
// place of t (Δ = 0 below the top row; a head's GEQRT has its own panel
// copy), then for each pair (a, b) of the tree, a < b:
//   TTQRT  on [R_ak; R_bk]                     V in R_bk's triangle, T beside T_bk
//   TTMQR  on [A_aj rows Δ_a..Δ_a+w_k; A_bj rows 0..w_k], j > k
// Tasks carry their chain head (TSQRT, SSRFB) or pair partner (TT) in arg[3].
#include <functional>
#include <vector>

#include "algorithms/qr_tree.hpp"
#include "base/tile_matrix.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {

// Block-reflector factors and panel copies a QR factorization produces
// besides the overwritten matrix. T of tile (i,k) is ib_k × w_k (a domain
// head's is two: its GEQRT's, then its TTQRT's); the panel copy of column k
// holds its GEQRT's V (m_k × w_k, m_k the rows from the diagonal down)
// followed by that GEQRT's T, so that it travels as one datum. Panel copies
// are numbered: column k's top row is copy k, its head h below is copy
// q + tree.head_panel(k, h).
// Like TileMatrix, both are reached through pointer tables: a distributed
// node allocates those of its own tiles and points the others at the copies
// it receives.
template <class T>
class QrFactors {
 public:
  // Allocates the T factor of every tile (i,k), i >= col_top(k), and every
  // panel copy; with `keep`, only those of tiles (i,k) (panel: (col_top(k),k))
  // for which keep(i, k) is true.
  QrFactors(const TileLayout& layout, index_t ib, const std::function<bool(int, int)>& keep = {}, QrTree tree = {});
  index_t ib(int k) const;  // inner blocking used for column k
  T* t(int i, int k) { return t_[i + static_cast<std::size_t>(k) * p_]; }
  const T* t(int i, int k) const { return t_[i + static_cast<std::size_t>(k) * p_]; }
  // The TTQRT's T of a domain head (i,k), beside its GEQRT's.
  T* tt(int i, int k) { return t(i, k) + ib(k) * layout_.col_width(k); }
  const T* tt(int i, int k) const { return t(i, k) + ib(k) * layout_.col_width(k); }
  index_t ldt(int k) const { return ib(k); }
  T* v(int x) { return v_[x]; }
  const T* v(int x) const { return v_[x]; }
  // The panel copy's T (after its V).
  T* v_t(int x) { return v_[x] + panel_rows(x) * layout_.col_width(panel_col(x)); }
  // Elements of T of tile (i,k) (0 above column k's top tile row) and of panel copy x.
  std::size_t t_elems(int i, int k) const;
  std::size_t v_elems(int x) const;
  // Panel copies: how many, the one of column k's head row h (h = its top
  // row or a domain head below), and copy x's column and rows.
  int panels() const { return static_cast<int>(v_.size()); }
  int panel(int k, int h) const;
  int panel_col(int x) const;
  index_t panel_rows(int x) const;
  const QrTree& tree() const { return tree_; }
  void set_t(int i, int k, T* p) { t_[i + static_cast<std::size_t>(k) * p_] = p; }
  void set_v(int x, T* p) { v_[x] = p; }

 private:
  TileLayout layout_;
  QrTree tree_;
  index_t ib_;
  int p_;
  std::vector<T*> t_, v_;
  std::vector<std::vector<T>> storage_;
};

// Serial Alg. 2 with `tree`'s reduction; data: p*q tiles, then the panel
// copies in QrFactors' numbering.
void qr_tasks(const TileLayout& layout, TaskSink& sink, const QrTree& tree = {});
std::size_t qr_data_count(const TileLayout& l, const QrTree& tree = {});

// Tasks that overwrite E (same layout, holding [I; 0] on entry) with Q E,
// using the factored tiles and T factors: forms the thin Q for the check.
// Data: E's tiles (as tile_data), then the factored tiles of A (p*q + tile_data),
// which the tasks read; n_data = 2*p*q.
void qr_form_q_tasks(const TileLayout& layout, TaskSink& sink, const QrTree& tree = {});
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
