#pragma once
// Cholesky's two triangular tile kernels as recursions whose flops are nearly
// all GEMM and SYRK (Elmroth, Gustavson, Jonsson and Kågström, "Recursive
// blocked algorithms and hybrid data structures for dense matrix library
// software", SIAM Review 46(1), 2004, §3), for a device whose library
// triangular routines run far below its GEMM: on the lent H200 (2026-11-25,
// results/gpu-node/2026-11-25-h200) cuBLAS DTRSM ran at 0.44 of DGEMM's rate
// and cuSOLVER DPOTRF at 0.23 on 4096 tiles, while DSYRK reached 0.98, and
// TRSM was 43% of a Cholesky's GPU time. Measured on the lent H100
// (2026-11-26), the recursion to leaves of 256 did not pay: TRSM took the
// whole-tile routine's time, POTF2' 2.2-2.8x it (CudaKernelOptions now
// defaults to the whole tile; the recursion stays an option, benchmarked by
// bench_cuda_kernels' .../leafL rows).
//
// The triangle of order n splits into n1 + n2 (n1 a multiple of `leaf`, about
// n/2); only triangles of order <= leaf reach the library's own routine, so
// of a TRSM's m·n² flops a share leaf/n is left to it, the rest runs as GEMM.
// Every leaf starts at a column that is a multiple of `leaf` (the recursion
// splits each part again at multiples of leaf from its own start), which
// gives each POTRF leaf a slot of its own for its status: leaf index =
// first column / leaf.
//
// No device code here: the operations come in as callables, so the same
// recursion runs on cuBLAS (cuda_tile_kernels.cu), on the CPU's BLAS (the CPU
// TRSM with inverted leaves, kernels/cpu/tile_kernels.cpp) and, in the tests,
// on the CPU's BLAS against LAPACK's unrecursed results.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera::kernels::recursive {

using index_t = std::int64_t;

// Where a triangle of order n > leaf splits: n1 = about n/2 rounded up to a
// multiple of leaf, so 0 < n1 < n (n/2 <= leaf gives n1 = leaf < n; else
// n1 < n/2 + leaf <= n).
inline index_t split(index_t n, index_t leaf) {
  if (leaf < 1 || n <= leaf)
    throw std::logic_error("recursive::split: order " + std::to_string(n) + " with leaf " + std::to_string(leaf));
  return (n / 2 + leaf - 1) / leaf * leaf;
}

// POTRF leaves of a triangle of order n: one status slot each.
inline index_t leaves(index_t n, index_t leaf) { return (n + leaf - 1) / leaf; }

// A (m×n) = A L^{-T}, L (n×n) lower triangular (TRSM of 001 Alg. 1).
// With L = [L11 0; L21 L22] and X = [X1 X2]:  X1 L11^T = A1, then
// A2 -= X1 L21^T, then X2 L22^T = A2.
//   leaf_trsm(m, n, l, ldl, a, lda): the library's A = A L^{-T};
//   gemm_nt(m, n, k, a, lda, b, ldb, c, ldc): C (m×n) -= A (m×k) B^T (n×k).
template <class T, class LeafTrsm, class GemmNt>
void trsm_rlt(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda, index_t leaf, LeafTrsm& leaf_trsm,
              GemmNt& gemm_nt) {
  if (m == 0 || n == 0) return;
  if (n <= leaf) {
    leaf_trsm(m, n, l, ldl, a, lda);
    return;
  }
  const index_t n1 = split(n, leaf), n2 = n - n1;
  T* a2 = a + n1 * lda;
  // X1 = A1 L11^{-T}
  trsm_rlt(m, n1, l, ldl, a, lda, leaf, leaf_trsm, gemm_nt);
  // A2 -= X1 L21^T
  gemm_nt(m, n2, n1, a, lda, l + n1, ldl, a2, lda);
  // X2 = A2 L22^{-T}
  trsm_rlt(m, n2, l + n1 + n1 * ldl, ldl, a2, lda, leaf, leaf_trsm, gemm_nt);
}

// A (m×n) = A L^{-T} as trsm_rlt, but no leaf is solved by substitution:
// the inverses of L's diagonal blocks of order `leaf` are made first, all in
// one call, and each leaf then multiplies by its block's inverse (a
// triangular multiply, as parallel over A's rows and columns as a GEMM),
// which is how MAGMA's magmablas_dtrsm reaches GEMM-like speed (it inverts
// diagonal blocks with magmablas_dtrtri_diag). On the lent H100 cuBLAS's
// DTRSM on a 2048 tile ran at 0.19 of DGEMM's rate (2026-11-27), and the
// recursion with the library's substitution on leaves of 256 and GEMMs for
// the rest took as long (2026-11-26): the solves on the diagonal blocks are
// what is slow. Multiplying by an explicit inverse is not as stable as
// substitution in general; its error grows with the condition of the
// diagonal blocks (Du Croz and Higham, IMA J. Numer. Anal. 12(1), 1992), which
// for a Cholesky factor's blocks is the square root of the SPD matrix's.
//   invert_leaves(n, l, ldl, leaf, w): W (leaf×n, leading dimension leaf) =
//     [inv(L_00) inv(L_11) ...], the inverse of the diagonal block at (c, c)
//     (order min(leaf, n - c)) lower triangular in W's columns c..;
//   leaf_trmm(m, nl, w, ldw, a, lda): A (m×nl) = A W^T, W lower nl×nl;
//   gemm_nt: as for trsm_rlt.
// `w` holds leaf·n elements.
template <class T, class InvertLeaves, class LeafTrmm, class GemmNt>
void trsm_rlt_inverted(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda, index_t leaf, T* w,
                       InvertLeaves& invert_leaves, LeafTrmm& leaf_trmm, GemmNt& gemm_nt) {
  if (m == 0 || n == 0) return;
  if (leaf < 1) throw std::logic_error("recursive::trsm_rlt_inverted: leaf " + std::to_string(leaf));
  // W = [L_00^{-1} L_11^{-1} ...]
  invert_leaves(n, l, ldl, leaf, w);
  // Every leaf is a diagonal block starting at a multiple of leaf (see split):
  // its column c follows from where it lies in L.
  auto leaf_solve = [&](index_t mm, index_t nl, const T* lc, index_t, T* ac, index_t ldac) {
    const index_t c = (lc - l) / (ldl + 1);
    if (c % leaf != 0 || lc != l + c + c * ldl)
      throw std::logic_error("recursive::trsm_rlt_inverted: a leaf at column " + std::to_string(c));
    // A_c = A_c L_cc^{-T} = A_c (W_c)^T
    leaf_trmm(mm, nl, w + c * leaf, leaf, ac, ldac);
  };
  trsm_rlt(m, n, l, ldl, a, lda, leaf, leaf_solve, gemm_nt);
}

// The lower Cholesky factor of the n×n A in place (POTRF of POTF2'):
// L11 = chol(A11), L21 = A21 L11^{-T}, A22 -= L21 L21^T, L22 = chol(A22).
//   leaf_potrf(n, a, lda, slot): the library's POTRF of a leaf, its status in
//     slot `slot` (a device cannot stop the recursion at a failed leaf: the
//     caller reads the slots afterwards and takes the first failure; the
//     leaves after it work on what the failure left, which nobody reads);
//   syrk_ln(n, k, a, lda, c, ldc): lower C (n×n) -= A (n×k) A^T;
//   leaf_trsm, gemm_nt: as for trsm_rlt.
// `first_slot` is the slot of A's first column (0 for a whole tile).
template <class T, class LeafPotrf, class SyrkLn, class LeafTrsm, class GemmNt>
void potrf_l(index_t n, T* a, index_t lda, index_t leaf, LeafPotrf& leaf_potrf, SyrkLn& syrk_ln, LeafTrsm& leaf_trsm,
             GemmNt& gemm_nt, index_t first_slot = 0) {
  if (n == 0) return;
  if (n <= leaf) {
    leaf_potrf(n, a, lda, first_slot);
    return;
  }
  const index_t n1 = split(n, leaf), n2 = n - n1;
  T* a21 = a + n1;
  T* a22 = a + n1 + n1 * lda;
  // L11 = chol(A11)
  potrf_l(n1, a, lda, leaf, leaf_potrf, syrk_ln, leaf_trsm, gemm_nt, first_slot);
  // L21 = A21 L11^{-T}
  trsm_rlt(n2, n1, a, lda, a21, lda, leaf, leaf_trsm, gemm_nt);
  // A22 -= L21 L21^T
  syrk_ln(n2, n1, a21, lda, a22, lda);
  // L22 = chol(A22)
  potrf_l(n2, a22, lda, leaf, leaf_potrf, syrk_ln, leaf_trsm, gemm_nt, first_slot + n1 / leaf);
}

}  // namespace tessera::kernels::recursive
