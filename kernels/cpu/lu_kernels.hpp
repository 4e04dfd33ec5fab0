#pragma once
// CPU kernels of the LU factorizations of issue 14 (paper 002): the panel of
// the partial-pivoting baseline (002 Alg. 1), the tournament pivot selection
// of CALU / TSLU (002 §2.4), LU without pivoting of the panel once its pivots
// are at the top, and the thin BLAS wrappers of the U row and the trailing
// update. OpenBLAS + LAPACKE underneath; every matrix is column-major; row
// and pivot indices are 0-based (LAPACK's are 1-based). Instantiated for
// T = double and float. Kernels do not synchronize: one call belongs to one
// thread (OpenBLAS may itself use threads unless set_blas_threads(1), see
// kernels/cpu/tile_kernels.hpp).
//
// How the pieces make one CALU panel step (002 §2.4, Steps 0-5), for an m×b
// panel P at the top of the trailing matrix:
//   tournament_select(m, b, P, ..., rows)  // Steps 0-3: the b pivot rows
//   rows_to_ipiv(m, k, rows, ipiv)         // as a LAPACK-style swap sequence
//   laswp_rows(b, P, .., 0, k, ipiv)       // Step 4: pivots to the top
//   getrf_nopiv(m, b, P, ..)               // Step 5: LU, no further pivoting
// then laswp_rows on the columns left and right of the panel, and for each
// block column to the right: trsm_unit_lower (the U row) and gemm_update.
//
// Stability. Tournament pivoting does not choose the same pivots as GEPP in
// general, so GEPP's guarantees do not carry over as they stand. What we
// rely on is that CALU with tournament pivoting is, in practice, as stable
// as GEPP: 002 §2.4 ("CALU is shown to be stable in practice", citing
// L. Grigori, J. Demmel, H. Xiang, "Communication avoiding Gaussian
// elimination", SC 2008) and L. Grigori, J. Demmel, H. Xiang, "CALU: a
// communication optimal LU factorization algorithm", SIAM J. Matrix Anal.
// Appl. 32(4), 2011, which also proves a worst-case growth-factor bound that
// is larger than GEPP's (Wilkinson's 2^(n-1)) and grows with the height of
// the reduction tree. So every run is checked: issue 14's --check computes
// the backward error ‖PA − LU‖ / (n‖A‖ε) against LAPACK's threshold 30 and
// reports the growth factor max|U| / max|A|; tests/test_lu_kernels.cpp does
// the same on panels.
#include <cstdint>

#include "kernels/tile_kernels_api.hpp"  // index_t

namespace tessera::kernels {

// Reduction tree of the tournament (002 §2.4 Step 3).
enum class Tree {
  // Pairwise: the candidate sets of blocks (0,1), (2,3), ... are merged,
  // then those results pairwise, up to the root (log2(#blocks) levels; an
  // odd set out goes up a level unchanged). 002's parallel TSLU.
  Binary,
  // Sequential: the candidates so far are stacked on the next row block's
  // rows (all of them) and b rows selected again; one GEPP per block, no
  // separate leaf step for blocks 1.. . The flat tree of CALU's sequential /
  // out-of-core variant (Grigori et al. 2011).
  Flat,
};

// GETRF of an m×n panel with partial pivoting (LAPACKE ?getrf: OpenBLAS's
// recursive, Level-3 GETRF): A = P L U with L m×min(m,n) unit lower
// trapezoidal (below the diagonal of A), U min(m,n)×n upper trapezoidal (on
// and above it). ipiv[0..min(m,n)): for i in that order, row i was swapped
// with row ipiv[i] (0-based, ipiv[i] >= i), LAPACK's convention minus one.
// Returns 0, or the 1-based column of the first exactly-zero pivot U(j,j)
// (LAPACK's info > 0): the factorization is then complete but U is
// singular. Throws std::invalid_argument on a negative size or lda < max(1,m),
// std::overflow_error on sizes beyond LAPACK's 32-bit integers.
template <class T>
index_t getrf_panel(index_t m, index_t n, T* a, index_t lda, index_t* ipiv);

// LAPACK's LASWP forward, 0-based: for i = k1, ..., k2-1 in that order, swap
// rows i and ipiv[i] of the n_cols columns of A (lda >= every row index
// used + 1). k1 == k2 does nothing. Throws std::invalid_argument on
// k1 > k2 or a negative argument.
template <class T>
void laswp_rows(index_t n_cols, T* a, index_t lda, index_t k1, index_t k2, const index_t* ipiv);

// Tournament pivot selection of TSLU (002 §2.4 Steps 0-3) on the m×b panel
// A, which it does not modify. The panel is cut into row blocks of
// `row_block` rows (the last one shorter when row_block does not divide m).
// Leaves: GEPP (?getrf) on a copy of each block gives its candidates, the
// min(rows, b) rows it pivots on, in pivot order. A reduction step stacks
// two candidate sets (the rows' original values, the first set on top),
// runs GEPP on a copy of the stack and keeps the min(rows, b) rows it
// pivots on. `tree` orders the steps (see Tree; with Flat, block i >= 1
// enters the stack whole instead of through a leaf).
// Writes out_rows[0..k), k = min(m, b): distinct panel row indices (0-based)
// in the order the root's GEPP chose them. Returns k. With a single row
// block (row_block >= m) the result is GEPP's own pivot rows on A. The
// first selected row is always GEPP's first pivot on A, the uppermost row
// with the largest |A(i,0)|: each set's first pivot is its uppermost
// maximum, and a stack puts the upper set on top. Throws std::invalid_argument on
// m, b < 0, row_block < 1 or lda < max(1,m).
// Work, for row_block >= b: about m·b² + (4/3)·(#blocks)·b³ flops (binary)
// or m·b² + (2/3)·(#blocks)·b³ (flat), against GEPP's m·b² − b³/3; memory:
// one copied stack at a time (at most max(row_block, 2b)×b binary,
// (row_block + b)×b flat).
template <class T>
index_t tournament_select(index_t m, index_t b, const T* a, index_t lda, index_t row_block, Tree tree,
                          index_t* out_rows);

// The swap sequence that brings rows[0..k) (distinct, in [0, m)) to rows
// 0..k-1 in that order: ipiv[0..k), 0-based, with ipiv[i] >= i, such that
// laswp_rows(..., 0, k, ipiv) leaves original row rows[i] at row i for
// every i < k. Throws std::invalid_argument on a row outside [0, m) or a
// repeated row. O(k) time and memory (a hash map of the displaced rows,
// not an m-long permutation).
void rows_to_ipiv(index_t m, index_t k, const index_t* rows, index_t* ipiv);

// The inverse: the original rows that the swap sequence ipiv[0..k) (0-based,
// as getrf_panel returns it) brings to rows 0..k-1, i.e. rows[i] = the
// original row that ends at row i. Rows not displaced stay where they are.
// pivots_to_permutation(k, ipiv, rows) then rows_to_ipiv(m, k, rows, ipiv2)
// gives ipiv2 == ipiv. Throws std::invalid_argument on ipiv[i] < i.
void pivots_to_permutation(index_t k, const index_t* ipiv, index_t* rows);

// LU without pivoting of the m×n panel A (002 §2.4 Step 5, after the
// tournament's rows are at the top): A = L U, L unit lower trapezoidal below
// the diagonal, U upper trapezoidal on and above it. Recursive (columns
// halved; the right half gets a TRSM and a GEMM, so the work is Level-3
// BLAS), unblocked at 8 columns or fewer. Returns 0, or the 1-based column
// j of the first pivot U(j-1,j-1) that is exactly zero: it stops there, with
// columns before j factored and the rest partly updated (no division by
// zero is made). Throws std::invalid_argument as getrf_panel.
template <class T>
index_t getrf_nopiv(index_t m, index_t n, T* a, index_t lda);

// The U row of a step: A (b×n) := L^{-1} A, with L the b×b unit lower
// triangle of l (its diagonal and upper part are not read). cblas ?trsm.
template <class T>
void trsm_unit_lower(index_t b, index_t n, const T* l, index_t ldl, T* a, index_t lda);

// GEPP on a copy of the m×n block A (not modified): rows[0..min(m,n)) get
// the rows it pivots on, in pivot order, 0-based. Returns getrf_panel's info.
// One node of the tournament (002 §2.4 Steps 1-3) as the tile runtime runs it.
template <class T>
index_t select_pivot_rows(index_t m, index_t n, const T* a, index_t lda, index_t* rows);

// The L below a factored diagonal block: A (m×n) := A U^{-1}, U the n×n
// upper triangle of u (non-unit). cblas ?trsm.
template <class T>
void trsm_upper_right(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda);

// Row x of A (rows×cols) becomes its old row perm[x] (perm a permutation of [0, rows)).
template <class T>
void permute_rows(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm);

// For r < w with lo <= xch[r] < hi, swaps row r of TOP with row xch[r] - lo of A (cols columns).
template <class T>
void exchange_rows(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch, index_t lo,
                   index_t hi);

// The trailing update: C (m×n) -= A (m×k) B (k×n). cblas ?gemm.
template <class T>
void gemm_update(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc);

}  // namespace tessera::kernels
