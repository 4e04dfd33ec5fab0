// The test of a Cholesky factor's diagonal on a CUDA device
// (CudaTileKernels::first_bad_diagonal; base/numerics.hpp has the host's, and
// why: a POTRF status reports a non-positive pivot, not a NaN one, so a matrix
// that is not positive definite and whose elimination overflowed gave NaN
// factors and success). One block: the diagonal is one tile's.
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/cuda_tile_kernels.hpp"

#include <climits>
#include <cstddef>

namespace tessera::kernels {
namespace {

using namespace launch;

// *slot = the 1-based column of the first diagonal entry of the n×n factor
// that is not a finite positive number, 0 when all are.
template <class T>
__global__ void __launch_bounds__(kThreads) first_bad_diagonal_kernel(int n, const T* a, int lda, int* slot) {
  __shared__ int first;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const T d = a[j + static_cast<std::size_t>(j) * lda];
    if (!(d > T(0)) || !isfinite(d)) atomicMin(&first, j + 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) *slot = first == INT_MAX ? 0 : first;
}

}  // namespace

template <class T>
void CudaTileKernels<T>::first_bad_diagonal(index_t n, const T* a, index_t lda, int* slot) {
  first_bad_diagonal_kernel<T><<<1, kThreads, 0, stream_>>>(to_int(n), a, to_int(lda), slot);
  cuda::detail::check_cuda(cudaGetLastError(), "first_bad_diagonal_kernel launch", __FILE__, __LINE__);
}

template void CudaTileKernels<float>::first_bad_diagonal(index_t, const float*, index_t, int*);
template void CudaTileKernels<double>::first_bad_diagonal(index_t, const double*, index_t, int*);

}  // namespace tessera::kernels
