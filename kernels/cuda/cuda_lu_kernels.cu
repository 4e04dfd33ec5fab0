// The LU's tile kernels on a CUDA device (CudaTileKernels' LU members; the
// class and its other kernels are in cuda_tile_kernels.cu): cuBLAS for the
// trailing update's TRSMs and GEMM, cuSOLVER's xGETRF for the panel with
// partial pivoting (lu_getrf) and, without pivots, for the diagonal block
// (lu_getrf_nopiv), and two kernels of our own for the row interchanges.
#include "kernels/cuda/cuda_calls.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/cuda_tile_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::kernels {
namespace {

using namespace cuda::calls;
using namespace launch;

// W (rows×cols) = A with row x taken from A's row perm[x] (a gather: A is
// only read, so the rows can be written back in any order afterwards).
template <class T>
__global__ void gather_rows_kernel(int rows, int cols, const T* __restrict__ a, int lda,
                                   const std::int64_t* __restrict__ perm, T* __restrict__ w, int ldw) {
  const std::size_t total = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::size_t x = i % rows, c = i / rows;
    w[x + c * ldw] = a[static_cast<std::size_t>(perm[x]) + c * lda];
  }
}

// For r < w with lo <= xch[r] < hi: TOP's row r and A's row xch[r] - lo
// trade places, one thread per (r, column). The selected rows xch[r] are
// distinct, so no two threads touch the same element and the order of the
// swaps does not matter.
template <class T>
__global__ void exchange_rows_kernel(int w, int cols, T* top, int ldt, T* a, int lda,
                                     const std::int64_t* __restrict__ xch, std::int64_t lo, std::int64_t hi) {
  const std::size_t total = static_cast<std::size_t>(w) * static_cast<std::size_t>(cols);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::size_t r = i % w, c = i / w;
    const std::int64_t x = xch[r];
    if (x < lo || x >= hi) continue;
    T& p = top[r + c * ldt];
    T& q = a[static_cast<std::size_t>(x - lo) + c * lda];
    const T held = p;
    p = q;
    q = held;
  }
}

}  // namespace

template <class T>
void CudaTileKernels<T>::lu_trsm_l(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) {
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  // A = A U^{-1}
  trsm_right_upper(blas_.get(), to_int(m), to_int(n), u, to_int(ldu), a, to_int(lda), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::lu_trsm_u(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  // A = L^{-1} A (L unit lower)
  trsm_left_lower(blas_.get(), CUBLAS_DIAG_UNIT, to_int(m), to_int(n), l, to_int(ldl), a, to_int(lda), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::lu_gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
                                 T* c, index_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  cuda::set_device(ordinal_);
  // C -= A B
  gemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, to_int(m), to_int(n), to_int(k), T(-1), a, to_int(lda), b, to_int(ldb),
       T(1), c, to_int(ldc), TESSERA_HERE);
}

// Row x of A becomes its old row perm[x]: the rows gathered into the
// workspace (gather_rows_kernel), then copied back over A. No host wait.
template <class T>
void CudaTileKernels<T>::lu_permute(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) {
  if (rows == 0 || cols == 0) return;
  cuda::set_device(ordinal_);
  const int r = to_int(rows), c = to_int(cols), ld = to_int(lda);
  const Scratch s = scratch(0, 0, rows * cols, 0, 0);
  // W = A[perm, :]
  gather_rows_kernel<T><<<element_blocks(rows, cols), kThreads, 0, stream_>>>(r, c, a, ld, perm, s.v, r);
  cuda::detail::check_cuda(cudaGetLastError(), "gather_rows_kernel launch", __FILE__, __LINE__);
  // A = W
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(a, lda * sizeof(T), s.v, rows * sizeof(T), rows * sizeof(T), cols,
                                       cudaMemcpyDeviceToDevice, stream_));
}

// TOP[r, :] <-> A[xch[r] - lo, :] for r < w with lo <= xch[r] < hi, in one
// kernel (exchange_rows_kernel). No host wait.
template <class T>
void CudaTileKernels<T>::lu_exchange(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda,
                                     const std::int64_t* xch, index_t lo, index_t hi) {
  if (w == 0 || cols == 0 || lo >= hi) return;
  cuda::set_device(ordinal_);
  exchange_rows_kernel<T><<<element_blocks(w, cols), kThreads, 0, stream_>>>(to_int(w), to_int(cols), top, to_int(ldt),
                                                                             a, to_int(lda), xch, lo, hi);
  cuda::detail::check_cuda(cudaGetLastError(), "exchange_rows_kernel launch", __FILE__, __LINE__);
}

// cuSOLVER's xGETRF on A (m×n): partial pivoting when ipiv is given, its
// swaps (1-based on the device) returned 0-based in ipiv; without pivots
// when it is null. Waits for the status (and the pivots): the caller needs
// the failing column, and lu_getrf's caller turns the pivots into the
// column's plan.
template <class T>
index_t CudaTileKernels<T>::getrf_waited(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) {
  const index_t k = std::min(m, n);
  if (k == 0) return 0;
  cuda::set_device(ordinal_);
  const index_t slots = 1 + (ipiv ? k : 0);  // the status, then the pivots
  const int lwork = getrf_lwork(solver_.get(), to_int(m), to_int(n), a, to_int(lda), TESSERA_HERE);
  const Scratch s = scratch(0, 0, 0, 0, lwork, slots);
  getrf(solver_.get(), to_int(m), to_int(n), a, to_int(lda), s.lapack, ipiv ? s.info + 1 : nullptr, s.info,
        TESSERA_HERE);
  std::vector<int> host(static_cast<std::size_t>(slots));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host.data(), s.info, host.size() * sizeof(int), cudaMemcpyDeviceToHost, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (host[0] < 0) throw std::logic_error("getrf: illegal value in argument " + std::to_string(-host[0]));
  if (ipiv)
    for (index_t r = 0; r < k; ++r) ipiv[r] = host[1 + r] - 1;
  return host[0];
}

// (P, L, U) = GEPP(A).
template <class T>
index_t CudaTileKernels<T>::lu_getrf(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) {
  return getrf_waited(m, n, a, lda, ipiv);
}

// A = L U without pivoting.
template <class T>
index_t CudaTileKernels<T>::lu_getrf_nopiv(index_t m, index_t n, T* a, index_t lda) {
  return getrf_waited(m, n, a, lda, nullptr);
}

// lu_permute with the permutation first copied to the workspace, the rows
// gathered a block of columns at a time (a panel's rows below its diagonal
// block are tens of thousands tall: the workspace stays at kChunkElems
// elements, not the panel's size, which the runtime's memory accounting does
// not see). Waits for the copy, so the caller may reuse perm on return.
template <class T>
void CudaTileKernels<T>::lu_permute_from_host(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) {
  if (rows == 0 || cols == 0) return;
  cuda::set_device(ordinal_);
  constexpr index_t kChunkElems = index_t{1} << 22;
  const index_t chunk = std::clamp<index_t>(kChunkElems / rows, 1, cols);
  const index_t perm_elems = (rows * static_cast<index_t>(sizeof(std::int64_t)) + sizeof(T) - 1) / sizeof(T);
  const Scratch s = scratch(0, perm_elems, rows * chunk, 0, 0);
  auto* dperm = reinterpret_cast<std::int64_t*>(s.g);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(dperm, perm, static_cast<std::size_t>(rows) * sizeof(std::int64_t),
                                     cudaMemcpyHostToDevice, stream_));
  for (index_t c0 = 0; c0 < cols; c0 += chunk) {
    const index_t nc = std::min(chunk, cols - c0);
    T* ac = a + c0 * lda;
    // W = A[perm, c0:c0+nc]
    gather_rows_kernel<T><<<element_blocks(rows, nc), kThreads, 0, stream_>>>(to_int(rows), to_int(nc), ac, to_int(lda),
                                                                              dperm, s.v, to_int(rows));
    cuda::detail::check_cuda(cudaGetLastError(), "gather_rows_kernel launch", __FILE__, __LINE__);
    // A[:, c0:c0+nc] = W
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(ac, lda * sizeof(T), s.v, rows * sizeof(T), rows * sizeof(T), nc,
                                         cudaMemcpyDeviceToDevice, stream_));
  }
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Host bytes into device memory, waited for (the caller may reuse src).
template <class T>
void CudaTileKernels<T>::from_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  cuda::set_device(ordinal_);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// The LU members only (the header's extern template declarations keep this file from
// instantiating any member itself): the class is instantiated in cuda_tile_kernels.cu.
#define TESSERA_CUDA_LU_MEMBERS(T)                                                                               \
  template void CudaTileKernels<T>::lu_trsm_l(index_t, index_t, const T*, index_t, T*, index_t);                 \
  template void CudaTileKernels<T>::lu_trsm_u(index_t, index_t, const T*, index_t, T*, index_t);                 \
  template void CudaTileKernels<T>::lu_gemm(index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, \
                                            index_t);                                                            \
  template void CudaTileKernels<T>::lu_permute(index_t, index_t, T*, index_t, const std::int64_t*);              \
  template void CudaTileKernels<T>::lu_exchange(index_t, index_t, T*, index_t, T*, index_t, const std::int64_t*, \
                                                index_t, index_t);                                               \
  template index_t CudaTileKernels<T>::lu_getrf(index_t, index_t, T*, index_t, index_t*);                        \
  template index_t CudaTileKernels<T>::lu_getrf_nopiv(index_t, index_t, T*, index_t);                            \
  template index_t CudaTileKernels<T>::getrf_waited(index_t, index_t, T*, index_t, index_t*);                    \
  template void CudaTileKernels<T>::lu_permute_from_host(index_t, index_t, T*, index_t, const std::int64_t*);    \
  template void CudaTileKernels<T>::from_host(void*, const void*, std::size_t);
TESSERA_CUDA_LU_MEMBERS(float)
TESSERA_CUDA_LU_MEMBERS(double)
#undef TESSERA_CUDA_LU_MEMBERS

}  // namespace tessera::kernels
