#include "kernels/cpu/tile_kernels.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/numerics.hpp"
#include "kernels/recursive_blocking.hpp"

namespace tessera::kernels {
namespace {

using lapack_idx = lapack_int;

void check_info(lapack_int info, const char* routine) {
  if (info < 0) throw std::logic_error(std::string(routine) + ": illegal value in argument " + std::to_string(-info));
}

// Thin overload sets so the templates below read like the math.
inline void trsm_rlt_blas(index_t m, index_t n, const double* l, index_t ldl, double* a, index_t lda) {
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, l, ldl, a, lda);
}
inline void trsm_rlt_blas(index_t m, index_t n, const float* l, index_t ldl, float* a, index_t lda) {
  cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0f, l, ldl, a, lda);
}
inline void gemm_nt_minus(index_t m, index_t n, index_t k, const double* a, index_t lda, const double* b, index_t ldb,
                          double* c, index_t ldc) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
}
inline void gemm_nt_minus(index_t m, index_t n, index_t k, const float* a, index_t lda, const float* b, index_t ldb,
                          float* c, index_t ldc) {
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}
inline lapack_int trtri_ln(index_t n, double* a, index_t lda) {
  return LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'L', 'N', n, a, lda);
}
inline lapack_int trtri_ln(index_t n, float* a, index_t lda) {
  return LAPACKE_strtri_work(LAPACK_COL_MAJOR, 'L', 'N', n, a, lda);
}
inline void trmm_rlt(index_t m, index_t n, const double* w, index_t ldw, double* a, index_t lda) {
  cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, w, ldw, a, lda);
}
inline void trmm_rlt(index_t m, index_t n, const float* w, index_t ldw, float* a, index_t lda) {
  cblas_strmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0f, w, ldw, a, lda);
}
// A (m×n) = A L^{-T}, right-looking in column blocks of kTrsmBlock: a small
// TRSM on each block, then a GEMM that removes it from the columns to its
// right. The route for an L with a zero on its diagonal (no inverse: the
// substitution gives the infinities LAPACK's TRSM would).
template <class T>
constexpr index_t kTrsmBlock = sizeof(T) == 8 ? 32 : 64;
template <class T>
void trsm_rlt_substitution(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  for (index_t j = 0; j < n; j += kTrsmBlock<T>) {
    const index_t jb = std::min(kTrsmBlock<T>, n - j);
    trsm_rlt_blas(m, jb, l + j + j * ldl, ldl, a + j * lda, lda);
    if (j + jb < n)
      gemm_nt_minus(m, n - j - jb, jb, a + j * lda, lda, l + (j + jb) + j * ldl, ldl, a + (j + jb) * lda, lda);
  }
}
// A (m×n) = A L^{-T} without substitution: the recursion of
// kernels/recursive_blocking.hpp (trsm_rlt_inverted) down to L's diagonal
// blocks of order kTrsmLeaf, each block inverted first (TRTRI) and applied
// as a triangular multiply (TRMM), GEMMs for the rest. OpenBLAS 0.3.21 has
// no AVX-512 TRSM kernel, while its TRMM and GEMM have them: inside Cholesky
// d, N = 8192, B = 640, 2 threads, on the 2-core VM (2026-11-27, traces,
// mean per TRSM task), the SkylakeX kernels took 2.84 ms against 3.64 with
// the 32-wide substitution blocks before (-22%), leaves of 32 3.08 and the
// same recursion with substitution on leaves of 16 3.17; the Haswell kernels
// took 4.64 ms either way. Single precision with SkylakeX: 1.21-1.56 ms
// against 1.63-1.89 (64-wide blocks before).
// Multiplying by an inverse is not backward stable as substitution is: its
// error grows with the condition of the inverted blocks (Du Croz and Higham,
// IMA J. Numer. Anal. 12(1), 1992), so the blocks are kept small (16, the
// fastest measured). On Cholesky factors, what it solves against, its
// componentwise backward error stays that of substitution (tests/
// test_numerics.cpp TrsmKernel.BackwardStableOnFactorsOfGradedAndIll-
// ConditionedMatrices: the spd, graded and 1e12 matrices' factors), and the
// Cholesky runs on those matrices pass their residual checks. Its error
// bound grows with the blocks' condition, where substitution's does not; on
// Kahan-like 16 x 16 blocks of condition 1e2 to 3e5 (the same test) it
// stayed at 5-15 eps, substitution at 3-9 (2026-11-27).
template <class T>
constexpr index_t kTrsmLeaf = 16;
template <class T>
void trsm_rlt(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  if (m == 0 || n == 0) return;
  for (index_t j = 0; j < n; ++j)
    if (l[j + j * ldl] == T(0)) return trsm_rlt_substitution(m, n, l, ldl, a, lda);
  constexpr index_t leaf = kTrsmLeaf<T>;
  // W (leaf×n) = [inv(L_00) inv(L_11) ...], each block's strictly upper part zero.
  std::unique_ptr<T[]> w(new T[static_cast<std::size_t>(leaf * n)]);
  auto invert_leaves = [](index_t nn, const T* ll, index_t ldll, index_t lf, T* ww) {
    for (index_t c = 0; c < nn; c += lf) {
      const index_t nb = std::min(lf, nn - c);
      T* wc = ww + c * lf;
      for (index_t j = 0; j < nb; ++j)
        for (index_t i = 0; i < lf; ++i) wc[i + j * lf] = (i >= j && i < nb) ? ll[(c + i) + (c + j) * ldll] : T(0);
      check_info(trtri_ln(nb, wc, lf), "trtri");
    }
  };
  auto leaf_trmm = [](index_t mm, index_t nl, const T* ww, index_t ldw, T* aa, index_t ldaa) {
    trmm_rlt(mm, nl, ww, ldw, aa, ldaa);
  };
  auto gemm_nt = [](index_t mm, index_t nn, index_t k, const T* x, index_t ldx, const T* y, index_t ldy, T* c,
                    index_t ldc) { gemm_nt_minus(mm, nn, k, x, ldx, y, ldy, c, ldc); };
  recursive::trsm_rlt_inverted(m, n, l, ldl, a, lda, leaf, w.get(), invert_leaves, leaf_trmm, gemm_nt);
}
inline void syrk_ln_minus(index_t n, index_t k, const double* a, index_t lda, double* c, index_t ldc) {
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0, a, lda, 1.0, c, ldc);
}
inline void syrk_ln_minus(index_t n, index_t k, const float* a, index_t lda, float* c, index_t ldc) {
  cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0f, a, lda, 1.0f, c, ldc);
}
inline lapack_int potrf_l(index_t n, double* a, index_t lda) {
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, lda);
}
inline lapack_int potrf_l(index_t n, float* a, index_t lda) {
  return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, a, lda);
}
inline lapack_int geqrt_(index_t m, index_t n, index_t ib, double* a, index_t lda, double* t, index_t ldt, double* w) {
  return LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, a, lda, t, ldt, w);
}
inline lapack_int geqrt_(index_t m, index_t n, index_t ib, float* a, index_t lda, float* t, index_t ldt, float* w) {
  return LAPACKE_sgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, a, lda, t, ldt, w);
}
inline lapack_int gemqrt_(char trans, index_t m, index_t n, index_t k, index_t ib, const double* v, index_t ldv,
                          const double* t, index_t ldt, double* c, index_t ldc, double* w) {
  return LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, w);
}
inline lapack_int gemqrt_(char trans, index_t m, index_t n, index_t k, index_t ib, const float* v, index_t ldv,
                          const float* t, index_t ldt, float* c, index_t ldc, float* w) {
  return LAPACKE_sgemqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, w);
}
// l: the rows of B's bottom that are upper trapezoidal (0: B is rectangular).
inline lapack_int tpqrt_(index_t m, index_t n, index_t l, index_t ib, double* a, index_t lda, double* b, index_t ldb,
                         double* t, index_t ldt, double* w) {
  return LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, m, n, l, ib, a, lda, b, ldb, t, ldt, w);
}
inline lapack_int tpqrt_(index_t m, index_t n, index_t l, index_t ib, float* a, index_t lda, float* b, index_t ldb,
                         float* t, index_t ldt, float* w) {
  return LAPACKE_stpqrt_work(LAPACK_COL_MAJOR, m, n, l, ib, a, lda, b, ldb, t, ldt, w);
}
inline lapack_int tpmqrt_(char trans, index_t m, index_t n, index_t k, index_t l, index_t ib, const double* v,
                          index_t ldv, const double* t, index_t ldt, double* a, index_t lda, double* b, index_t ldb,
                          double* w) {
  return LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, w);
}
inline lapack_int tpmqrt_(char trans, index_t m, index_t n, index_t k, index_t l, index_t ib, const float* v,
                          index_t ldv, const float* t, index_t ldt, float* a, index_t lda, float* b, index_t ldb,
                          float* w) {
  return LAPACKE_stpmqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, l, ib, v, ldv, t, ldt, a, lda, b, ldb, w);
}

}  // namespace

void set_blas_threads(int n) { openblas_set_num_threads(n); }
int blas_threads() { return openblas_get_num_threads(); }

std::string blas_core() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

std::string blas_core_advice() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") ||
      !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl"))
    return "";
  std::string core = blas_core();
  for (char& c : core) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // OpenBLAS's x86-64 kernel sets that use AVX-512.
  for (const char* k : {"skylakex", "cooperlake", "sapphirerapids"})
    if (core == k) return "";
  return "OpenBLAS runs its " + blas_core() +
         " kernels on a CPU with AVX-512; OPENBLAS_CORETYPE=SkylakeX in the environment selects its AVX-512 kernels";
#else
  return "";
#endif
}

template <class T>
int potf2p(index_t m, index_t n, T* a, index_t lda) {
  // L1 = chol(A1)
  const lapack_int info = potrf_l(n, a, lda);
  check_info(info, "potrf");
  if (info > 0) return info;
  // A NaN or infinite pivot the library let through (base/numerics.hpp).
  if (const long long bad = first_bad_cholesky_diagonal(n, a, lda)) return static_cast<int>(bad);
  // L2 = A2 L1^{-T}
  if (m > n) trsm_rlt(m - n, n, a, lda, a + n, lda);
  return 0;
}

template <class T>
void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  // A = A L^{-T}
  trsm_rlt(m, n, l, ldl, a, lda);
}

template <class T>
void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc) {
  // C -= A B^T
  gemm_nt_minus(m, n, k, a, lda, b, ldb, c, ldc);
}

template <class T>
void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) {
  // C1 -= A1 A1^T (lower triangle only)
  syrk_ln_minus(n, k, a, lda, c, ldc);
  // C2 -= A2 A1^T
  if (m > n) gemm_nt_minus(m - n, n, k, a + n, lda, a, lda, c + n, ldc);
}

template <class T>
void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt, T* work) {
  // (V, R, T) = QR(A)
  check_info(geqrt_(m, n, ib, a, lda, t, ldt, work), "geqrt");
}

template <class T>
void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* c, index_t ldc, T* work) {
  // C = (I - V T V^T)^T C
  check_info(gemqrt_(trans ? 'T' : 'N', m, n, k, ib, v, ldv, t, ldt, c, ldc, work), "gemqrt");
}

template <class T>
void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt, T* work) {
  // (V, T, R) = QR([R; A])
  check_info(tpqrt_(m, n, 0, ib, r, ldr, a, lda, t, ldt, work), "tpqrt");
}

template <class T>
void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt, T* work) {
  // (V, T, R) = QR([R; triu(A)]): LAPACK's pentagonal QR with all m rows of
  // A trapezoidal, so A's strictly lower part is neither read nor written.
  check_info(tpqrt_(m, n, m, ib, r, ldr, a, lda, t, ldt, work), "tpqrt");
}

template <class T>
void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* a1, index_t lda1, T* a2, index_t lda2, T* work) {
  // [A1; A2] = (I - V T V^T)^T [A1; A2]
  check_info(tpmqrt_(trans ? 'T' : 'N', m, n, k, 0, ib, v, ldv, t, ldt, a1, lda1, a2, lda2, work), "tpmqrt");
}

template <class T>
void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
           T* a1, index_t lda1, T* a2, index_t lda2, T* work) {
  // [A1; A2] = (I - V T V^T)^T [A1; A2], V m×k upper trapezoidal (its strictly lower part not read).
  check_info(tpmqrt_(trans ? 'T' : 'N', m, n, k, m, ib, v, ldv, t, ldt, a1, lda1, a2, lda2, work), "tpmqrt");
}

#define TESSERA_INSTANTIATE(T)                                                                                        \
  template int potf2p<T>(index_t, index_t, T*, index_t);                                                              \
  template void trsm<T>(index_t, index_t, const T*, index_t, T*, index_t);                                            \
  template void gsmm<T>(index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, index_t);                \
  template void gsmm_diag<T>(index_t, index_t, index_t, const T*, index_t, T*, index_t);                              \
  template void geqrt<T>(index_t, index_t, index_t, T*, index_t, T*, index_t, T*);                                    \
  template void larfb<T>(bool, index_t, index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, index_t, \
                         T*);                                                                                         \
  template void tsqrt<T>(index_t, index_t, index_t, T*, index_t, T*, index_t, T*, index_t, T*);                       \
  template void ssrfb<T>(bool, index_t, index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, index_t, \
                         T*, index_t, T*);                                                                            \
  template void ttqrt<T>(index_t, index_t, index_t, T*, index_t, T*, index_t, T*, index_t, T*);                       \
  template void ttmqr<T>(bool, index_t, index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, index_t, \
                         T*, index_t, T*);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::kernels
