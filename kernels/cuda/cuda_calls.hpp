#pragma once
// cuBLAS and cuSOLVER calls by precision (overloads for float and double),
// each checked: a failure throws platform::CudaError naming the routine
// (cublasDgemm, cusolverDnSgeqrf, ...) and the caller's file and line. Shared
// by the tile kernels (cuda_tile_kernels.cu) and the cuSOLVER peer
// (cusolver_peer.cpp). Needs the CUDA headers: include only from files built
// with CUDA.
#include "kernels/cuda/cuda_check.hpp"

namespace tessera::cuda::calls {

// Where a library call was made: the caller's file and line.
struct Site {
  const char* file;
  int line;
};
#define TESSERA_HERE \
  ::tessera::cuda::calls::Site { __FILE__, __LINE__ }
inline void check_blas(const char* routine, Site at, cublasStatus_t st) {
  cuda::detail::check_cublas(st, routine, at.file, at.line);
}
inline void check_solver(const char* routine, Site at, cusolverStatus_t st) {
  cuda::detail::check_cusolver(st, routine, at.file, at.line);
}

// The library calls by precision, each checked with the routine's own name
// and the caller's file and line (`at`: TESSERA_HERE at the call site) in the
// message. Scalars are host values (the handles keep the default host pointer
// mode; cuBLAS reads them before the call returns).
#define TESSERA_CUDA_OVERLOADS(T, P)                                                                                   \
  inline void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, T alpha,         \
                   const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc, Site at) {                         \
    check_blas("cublas" #P "gemm", at, cublas##P##gemm(h, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));    \
  }                                                                                                                    \
  /* C_i = alpha op(A_i) op(B_i) + beta C_i, i < count, A_i = a + i stride_a (likewise B, C) */                        \
  inline void gemm_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, T alpha, \
                           const T* a, int lda, long long stride_a, const T* b, int ldb, long long stride_b, T beta,   \
                           T* c, int ldc, long long stride_c, int count, Site at) {                                    \
    check_blas("cublas" #P "gemmStridedBatched", at,                                                                   \
               cublas##P##gemmStridedBatched(h, ta, tb, m, n, k, &alpha, a, lda, stride_a, b, ldb, stride_b, &beta, c, \
                                             ldc, stride_c, count));                                                   \
  }                                                                                                                    \
  /* y = A x (A m x n) */                                                                                              \
  inline void gemv_n(cublasHandle_t h, int m, int n, const T* a, int lda, const T* x, T* y, Site at) {                 \
    const T one = 1, zero = 0;                                                                                         \
    check_blas("cublas" #P "gemv", at, cublas##P##gemv(h, CUBLAS_OP_N, m, n, &one, a, lda, x, 1, &zero, y, 1));        \
  }                                                                                                                    \
  inline void syrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t tr, int n, int k, T alpha, const T* a,   \
                   int lda, T beta, T* c, int ldc, Site at) {                                                          \
    check_blas("cublas" #P "syrk", at, cublas##P##syrk(h, uplo, tr, n, k, &alpha, a, lda, &beta, c, ldc));             \
  }                                                                                                                    \
  /* B = B op(A)^{-1} (right) or op(A)^{-1} B (left), A triangular */                                                  \
  inline void trsm_general(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t tr,       \
                           cublasDiagType_t diag, int m, int n, const T* a, int lda, T* b, int ldb, Site at) {         \
    const T one = 1;                                                                                                   \
    check_blas("cublas" #P "trsm", at, cublas##P##trsm(h, side, uplo, tr, diag, m, n, &one, a, lda, b, ldb));          \
  }                                                                                                                    \
  /* B = alpha B op(A) (right) or alpha op(A) B (left), A triangular with a non-unit diagonal, in place */             \
  inline void trmm_general_inplace(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                     \
                                   cublasOperation_t tr, int m, int n, T alpha, const T* a, int lda, T* b, int ldb,    \
                                   Site at) {                                                                          \
    check_blas("cublas" #P "trmm", at,                                                                                 \
               cublas##P##trmm(h, side, uplo, tr, CUBLAS_DIAG_NON_UNIT, m, n, &alpha, a, lda, b, ldb, b, ldb));        \
  }                                                                                                                    \
  inline void trsm_rlt(cublasHandle_t h, int m, int n, const T* l, int ldl, T* a, int lda, Site at) {                  \
    trsm_general(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n, l, ldl, a,     \
                 lda, at);                                                                                             \
  }                                                                                                                    \
  inline void trmm_rlt_inplace(cublasHandle_t h, int m, int n, const T* w, int ldw, T* a, int lda, Site at) {          \
    trmm_general_inplace(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, m, n, T(1), w, ldw, a, lda, at);   \
  }                                                                                                                    \
  inline void trsm_lln_batched(cublasHandle_t h, int n, const T* const* l, int ldl, T* const* b, int ldb, int count,   \
                               Site at) {                                                                              \
    const T one = 1;                                                                                                   \
    check_blas("cublas" #P "trsmBatched", at,                                                                          \
               cublas##P##trsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,  \
                                      n, n, &one, l, ldl, b, ldb, count));                                             \
  }                                                                                                                    \
  inline void trsm_right_upper(cublasHandle_t h, int m, int n, const T* u, int ldu, T* a, int lda, Site at) {          \
    trsm_general(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, n, u, ldu, a,     \
                 lda, at);                                                                                             \
  }                                                                                                                    \
  inline void trmm_llt_inplace(cublasHandle_t h, int m, int n, const T* l, int ldl, T* b, int ldb, Site at) {          \
    trmm_general_inplace(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, m, n, T(1), l, ldl, b, ldb, at);    \
  }                                                                                                                    \
  inline void trsm_left_lower(cublasHandle_t h, cublasDiagType_t diag, int m, int n, const T* l, int ldl, T* a,        \
                              int lda, Site at) {                                                                      \
    trsm_general(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, diag, m, n, l, ldl, a, lda, at);            \
  }                                                                                                                    \
  inline void trmm_lu_inplace(cublasHandle_t h, cublasOperation_t tr, int m, int n, const T* t, int ldt, T* b,         \
                              int ldb, Site at) {                                                                      \
    trmm_general_inplace(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, tr, m, n, T(1), t, ldt, b, ldb, at);             \
  }                                                                                                                    \
  inline void trmm_upper_inplace(cublasHandle_t h, cublasSideMode_t side, int m, int n, T alpha, const T* t, int ldt,  \
                                 T* b, int ldb, Site at) {                                                             \
    trmm_general_inplace(h, side, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, m, n, alpha, t, ldt, b, ldb, at);               \
  }                                                                                                                    \
  inline void geam_minus_inplace(cublasHandle_t h, int m, int n, T* a, int lda, const T* b, int ldb, Site at) {        \
    const T one = 1, minus_one = -1;                                                                                   \
    check_blas("cublas" #P "geam", at,                                                                                 \
               cublas##P##geam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &one, a, lda, &minus_one, b, ldb, a, lda));          \
  }                                                                                                                    \
  inline int potrf_lwork(cusolverDnHandle_t h, int n, T* a, int lda, Site at) {                                        \
    int lwork = 0;                                                                                                     \
    check_solver("cusolverDn" #P "potrf_bufferSize", at,                                                               \
                 cusolverDn##P##potrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, &lwork));                       \
    return lwork;                                                                                                      \
  }                                                                                                                    \
  inline void potrf_l(cusolverDnHandle_t h, int n, T* a, int lda, T* work, int lwork, int* info, Site at) {            \
    check_solver("cusolverDn" #P "potrf", at,                                                                          \
                 cusolverDn##P##potrf(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, work, lwork, info));                       \
  }                                                                                                                    \
  inline int geqrf_lwork(cusolverDnHandle_t h, int m, int n, T* a, int lda, Site at) {                                 \
    int lwork = 0;                                                                                                     \
    check_solver("cusolverDn" #P "geqrf_bufferSize", at, cusolverDn##P##geqrf_bufferSize(h, m, n, a, lda, &lwork));    \
    return lwork;                                                                                                      \
  }                                                                                                                    \
  inline void geqrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info,          \
                    Site at) {                                                                                         \
    check_solver("cusolverDn" #P "geqrf", at, cusolverDn##P##geqrf(h, m, n, a, lda, tau, work, lwork, info));          \
  }                                                                                                                    \
  inline int getrf_lwork(cusolverDnHandle_t h, int m, int n, T* a, int lda, Site at) {                                 \
    int lwork = 0;                                                                                                     \
    check_solver("cusolverDn" #P "getrf_bufferSize", at, cusolverDn##P##getrf_bufferSize(h, m, n, a, lda, &lwork));    \
    return lwork;                                                                                                      \
  }                                                                                                                    \
  inline void getrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* work, int* ipiv, int* info, Site at) {       \
    check_solver("cusolverDn" #P "getrf", at, cusolverDn##P##getrf(h, m, n, a, lda, work, ipiv, info));                \
  }
TESSERA_CUDA_OVERLOADS(double, D)
TESSERA_CUDA_OVERLOADS(float, S)
#undef TESSERA_CUDA_OVERLOADS

}  // namespace tessera::cuda::calls
