#pragma once
// A QR panel from Cholesky QR instead of one Householder reflector per column,
// for the GPU's GEQRT and TSQRT (`--gpu-qr-panel cholqr`).
//
// Why: on the lent H100 (2026-11-27) a Householder panel by cuSOLVER's GEQRF
// cost about 8 us per column, latency and not flops: GEQRT and TSQRT on 4096
// tiles ran at 0.05-0.06 of DGEMM's rate, and a flat-tree tile QR factors each
// column (n/B + 1)/2 times, so panels took half of QR's GPU time. Cholesky QR
// makes a b-column panel in a fixed number of library calls, whatever b:
//
//   1. Shifted Cholesky QR, then Cholesky QR twice (sCholQR3: Fukaya,
//      Kannan, Nakatsukasa, Zhang, Yamamoto, "Shifted Cholesky QR for
//      computing the QR factorization of ill-conditioned matrices", SIAM J.
//      Sci. Comput. 42(1), 2020). Pass k: G = X^T X (+ s I in pass 1, with
//      s = 11 (n b + b (b + 1)) u tr(G), the paper's shift with ||X||_2^2
//      bounded by ||X||_F^2), G = L L^T, X = X L^{-T}, R = L^T R. Then X is
//      Q (n x b, orthonormal columns) and the panel = Q R.
//   2. The orthogonality of Q checked: max |Q^T Q - I| <= tol and no pass's
//      POTRF failed, else a flag is raised (a panel too ill-conditioned for
//      sCholQR3, κ beyond about 1e12 in double at these sizes, or one with
//      NaNs); the kernel then factors the tile again with Householder
//      panels. The flag stays on the device: the caller reads it once per
//      tile.
//   3. Householder vectors from Q (Ballard, Demmel, Grigori, Jacquelin,
//      Knight, Nguyen, "Reconstructing Householder vectors from tall-skinny
//      QR", J. Parallel Distrib. Comput. 85, 2015): with S = diag(±1), the
//      LU factorization without pivoting [Q1 - S; Q2] = Y U (Y unit lower
//      trapezoidal), s_j = -sign of the j-th pivot as the elimination reaches
//      it (so |U_jj| >= 1), gives I - Y T Y^T with T = -U S Y1^{-T}, the
//      compact WY form of b Householder reflectors with
//      (I - Y T Y^T) [S; 0] = Q, hence panel = (I - Y T Y^T) [S R; 0]: the
//      panel's R is S R, its reflectors Y, its T as LAPACK's xGEQRT keeps it.
//
// For TSQRT the panel is [triu(R); A] packed with zeros below R's diagonal:
// Q1 is then upper triangular (each pass's solve keeps the exact zeros),
// every multiplier of its LU would be an exact zero, so Y1 = I, U = Q1 - S,
// and Y2 is xTPQRT's V, exactly the layout TSQRT stores.
//
// The limits are those of double: in single precision the shift is a large
// part of tr(G) (11 (n b + b (b + 1)) u is 0.37 for b = 128 on 4096 + 128
// rows), so that pass 1 does little and the panels factor up to about the
// condition number Cholesky QR 3 reaches in float; past it the check fails
// and the tile goes to GEQRF.
//
// No device code here: the operations come in as one object (the CUDA
// backend's cuBLAS, cuSOLVER and small kernels; the tests' CPU BLAS and
// LAPACK, checked against LAPACK's xGEQRT and xTPQRT), like compact_wy.hpp.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/numerics.hpp"

namespace tessera::kernels::cholqr {

using index_t = std::int64_t;

// The shift of pass 1 as a multiple of tr(X^T X): 11 (n b + b (b + 1)) u
// (Fukaya et al. 2020, §3, with ||X||_2^2 <= tr(X^T X)).
template <class T>
double shift_factor(index_t n, index_t b) {
  const double nn = static_cast<double>(n), bb = static_cast<double>(b);
  return 11.0 * (nn * bb + bb * (bb + 1)) * unit_roundoff<T>();
}

// The largest |Q^T Q - I| a panel may keep: well above what sCholQR3 leaves
// (a small multiple of u sqrt(n b)), far below a breakdown's (order 1).
template <class T>
double orthogonality_tolerance(index_t n, index_t b) {
  return 256.0 * std::sqrt(static_cast<double>(n) * static_cast<double>(b)) * unit_roundoff<T>();
}

// Workspace the panel needs besides X: g (b x b, ld b), r (b x b, ld b), s (b).
//
// Ops (all column-major, in place where it says so):
//   gram(n, b, x, ldx, g)           g (lower) = x^T x
//   shift(b, g, c)                  g += c tr(g) I
//   potrf(b, g, pass)               g = L with g = L L^T (lower), its status kept per pass (0, 1, 2)
//   solve_lt(n, b, g, x, ldx)       x = x L^{-T}
//   identity(b, r)                  r = I
//   mul_lt(b, g, r)                 r = L^T r
//   check(b, g, tol)                raise the flag unless max |g - I| <= tol (g's lower triangle;
//                                   a NaN raises it) and every pass's POTRF succeeded
//   lu_sign(b, x, ldx, s, upper)    x's top b x b = Y1 U in place, s_j as above; upper: the top
//                                   is upper triangular (a TSQRT stack), so Y1 = I and only the
//                                   diagonal changes (no elimination: b steps of work, not b^3/3)
//   solve_u(m, b, u, ldu, x, ldx)   x = x U^{-1} (m rows)
//   t_from(b, x, ldx, s, t, ldt)    t = -(U S) Y1^{-T}, U and Y1 from x's top b x b
//   r_out(b, r, s, x, ldx)          x's upper triangle = S r
//
// P is the precision the operations compute in (its unit roundoff sets the
// shift and the tolerance); S the type the operands are stored as (P itself
// on the GPU; the tests store float panels as double). top_upper: x's top
// b x b is upper triangular with exact zeros below (TSQRT's [triu(R); A]).
template <class P, class S, class Ops>
void factor(index_t n, index_t b, S* x, index_t ldx, S* t, index_t ldt, S* g, S* r, S* s, Ops& ops,
            bool top_upper = false) {
  if (b < 1 || n < b || ldx < n || ldt < b)
    throw std::logic_error("cholqr::factor: n = " + std::to_string(n) + ", b = " + std::to_string(b) +
                           ", ldx = " + std::to_string(ldx) + ", ldt = " + std::to_string(ldt));
  ops.identity(b, r);
  for (int pass = 0; pass < 3; ++pass) {
    // G = X^T X (+ s I): X = X L^{-T}, R = L^T R
    ops.gram(n, b, x, ldx, g);
    if (pass == 0) ops.shift(b, g, shift_factor<P>(n, b));
    ops.potrf(b, g, pass);
    ops.solve_lt(n, b, g, x, ldx);
    ops.mul_lt(b, g, r);
  }
  ops.gram(n, b, x, ldx, g);
  ops.check(b, g, orthogonality_tolerance<P>(n, b));
  // [Q1 - S; Q2] = Y U
  ops.lu_sign(b, x, ldx, s, top_upper);
  if (n > b) ops.solve_u(n - b, b, x, ldx, x + b, ldx);
  // T = -U S Y1^{-T}; the panel's R = S R
  ops.t_from(b, x, ldx, s, t, ldt);
  ops.r_out(b, r, s, x, ldx);
}

// The operations of `inner` with mark(name) called before each (its name as
// the Ops list above gives it), to time them where they run (a CUDA stream:
// an event per mark, the time to the next mark the operation's). After a
// panel the caller marks nullptr, so that what runs between two panels
// counts for none of them.
template <class Inner, class Mark>
struct Marked {
  Inner& in;
  Mark& mark;
#define TESSERA_CHOLQR_MARKED(op) \
  template <class... A>           \
  void op(A&&... a) {             \
    mark(#op);                    \
    in.op(std::forward<A>(a)...); \
  }
  TESSERA_CHOLQR_MARKED(gram)
  TESSERA_CHOLQR_MARKED(shift)
  TESSERA_CHOLQR_MARKED(potrf)
  TESSERA_CHOLQR_MARKED(solve_lt)
  TESSERA_CHOLQR_MARKED(identity)
  TESSERA_CHOLQR_MARKED(mul_lt)
  TESSERA_CHOLQR_MARKED(check)
  TESSERA_CHOLQR_MARKED(lu_sign)
  TESSERA_CHOLQR_MARKED(solve_u)
  TESSERA_CHOLQR_MARKED(t_from)
  TESSERA_CHOLQR_MARKED(r_out)
#undef TESSERA_CHOLQR_MARKED
};

}  // namespace tessera::kernels::cholqr
