#pragma once
// Merging the T factors of consecutive blocks of Householder reflectors, so
// that a GPU applies a group of g reflectors with GEMMs of inner dimension g
// instead of one block of ib at a time (Schreiber and Van Loan, "A
// storage-efficient WY representation for products of Householder
// transformations", SIAM J. Sci. Stat. Comput. 10(1), 1989; the same
// recurrence as LAPACK's xLARFT, one block column at a time).
//
// The tile kernels store T as LAPACK's xGEQRT/xTPQRT do: ib×k, block j (its
// reflectors c_j .. c_j + b_j - 1, c_j = j·ib) keeping its b_j×b_j upper
// triangular T_j in columns c_j .. c_j + b_j - 1. With V = [V_1 ... V_q] and
// H_1 ... H_g = I - V T V^T, the merged T (g×g, upper triangular) is
//   T[c_j:c_j+b_j, c_j:c_j+b_j] = T_j,
//   T[0:c_j, c_j:c_j+b_j]      = -T[0:c_j, 0:c_j] · G[0:c_j, c_j:c_j+b_j] · T_j,
// where G = V^T V (only its upper triangle is read). For the reflectors of a
// GEQRT tile V is unit lower trapezoidal; for a TSQRT tile each reflector is
// [e_j; v_j] with its unit on a row of the triangle above, distinct for each
// reflector, so G = V^T V over the square tile's rows alone.
//
// On the H200 (2026-11-25) SSRFB ran at 0.24 of DGEMM's rate with ib = 32 and
// LARFB at 0.45: their GEMMs were 32 thin. Merging costs m·g² flops for G
// plus the TRMMs above, against the 4·m·n·g of applying the group to n
// columns: g/(4n) of it, 1.6% for g = 256 on 4096 tiles; and 1 + g/ib + 2(g/ib - 1)
// library calls, which queue behind the previous group's GEMMs.
//
// No device code here: the operations come in as callables (the CUDA backend
// gives cuBLAS's, the tests the CPU's BLAS, checked against LAPACK's xLARFT
// and xTPQRT on the whole group).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera::kernels::compact_wy {

using index_t = std::int64_t;

// The width of the groups a kernel applies at once: `want` rounded down to a
// multiple of ib (at least ib), at most k. want <= 0: ib (no merging).
inline index_t group_width(index_t want, index_t ib, index_t k) {
  if (ib < 1) throw std::logic_error("compact_wy::group_width: ib " + std::to_string(ib));
  const index_t g = want <= ib ? ib : want / ib * ib;
  return std::min(g, k);
}

// out (g×g, upper triangle): on entry the upper triangle of G = V^T V of g
// reflectors (g a multiple of ib or the last group's remainder), on return
// their merged T, from their blocks' T (t, ldt: block j at t + j·ib·ldt).
// G's block column j is read just before T's overwrites it, so G needs no
// buffer of its own: one SYRK into `out` and the calls below.
//   copy(rows, cols, src, lds, dst, ldd): dst = src;
//   trmm_right(rows, cols, tri, ldtri, x, ldx): X (rows×cols) = X · tri (cols×cols upper);
//   trmm_left_neg(rows, cols, tri, ldtri, x, ldx): X (rows×cols) = -tri (rows×rows upper) · X.
template <class T, class Copy, class TrmmRight, class TrmmLeftNeg>
void merge_t(index_t g, index_t ib, const T* t, index_t ldt, T* out, index_t ldo, Copy& copy, TrmmRight& trmm_right,
             TrmmLeftNeg& trmm_left_neg) {
  if (ib < 1) throw std::logic_error("compact_wy::merge_t: ib " + std::to_string(ib));
  for (index_t c = 0; c < g; c += ib) {
    const index_t b = std::min(ib, g - c);
    T* diag = out + c + c * ldo;
    // T[c:c+b, c:c+b] = T_j
    copy(b, b, t + c * ldt, ldt, diag, ldo);
    if (c == 0) continue;
    // X = T[0:c, c:c+b], which still holds G[0:c, c:c+b]
    T* x = out + c * ldo;
    // X = X T_j
    trmm_right(c, b, diag, ldo, x, ldo);
    // X = -T[0:c, 0:c] X
    trmm_left_neg(c, b, out, ldo, x, ldo);
  }
}

}  // namespace tessera::kernels::compact_wy
