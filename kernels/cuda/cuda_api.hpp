#pragma once
// The CUDA backend as the rest of tessera sees it. No CUDA header here: the
// runtime, the driver and the tests include this whether or not CUDA was
// built. Built from kernels/cuda/cuda_device.cpp when the CUDA toolkit is
// found, else from cuda_stub.cpp, whose make_cuda_device throws
// platform::NotCompiled("CUDA").
#include <cstddef>
#include <memory>
#include <stdexcept>

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

// CUDA devices the driver reports; 0 when there is none, no driver, or CUDA
// was not built.
int cuda_device_count();

// GPU `gpu_index` (1-based, for names and messages) of this node on CUDA
// device `ordinal`. memory_cap: the most bytes of buffers the runtime may
// allocate on it (0: the free memory at start less a reserve for cuBLAS and
// cuSOLVER). Throws platform::CudaError when no CUDA device is present or the
// ordinal does not exist.
std::unique_ptr<platform::Device> make_cuda_device(int gpu_index, int ordinal, std::size_t memory_cap);

}  // namespace tessera::kernels
