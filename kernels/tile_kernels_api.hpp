#pragma once
// The tile kernels of 001 Alg. 1 (Cholesky) and Alg. 2 (QR) as one device
// runs them: the algorithms' executors call these, so the same executor runs
// a task on a CPU core (CpuTileKernels, OpenBLAS + LAPACKE), on an emulated
// or simulated GPU (also CpuTileKernels, on that device's memory) or on a
// CUDA GPU (CudaTileKernels: cuBLAS, cuSOLVER, own CUDA). Pointers are in the
// device's memory; matrices are column-major. Semantics are those of the
// free functions in kernels/cpu/tile_kernels.hpp. An object belongs to one
// thread (it owns workspace).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace tessera::kernels {

using index_t = std::int64_t;

template <class T>
class TileKernels {
 public:
  virtual ~TileKernels() = default;
  // POTF2': returns 0, or the 1-based column where a pivot was not positive.
  virtual int potf2p(index_t m, index_t n, T* a, index_t lda) = 0;
  virtual void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) = 0;
  virtual void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                    index_t ldc) = 0;
  virtual void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) = 0;
  virtual void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt) = 0;
  virtual void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t,
                     index_t ldt, T* c, index_t ldc) = 0;
  virtual void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) = 0;
  virtual void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t,
                     index_t ldt, T* a1, index_t lda1, T* a2, index_t lda2) = 0;
  // B (rows×cols) = A, both in this device's memory.
  virtual void copy(index_t rows, index_t cols, const T* a, index_t lda, T* b, index_t ldb) = 0;

  // QR's reduction tree across domains (algorithms/qr.cpp, --qr-tree
  // binary): TTQRT and TTMQR, the semantics of kernels/cpu/tile_kernels.hpp.
  virtual void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) {
    (void)m, (void)n, (void)ib, (void)r, (void)ldr, (void)a, (void)lda, (void)t, (void)ldt;
    missing("ttqrt");
  }
  virtual void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t,
                     index_t ldt, T* a1, index_t lda1, T* a2, index_t lda2) {
    (void)trans, (void)m, (void)n, (void)k, (void)ib, (void)v, (void)ldv, (void)t, (void)ldt, (void)a1, (void)lda1,
        (void)a2, (void)lda2;
    missing("ttmqr");
  }

  // LU (algorithms/lu.cpp, paper 002). A device that lacks one of these
  // throws. The LU task graph runs the tournament's candidate selection
  // (lu_select) on CPU cores only; the partial-pivoting panel (lu_getrf),
  // the diagonal block (lu_getrf_nopiv) and the rest run on a GPU too when
  // no block column is the cores' (--d 0).
  //
  // GEPP on a copy of the m×n block A (A itself is not modified): writes the
  // min(m,n) rows it pivots on, in pivot order, 0-based in A, to rows[].
  // Returns 0, or the 1-based column of its first exactly zero pivot.
  virtual index_t lu_select(index_t m, index_t n, const T* a, index_t lda, index_t* rows) {
    (void)m, (void)n, (void)a, (void)lda, (void)rows;
    missing("lu_select");
  }
  // GEPP in place: A (m×n) = P L U, ipiv[0..min(m,n)) LAPACK's swaps, 0-based
  // (row i traded with row ipiv[i], in order). Returns 0, or the 1-based
  // column of the first exactly zero pivot.
  virtual index_t lu_getrf(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) {
    (void)m, (void)n, (void)a, (void)lda, (void)ipiv;
    missing("lu_getrf");
  }
  // A (m×n) = L U without pivoting; 0 or the 1-based column of the first zero pivot.
  virtual index_t lu_getrf_nopiv(index_t m, index_t n, T* a, index_t lda) {
    (void)m, (void)n, (void)a, (void)lda;
    missing("lu_getrf_nopiv");
  }
  // A (m×n) := A U^{-1}, U the n×n upper triangle of u.
  virtual void lu_trsm_l(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) {
    (void)m, (void)n, (void)u, (void)ldu, (void)a, (void)lda;
    missing("lu_trsm_l");
  }
  // A (m×n) := L^{-1} A, L the m×m unit lower triangle of l.
  virtual void lu_trsm_u(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
    (void)m, (void)n, (void)l, (void)ldl, (void)a, (void)lda;
    missing("lu_trsm_u");
  }
  // C (m×n) -= A (m×k) B (k×n).
  virtual void lu_gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                       index_t ldc) {
    (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
    missing("lu_gemm");
  }
  // Row x of A (rows×cols) becomes its old row perm[x], for x < rows;
  // perm (a permutation of [0, rows)) is in this device's memory.
  virtual void lu_permute(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) {
    (void)rows, (void)cols, (void)a, (void)lda, (void)perm;
    missing("lu_permute");
  }
  // lu_permute with perm in host memory (the caller's; it may reuse it on return).
  virtual void lu_permute_from_host(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) {
    (void)rows, (void)cols, (void)a, (void)lda, (void)perm;
    missing("lu_permute_from_host");
  }
  // dst (bytes, this device's memory) = src (host memory; the caller may reuse it on return).
  virtual void from_host(void* dst, const void* src, std::size_t bytes) {
    (void)dst, (void)src, (void)bytes;
    missing("from_host");
  }
  // For r < w with lo <= xch[r] < hi: row r of TOP and row xch[r] - lo of A
  // trade places (cols columns each); xch is in this device's memory.
  virtual void lu_exchange(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch,
                           index_t lo, index_t hi) {
    (void)w, (void)cols, (void)top, (void)ldt, (void)a, (void)lda, (void)xch, (void)lo, (void)hi;
    missing("lu_exchange");
  }

 private:
  [[noreturn]] static void missing(const char* kernel) {
    throw std::logic_error(std::string("tile kernel ") + kernel + " is not implemented on this device");
  }
};

// The kernels one worker runs, in both precisions.
struct KernelPair {
  std::unique_ptr<TileKernels<double>> d;
  std::unique_ptr<TileKernels<float>> s;
};

}  // namespace tessera::kernels
