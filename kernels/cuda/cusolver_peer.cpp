// The GPU-alone peer of tessera's GPU runs: one dense matrix factored by
// cuSOLVER's potrf (lower), geqrf or getrf (partial pivoting) on one CUDA
// device, as `tessera run --impl cusolver` reports it (000 §7 and 001 §5
// compare against the vendor's single-GPU factorization the same way).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/numerics.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "kernels/cuda/cuda_calls.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_raii.hpp"

namespace tessera::kernels {
namespace {

using namespace cuda::calls;

template <class T>
CusolverRun factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, T* a, T* tau) {
  // The 32-bit API: lda * n must fit its int, and so must the workspace.
  if (m > INT32_MAX || n > INT32_MAX || m * n > INT32_MAX)
    throw InputError("--impl cusolver: a " + std::to_string(m) + " x " + std::to_string(n) +
                     " matrix exceeds the 32-bit cuSOLVER API's 2^31 - 1 elements (at most n = 46,340 square)");
  const int M = static_cast<int>(m), N = static_cast<int>(n);
  using clock = std::chrono::steady_clock;
  TESSERA_CUDA_CHECK(cudaSetDevice(ordinal));
  cuda::Stream stream = cuda::Stream::create();
  cuda::CusolverHandle h = cuda::CusolverHandle::create(stream.get());
  const std::size_t bytes = static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * sizeof(T);
  cuda::DeviceBuffer da = cuda::DeviceBuffer::create(bytes);
  // geqrf's scalars (n of T) or getrf's pivots (n ints); potrf needs neither.
  const std::size_t aux_bytes = routine == PeerRoutine::Geqrf   ? static_cast<std::size_t>(n) * sizeof(T)
                                : routine == PeerRoutine::Getrf ? static_cast<std::size_t>(n) * sizeof(int)
                                                                : 0;
  cuda::DeviceBuffer daux = cuda::DeviceBuffer::create(aux_bytes);
  cuda::DeviceBuffer dinfo = cuda::DeviceBuffer::create(sizeof(int));
  T* A = reinterpret_cast<T*>(da.data());
  T* dtau = reinterpret_cast<T*>(daux.data());
  int* ipiv = reinterpret_cast<int*>(daux.data());
  int lwork = 0;
  switch (routine) {
    case PeerRoutine::Potrf: lwork = potrf_lwork(h.get(), N, A, M, TESSERA_HERE); break;
    case PeerRoutine::Geqrf: lwork = geqrf_lwork(h.get(), M, N, A, M, TESSERA_HERE); break;
    case PeerRoutine::Getrf: lwork = getrf_lwork(h.get(), M, N, A, M, TESSERA_HERE); break;
    default: throw std::logic_error("cuSOLVER peer: unknown routine " + std::to_string(static_cast<int>(routine)));
  }
  cuda::DeviceBuffer work = cuda::DeviceBuffer::create(static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(T));
  T* W = reinterpret_cast<T*>(work.data());
  int* info = reinterpret_cast<int*>(dinfo.data());
  // The routine on the leading rows x cols block of A (lda = M).
  const auto run = [&](int rows, int cols) {
    switch (routine) {
      case PeerRoutine::Potrf: potrf_l(h.get(), cols, A, M, W, lwork, info, TESSERA_HERE); break;
      case PeerRoutine::Geqrf: geqrf(h.get(), rows, cols, A, M, dtau, W, lwork, info, TESSERA_HERE); break;
      case PeerRoutine::Getrf: getrf(h.get(), rows, cols, A, M, W, ipiv, info, TESSERA_HERE); break;
    }
  };
  // Warm-up: the routine once on an identity of the matrix's own size, so
  // that every kernel the timed call launches is loaded (since CUDA 12.2 on
  // its first launch: the CUDA C++ Programming Guide, "Lazy Loading"; the
  // library picks its kernels by size, so a small warm-up leaves the large
  // ones cold) and the library's first-call set-up is done, as tessera's
  // runs warm their GPUs (experiments/gpu_warmup.hpp). The identity takes
  // the same calls as any matrix (the blocked algorithms branch on sizes, not
  // values); it is overwritten by the copy below.
  CusolverRun r;
  {
    const auto w0 = clock::now();
    TESSERA_CUDA_CHECK(cudaMemsetAsync(A, 0, bytes, stream.get()));
    const std::size_t diag = static_cast<std::size_t>(std::min(m, n));
    const std::vector<T> ones(diag, T(1));
    // The diagonal in one strided copy: element i at A + i * (M + 1); a pitch
    // beyond the device's (a very tall matrix of a few columns) copy by copy.
    const std::size_t pitch = sizeof(T) * (static_cast<std::size_t>(M) + 1);
    int max_pitch = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, ordinal));
    if (pitch <= static_cast<std::size_t>(max_pitch)) {
      TESSERA_CUDA_CHECK(
          cudaMemcpy2DAsync(A, pitch, ones.data(), sizeof(T), sizeof(T), diag, cudaMemcpyHostToDevice, stream.get()));
    } else {
      for (std::size_t i = 0; i < diag; ++i)
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(A + i * (static_cast<std::size_t>(M) + 1), &ones[i], sizeof(T),
                                           cudaMemcpyHostToDevice, stream.get()));
    }
    run(M, N);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    r.warmup_s = std::chrono::duration<double>(clock::now() - w0).count();
  }
  const auto c0 = clock::now();
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(A, a, bytes, cudaMemcpyHostToDevice, stream.get()));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const auto f0 = clock::now();
  run(M, N);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const auto f1 = clock::now();
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(a, A, bytes, cudaMemcpyDeviceToHost, stream.get()));
  // getrf writes min(m, n) pivots; tau's other entries are left as they are.
  const std::size_t pivots = static_cast<std::size_t>(std::min(m, n));
  std::vector<int> host_ipiv(routine == PeerRoutine::Getrf ? pivots : 0);
  if (routine == PeerRoutine::Geqrf)
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(tau, dtau, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToHost, stream.get()));
  if (routine == PeerRoutine::Getrf && pivots > 0)
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(host_ipiv.data(), ipiv, pivots * sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&r.info, info, sizeof(int), cudaMemcpyDeviceToHost, stream.get()));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const auto c1 = clock::now();
  // LAPACK's ipiv (1-based, as cuSOLVER writes it) in tau, as T values.
  for (std::size_t i = 0; i < host_ipiv.size(); ++i) tau[i] = static_cast<T>(host_ipiv[i]);
  // A NaN or infinite pivot potrf's status let through (base/numerics.hpp), outside the times.
  if (routine == PeerRoutine::Potrf && r.info == 0) r.info = static_cast<int>(first_bad_cholesky_diagonal(n, a, m));
  r.factor_s = std::chrono::duration<double>(f1 - f0).count();
  r.copy_s = std::chrono::duration<double>((f0 - c0) + (c1 - f1)).count();
  return r;
}

}  // namespace

CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, double* a, double* tau) {
  return factor<double>(routine, ordinal, m, n, a, tau);
}
CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, float* a, float* tau) {
  return factor<float>(routine, ordinal, m, n, a, tau);
}

}  // namespace tessera::kernels
