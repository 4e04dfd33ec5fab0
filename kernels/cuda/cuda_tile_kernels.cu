#include "kernels/cuda/cuda_tile_kernels.hpp"

#include "kernels/cuda/compact_wy.hpp"
#include "kernels/cuda/cuda_calls.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/recursive_blocking.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::kernels {
namespace {

using namespace cuda::calls;
using namespace launch;

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// W (m×b) = V in explicit form from the panel v (m×b) that holds it below
// the diagonal (R above): ones on the diagonal, zeros above it.
template <class T>
__global__ void unit_lower_kernel(int m, int b, const T* __restrict__ v, int ldv, T* __restrict__ w, int ldw) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
  if (r >= m || c >= b) return;
  w[r + static_cast<std::size_t>(c) * ldw] = r > c ? v[r + static_cast<std::size_t>(c) * ldv] : T(r == c ? 1 : 0);
}

// Packs S ((b+m)×b) = [triu(R); A] for one TSQRT panel (R b×b, A m×b), or
// (unpack) writes S back: its upper triangle into R's, its last m rows into A.
// R's strict lower triangle is never written: in a tiled QR it holds the
// diagonal tile's GEQRT reflectors.
template <class T>
__global__ void ts_panel_kernel(bool unpack, int m, int b, T* r, int ldr, T* a, int lda, T* s, int lds) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
  if (row >= b + m || c >= b) return;
  T& sv = s[row + static_cast<std::size_t>(c) * lds];
  if (row >= b) {
    T& av = a[(row - b) + static_cast<std::size_t>(c) * lda];
    if (unpack) av = sv;
    else sv = av;
  } else if (row <= c) {
    T& rv = r[row + static_cast<std::size_t>(c) * ldr];
    if (unpack) rv = sv;
    else sv = rv;
  } else if (!unpack) {
    sv = T(0);
  }
}

// W (m×n) = triu(A) with zeros below the diagonal, or (back) A's upper
// triangle = W's; A's strict lower triangle is never written (in a tiled QR
// it holds the head's GEQRT reflectors).
template <class T>
__global__ void triangle_kernel(bool back, int m, int n, T* a, int lda, T* w, int ldw) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
  if (r >= m || c >= n) return;
  T& wv = w[r + static_cast<std::size_t>(c) * ldw];
  if (back) {
    if (r <= c) a[r + static_cast<std::size_t>(c) * lda] = wv;
  } else {
    wv = r <= c ? a[r + static_cast<std::size_t>(c) * lda] : T(0);
  }
}

// W (leaf×n) = identity blocks side by side: W(i, c) = 1 where i = c mod
// leaf, else 0 (the right-hand sides of invert_leaves' TRSMs).
template <class T>
__global__ void identity_blocks_kernel(int leaf, int n, T* w) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= leaf) return;
  for (int c = blockIdx.y; c < n; c += gridDim.y) w[i + static_cast<std::size_t>(c) * leaf] = T(i == c % leaf ? 1 : 0);
}

// The batched TRSM's operand pointers: L's diagonal block j and W's block j, j < count.
template <class T>
__global__ void leaf_pointers_kernel(int count, int leaf, const T* l, int ldl, T* w, const T** lp, T** wp) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count) return;
  lp[j] = l + static_cast<std::size_t>(j) * leaf * (static_cast<std::size_t>(ldl) + 1);
  wp[j] = w + static_cast<std::size_t>(j) * leaf * leaf;
}

// T (b×b upper triangular) with I - V T V^T = H_0 H_1 ... H_{b-1}, as
// LAPACK's xLARFT (forward, columnwise) makes it, from G = V^T V (upper
// triangle) and tau:
//   T(j,j) = tau_j,   T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j).
// One thread block: column j needs the columns before it, hence a barrier per
// column; b is an inner block size (tens), so this is short. Only T's upper
// triangle is written, like LAPACK.
template <class T>
__global__ void larft_kernel(int b, const T* __restrict__ g, int ldg, const T* __restrict__ tau, T* t, int ldt) {
  for (int j = 0; j < b; ++j) {
    const T tau_j = tau[j];
    for (int r = threadIdx.x; r < j; r += blockDim.x) {
      T sum = 0;
      for (int c = r; c < j; ++c)
        sum += t[r + static_cast<std::size_t>(c) * ldt] * g[c + static_cast<std::size_t>(j) * ldg];
      t[r + static_cast<std::size_t>(j) * ldt] = -tau_j * sum;
    }
    if (threadIdx.x == 0) t[j + static_cast<std::size_t>(j) * ldt] = tau_j;
    __syncthreads();
  }
}

// The blocks of k reflectors in inner blocks of ib: first to last (Q^T,
// applied H_0 first) or last to first (Q).
template <class F>
void for_each_block(bool first_to_last, index_t k, index_t ib, F&& f) {
  if (first_to_last) {
    for (index_t i = 0; i < k; i += ib) f(i, std::min(ib, k - i));
  } else {
    for (index_t i = (k - 1) / ib * ib; i >= 0; i -= ib) f(i, std::min(ib, k - i));
  }
}

}  // namespace

template <class T>
CudaTileKernels<T>::CudaTileKernels(int ordinal, cudaStream_t stream, CudaKernelOptions options)
    : ordinal_(cuda::set_device(ordinal)), stream_(stream), blas_(cuda::CublasHandle::create(stream)),
      solver_(cuda::CusolverHandle::create(stream)), leaf_(options.recursion_leaf), group_(options.reflector_group),
      inverse_leaf_(options.trsm_inverse_leaf), cholqr_(options.cholqr_panels), gram_rows_(options.cholqr_gram_rows),
      profile_(options.profile_panels) {
  if (leaf_ < 0 || group_ < 0 || inverse_leaf_ < 0 || gram_rows_ < 0 ||
      (gram_rows_ > 0 && gram_rows_ < kMinCholqrGramRows))
    throw std::logic_error("CUDA tile kernels: recursion leaf " + std::to_string(leaf_) + ", reflector group " +
                           std::to_string(group_) + ", TRSM inverse leaf " + std::to_string(inverse_leaf_) +
                           " < 0, or Gram rows " + std::to_string(gram_rows_) +
                           " neither 0 nor >= " + std::to_string(kMinCholqrGramRows));
}

template <class T>
CudaTileKernels<T>::~CudaTileKernels() {
  // The handles and the workspace belong to this device.
  (void)cudaSetDevice(ordinal_);
}

template <class T>
typename CudaTileKernels<T>::Scratch CudaTileKernels<T>::scratch(index_t n_tau, index_t n_g, index_t n_v, index_t n_w,
                                                                 index_t n_lapack, index_t n_info) {
  constexpr std::size_t kAlign = 256;
  const auto bytes = [](index_t n, std::size_t size) {
    return (static_cast<std::size_t>(n) * size + kAlign - 1) / kAlign * kAlign;
  };
  const std::size_t sizes[] = {bytes(n_info, sizeof(int)), bytes(n_tau, sizeof(T)), bytes(n_g, sizeof(T)),
                               bytes(n_v, sizeof(T)),      bytes(n_w, sizeof(T)),   bytes(n_lapack, sizeof(T))};
  std::size_t total = 0;
  for (std::size_t s : sizes) total += s;
  if (work_.bytes() < total) {
    // Work already queued may still use the old buffer.
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    work_ = cuda::DeviceBuffer();
    work_ = cuda::DeviceBuffer::create(total + total / 4);
  }
  std::byte* p = work_.data();
  const auto take = [&](std::size_t i) {
    std::byte* q = sizes[i] > 0 ? p : nullptr;
    p += sizes[i];
    return q;
  };
  Scratch s;
  s.info = reinterpret_cast<int*>(take(0));
  s.tau = reinterpret_cast<T*>(take(1));
  s.g = reinterpret_cast<T*>(take(2));
  s.v = reinterpret_cast<T*>(take(3));
  s.w = reinterpret_cast<T*>(take(4));
  s.lapack = reinterpret_cast<T*>(take(5));
  return s;
}

template <class T>
int CudaTileKernels<T>::potf2p(index_t m, index_t n, T* a, index_t lda) {
  if (n == 0) return 0;
  cuda::set_device(ordinal_);
  // Recursive (recursive_blocking.hpp) above the leaf order: cuSOLVER's POTRF
  // only on the leaves, each with a status slot of its own.
  const bool recurse = leaf_ > 0 && n > leaf_;
  const index_t top = recurse ? leaf_ : n, slots = recurse ? recursive::leaves(n, leaf_) : 1;
  const int lwork = potrf_lwork(solver_.get(), to_int(top), a, to_int(lda), TESSERA_HERE);
  const Scratch s = scratch(0, 0, 0, 0, lwork, slots + 1);  // the last: the diagonal's test
  // L1 = chol(A1)
  if (recurse) {
    auto leaf_potrf = [&](index_t k, T* x, index_t ldx, index_t slot) {
      potrf_l(solver_.get(), to_int(k), x, to_int(ldx), s.lapack, lwork, s.info + slot, TESSERA_HERE);
    };
    auto syrk_ln = [&](index_t k, index_t j, const T* x, index_t ldx, T* c, index_t ldc) {
      syrk(blas_.get(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, to_int(k), to_int(j), T(-1), x, to_int(ldx), T(1), c,
           to_int(ldc), TESSERA_HERE);
    };
    auto leaf_trsm = [this](auto... x) { library_trsm(x...); };
    auto gemm_nt = [this](auto... x) { gsmm(x...); };
    recursive::potrf_l(n, a, lda, leaf_, leaf_potrf, syrk_ln, leaf_trsm, gemm_nt);
  } else {
    potrf_l(solver_.get(), to_int(n), a, to_int(lda), s.lapack, lwork, s.info, TESSERA_HERE);
  }
  first_bad_diagonal(n, a, lda, s.info + slots);
  // The one wait of these kernels: the caller needs the failing column now,
  // and A2 must stay as it was when there is one (as on the CPU).
  std::vector<int> info(static_cast<std::size_t>(slots + 1));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(info.data(), s.info, info.size() * sizeof(int), cudaMemcpyDeviceToHost, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // The first leaf that failed (the later ones factored what it left), else
  // a NaN or infinite pivot their statuses let through.
  for (std::size_t i = 0; i + 1 < info.size(); ++i) {
    if (info[i] < 0) throw std::logic_error("potrf: illegal value in argument " + std::to_string(-info[i]));
    if (info[i] > 0) return static_cast<int>(static_cast<index_t>(i) * top + info[i]);
  }
  if (info.back() > 0) return info.back();
  // L2 = A2 L1^{-T}
  if (m > n) trsm(m - n, n, a, lda, a + n, lda);
  return 0;
}

template <class T>
void CudaTileKernels<T>::trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  // A = A L^{-T}: cuBLAS's TRSM on triangles up to the leaf order, GEMMs
  // around them above it (recursive_blocking.hpp); or with inverse leaves,
  // no substitution at all: TRMMs by the diagonal blocks' inverses.
  auto gemm_nt = [this](auto... x) { gsmm(x...); };
  if (inverse_leaf_ > 0 && n > inverse_leaf_) {  // (one leaf: the library's solve is less work)
    const index_t count = n / inverse_leaf_;
    const std::size_t ptr_elems = (2 * static_cast<std::size_t>(count) * sizeof(T*) + sizeof(T) - 1) / sizeof(T);
    const Scratch s = scratch(0, static_cast<index_t>(ptr_elems), inverse_leaf_ * n, 0, 0);
    auto invert = [&](index_t nn, const T* ll, index_t ldll, index_t leaf, T* w) {
      invert_leaves(nn, ll, ldll, leaf, w, reinterpret_cast<T**>(s.g));
    };
    auto leaf_trmm = [&](index_t mm, index_t nl, const T* w, index_t ldw, T* x, index_t ldx) {
      trmm_rlt_inplace(blas_.get(), to_int(mm), to_int(nl), w, to_int(ldw), x, to_int(ldx), TESSERA_HERE);
    };
    recursive::trsm_rlt_inverted(m, n, l, ldl, a, lda, inverse_leaf_, s.v, invert, leaf_trmm, gemm_nt);
    return;
  }
  auto leaf_trsm = [this](auto... x) { library_trsm(x...); };
  if (leaf_ > 0) recursive::trsm_rlt(m, n, l, ldl, a, lda, leaf_, leaf_trsm, gemm_nt);
  else library_trsm(m, n, l, ldl, a, lda);
}

template <class T>
void CudaTileKernels<T>::invert_leaves(index_t n, const T* l, index_t ldl, index_t leaf, T* w, T** ptrs) {
  // W = [I I ... I]
  const unsigned columns = static_cast<unsigned>(std::min<index_t>(n, 65535));  // (gridDim.y's limit)
  identity_blocks_kernel<T><<<dim3(blocks_for(leaf), columns), kThreads, 0, stream_>>>(to_int(leaf), to_int(n), w);
  cuda::detail::check_cuda(cudaGetLastError(), "identity_blocks_kernel launch", __FILE__, __LINE__);
  const index_t count = n / leaf, rest = n - count * leaf;
  if (count > 0) {
    const T** lp = const_cast<const T**>(ptrs);
    T** wp = ptrs + count;
    leaf_pointers_kernel<T>
        <<<blocks_for(count), kThreads, 0, stream_>>>(to_int(count), to_int(leaf), l, to_int(ldl), w, lp, wp);
    cuda::detail::check_cuda(cudaGetLastError(), "leaf_pointers_kernel launch", __FILE__, __LINE__);
    // W_j = L_jj^{-1}: L_jj W_j = I for every full block at once
    trsm_lln_batched(blas_.get(), to_int(leaf), lp, to_int(ldl), wp, to_int(leaf), to_int(count), TESSERA_HERE);
  }
  if (rest > 0) {
    // W_r = L_rr^{-1} for the short last block
    const index_t c = count * leaf;
    trsm_left_lower(blas_.get(), CUBLAS_DIAG_NON_UNIT, to_int(rest), to_int(rest), l + c + c * ldl, to_int(ldl),
                    w + c * leaf, to_int(leaf), TESSERA_HERE);
  }
}

template <class T>
void CudaTileKernels<T>::library_trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) {
  trsm_rlt(blas_.get(), to_int(m), to_int(n), l, to_int(ldl), a, to_int(lda), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                              index_t ldc) {
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  // C -= A B^T
  gemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, to_int(m), to_int(n), to_int(k), T(-1), a, to_int(lda), b, to_int(ldb),
       T(1), c, to_int(ldc), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) {
  if (n == 0) return;
  cuda::set_device(ordinal_);
  // C1 -= A1 A1^T (lower triangle only)
  syrk(blas_.get(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, to_int(n), to_int(k), T(-1), a, to_int(lda), T(1), c,
       to_int(ldc), TESSERA_HERE);
  // C2 -= A2 A1^T
  if (m > n)
    gemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, to_int(m - n), to_int(n), to_int(k), T(-1), a + n, to_int(lda), a,
         to_int(lda), T(1), c + n, to_int(ldc), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::form_t(index_t rows, index_t b, const T* v, index_t ldv, const Scratch& s, T* t, index_t ldt) {
  // G = V^T V (upper triangle)
  syrk(blas_.get(), CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, to_int(b), to_int(rows), T(1), v, to_int(ldv), T(0), s.g,
       to_int(b), TESSERA_HERE);
  // T(0:j, j) = -tau_j T(0:j, 0:j) G(0:j, j)
  larft_kernel<T><<<1, 128, 0, stream_>>>(to_int(b), s.g, to_int(b), s.tau, t, to_int(ldt));
  cuda::detail::check_cuda(cudaGetLastError(), "larft_kernel launch", __FILE__, __LINE__);
}

template <class T>
void CudaTileKernels<T>::apply_block(bool trans, index_t m, index_t n, index_t b, const T* v, index_t ldv, const T* t,
                                     index_t ldt, T* c, index_t ldc, T* w) {
  cublasHandle_t h = blas_.get();
  // W = V^T C
  gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, to_int(b), to_int(n), to_int(m), T(1), v, to_int(ldv), c, to_int(ldc), T(0), w,
       to_int(b), TESSERA_HERE);
  // W = T^T W (C = Q^T C) or T W (C = Q C)
  trmm_lu_inplace(h, op(trans), to_int(b), to_int(n), t, to_int(ldt), w, to_int(b), TESSERA_HERE);
  // C -= V W
  gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, to_int(m), to_int(n), to_int(b), T(-1), v, to_int(ldv), w, to_int(b), T(1), c,
       to_int(ldc), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::apply_ts_block(bool trans, index_t m, index_t n, index_t b, const T* v, index_t ldv,
                                        const T* t, index_t ldt, T* a1, index_t lda1, T* a2, index_t lda2, T* w) {
  cublasHandle_t h = blas_.get();
  // W = A1 + V^T A2   ([I; V]^T [A1; A2])
  TESSERA_CUDA_CHECK(
      cudaMemcpy2DAsync(w, b * sizeof(T), a1, lda1 * sizeof(T), b * sizeof(T), n, cudaMemcpyDeviceToDevice, stream_));
  gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, to_int(b), to_int(n), to_int(m), T(1), v, to_int(ldv), a2, to_int(lda2), T(1), w,
       to_int(b), TESSERA_HERE);
  // W = T^T W or T W
  trmm_lu_inplace(h, op(trans), to_int(b), to_int(n), t, to_int(ldt), w, to_int(b), TESSERA_HERE);
  // A1 -= W
  geam_minus_inplace(h, to_int(b), to_int(n), a1, to_int(lda1), w, to_int(b), TESSERA_HERE);
  // A2 -= V W
  gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, to_int(m), to_int(n), to_int(b), T(-1), v, to_int(ldv), w, to_int(b), T(1), a2,
       to_int(lda2), TESSERA_HERE);
}

template <class T>
void CudaTileKernels<T>::explicit_v(index_t rows, index_t cols, const T* v, index_t ldv, T* w) {
  unit_lower_kernel<T><<<dim3(blocks_for(rows), to_int(cols)), kThreads, 0, stream_>>>(to_int(rows), to_int(cols), v,
                                                                                       to_int(ldv), w, to_int(rows));
  cuda::detail::check_cuda(cudaGetLastError(), "unit_lower_kernel launch", __FILE__, __LINE__);
}

template <class T>
const T* CudaTileKernels<T>::merged_t(index_t rows, index_t b, index_t ib, const T* v, index_t ldv, const T* t,
                                      index_t ldt, T* work, index_t& ld_out) {
  if (b <= ib) {
    ld_out = ldt;
    return t;
  }
  cublasHandle_t h = blas_.get();
  // work = G = V^T V (upper triangle), then T in place (compact_wy.hpp)
  syrk(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, to_int(b), to_int(rows), T(1), v, to_int(ldv), T(0), work, to_int(b),
       TESSERA_HERE);
  auto copy = [&](index_t r, index_t c, const T* src, index_t lds, T* dst, index_t ldd) {
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(dst, ldd * sizeof(T), src, lds * sizeof(T), r * sizeof(T), c,
                                         cudaMemcpyDeviceToDevice, stream_));
  };
  auto trmm_right = [&](index_t r, index_t c, const T* tri, index_t ldtri, T* x, index_t ldx) {
    trmm_upper_inplace(h, CUBLAS_SIDE_RIGHT, to_int(r), to_int(c), T(1), tri, to_int(ldtri), x, to_int(ldx),
                       TESSERA_HERE);
  };
  auto trmm_left_neg = [&](index_t r, index_t c, const T* tri, index_t ldtri, T* x, index_t ldx) {
    trmm_upper_inplace(h, CUBLAS_SIDE_LEFT, to_int(r), to_int(c), T(-1), tri, to_int(ldtri), x, to_int(ldx),
                       TESSERA_HERE);
  };
  compact_wy::merge_t(b, ib, t, ldt, work, b, copy, trmm_right, trmm_left_neg);
  ld_out = b;
  return work;
}

// GEQRT as LAPACK's xGEQRT, in groups of group_ columns (a multiple of ib).
// For each panel of ib columns, cuSOLVER's GEQRF gives V (below the
// diagonal), R and tau in LAPACK's layout; the panel's T comes from V^T V
// (cuBLAS SYRK) and the xLARFT recurrence (larft_kernel); the rest of the
// group's columns get Q^T through cuBLAS (GEMM, TRMM, GEMM). Then the
// columns right of the group get the whole group's Q^T at once, its T merged
// (merged_t): GEMMs as deep as the group instead of ib. (The last group's
// panels update every column to their right themselves.) No host
// round-trip: GEQRF's devInfo reports only illegal arguments, which the
// sizes here exclude. With Cholesky QR panels (cuda_cholqr.cu's geqrt) each
// panel's GEQRF and T are cholqr_factor's instead.
template <class T>
void CudaTileKernels<T>::geqrt_panels(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt,
                                      bool cholqr) {
  const index_t k = std::min(m, n);
  const index_t gw = compact_wy::group_width(group_, ib, k);
  int lwork = 0;  // GEQRF's (Cholesky QR panels have their own workspace)
  if (!cholqr)
    for_each_block(true, k, ib, [&](index_t i, index_t b) {
      lwork = std::max(
          lwork, geqrf_lwork(solver_.get(), to_int(m - i), to_int(b), a + i + i * lda, to_int(lda), TESSERA_HERE));
    });
  const Scratch s = scratch(ib, ib * ib + gw * gw, m * gw, gw * n, lwork);
  T* merge_work = s.g + ib * ib;
  for (index_t g0 = 0; g0 < k; g0 += gw) {
    const index_t gend = std::min(k, g0 + gw);
    const index_t inner_end = gend < k ? gend : n;  // what the group's panels update one by one
    for (index_t i = g0; i < gend; i += ib) {
      const index_t b = std::min(ib, gend - i), rows = m - i;
      T* panel = a + i + i * lda;
      T* t_i = t + i * ldt;
      // (V_i, R_i, T_i) = QR(A[i:, i:i+b])
      if (cholqr) {
        cholqr_factor(rows, b, panel, lda, t_i, ldt, false);
        explicit_v(rows, b, panel, lda, s.v);
      } else {
        geqrf(solver_.get(), to_int(rows), to_int(b), panel, to_int(lda), s.tau, s.lapack, lwork, s.info, TESSERA_HERE);
        // V_i explicit, for cuBLAS
        explicit_v(rows, b, panel, lda, s.v);
        form_t(rows, b, s.v, rows, s, t_i, ldt);
      }
      // A[i:, i+b:inner_end] = (I - V_i T_i V_i^T)^T A[i:, i+b:inner_end]
      if (i + b < inner_end)
        apply_block(true, rows, inner_end - i - b, b, s.v, rows, t_i, ldt, panel + b * lda, lda, s.w);
    }
    if (gend == k) break;
    // A[g0:, gend:] = (I - V T V^T)^T A[g0:, gend:] for the group's V (explicit) and merged T
    const index_t rows = m - g0, w = gend - g0;
    if (w > ib) {  // (a group of one panel: s.v holds its V already)
      explicit_v(rows, w, a + g0 + g0 * lda, lda, s.v);
    }
    index_t ldtg = 0;
    const T* tg = merged_t(rows, w, ib, s.v, rows, t + g0 * ldt, ldt, merge_work, ldtg);
    apply_block(true, rows, n - gend, w, s.v, rows, tg, ldtg, a + g0 + gend * lda, lda, s.w);
  }
}

// LARFB as LAPACK's xGEMQRT (left), in groups of group_ reflectors: the
// group's V made explicit (unit_lower_kernel), its T merged (merged_t), then
// GEMM, TRMM, GEMM as deep as the group.
template <class T>
void CudaTileKernels<T>::larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv,
                               const T* t, index_t ldt, T* c, index_t ldc) {
  check_ib("larfb", ib, k);
  if (m == 0 || n == 0 || k == 0) return;
  cuda::set_device(ordinal_);
  const index_t gw = compact_wy::group_width(group_, ib, k);
  const Scratch s = scratch(0, gw * gw, m * gw, gw * n, 0);
  for_each_block(trans, k, gw, [&](index_t i, index_t b) {
    const index_t rows = m - i;
    explicit_v(rows, b, v + i + i * ldv, ldv, s.v);
    index_t ldtg = 0;
    const T* tg = merged_t(rows, b, ib, s.v, rows, t + i * ldt, ldt, s.g, ldtg);
    // C[i:, :] = (I - V T V^T)^T C[i:, :], or without ^T
    apply_block(trans, rows, n, b, s.v, rows, tg, ldtg, c + i, ldc, s.w);
  });
}

// TSQRT as LAPACK's xTPQRT with l = 0, in groups of group_ columns. Per
// panel of ib columns, the stacked S = [triu(R_panel); A_panel] ((b+m)×b,
// zeros below R's diagonal) goes through cuSOLVER's GEQRF. Each of its
// Householder vectors is zero on the R rows other than its own leading 1
// (the vector of column j is x / (alpha - beta) with x zero there, and a
// reflector leaves the rows where its vector is zero unchanged, so the zeros
// stay), which makes them exactly xTPQRT's reflectors: the 1 on R's row j, V
// in A's rows. R's new upper triangle and V go back (ts_panel_kernel); T
// comes from V^T V over A's rows alone (the leading 1s never overlap) and
// larft_kernel; the rest of the group's columns get Q^T through GEMM, TRMM,
// GEAM and GEMM (apply_ts_block), the columns right of the group the whole
// group's at once, its T merged (merged_t). No host round-trip. With
// Cholesky QR panels (cuda_cholqr.cu's tsqrt): cholqr_factor on the packed S.
template <class T>
void CudaTileKernels<T>::tsqrt_panels(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t,
                                      index_t ldt, bool cholqr) {
  const index_t gw = compact_wy::group_width(group_, ib, n);
  int lwork = 0;  // GEQRF's (Cholesky QR panels have their own workspace)
  if (!cholqr)
    for_each_block(true, n, ib, [&](index_t, index_t b) {
      lwork = std::max(lwork, geqrf_lwork(solver_.get(), to_int(b + m), to_int(b), a, to_int(b + m), TESSERA_HERE));
    });
  const Scratch s = scratch(ib, ib * ib + gw * gw, (ib + m) * ib, gw * n, lwork);
  T* merge_work = s.g + ib * ib;
  for (index_t g0 = 0; g0 < n; g0 += gw) {
    const index_t gend = std::min(n, g0 + gw);
    for (index_t i = g0; i < gend; i += ib) {
      const index_t b = std::min(ib, gend - i), lds = b + m;
      T* r_i = r + i + i * ldr;
      T* a_i = a + i * lda;
      T* t_i = t + i * ldt;
      const dim3 grid(blocks_for(b + m), to_int(b));
      // S = [triu(R[i:i+b, i:i+b]); A[:, i:i+b]]
      ts_panel_kernel<T><<<grid, kThreads, 0, stream_>>>(false, to_int(m), to_int(b), r_i, to_int(ldr), a_i,
                                                         to_int(lda), s.v, to_int(lds));
      cuda::detail::check_cuda(cudaGetLastError(), "ts_panel_kernel launch", __FILE__, __LINE__);
      // (V, R, T) = QR(S)
      if (cholqr) cholqr_factor(lds, b, s.v, lds, t_i, ldt, true);
      else geqrf(solver_.get(), to_int(lds), to_int(b), s.v, to_int(lds), s.tau, s.lapack, lwork, s.info, TESSERA_HERE);
      ts_panel_kernel<T><<<grid, kThreads, 0, stream_>>>(true, to_int(m), to_int(b), r_i, to_int(ldr), a_i, to_int(lda),
                                                         s.v, to_int(lds));
      cuda::detail::check_cuda(cudaGetLastError(), "ts_panel_kernel launch", __FILE__, __LINE__);
      if (!cholqr) form_t(m, b, a_i, lda, s, t_i, ldt);
      // [R[i:i+b, i+b:gend]; A[:, i+b:gend]] = (I - [I; V] T [I; V]^T)^T [...]
      if (i + b < gend)
        apply_ts_block(true, m, gend - i - b, b, a_i, lda, t_i, ldt, r_i + b * ldr, ldr, a_i + b * lda, lda, s.w);
    }
    if (gend == n) break;
    // [R[g0:gend, gend:]; A[:, gend:]] = (I - [I; V] T [I; V]^T)^T [...] for the group's V and merged T
    const index_t w = gend - g0;
    index_t ldtg = 0;
    const T* tg = merged_t(m, w, ib, a + g0 * lda, lda, t + g0 * ldt, ldt, merge_work, ldtg);
    apply_ts_block(true, m, n - gend, w, a + g0 * lda, lda, tg, ldtg, r + g0 + gend * ldr, ldr, a + gend * lda, lda,
                   s.w);
  }
}

// SSRFB as LAPACK's xTPMQRT (left, l = 0), in groups of group_ reflectors,
// their T merged (merged_t): apply_ts_block per group.
template <class T>
void CudaTileKernels<T>::ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv,
                               const T* t, index_t ldt, T* a1, index_t lda1, T* a2, index_t lda2) {
  check_ib("ssrfb", ib, k);
  if (m == 0 || n == 0 || k == 0) return;
  cuda::set_device(ordinal_);
  const index_t gw = compact_wy::group_width(group_, ib, k);
  const Scratch s = scratch(0, gw * gw, 0, gw * n, 0);
  for_each_block(trans, k, gw, [&](index_t i, index_t b) {
    index_t ldtg = 0;
    const T* tg = merged_t(m, b, ib, v + i * ldv, ldv, t + i * ldt, ldt, s.g, ldtg);
    // [A1[i:i+b, :]; A2] = (I - [I; V] T [I; V]^T)^T [A1[i:i+b, :]; A2], or without ^T
    apply_ts_block(trans, m, n, b, v + i * ldv, ldv, tg, ldtg, a1 + i, lda1, a2, lda2, s.w);
  });
}

template <class T>
T* CudaTileKernels<T>::triangle(index_t elems) {
  const std::size_t bytes = static_cast<std::size_t>(elems) * sizeof(T);
  if (triangle_.bytes() < bytes) {
    // Work already queued may still use the old buffer.
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    triangle_ = cuda::DeviceBuffer();
    triangle_ = cuda::DeviceBuffer::create(bytes);
  }
  return reinterpret_cast<T*>(triangle_.data());
}

// TTQRT as a TSQRT of [R; W], W = triu(A) with zeros below: the zeros stay
// zeros (see tsqrt: a reflector leaves the rows where its vector is zero
// unchanged), so W's reflectors are exactly xTPQRT's with l = m, and T
// follows from them alone. W's upper triangle then goes back into A's.
template <class T>
void CudaTileKernels<T>::ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t,
                               index_t ldt) {
  check_ib("ttqrt", ib, n);
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  T* w = triangle(m * n);
  const dim3 grid(blocks_for(m), to_int(n));
  triangle_kernel<T><<<grid, kThreads, 0, stream_>>>(false, to_int(m), to_int(n), a, to_int(lda), w, to_int(m));
  cuda::detail::check_cuda(cudaGetLastError(), "triangle_kernel launch", __FILE__, __LINE__);
  tsqrt(m, n, ib, r, ldr, w, m, t, ldt);
  triangle_kernel<T><<<grid, kThreads, 0, stream_>>>(true, to_int(m), to_int(n), a, to_int(lda), w, to_int(m));
  cuda::detail::check_cuda(cudaGetLastError(), "triangle_kernel launch", __FILE__, __LINE__);
}

// TTMQR as an SSRFB with V's upper triangle and zeros below (twice the
// flops of xTPMQRT with l = m, in SSRFB's GEMM-shaped passes).
template <class T>
void CudaTileKernels<T>::ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv,
                               const T* t, index_t ldt, T* a1, index_t lda1, T* a2, index_t lda2) {
  check_ib("ttmqr", ib, k);
  if (m == 0 || n == 0 || k == 0) return;
  cuda::set_device(ordinal_);
  T* w = triangle(m * k);
  triangle_kernel<T><<<dim3(blocks_for(m), to_int(k)), kThreads, 0, stream_>>>(
      false, to_int(m), to_int(k), const_cast<T*>(v), to_int(ldv), w, to_int(m));
  cuda::detail::check_cuda(cudaGetLastError(), "triangle_kernel launch", __FILE__, __LINE__);
  ssrfb(trans, m, n, k, ib, w, m, t, ldt, a1, lda1, a2, lda2);
}

template <class T>
void CudaTileKernels<T>::copy(index_t rows, index_t cols, const T* a, index_t lda, T* b, index_t ldb) {
  if (rows == 0 || cols == 0) return;
  cuda::set_device(ordinal_);
  // B = A. A contiguous region (one column, or columns without a gap on both sides) as one run of bytes: a 2-D
  // copy's pitch may not exceed cudaDevAttrMaxPitch (2^31 - 1 bytes), which one column of a 2 GiB operand, given
  // the operand's length as its pitch, does (the calibration's and warm-up's restores).
  if (cols == 1 || (lda == rows && ldb == rows)) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(b, a,
                                       static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T),
                                       cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(b, ldb * sizeof(T), a, lda * sizeof(T), rows * sizeof(T), cols,
                                       cudaMemcpyDeviceToDevice, stream_));
}

template class CudaTileKernels<float>;
template class CudaTileKernels<double>;

}  // namespace tessera::kernels
