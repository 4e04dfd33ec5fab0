// Cholesky QR panels for the CUDA GEQRT and TSQRT (CudaKernelOptions::
// cholqr_panels): cholqr_panel.hpp's sequence with cuBLAS and cuSOLVER calls
// and small kernels of our own (the shift, the orthogonality check, the
// signed LU of the panel's top square, T's first factor, R's signs, an
// identity), the save and restore of the tiles behind the fallback to
// GEQRF, and the two kernels' choice between the panels.
#include "kernels/cuda/cholqr_panel.hpp"
#include "kernels/cuda/cuda_calls.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/cuda_tile_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

namespace tessera::kernels {
namespace {

using namespace cuda::calls;
using namespace launch;

constexpr int kBlock = 1024;  // threads of the one-block kernels (lu_sign_kernel: b steps over a (b - j)² square)

template <class T>
__device__ T& at(T* a, int ld, int i, int j) {
  return a[i + static_cast<std::size_t>(j) * ld];
}

// G (b×b) += c tr(G) I. One block: the trace summed in shared memory.
template <class T>
__global__ void __launch_bounds__(kBlock) shift_kernel(int b, T* g, double c) {
  __shared__ double part[kBlock];
  double sum = 0;
  for (int i = threadIdx.x; i < b; i += blockDim.x) sum += static_cast<double>(at(g, b, i, i));
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  const T add = static_cast<T>(c * part[0]);
  for (int i = threadIdx.x; i < b; i += blockDim.x) at(g, b, i, i) += add;
}

// flag = 1 unless every |G(i, j) - δ_ij| <= tol on and below the diagonal
// (a NaN fails the comparison, so it raises the flag too) and the three
// passes' POTRF statuses are 0.
template <class T>
__global__ void check_kernel(int b, const T* g, double tol, const int* info, int* flag) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i == 0 && j == 0 && (info[0] != 0 || info[1] != 0 || info[2] != 0)) *flag = 1;
  if (i >= b || i < j) return;
  const double d = static_cast<double>(g[i + static_cast<std::size_t>(j) * b]) - (i == j ? 1.0 : 0.0);
  if (!(fabs(d) <= tol)) *flag = 1;
}

// X's top b×b upper triangular (a TSQRT stack): Y1 = I and U = Q1 - S, s_j =
// -sign(Q1_jj): only the diagonal changes.
template <class T>
__global__ void sign_diagonal_kernel(int b, T* x, int ldx, T* s) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= b) return;
  T& d = at(x, ldx, j, j);
  const T sj = d >= T(0) ? T(-1) : T(1);
  s[j] = sj;
  d -= sj;
}

// X's top b×b (Q1) = Y1 U in place for Q1 - S, LU without pivoting, s_j =
// -sign of the j-th pivot when the elimination reaches it (so |U_jj| >= 1).
// The body of one block's kernel; b is a panel width (tens to a few hundred).
template <class T>
__device__ void lu_sign_steps(int b, T* x, int ldx, T* s) {
  for (int j = 0; j < b; ++j) {
    if (threadIdx.x == 0) {
      T& d = at(x, ldx, j, j);
      const T sj = d >= T(0) ? T(-1) : T(1);
      s[j] = sj;
      d -= sj;
    }
    __syncthreads();
    const T pivot = at(x, ldx, j, j);
    for (int i = j + 1 + threadIdx.x; i < b; i += blockDim.x) at(x, ldx, i, j) /= pivot;
    __syncthreads();
    const int w = b - j - 1;
    for (int e = threadIdx.x; e < w * w; e += blockDim.x) {
      const int i = j + 1 + e % w, k = j + 1 + e / w;
      at(x, ldx, i, k) -= at(x, ldx, i, j) * at(x, ldx, j, k);
    }
    __syncthreads();
  }
}

// In place in the panel (global memory): squares too large for shared memory.
template <class T>
__global__ void __launch_bounds__(kBlock) lu_sign_kernel(int b, T* x, int ldx, T* s) {
  lu_sign_steps(b, x, ldx, s);
}

// The same on a copy in shared memory (b·b elements of dynamic shared
// memory): each of the b steps' loads and stores costs tens of cycles
// instead of an L2 round trip.
template <class T>
__global__ void __launch_bounds__(kBlock) lu_sign_shared_kernel(int b, T* x, int ldx, T* s) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* q = reinterpret_cast<T*>(shared_bytes);
  for (int e = threadIdx.x; e < b * b; e += blockDim.x) q[e] = at(x, ldx, e % b, e / b);
  __syncthreads();
  lu_sign_steps(b, q, b, s);
  for (int e = threadIdx.x; e < b * b; e += blockDim.x) at(x, ldx, e % b, e / b) = q[e];
}

// T (b×b) = -(U S): U from X's top b×b upper triangle, zeros below.
template <class T>
__global__ void t_first_kernel(int b, const T* x, int ldx, const T* s, T* t, int ldt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= b) return;
  t[i + static_cast<std::size_t>(j) * ldt] = i <= j ? -x[i + static_cast<std::size_t>(j) * ldx] * s[j] : T(0);
}

// X's upper b×b triangle = S R (R b×b upper, ld b).
template <class T>
__global__ void r_out_kernel(int b, const T* r, const T* s, T* x, int ldx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= b || i > j) return;
  x[i + static_cast<std::size_t>(j) * ldx] = s[i] * r[i + static_cast<std::size_t>(j) * b];
}

// v (count) = 1: the GEMV's vector that adds the Gram's partial products.
template <class T>
__global__ void ones_kernel(int count, T* v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) v[i] = T(1);
}

// R (b×b) = I.
template <class T>
__global__ void identity_kernel(int b, T* r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < b) r[i + static_cast<std::size_t>(j) * b] = T(i == j ? 1 : 0);
}

void launched(const char* what) { cuda::detail::check_cuda(cudaGetLastError(), what, __FILE__, __LINE__); }

// One thread per element of a b×b square: rows along x, columns along y.
dim3 square_grid(index_t b) { return dim3(blocks_for(b), to_int(b)); }

// The dynamic shared memory lu_sign_shared_kernel<T> may use on the current
// device: its opt-in limit per block (227 KB on an H100), the kernel's
// attribute raised to it (needed past 48 KB). Where the device cannot say,
// or refuses the attribute, the 48 KB every device allows without it.
template <class T>
std::size_t shared_lu_limit() {
  constexpr std::size_t kDefault = 48 << 10;
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      static_cast<std::size_t>(optin) <= kDefault ||
      cudaFuncSetAttribute(lu_sign_shared_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    return kDefault;
  }
  return static_cast<std::size_t>(optin);
}

// Blocks of `rows` rows of an n-row panel, the last one shorter (0: none,
// the Gram by SYRK; one: a single GEMM, no sum).
index_t gram_blocks(index_t n, index_t rows) { return rows > 0 ? (n + rows - 1) / rows : 0; }

// The workspace's pieces for panels of up to ib columns, laid out in order;
// `slots`: the Gram's partial products (ib×ib each) and their GEMV's ones.
template <class T>
struct Layout {
  std::size_t g, r, s, lapack, info, flag, partial, ones, total;
  Layout(index_t ib, int lwork, index_t slots) {
    constexpr std::size_t kAlign = 256;
    const auto round = [](std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; };
    const std::size_t square = round(static_cast<std::size_t>(ib * ib) * sizeof(T));
    g = 0;
    r = g + square;
    s = r + square;
    lapack = s + round(static_cast<std::size_t>(ib) * sizeof(T));
    info = lapack + round(static_cast<std::size_t>(lwork) * sizeof(T));  // one status per pass
    flag = info + kAlign;
    partial = flag + kAlign;
    ones = partial + round(static_cast<std::size_t>(slots * ib * ib) * sizeof(T));
    total = ones + round(static_cast<std::size_t>(slots) * sizeof(T));
  }
};

// cholqr_panel.hpp's operations (its comment names each), in b's leading dimension b. At namespace scope, not a
// class local to cholqr_factor: clang, as nvcc's host compiler, instantiates a local class's members with the
// explicit instantiations at the end of the file, before nvcc's stubs specialize the kernels they launch
// ("explicit specialization ... after instantiation"); gcc accepts both.
template <class T>
struct CholqrOps {
  cublasHandle_t h;
  cusolverDnHandle_t solver;
  cudaStream_t st;
  T* lapack;
  int lwork;
  int* info;
  int* flag;
  std::size_t shared;  // dynamic shared memory lu_sign_shared_kernel may take
  index_t rows;        // CudaKernelOptions::cholqr_gram_rows
  index_t slots;       // room for partial products
  T* partial;
  T* ones;
  void gram(index_t nn, index_t bb, const T* xx, index_t ld, T* gg) {
    const index_t blocks = gram_blocks(nn, rows);
    if (blocks == 0) {
      syrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, to_int(bb), to_int(nn), T(1), xx, to_int(ld), T(0), gg, to_int(bb),
           TESSERA_HERE);
      return;
    }
    if (blocks == 1) {  // the whole square: G's upper triangle too, which no operation reads
      gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, to_int(bb), to_int(bb), to_int(nn), T(1), xx, to_int(ld), xx, to_int(ld), T(0),
           gg, to_int(bb), TESSERA_HERE);
      return;
    }
    if (blocks > slots)
      throw std::logic_error("cholqr gram: " + std::to_string(blocks) + " blocks of " + std::to_string(rows) +
                             " rows, room for " + std::to_string(slots));
    // P_i = X_i^T X_i (bb×bb, one after another), the full blocks in one
    // batched call and the short last one alone; then G = Σ P_i = P · 1
    // (the ones cholqr_begin wrote).
    const index_t full = nn / rows, last = nn - full * rows, square = bb * bb;
    if (full > 0)
      gemm_strided(h, CUBLAS_OP_T, CUBLAS_OP_N, to_int(bb), to_int(bb), to_int(rows), T(1), xx, to_int(ld), rows, xx,
                   to_int(ld), rows, T(0), partial, to_int(bb), square, to_int(full), TESSERA_HERE);
    if (last > 0)
      gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, to_int(bb), to_int(bb), to_int(last), T(1), xx + full * rows, to_int(ld),
           xx + full * rows, to_int(ld), T(0), partial + full * square, to_int(bb), TESSERA_HERE);
    gemv_n(h, to_int(square), to_int(blocks), partial, to_int(square), ones, gg, TESSERA_HERE);
  }
  void shift(index_t bb, T* gg, double c) {
    shift_kernel<T><<<1, kBlock, 0, st>>>(to_int(bb), gg, c);
    launched("shift_kernel launch");
  }
  void potrf(index_t bb, T* gg, int pass) {
    potrf_l(solver, to_int(bb), gg, to_int(bb), lapack, lwork, info + pass, TESSERA_HERE);
  }
  void solve_lt(index_t nn, index_t bb, const T* gg, T* xx, index_t ld) {
    trsm_rlt(h, to_int(nn), to_int(bb), gg, to_int(bb), xx, to_int(ld), TESSERA_HERE);
  }
  void identity(index_t bb, T* rr) {
    identity_kernel<T><<<square_grid(bb), kThreads, 0, st>>>(to_int(bb), rr);
    launched("identity_kernel launch");
  }
  void mul_lt(index_t bb, const T* gg, T* rr) {
    trmm_llt_inplace(h, to_int(bb), to_int(bb), gg, to_int(bb), rr, to_int(bb), TESSERA_HERE);
  }
  void check(index_t bb, const T* gg, double tol) {
    check_kernel<T><<<square_grid(bb), kThreads, 0, st>>>(to_int(bb), gg, tol, info, flag);
    launched("check_kernel launch");
  }
  void lu_sign(index_t bb, T* xx, index_t ld, T* ss, bool upper) {
    if (upper) {
      sign_diagonal_kernel<T><<<blocks_for(bb), kThreads, 0, st>>>(to_int(bb), xx, to_int(ld), ss);
      launched("sign_diagonal_kernel launch");
    } else if (const std::size_t bytes = static_cast<std::size_t>(bb * bb) * sizeof(T); bytes <= shared) {
      lu_sign_shared_kernel<T><<<1, kBlock, bytes, st>>>(to_int(bb), xx, to_int(ld), ss);
      launched("lu_sign_shared_kernel launch");
    } else {
      lu_sign_kernel<T><<<1, kBlock, 0, st>>>(to_int(bb), xx, to_int(ld), ss);
      launched("lu_sign_kernel launch");
    }
  }
  void solve_u(index_t m, index_t bb, const T* u, index_t ldu, T* xx, index_t ld) {
    trsm_right_upper(h, to_int(m), to_int(bb), u, to_int(ldu), xx, to_int(ld), TESSERA_HERE);
  }
  void t_from(index_t bb, const T* xx, index_t ld, const T* ss, T* tt, index_t ldtt) {
    t_first_kernel<T><<<square_grid(bb), kThreads, 0, st>>>(to_int(bb), xx, to_int(ld), ss, tt, to_int(ldtt));
    launched("t_first_kernel launch");
    // T = T Y1^{-T}
    trsm_general(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, to_int(bb), to_int(bb),
                 xx, to_int(ld), tt, to_int(ldtt), TESSERA_HERE);
  }
  void r_out(index_t bb, const T* rr, const T* ss, T* xx, index_t ld) {
    r_out_kernel<T><<<square_grid(bb), kThreads, 0, st>>>(to_int(bb), rr, ss, xx, to_int(ld));
    launched("r_out_kernel launch");
  }
};

}  // namespace

template <class T>
void CudaTileKernels<T>::cholqr_begin(index_t ib, Block first, Block second) {
  // Room for the panels' workspace and the saved blocks (each grows only,
  // after the stream is done with the old buffer).
  const int lwork = potrf_lwork(solver_.get(), to_int(ib), first.p, to_int(ib), TESSERA_HERE);
  // A panel has at most the blocks' rows (TSQRT's: the triangle's ib and the tile's).
  const index_t blocks = gram_blocks(first.rows + second.rows, gram_rows_);
  const index_t slots = blocks > 1 ? blocks : 0;
  const Layout<T> layout(ib, lwork, slots);
  const std::size_t saved = static_cast<std::size_t>(first.rows * first.cols + second.rows * second.cols) * sizeof(T);
  if (cholqr_work_.bytes() < layout.total || backup_.bytes() < saved) {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (cholqr_work_.bytes() < layout.total) {
      cholqr_work_ = cuda::DeviceBuffer();
      cholqr_work_ = cuda::DeviceBuffer::create(layout.total);
    }
    if (backup_.bytes() < saved) {
      backup_ = cuda::DeviceBuffer();
      backup_ = cuda::DeviceBuffer::create(saved);
    }
  }
  cholqr_ib_ = ib;
  cholqr_lwork_ = lwork;
  cholqr_slots_ = slots;
  marks_used_ = 0;  // (a call that threw left its marks: they time nothing)
  // The GEMV's ones, once per call (not per Gram: launches are the panels' cost).
  if (slots > 0) {
    ones_kernel<T><<<blocks_for(slots), kThreads, 0, stream_>>>(
        to_int(slots), reinterpret_cast<T*>(cholqr_work_.data() + layout.ones));
    launched("ones_kernel launch");
  }
  if (!cholqr_shared_known_) {
    cholqr_shared_ = shared_lu_limit<T>();
    cholqr_shared_known_ = true;
  }
  T* to = reinterpret_cast<T*>(backup_.data());
  for (const Block& b : {first, second}) {
    if (b.p == nullptr) continue;
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(to, b.rows * sizeof(T), b.p, b.ld * sizeof(T), b.rows * sizeof(T), b.cols,
                                         cudaMemcpyDeviceToDevice, stream_));
    to += b.rows * b.cols;
  }
  TESSERA_CUDA_CHECK(cudaMemsetAsync(cholqr_work_.data() + layout.flag, 0, sizeof(int), stream_));
}

template <class T>
void CudaTileKernels<T>::cholqr_factor(index_t n, index_t b, T* x, index_t ldx, T* t, index_t ldt, bool top_upper) {
  if (b > cholqr_ib_)
    throw std::logic_error("cholqr_factor: a panel of " + std::to_string(b) + " columns, workspace for " +
                           std::to_string(cholqr_ib_));
  const Layout<T> layout(cholqr_ib_, cholqr_lwork_, cholqr_slots_);
  std::byte* base = cholqr_work_.data();
  T* g = reinterpret_cast<T*>(base + layout.g);
  T* r = reinterpret_cast<T*>(base + layout.r);
  T* s = reinterpret_cast<T*>(base + layout.s);
  T* lapack = reinterpret_cast<T*>(base + layout.lapack);
  int* info = reinterpret_cast<int*>(base + layout.info);
  int* flag = reinterpret_cast<int*>(base + layout.flag);
  T* partial = reinterpret_cast<T*>(base + layout.partial);
  T* ones = reinterpret_cast<T*>(base + layout.ones);
  cublasHandle_t h = blas_.get();
  cudaStream_t st = stream_;
  const int lwork = cholqr_lwork_;
  cusolverDnHandle_t solver = solver_.get();
  CholqrOps<T> ops{h, solver, st, lapack, lwork, info, flag, cholqr_shared_, gram_rows_, cholqr_slots_, partial, ones};
  if (!profile_) {
    cholqr::factor<T>(n, b, x, ldx, t, ldt, g, r, s, ops, top_upper);
    return;
  }
  auto record = [this](const char* name) { mark(name); };
  cholqr::Marked<CholqrOps<T>, decltype(record)> marked{ops, record};
  cholqr::factor<T>(n, b, x, ldx, t, ldt, g, r, s, marked, top_upper);
  mark(nullptr);
}

template <class T>
void CudaTileKernels<T>::mark(const char* name) {
  if (marks_used_ == mark_events_.size()) {
    mark_events_.push_back(cuda::Event::create(cudaEventDefault));  // (with timing)
    mark_names_.push_back(nullptr);
  }
  mark_events_[marks_used_].record(stream_);
  mark_names_[marks_used_++] = name;
}

template <class T>
void CudaTileKernels<T>::add_marks() {
  for (std::size_t i = 0; i + 1 < marks_used_; ++i) {
    if (mark_names_[i] == nullptr) continue;
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, mark_events_[i].get(), mark_events_[i + 1].get()));
    PhaseTime& p = phases_[mark_names_[i]];
    ++p.calls;
    p.seconds += ms / 1e3;
  }
  marks_used_ = 0;
}

template <class T>
bool CudaTileKernels<T>::cholqr_failed(Block first, Block second) {
  const Layout<T> layout(cholqr_ib_, cholqr_lwork_, cholqr_slots_);
  int flag = 0;
  TESSERA_CUDA_CHECK(
      cudaMemcpyAsync(&flag, cholqr_work_.data() + layout.flag, sizeof(int), cudaMemcpyDeviceToHost, stream_));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  add_marks();
  if (flag == 0) return false;
  ++cholqr_fallbacks_;
  const T* from = reinterpret_cast<const T*>(backup_.data());
  for (const Block& b : {first, second}) {
    if (b.p == nullptr) continue;
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(b.p, b.ld * sizeof(T), from, b.rows * sizeof(T), b.rows * sizeof(T), b.cols,
                                         cudaMemcpyDeviceToDevice, stream_));
    from += b.rows * b.cols;
  }
  return true;
}

// GEQRT and TSQRT: with Cholesky QR panels, the tiles saved first and
// factored again with GEQRF panels if a panel failed its check (one wait per
// call, for the check); else GEQRF panels alone (cuda_tile_kernels.cu).
template <class T>
void CudaTileKernels<T>::geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt) {
  const index_t k = std::min(m, n);
  check_ib("geqrt", ib, k);
  if (k == 0) return;
  cuda::set_device(ordinal_);
  if (cholqr_) {
    const Block tile{a, lda, m, n};
    cholqr_begin(ib, tile);
    geqrt_panels(m, n, ib, a, lda, t, ldt, true);
    if (!cholqr_failed(tile)) return;
  }
  geqrt_panels(m, n, ib, a, lda, t, ldt, false);
}

template <class T>
void CudaTileKernels<T>::tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t,
                               index_t ldt) {
  check_ib("tsqrt", ib, n);
  if (m == 0 || n == 0) return;
  cuda::set_device(ordinal_);
  if (cholqr_) {
    const Block top{r, ldr, n, n}, bottom{a, lda, m, n};
    cholqr_begin(ib, top, bottom);
    tsqrt_panels(m, n, ib, r, ldr, a, lda, t, ldt, true);
    if (!cholqr_failed(top, bottom)) return;
  }
  tsqrt_panels(m, n, ib, r, ldr, a, lda, t, ldt, false);
}

#define TESSERA_CHOLQR_MEMBERS(T)                                                                    \
  template void CudaTileKernels<T>::cholqr_begin(index_t, Block, Block);                             \
  template void CudaTileKernels<T>::cholqr_factor(index_t, index_t, T*, index_t, T*, index_t, bool); \
  template bool CudaTileKernels<T>::cholqr_failed(Block, Block);                                     \
  template void CudaTileKernels<T>::mark(const char*);                                               \
  template void CudaTileKernels<T>::add_marks();                                                     \
  template void CudaTileKernels<T>::geqrt(index_t, index_t, index_t, T*, index_t, T*, index_t);      \
  template void CudaTileKernels<T>::tsqrt(index_t, index_t, index_t, T*, index_t, T*, index_t, T*, index_t);
TESSERA_CHOLQR_MEMBERS(float)
TESSERA_CHOLQR_MEMBERS(double)
#undef TESSERA_CHOLQR_MEMBERS

}  // namespace tessera::kernels
