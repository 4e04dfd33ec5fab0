#pragma once
// Rectangular-tile kernels of 001 Alg. 1 (Cholesky) and Alg. 2 (QR) on one
// CPU core, on OpenBLAS + LAPACKE. All matrices are column-major. Each kernel
// is single-threaded: parallelism comes from the runtime (set_blas_threads(1)).
#include <cstdint>
#include <string>

namespace tessera::kernels {

using index_t = std::int64_t;

// Number of threads OpenBLAS itself may use for one call (process-wide).
void set_blas_threads(int n);
int blas_threads();

// The kernel set OpenBLAS chose for this CPU at start-up ("Haswell",
// "SkylakeX", ...; the environment variable OPENBLAS_CORETYPE overrides it).
// Runs and calibrations record it: the same machine runs GEMM at very
// different speeds with different sets.
std::string blas_core();
// Empty, or one sentence when OpenBLAS runs kernels without AVX-512 on a CPU
// that has it (OpenBLAS 0.3.21 does not recognize AMD Zen 5, takes it for
// Haswell and leaves a third to a half of its DGEMM speed unused).
std::string blas_core_advice();

// POTF2': A is m×n (m >= n). L1 = chol(A[0:n,:]) (lower), L2 = A[n:m,:] L1^{-T}.
// Returns 0, or the 1-based column of A[0:n,:] where a pivot was not positive.
template <class T>
int potf2p(index_t m, index_t n, T* a, index_t lda);

// TRSM: A (m×n) = A L^{-T}, L n×n lower triangular.
template <class T>
void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda);

// GSMM: C (m×n) -= A (m×k) B^T, B n×k.
template <class T>
void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc);

// GSMM on a tile that holds a diagonal block: C (m×n, m >= n) -= A A[0:n,:]^T
// where only the lower triangle of C[0:n,:] is referenced (SYRK) and the
// rows below are a GEMM.
template <class T>
void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc);

// GEQRT: QR of A (m×n, m >= n) with inner blocking ib; V below the diagonal,
// R on and above it, the ib×n block reflector factors in T. work: ib*n.
template <class T>
void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt, T* work);

// LARFB: C (m×n) = Q^T C (trans) or Q C, Q from a GEQRT of an m×k panel. work: ib*n.
template <class T>
void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* c, index_t ldc, T* work);

// TSQRT: QR of [R; A] with R n×n upper triangular and A m×n; R is
// overwritten, A by the reflectors V, T as in GEQRT. work: ib*n.
template <class T>
void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt, T* work);

// SSRFB: [A1; A2] = Q^T [A1; A2] (trans) or Q [A1; A2], Q from a TSQRT with
// V m×k; A1 is k×n, A2 m×n. work: ib*n.
template <class T>
void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* a1, index_t lda1, T* a2, index_t lda2, T* work);

// TTQRT: QR of [R; A] with R n×n and A m×n (m <= n) both upper triangular
// (trapezoidal): the two R factors a reduction tree's pair of domains left.
// R is overwritten, A's upper triangle by the reflectors V (its strictly
// lower part is neither read nor written), T as in GEQRT. work: ib*n.
template <class T>
void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt, T* work);

// TTMQR: SSRFB with the upper-trapezoidal V (m×k) of a TTQRT: its strictly
// lower part is not read. work: ib*n.
template <class T>
void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* a1, index_t lda1, T* a2, index_t lda2, T* work);

}  // namespace tessera::kernels
