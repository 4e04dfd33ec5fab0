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
};

// The kernels one worker runs, in both precisions.
struct KernelPair {
  std::unique_ptr<TileKernels<double>> d;
  std::unique_ptr<TileKernels<float>> s;
};

}  // namespace tessera::kernels
