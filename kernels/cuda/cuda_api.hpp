#pragma once
// The CUDA backend as the rest of tessera sees it. No CUDA header here: the
// runtime, the driver and the tests include this whether or not CUDA was
// built. Built from kernels/cuda/cuda_loader.cpp (which loads the backend's
// module, cuda_module.hpp) when the CUDA toolkit is found, else from
// cuda_stub.cpp, whose make_cuda_device throws NotCompiled("CUDA").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/peer_routine.hpp"
#include "platform/device.hpp"

namespace tessera::platform {

// A CUDA, cuBLAS or cuSOLVER call failed, or no CUDA device can be used. The
// message names the call, the library's error and where it was made.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera::platform

namespace tessera::kernels {

// Device memory a CUDA GPU leaves to cuBLAS, cuSOLVER and the kernels'
// workspaces per compute stream (each stream has its own), when no cap is
// given (platform::CudaDevice); with Cholesky QR panels (cholqr_panels) more,
// for the tiles GEQRT, TSQRT and TTQRT save for their fallback beside TTQRT's
// triangle, per precision (each only grows): at B = 8192, 1.07 + 0.54 GB in
// double and 0.81 GB more once single precision ran on the same device;
// with cholqr_gram_rows R also the Gram's partial products, ceil(rows / R)
// squares of ib (17 MB at R = 256, ib 128, 32,768 rows; R < 256 is refused).
// Tiles above 8192 need a --gpu-memory cap that leaves room for them.
inline constexpr std::size_t kCudaLibraryReserve = std::size_t{512} << 20;
inline constexpr std::size_t kCudaCholqrReserve = std::size_t{3} << 30;
// The reserve of one compute stream.
inline constexpr std::size_t cuda_stream_reserve(bool cholqr_panels) {
  return kCudaLibraryReserve + (cholqr_panels ? kCudaCholqrReserve : 0);
}

// CUDA devices the driver reports; 0 when there is none, no driver, or CUDA
// was not built.
int cuda_device_count();

// Empty when the CUDA backend is built and loaded; else why not (the module
// was not found or could not be loaded: cuda_module.hpp), for messages.
std::string cuda_backend_unavailable();

// GPU `gpu_index` (1-based, for names and messages) of this node on CUDA
// device `ordinal`. memory_cap: the most bytes of buffers the runtime may
// allocate on it (0: the free memory at start less a reserve for cuBLAS and
// cuSOLVER). Throws platform::CudaError when no CUDA device is present or the
// ordinal does not exist; std::invalid_argument for a negative option.
//
// The options choose how the tile kernels use the libraries (the defaults:
// the runtime's; other values for bench_cuda_kernels' comparisons):
//   recursion_leaf: the order of the triangles the libraries' POTRF and TRSM
//     solve inside Cholesky's POTF2' and TRSM, which recurse down to it
//     (kernels/recursive_blocking.hpp); 0 (the default): the libraries'
//     routines on whole tiles. Measured on the lent H100 (2026-11-26,
//     results/gpu-node/2026-11-26-h100): POTF2' recursing to 256 took 2.2-2.7x
//     cuSOLVER's whole-tile DPOTRF (H200 calibration) at 2048 and 4096 and
//     2.8x SPOTRF at 4096; TRSM the same either way;
//   reflector_group: how many reflectors QR's kernels apply at once (a
//     multiple of the inner blocking ib, their T factors merged:
//     kernels/cuda/compact_wy.hpp); 0: one block of ib at a time;
//   trsm_inverse_leaf: Cholesky's TRSM without substitution: the inverses of
//     L's diagonal blocks of this order made first (one batched cuBLAS TRSM
//     on identities), then the recursion with a triangular multiply by them
//     on each leaf (recursive_blocking.hpp trsm_rlt_inverted); 0 (the
//     default, until a lent GPU has measured it): as recursion_leaf says.
//   compute_streams: the GPU's compute streams (platform::CudaDevice), each
//     with its own library handles and workspace; with more than one, the
//     first has the device's greatest priority and takes the panels
//     (base/kernel_table.hpp panel_kernel), the others the rest, and as many
//     tasks are queued at once, finished in the order their kernels end, so
//     that a panel's latency-bound kernels run beside the trailing updates'
//     GEMMs (issue 15 point 3); 1 (the default, until a lent GPU has
//     measured more): every kernel in order on one stream.
//   cholqr_panels: QR's GEQRT and TSQRT factor each panel of ib columns by
//     shifted Cholesky QR and rebuild its Householder reflectors from Q
//     (kernels/cuda/cholqr_panel.hpp), a fixed number of library calls per
//     panel instead of cuSOLVER's GEQRF, whose cost is per column; a tile
//     whose panels fail the orthogonality check is factored again with
//     GEQRF. false (the default, until a lent GPU has measured it): GEQRF.
//   cholqr_gram_rows: how a Cholesky QR panel forms its Gram matrix X^T X
//     (b columns, n rows): 0 (the default) one SYRK, whose b x b output
//     gives the GPU few thread blocks to spread n over; R > 0 as the sum of
//     X_i^T X_i over blocks of R rows, one strided batched GEMM and a GEMV
//     adding their products (R >= n: one GEMM, cuBLAS's own choice of a
//     split; at least kMinCholqrGramRows). The suspect of the panels' cost on the lent H100 (2026-11-27:
//     a 32,768 x 2,048 GEQRT at 0.12 of DGEMM, about 2 ms per 128-column
//     panel where its flops need 0.5); bench_cuda_kernels' ".../gramR" rows
//     measure it.
//   profile_panels: each Cholesky QR panel records a timing event before
//     each of its operations (gram, potrf, solve_lt, ..., cholqr_panel.hpp
//     Marked); Device::kernel_phases then says where the panels' time went
//     (bench_cuda_kernels' ".../profile1" rows). Off in runs: the events
//     cost a few microseconds of the host's time each.
// Smaller blocks only add calls and workspace (CudaTileKernels refuses them).
inline constexpr int kMinCholqrGramRows = 256;
struct CudaKernelOptions {
  int recursion_leaf = 0;
  int reflector_group = 256;
  int trsm_inverse_leaf = 0;
  int compute_streams = 1;
  bool cholqr_panels = false;
  int cholqr_gram_rows = 0;
  bool profile_panels = false;
};
std::unique_ptr<platform::Device> make_cuda_device(int gpu_index, int ordinal, std::size_t memory_cap,
                                                   CudaKernelOptions options = {});

// The GPU-alone peer (`tessera run --impl cusolver`): the column-major m x n
// matrix `a` (lda = m) copied to CUDA device `ordinal`, factored there by
// cuSOLVER's `routine`, and copied back: potrf (lower triangle; m = n), geqrf
// (Householder vectors and R in `a`, their scalars in `tau`, LAPACK's layout)
// or getrf (partial pivoting: L below the diagonal, U on and above it in
// `a`; LAPACK's 1-based ipiv, min(m, n) of them, in `tau` as T values; tau
// has n elements). potrf leaves `tau` alone (it may be null).
// factor_s: the factorization alone, between stream synchronizations, after a
// warm-up call on an identity of the same size (warmup_s, not part of the
// others); copy_s: both copies. info: LAPACK's (> 0: potrf: the leading
// minor of that order is not positive definite; getrf: U(info, info) is
// exactly zero). The 32-bit cuSOLVER API: at most 2^31 - 1 elements. Throws
// platform::CudaError (NotCompiled without CUDA).
struct CusolverRun {
  double factor_s = 0, copy_s = 0, warmup_s = 0;
  int info = 0;
};
CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, double* a, double* tau);
CusolverRun cusolver_factor(PeerRoutine routine, int ordinal, std::int64_t m, std::int64_t n, float* a, float* tau);

}  // namespace tessera::kernels
