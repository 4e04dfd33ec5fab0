#pragma once
// TileKernels on one CPU core (OpenBLAS + LAPACKE), with the workspace the
// QR kernels need. Also the kernels of emulated and simulated GPUs, whose
// memory is host memory.
#include <cstring>
#include <vector>

#include "kernels/cpu/lu_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/tile_kernels_api.hpp"

namespace tessera::kernels {

template <class T>
class CpuTileKernels final : public TileKernels<T> {
 public:
  int potf2p(index_t m, index_t n, T* a, index_t lda) override { return kernels::potf2p<T>(m, n, a, lda); }
  void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override {
    kernels::trsm<T>(m, n, l, ldl, a, lda);
  }
  void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
            index_t ldc) override {
    kernels::gsmm<T>(m, n, k, a, lda, b, ldb, c, ldc);
  }
  void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) override {
    kernels::gsmm_diag<T>(m, n, k, a, lda, c, ldc);
  }
  void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt) override {
    kernels::geqrt<T>(m, n, ib, a, lda, t, ldt, work(ib * n));
  }
  void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* c, index_t ldc) override {
    kernels::larfb<T>(trans, m, n, k, ib, v, ldv, t, ldt, c, ldc, work(ib * n));
  }
  void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override {
    kernels::tsqrt<T>(m, n, ib, r, ldr, a, lda, t, ldt, work(ib * n));
  }
  void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override {
    kernels::ssrfb<T>(trans, m, n, k, ib, v, ldv, t, ldt, a1, lda1, a2, lda2, work(ib * n));
  }
  void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override {
    kernels::ttqrt<T>(m, n, ib, r, ldr, a, lda, t, ldt, work(ib * n));
  }
  void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override {
    kernels::ttmqr<T>(trans, m, n, k, ib, v, ldv, t, ldt, a1, lda1, a2, lda2, work(ib * n));
  }
  void copy(index_t rows, index_t cols, const T* a, index_t lda, T* b, index_t ldb) override {
    for (index_t c = 0; c < cols; ++c)
      std::memcpy(b + c * ldb, a + c * lda, static_cast<std::size_t>(rows) * sizeof(T));
  }
  index_t lu_select(index_t m, index_t n, const T* a, index_t lda, index_t* rows) override {
    return kernels::select_pivot_rows<T>(m, n, a, lda, rows);
  }
  index_t lu_getrf(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) override {
    return kernels::getrf_panel<T>(m, n, a, lda, ipiv);
  }
  index_t lu_getrf_nopiv(index_t m, index_t n, T* a, index_t lda) override {
    return kernels::getrf_nopiv<T>(m, n, a, lda);
  }
  void lu_trsm_l(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) override {
    kernels::trsm_upper_right<T>(m, n, u, ldu, a, lda);
  }
  void lu_trsm_u(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override {
    kernels::trsm_unit_lower<T>(m, n, l, ldl, a, lda);
  }
  void lu_gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
               index_t ldc) override {
    kernels::gemm_update<T>(m, n, k, a, lda, b, ldb, c, ldc);
  }
  void lu_permute(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override {
    kernels::permute_rows<T>(rows, cols, a, lda, perm);
  }
  void lu_exchange(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch, index_t lo,
                   index_t hi) override {
    kernels::exchange_rows<T>(w, cols, top, ldt, a, lda, xch, lo, hi);
  }
  // Host memory is this device's memory.
  void lu_permute_from_host(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override {
    kernels::permute_rows<T>(rows, cols, a, lda, perm);
  }
  void from_host(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }

 private:
  T* work(index_t n) {
    if (work_.size() < static_cast<std::size_t>(n)) work_.resize(static_cast<std::size_t>(n));
    return work_.data();
  }
  std::vector<T> work_;
};

// The kernels of one CPU core, in both precisions.
inline KernelPair cpu_kernel_pair() {
  return KernelPair{std::make_unique<CpuTileKernels<double>>(), std::make_unique<CpuTileKernels<float>>()};
}

}  // namespace tessera::kernels
