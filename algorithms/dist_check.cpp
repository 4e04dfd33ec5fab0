#include "algorithms/dist_check.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "algorithms/cholesky.hpp"
#include "algorithms/tile_data_store.hpp"
#include "base/kernel_table.hpp"

namespace tessera {
namespace {

inline void gemm(CBLAS_TRANSPOSE ta, index_t m, index_t n, index_t k, double alpha, const double* a, index_t lda,
                 const double* b, index_t ldb, double* c, index_t ldc) {
  cblas_dgemm(CblasColMajor, ta, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, 1.0, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, index_t m, index_t n, index_t k, double alpha, const float* a, index_t lda,
                 const float* b, index_t ldb, float* c, index_t ldc) {
  cblas_sgemm(CblasColMajor, ta, CblasNoTrans, m, n, k, static_cast<float>(alpha), a, lda, b, ldb, 1.0f, c, ldc);
}

// Data of one check graph: consecutive tile ranges of matrices that share the
// factorization's distribution (tile (i,j) of every range lives with tile
// (i,j) of the factored matrix).
Placement tiles_placement(const Distribution& dist, int p, int q) {
  const DataId pq = static_cast<DataId>(p * q);
  return [&dist, p, pq](DataId d) {
    const DataId x = d % pq;
    return dist.owner(static_cast<int>(x % p), static_cast<int>(x / p));
  };
}

// Adds |x| of this node's entries of a symmetric matrix stored by its lower
// triangle to the column sums of the whole matrix (an entry below the
// diagonal counts in its column and, mirrored, in its row's column).
template <class T>
void add_symmetric_colsums(const TileMatrix<T>& a, std::vector<double>& colsum) {
  const TileLayout& L = a.layout();
  for (int j = 0; j < a.q(); ++j)
    for (int i = L.col_top(j); i < a.p(); ++i) {
      const T* t = a.tile(i, j);
      if (!t) continue;
      const index_t h = L.row_height(i), r0 = L.row_offset(i), c0 = L.col_offset(j);
      for (index_t c = 0; c < L.col_width(j); ++c)
        for (index_t r = std::max<index_t>(0, c0 + c - r0); r < h; ++r) {
          const double x = std::abs(static_cast<double>(t[r + c * h]));
          colsum[c0 + c] += x;
          if (r0 + r > c0 + c) colsum[r0 + r] += x;
        }
    }
}

template <class T>
void add_colsums(const TileMatrix<T>& a, std::vector<double>& colsum) {
  const TileLayout& L = a.layout();
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i)
      if (const T* t = a.tile(i, j)) {
        const index_t h = L.row_height(i), c0 = L.col_offset(j);
        for (index_t c = 0; c < L.col_width(j); ++c)
          for (index_t r = 0; r < h; ++r) colsum[c0 + c] += std::abs(static_cast<double>(t[r + c * h]));
      }
}

// R_ij -= L_ik L_{tj,k}[Δj:Δj+wj, :]^T over every k <= j: R = A - L L^T on the lower tiles.
template <class T>
class CholeskyCheckExecutor final : public Executor {
 public:
  CholeskyCheckExecutor(const TileMatrix<T>& l, TileMatrix<T>& r) : l_(l), r_(r) {}
  void execute(const TaskDesc& d, WorkerContext& w) override {
    const TileLayout& L = l_.layout();
    const int k = d.arg[0], i = d.arg[1], j = d.arg[2], tj = L.col_top(j);
    w.kernels<T>().gsmm(L.row_height(i), L.col_width(j), L.col_width(k), l_.tile(i, k), l_.ld(i),
                        l_.tile(tj, k) + L.col_local_offset(j), l_.ld(tj), r_.tile(i, j), r_.ld(i));
  }

 private:
  const TileMatrix<T>& l_;
  TileMatrix<T>& r_;
};

// C_ij -= Q_ik R_kj (k <= j), R_kj = rows [Δk, Δk+wk) of tile (col_top(k), j),
// upper triangular when k = j; and W_rj[rows of column a] += Q_ia^T Q_ij.
template <class T>
class QrCheckExecutor final : public Executor {
 public:
  QrCheckExecutor(const TileMatrix<T>& q, const TileMatrix<T>& r, TileMatrix<T>* c, TileMatrix<T>* w)
      : q_(q), r_(r), c_(c), w_(w) {}
  void execute(const TaskDesc& d, WorkerContext& wc) override {
    const TileLayout& L = q_.layout();
    const int k = d.arg[0], i = d.arg[1], j = d.arg[2];
    const index_t wk = L.col_width(k), wj = L.col_width(j);
    if (d.kernel == kCheckQr) {
      const int tk = L.col_top(k);
      const T* rb = r_.tile(tk, j) + L.col_local_offset(k);
      index_t ldr = r_.ld(tk);
      if (k == j) {  // keep R's upper triangle, drop the reflectors below it
        T* s = wc.scratch<T>(static_cast<std::size_t>(wk * wj));
        for (index_t c = 0; c < wj; ++c)
          for (index_t x = 0; x < wk; ++x) s[x + c * wk] = x <= c ? rb[x + c * ldr] : T(0);
        rb = s;
        ldr = wk;
      }
      gemm(CblasNoTrans, L.row_height(i), wj, wk, -1.0, q_.tile(i, k), q_.ld(i), rb, ldr, c_->tile(i, j), c_->ld(i));
    } else {
      // arg[0] is column a here, arg[3] the W block row r.
      const int r = d.arg[3];
      gemm(CblasTrans, wk, wj, L.row_height(i), 1.0, q_.tile(i, k), q_.ld(i), q_.tile(i, j), q_.ld(i),
           w_->tile(r, j) + L.col_local_offset(k), w_->ld(r));
    }
  }

 private:
  const TileMatrix<T>& q_;
  const TileMatrix<T>& r_;
  TileMatrix<T>* c_;
  TileMatrix<T>* w_;
};

}  // namespace

template <class T>
Residuals cholesky_residual_distributed(const TileMatrix<T>& original, TileMatrix<T>& f, const Distribution& dist,
                                        int self, const DistGraphRun& run, const SumOverNodes& sum) {
  (void)dist;
  (void)self;
  const TileLayout& L = f.layout();
  const int p = L.tile_rows(), q = L.tile_cols();
  const index_t n = L.n();
  // L's diagonal-block tiles still hold A's upper part above the diagonal.
  for (int k = 0; k < q; ++k)
    if (T* t = f.tile(L.col_top(k), k)) {
      const index_t h = L.row_height(L.col_top(k)), dk = L.col_local_offset(k);
      for (index_t c = 0; c < L.col_width(k); ++c) std::fill(t + c * h, t + c * h + std::min(h, dk + c), T(0));
    }
  TileMatrix<T> r = original.clone();
  TileDataStore<T> store;
  store.add_tiles(0, f);
  const DataId pq = static_cast<DataId>(p * q);
  store.add_tiles(pq, r);
  CholeskyCheckExecutor<T> ex(f, r);
  // Column k of L at a time, released after its step, so a node holds at
  // most a few columns of others' L (in the factorization's order).
  const Generator gen = [&](TaskSink& sink) {
    for (int k = 0; k < q; ++k) {
      for (int j = k; j < q; ++j) {
        const int tj = L.col_top(j);
        for (int i = tj; i < p; ++i)
          sink.insert(make_task(kGsmm, k, i, j, column_priority(q, j, k))
                          .add(pq + tile_data(L, i, j), AccessMode::ReadWrite)
                          .add(tile_data(L, i, k), AccessMode::Read)
                          .add(tile_data(L, tj, k), AccessMode::Read));
      }
      for (int i = L.col_top(k); i < p; ++i) sink.release(tile_data(L, i, k));
    }
  };
  run(2 * static_cast<std::size_t>(pq), gen, ex, store, tiles_placement(dist, p, q));
  std::vector<double> norms(2 * static_cast<std::size_t>(n), 0.0);
  std::vector<double> a_cols(n, 0.0), r_cols(n, 0.0);
  add_symmetric_colsums(original, a_cols);
  add_symmetric_colsums(r, r_cols);
  std::copy(a_cols.begin(), a_cols.end(), norms.begin());
  std::copy(r_cols.begin(), r_cols.end(), norms.begin() + n);
  sum(norms);
  const double anorm = max_nan_of(norms.begin(), norms.begin() + n);
  const double resid = max_nan_of(norms.begin() + n, norms.end());
  return {scaled_ratio(resid, anorm, static_cast<double>(n), unit_roundoff<T>()), {}};
}

template <class T>
Residuals qr_residual_distributed(const TileMatrix<T>& original, TileMatrix<T>& a, QrFactors<T>& f,
                                  const Distribution& dist, int self, const DistGraphRun& run,
                                  const SumOverNodes& sum) {
  const TileLayout& L = a.layout();
  const int p = L.tile_rows(), q = L.tile_cols();
  const index_t m = L.m(), n = L.n();
  const DataId pq = static_cast<DataId>(p * q);
  const Placement where = tiles_placement(dist, p, q);
  // Q = the thin Q formed from the reflectors, as on one node.
  const auto own = [&](int i, int j) { return dist.owner(i, j).node == self; };
  TileMatrix<T> e(L, own);
  for (index_t d = 0; d < n; ++d)
    if (e.tile(L.tile_row_of(d), L.tile_col_of(d))) e.at(d, d) = T(1);
  {
    TileDataStore<T> store;
    store.add_tiles(0, e);
    store.add_tiles(pq, a, &f);
    QrFormQExecutor<T> ex(a, f, e);
    run(
        qr_form_q_data_count(L), [&](TaskSink& s) { qr_form_q_tasks(L, s, f.tree()); }, ex, store, where);
  }
  // C = A - Q R.
  TileMatrix<T> c = original.clone();
  {
    TileDataStore<T> store;
    store.add_tiles(0, c);
    store.add_tiles(pq, e);
    store.add_tiles(2 * pq, a);
    QrCheckExecutor<T> ex(e, a, &c, nullptr);
    // Column k of Q at a time, released after its step.
    const Generator gen = [&](TaskSink& sink) {
      for (int k = 0; k < q; ++k) {
        for (int j = k; j < q; ++j)
          for (int i = 0; i < p; ++i)
            sink.insert(make_task(kCheckQr, k, i, j, column_priority(q, j, k))
                            .add(tile_data(L, i, j), AccessMode::ReadWrite)
                            .add(pq + tile_data(L, i, k), AccessMode::Read)
                            .add(2 * pq + tile_data(L, L.col_top(k), j), AccessMode::Read));
        for (int i = 0; i < p; ++i) sink.release(pq + tile_data(L, i, k));
      }
    };
    run(3 * static_cast<std::size_t>(pq), gen, ex, store, where);
  }
  // W = Q^T Q on its upper block triangle: W's rows are cut like A's rows
  // (block r = columns [rB, rB+B)), its columns like A's columns.
  const TileLayout LW(n, n, L.B(), L.s(), L.b());
  const int pw = LW.tile_rows();
  TileMatrix<T> w(LW, own);
  {
    const DataId pqw = static_cast<DataId>(pw * q);
    TileDataStore<T> store;
    store.add_tiles(0, w);
    store.add_tiles(pqw, e);
    QrCheckExecutor<T> ex(e, a, nullptr, &w);
    // Tile row i of Q at a time (every pair of its columns), released after
    // its step: a node holds at most a few rows of others' Q.
    const Generator gen = [&](TaskSink& sink) {
      for (int i = 0; i < p; ++i) {
        for (int j = 0; j < q; ++j)
          for (int r = 0; r <= L.col_top(j); ++r)
            for (int col = L.first_col_of_top(r); col < L.first_col_of_top(r + 1) && col <= j; ++col) {
              TaskDesc t = make_task(kCheckGram, col, i, j, column_priority(q, j, col))
                               .add(static_cast<DataId>(r + j * pw), AccessMode::ReadWrite)
                               .add(pqw + tile_data(L, i, col), AccessMode::Read)
                               .add(pqw + tile_data(L, i, j), AccessMode::Read);
              t.arg[3] = r;
              sink.insert(t);
            }
        for (int j = 0; j < q; ++j) sink.release(pqw + tile_data(L, i, j));
      }
    };
    const Placement wwhere = [&](DataId d) {
      if (d < pqw) return dist.owner(static_cast<int>(d % pw), static_cast<int>(d / pw));
      return where(d - pqw);
    };
    run(static_cast<std::size_t>(pqw + pq), gen, ex, store, wwhere);
  }
  std::vector<double> norms(3 * static_cast<std::size_t>(n), 0.0);
  std::vector<double> a_cols(n, 0.0), c_cols(n, 0.0), w_cols(n, 0.0);
  add_colsums(original, a_cols);
  add_colsums(c, c_cols);
  // |I - W| of the symmetric W from its upper part.
  for (int j = 0; j < q; ++j)
    for (int r = 0; r <= L.col_top(j); ++r)
      if (const T* t = w.tile(r, j)) {
        const index_t h = LW.row_height(r), r0 = LW.row_offset(r), c0 = L.col_offset(j);
        for (index_t col = 0; col < L.col_width(j); ++col)
          for (index_t x = 0; x < h && r0 + x <= c0 + col; ++x) {
            const double g = std::abs((r0 + x == c0 + col ? 1.0 : 0.0) - static_cast<double>(t[x + col * h]));
            w_cols[c0 + col] += g;
            if (r0 + x < c0 + col) w_cols[r0 + x] += g;
          }
      }
  std::copy(a_cols.begin(), a_cols.end(), norms.begin());
  std::copy(c_cols.begin(), c_cols.end(), norms.begin() + n);
  std::copy(w_cols.begin(), w_cols.end(), norms.begin() + 2 * n);
  sum(norms);
  const double eps = unit_roundoff<T>();
  const double anorm = max_nan_of(norms.begin(), norms.begin() + n);
  const double resid = max_nan_of(norms.begin() + n, norms.begin() + 2 * n);
  const double onorm = max_nan_of(norms.begin() + 2 * n, norms.end());
  return {scaled_ratio(resid, anorm, static_cast<double>(std::max(m, n)), eps),
          {{"orth", "orthogonality", onorm / (static_cast<double>(m) * eps)}}};
}

template Residuals cholesky_residual_distributed<float>(const TileMatrix<float>&, TileMatrix<float>&,
                                                        const Distribution&, int, const DistGraphRun&,
                                                        const SumOverNodes&);
template Residuals cholesky_residual_distributed<double>(const TileMatrix<double>&, TileMatrix<double>&,
                                                         const Distribution&, int, const DistGraphRun&,
                                                         const SumOverNodes&);
template Residuals qr_residual_distributed<float>(const TileMatrix<float>&, TileMatrix<float>&, QrFactors<float>&,
                                                  const Distribution&, int, const DistGraphRun&, const SumOverNodes&);
template Residuals qr_residual_distributed<double>(const TileMatrix<double>&, TileMatrix<double>&, QrFactors<double>&,
                                                   const Distribution&, int, const DistGraphRun&, const SumOverNodes&);

}  // namespace tessera
