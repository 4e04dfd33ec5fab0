#pragma once
// Every CUDA runtime, cuBLAS and cuSOLVER call goes through one of
//   TESSERA_CUDA_CHECK(cudaMemcpyAsync(...));
//   TESSERA_CUBLAS_CHECK(cublasDgemm(...));
//   TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(...));
// which throw platform::CudaError naming the call as written, the library's
// error and the file and line (DeviceOutOfMemory where it found no memory). Each macro takes only its library's status
// type, so checking a call with the wrong one does not compile.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "base/error.hpp"
#include "kernels/cuda/cuda_api.hpp"

namespace tessera::cuda::detail {

[[noreturn]] inline void throw_error(const char* call, const std::string& error, const char* file, int line) {
  throw platform::CudaError(std::string(call) + " failed: " + error + " (" + file + ":" + std::to_string(line) + ")");
}

// A call that found no device memory (a workspace, a library's own): the command line's GPU out of memory (exit 4),
// as a buffer the device's allocator refuses is, not an internal error; the GPU warm-up skips the shape.
[[noreturn]] inline void throw_out_of_memory(const char* call, const std::string& error, const char* file, int line) {
  throw DeviceOutOfMemory("GPU out of memory: " + std::string(call) + " failed: " + error + " (" + file + ":" +
                          std::to_string(line) + ")");
}

inline const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "cusolverStatus_t";
  }
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  // Clear the error so the next call does not report it again (sticky errors
  // such as a kernel fault stay; every later call then fails with its own).
  (void)cudaGetLastError();
  const std::string error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) throw_out_of_memory(call, error, file, line);
  throw_error(call, error, file, line);
}

inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string error = std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw_out_of_memory(call, error, file, line);
  throw_error(call, error, file, line);
}

inline void check_cusolver(cusolverStatus_t s, const char* call, const char* file, int line) {
  if (s == CUSOLVER_STATUS_SUCCESS) return;
  const std::string error = std::string(cusolver_status_name(s)) + " (" + std::to_string(static_cast<int>(s)) + ")";
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) throw_out_of_memory(call, error, file, line);
  throw_error(call, error, file, line);
}

}  // namespace tessera::cuda::detail

// Variadic so that a call whose arguments hold a top-level comma (a template
// argument list) still reads as one argument.
#define TESSERA_CUDA_CHECK(...) ::tessera::cuda::detail::check_cuda((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
#define TESSERA_CUBLAS_CHECK(...) ::tessera::cuda::detail::check_cublas((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
#define TESSERA_CUSOLVER_CHECK(...) \
  ::tessera::cuda::detail::check_cusolver((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
