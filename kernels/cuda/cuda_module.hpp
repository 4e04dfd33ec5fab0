#pragma once
// The CUDA backend as a loadable module. cuBLAS, cuBLASLt and cuSOLVER take
// about 0.6 s and hundreds of MB of mappings to load and initialize, which
// every process linked against them pays at start, GPU or not: on the 2-core
// development machine that was most of the test suite's time. So the backend
// (kernels/cuda/*.cu, cuda_device.cpp, cusolver_peer.cpp) is built as
// libtessera_cuda.so, and cuda_loader.cpp implements cuda_api.hpp by loading
// it the first time a CUDA device, its count or the cuSOLVER peer is asked
// for. A tessera built with CUDA then also runs on a machine without the CUDA
// libraries: it reports no CUDA device and says why when one is asked for.
//
// The module exports one C symbol, kCudaModuleEntry, returning this table;
// everything else in it is hidden. The loader refuses a table whose abi is
// not kCudaModuleAbi (a module left over from another build).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cuda/cuda_api.hpp"

namespace tessera::kernels {

// 5 (2026-11-27): Device::begin_kernels(panel), kernel_streams, kernels_ended,
// wait_any_kernels; CudaKernelOptions' trsm_inverse_leaf and compute_streams.
// 6 (2026-11-27): wait_any_kernels(marks, timeout_s) returns an optional.
// 7 (2026-11-27): CudaKernelOptions::cholqr_panels, Device::kernel_fallbacks.
// 8 (2026-11-28): CudaKernelOptions' cholqr_gram_rows and profile_panels, Device::kernel_phases.
// 9 (2026-11-28): Device::free_kept.
inline constexpr int kCudaModuleAbi = 9;
inline constexpr const char* kCudaModuleEntry = "tessera_cuda_module";
inline constexpr const char* kCudaModuleFile = "libtessera_cuda.so";

struct CudaModule {
  int abi;
  int (*device_count)();
  std::unique_ptr<platform::Device> (*make_device)(int gpu_index, int ordinal, std::size_t memory_cap,
                                                   CudaKernelOptions options);
  CusolverRun (*cusolver_d)(PeerRoutine, int ordinal, std::int64_t m, std::int64_t n, double* a, double* tau);
  CusolverRun (*cusolver_s)(PeerRoutine, int ordinal, std::int64_t m, std::int64_t n, float* a, float* tau);
};

}  // namespace tessera::kernels
