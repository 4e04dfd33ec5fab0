#include "kernels/cpu/lu_kernels.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessera::kernels {
namespace {

// LAPACKE and CBLAS take 32-bit integers (Debian's OpenBLAS is built without
// INTERFACE64): a size beyond them is refused rather than truncated.
lapack_int to_lapack(index_t v, const char* what) {
  if (v > std::numeric_limits<lapack_int>::max())
    throw std::overflow_error(std::string(what) + " = " + std::to_string(v) + " exceeds LAPACK's 32-bit integers");
  return static_cast<lapack_int>(v);
}
blasint to_blas(index_t v, const char* what) {
  if (v > std::numeric_limits<blasint>::max())
    throw std::overflow_error(std::string(what) + " = " + std::to_string(v) + " exceeds BLAS's 32-bit integers");
  return static_cast<blasint>(v);
}

void require(bool ok, const char* routine, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(routine) + ": " + what);
}

void check_panel(const char* routine, index_t m, index_t n, index_t lda) {
  require(m >= 0, routine, "m = " + std::to_string(m) + " must be >= 0");
  require(n >= 0, routine, "n = " + std::to_string(n) + " must be >= 0");
  require(lda >= std::max<index_t>(1, m), routine,
          "lda = " + std::to_string(lda) + " must be >= max(1, m = " + std::to_string(m) + ")");
}

// Overload sets so the templates read like the math.
inline lapack_int getrf_(lapack_int m, lapack_int n, double* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
inline lapack_int getrf_(lapack_int m, lapack_int n, float* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
inline void trsm_llnu_(blasint m, blasint n, const double* l, blasint ldl, double* a, blasint lda) {
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, m, n, 1.0, l, ldl, a, lda);
}
inline void trsm_llnu_(blasint m, blasint n, const float* l, blasint ldl, float* a, blasint lda) {
  cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, m, n, 1.0f, l, ldl, a, lda);
}
inline void trsm_runn_(blasint m, blasint n, const double* u, blasint ldu, double* a, blasint lda) {
  cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0, u, ldu, a, lda);
}
inline void trsm_runn_(blasint m, blasint n, const float* u, blasint ldu, float* a, blasint lda) {
  cblas_strsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, m, n, 1.0f, u, ldu, a, lda);
}
inline void gemm_nn_minus_(blasint m, blasint n, blasint k, const double* a, blasint lda, const double* b, blasint ldb,
                           double* c, blasint ldc) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
}
inline void gemm_nn_minus_(blasint m, blasint n, blasint k, const float* a, blasint lda, const float* b, blasint ldb,
                           float* c, blasint ldc) {
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}
inline void scal_(blasint n, double alpha, double* x) { cblas_dscal(n, alpha, x, 1); }
inline void scal_(blasint n, float alpha, float* x) { cblas_sscal(n, alpha, x, 1); }
inline void ger_minus_(blasint m, blasint n, const double* x, const double* y, blasint incy, double* a, blasint lda) {
  cblas_dger(CblasColMajor, m, n, -1.0, x, 1, y, incy, a, lda);
}
inline void ger_minus_(blasint m, blasint n, const float* x, const float* y, blasint incy, float* a, blasint lda) {
  cblas_sger(CblasColMajor, m, n, -1.0f, x, 1, y, incy, a, lda);
}

// GEPP on the rows `rows` of the panel (their original values, stacked in
// that order) and keeps the min(#rows, b) rows it pivots on, in pivot order:
// one node of the tournament (002 §2.4 Steps 1-3). `stack` and `piv` are
// reused between calls.
template <class T>
void select_rows(const T* a, index_t lda, index_t b, const std::vector<index_t>& rows, std::vector<T>& stack,
                 std::vector<lapack_int>& piv, std::vector<index_t>& out) {
  const index_t h = static_cast<index_t>(rows.size());
  const index_t k = std::min(h, b);
  stack.resize(static_cast<std::size_t>(h * b));
  for (index_t j = 0; j < b; ++j) {
    const T* src = a + j * lda;
    T* dst = stack.data() + j * h;
    for (index_t i = 0; i < h; ++i) dst[i] = src[rows[i]];
  }
  piv.resize(static_cast<std::size_t>(k));
  // info > 0 (an exactly zero column below the diagonal) still leaves a
  // pivot for every column: GETRF then pivots on the diagonal row itself.
  const lapack_int info = getrf_(to_lapack(h, "tournament stack rows"), to_lapack(b, "b"), stack.data(),
                                 to_lapack(std::max<index_t>(1, h), "tournament stack rows"), piv.data());
  if (info < 0) throw std::logic_error("getrf: illegal value in argument " + std::to_string(-info));
  // The stack's row order after GETRF's swaps: its first k rows are the pivots.
  std::vector<index_t> order(rows);
  for (index_t i = 0; i < k; ++i) std::swap(order[i], order[piv[i] - 1]);
  out.assign(order.begin(), order.begin() + k);
}

// The rows of row block `blk` of the panel.
std::vector<index_t> block_rows(index_t m, index_t row_block, index_t blk) {
  const index_t r0 = blk * row_block, r1 = std::min(m, r0 + row_block);
  std::vector<index_t> rows(static_cast<std::size_t>(r1 - r0));
  for (index_t i = r0; i < r1; ++i) rows[i - r0] = i;
  return rows;
}

// Unblocked right-looking LU without pivoting (a GETF2 with no IDAMAX).
template <class T>
index_t nopiv_unblocked(index_t m, index_t n, T* a, index_t lda) {
  const index_t kmin = std::min(m, n);
  const T sfmin = std::numeric_limits<T>::min();
  for (index_t j = 0; j < kmin; ++j) {
    T* col = a + j * lda;
    const T p = col[j];
    if (p == T(0)) return j + 1;
    const index_t below = m - j - 1;
    if (below > 0) {
      // As LAPACK's GETF2: multiply by the reciprocal unless it would overflow.
      if (std::abs(p) >= sfmin) scal_(static_cast<blasint>(below), T(1) / p, col + j + 1);
      else
        for (index_t i = j + 1; i < m; ++i) col[i] /= p;
      if (j + 1 < n)
        ger_minus_(static_cast<blasint>(below), static_cast<blasint>(n - j - 1), col + j + 1, a + j + (j + 1) * lda,
                   static_cast<blasint>(lda), a + (j + 1) + (j + 1) * lda, static_cast<blasint>(lda));
    }
  }
  return 0;
}

constexpr index_t kNopivBase = 8;

// Recursive LU without pivoting: [A11 A12; A21 A22] with A11 n1×n1, n1 =
// min(m,n)/2: factor [A11; A21], A12 := L11^{-1} A12, A22 -= A21 A12, factor
// A22. Sizes were checked against 32-bit BLAS by the caller.
template <class T>
index_t nopiv_recursive(index_t m, index_t n, T* a, index_t lda) {
  const index_t kmin = std::min(m, n);
  if (kmin == 0) return 0;
  if (kmin <= kNopivBase) return nopiv_unblocked(m, n, a, lda);
  const index_t n1 = kmin / 2;
  if (const index_t info = nopiv_recursive(m, n1, a, lda)) return info;
  T* a12 = a + n1 * lda;
  T* a21 = a + n1;
  T* a22 = a + n1 + n1 * lda;
  const auto b = [](index_t v) { return static_cast<blasint>(v); };
  trsm_llnu_(b(n1), b(n - n1), a, b(lda), a12, b(lda));
  gemm_nn_minus_(b(m - n1), b(n - n1), b(n1), a21, b(lda), a12, b(lda), a22, b(lda));
  if (const index_t info = nopiv_recursive(m - n1, n - n1, a22, lda)) return info + n1;
  return 0;
}

}  // namespace

template <class T>
index_t getrf_panel(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) {
  check_panel("getrf_panel", m, n, lda);
  const index_t k = std::min(m, n);
  if (k == 0) return 0;
  std::vector<lapack_int> piv(static_cast<std::size_t>(k));
  const lapack_int info = getrf_(to_lapack(m, "m"), to_lapack(n, "n"), a, to_lapack(lda, "lda"), piv.data());
  if (info < 0) throw std::logic_error("getrf: illegal value in argument " + std::to_string(-info));
  for (index_t i = 0; i < k; ++i) ipiv[i] = static_cast<index_t>(piv[i]) - 1;
  return info;
}

template <class T>
void laswp_rows(index_t n_cols, T* a, index_t lda, index_t k1, index_t k2, const index_t* ipiv) {
  require(n_cols >= 0 && k1 >= 0 && lda >= 1, "laswp_rows",
          "n_cols = " + std::to_string(n_cols) + ", k1 = " + std::to_string(k1) + ", lda = " + std::to_string(lda) +
              ": n_cols and k1 must be >= 0, lda >= 1");
  require(k1 <= k2, "laswp_rows", "k1 = " + std::to_string(k1) + " > k2 = " + std::to_string(k2));
  for (index_t i = k1; i < k2; ++i)
    require(ipiv[i] >= 0 && ipiv[i] < lda && i < lda, "laswp_rows",
            "ipiv[" + std::to_string(i) + "] = " + std::to_string(ipiv[i]) +
                " is outside [0, lda = " + std::to_string(lda) + ")");
  // Column by column, the swaps in order within each column: the same result
  // as LAPACK's LASWP, each column streamed once.
  for (index_t j = 0; j < n_cols; ++j) {
    T* col = a + j * lda;
    for (index_t i = k1; i < k2; ++i) {
      const index_t p = ipiv[i];
      if (p != i) std::swap(col[i], col[p]);
    }
  }
}

template <class T>
index_t tournament_select(index_t m, index_t b, const T* a, index_t lda, index_t row_block, Tree tree,
                          index_t* out_rows) {
  check_panel("tournament_select", m, b, lda);
  require(row_block >= 1, "tournament_select", "row_block = " + std::to_string(row_block) + " must be >= 1");
  const index_t k = std::min(m, b);
  if (k == 0) return 0;
  const index_t nblocks = (m + row_block - 1) / row_block;
  std::vector<T> stack;
  std::vector<lapack_int> piv;
  std::vector<index_t> selected;

  if (tree == Tree::Flat) {
    // Candidates of block 0, then [candidates; block i] for i = 1, 2, ...
    select_rows(a, lda, b, block_rows(m, row_block, 0), stack, piv, selected);
    for (index_t blk = 1; blk < nblocks; ++blk) {
      std::vector<index_t> rows(selected);
      const std::vector<index_t> more = block_rows(m, row_block, blk);
      rows.insert(rows.end(), more.begin(), more.end());
      select_rows(a, lda, b, rows, stack, piv, selected);
    }
  } else {
    // Leaves (Steps 1-2), then pairwise reductions (Step 3).
    std::vector<std::vector<index_t>> level(static_cast<std::size_t>(nblocks));
    for (index_t blk = 0; blk < nblocks; ++blk)
      select_rows(a, lda, b, block_rows(m, row_block, blk), stack, piv, level[blk]);
    while (level.size() > 1) {
      std::vector<std::vector<index_t>> up;
      up.reserve((level.size() + 1) / 2);
      for (std::size_t i = 0; i < level.size(); i += 2) {
        if (i + 1 == level.size()) {  // an odd set out goes up unchanged
          up.push_back(std::move(level[i]));
          continue;
        }
        std::vector<index_t> rows(std::move(level[i]));
        rows.insert(rows.end(), level[i + 1].begin(), level[i + 1].end());
        up.emplace_back();
        select_rows(a, lda, b, rows, stack, piv, up.back());
      }
      level = std::move(up);
    }
    selected = std::move(level.front());
  }
  if (static_cast<index_t>(selected.size()) != k)
    throw std::logic_error("tournament_select: the root kept " + std::to_string(selected.size()) + " rows, expected " +
                           std::to_string(k));
  std::copy(selected.begin(), selected.end(), out_rows);
  return k;
}

void rows_to_ipiv(index_t m, index_t k, const index_t* rows, index_t* ipiv) {
  require(k >= 0 && k <= m, "rows_to_ipiv",
          "k = " + std::to_string(k) + " must be in [0, m = " + std::to_string(m) + "]");
  // Only displaced rows are recorded: pos_of (original row -> its row now)
  // and at (row -> the original row there); everything else is in place.
  std::unordered_map<index_t, index_t> pos_of, at;
  std::unordered_set<index_t> seen;
  const auto where = [&](index_t r) {
    const auto it = pos_of.find(r);
    return it == pos_of.end() ? r : it->second;
  };
  const auto who = [&](index_t p) {
    const auto it = at.find(p);
    return it == at.end() ? p : it->second;
  };
  for (index_t i = 0; i < k; ++i) {
    const index_t r = rows[i];
    require(
        r >= 0 && r < m, "rows_to_ipiv",
        "rows[" + std::to_string(i) + "] = " + std::to_string(r) + " is outside [0, m = " + std::to_string(m) + ")");
    require(seen.insert(r).second, "rows_to_ipiv",
            "rows[" + std::to_string(i) + "] = " + std::to_string(r) + " is repeated");
    // Rows 0..i-1 hold rows[0..i), so r sits at i or below.
    const index_t p = where(r);
    ipiv[i] = p;
    if (p != i) {
      const index_t o = who(i);
      at[i] = r;
      at[p] = o;
      pos_of[r] = i;
      pos_of[o] = p;
    }
  }
}

void pivots_to_permutation(index_t k, const index_t* ipiv, index_t* rows) {
  require(k >= 0, "pivots_to_permutation", "k = " + std::to_string(k) + " must be >= 0");
  std::unordered_map<index_t, index_t> at;  // row -> the original row there, when displaced
  const auto who = [&](index_t p) {
    const auto it = at.find(p);
    return it == at.end() ? p : it->second;
  };
  for (index_t i = 0; i < k; ++i) {
    const index_t p = ipiv[i];
    require(p >= i, "pivots_to_permutation",
            "ipiv[" + std::to_string(i) + "] = " + std::to_string(p) + " is below " + std::to_string(i));
    if (p == i) continue;
    const index_t wi = who(i), wp = who(p);
    at[i] = wp;
    at[p] = wi;
  }
  for (index_t i = 0; i < k; ++i) rows[i] = who(i);
}

template <class T>
index_t getrf_nopiv(index_t m, index_t n, T* a, index_t lda) {
  check_panel("getrf_nopiv", m, n, lda);
  to_blas(m, "m");
  to_blas(n, "n");
  to_blas(lda, "lda");
  return nopiv_recursive(m, n, a, lda);
}

template <class T>
void trsm_unit_lower(index_t b, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  require(b >= 0 && n >= 0, "trsm_unit_lower",
          "b = " + std::to_string(b) + ", n = " + std::to_string(n) + " must be >= 0");
  require(ldl >= std::max<index_t>(1, b) && lda >= std::max<index_t>(1, b), "trsm_unit_lower",
          "ldl = " + std::to_string(ldl) + ", lda = " + std::to_string(lda) +
              " must be >= max(1, b = " + std::to_string(b) + ")");
  if (b == 0 || n == 0) return;
  trsm_llnu_(to_blas(b, "b"), to_blas(n, "n"), l, to_blas(ldl, "ldl"), a, to_blas(lda, "lda"));
}

template <class T>
void gemm_update(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc) {
  require(m >= 0 && n >= 0 && k >= 0, "gemm_update",
          "m = " + std::to_string(m) + ", n = " + std::to_string(n) + ", k = " + std::to_string(k) + " must be >= 0");
  require(lda >= std::max<index_t>(1, m) && ldb >= std::max<index_t>(1, k) && ldc >= std::max<index_t>(1, m),
          "gemm_update",
          "lda = " + std::to_string(lda) + ", ldb = " + std::to_string(ldb) + ", ldc = " + std::to_string(ldc) +
              " must be >= max(1, m), max(1, k), max(1, m)");
  if (m == 0 || n == 0 || k == 0) return;
  gemm_nn_minus_(to_blas(m, "m"), to_blas(n, "n"), to_blas(k, "k"), a, to_blas(lda, "lda"), b, to_blas(ldb, "ldb"), c,
                 to_blas(ldc, "ldc"));
}

template <class T>
index_t select_pivot_rows(index_t m, index_t n, const T* a, index_t lda, index_t* rows) {
  check_panel("select_pivot_rows", m, n, lda);
  const index_t k = std::min(m, n);
  if (k == 0) return 0;
  std::vector<T> copy(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j) std::copy(a + j * lda, a + j * lda + m, copy.data() + j * m);
  std::vector<index_t> ipiv(static_cast<std::size_t>(k));
  const index_t info = getrf_panel(m, n, copy.data(), m, ipiv.data());
  pivots_to_permutation(k, ipiv.data(), rows);
  return info;
}

template <class T>
void trsm_upper_right(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) {
  require(m >= 0 && n >= 0, "trsm_upper_right",
          "m = " + std::to_string(m) + ", n = " + std::to_string(n) + " must be >= 0");
  require(ldu >= std::max<index_t>(1, n) && lda >= std::max<index_t>(1, m), "trsm_upper_right",
          "ldu = " + std::to_string(ldu) + ", lda = " + std::to_string(lda) + " too small");
  if (m == 0 || n == 0) return;
  trsm_runn_(to_blas(m, "m"), to_blas(n, "n"), u, to_blas(ldu, "ldu"), a, to_blas(lda, "lda"));
}

template <class T>
void permute_rows(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) {
  require(rows >= 0 && cols >= 0 && lda >= std::max<index_t>(1, rows), "permute_rows",
          "rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols) + ", lda = " + std::to_string(lda));
  std::vector<T> col(static_cast<std::size_t>(rows));
  for (index_t j = 0; j < cols; ++j) {
    T* c = a + j * lda;
    for (index_t x = 0; x < rows; ++x) col[x] = c[perm[x]];
    std::copy(col.begin(), col.end(), c);
  }
}

template <class T>
void exchange_rows(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch, index_t lo,
                   index_t hi) {
  for (index_t r = 0; r < w; ++r) {
    if (xch[r] < lo || xch[r] >= hi) continue;
    const index_t x = xch[r] - lo;
    for (index_t j = 0; j < cols; ++j) std::swap(top[r + j * ldt], a[x + j * lda]);
  }
}

#define TESSERA_LU_KERNELS(T)                                                                                        \
  template index_t select_pivot_rows<T>(index_t, index_t, const T*, index_t, index_t*);                              \
  template void trsm_upper_right<T>(index_t, index_t, const T*, index_t, T*, index_t);                               \
  template void permute_rows<T>(index_t, index_t, T*, index_t, const std::int64_t*);                                 \
  template void exchange_rows<T>(index_t, index_t, T*, index_t, T*, index_t, const std::int64_t*, index_t, index_t); \
  template index_t getrf_panel<T>(index_t, index_t, T*, index_t, index_t*);                                          \
  template void laswp_rows<T>(index_t, T*, index_t, index_t, index_t, const index_t*);                               \
  template index_t tournament_select<T>(index_t, index_t, const T*, index_t, index_t, Tree, index_t*);               \
  template index_t getrf_nopiv<T>(index_t, index_t, T*, index_t);                                                    \
  template void trsm_unit_lower<T>(index_t, index_t, const T*, index_t, T*, index_t);                                \
  template void gemm_update<T>(index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, index_t);
TESSERA_LU_KERNELS(double)
TESSERA_LU_KERNELS(float)
#undef TESSERA_LU_KERNELS

}  // namespace tessera::kernels
