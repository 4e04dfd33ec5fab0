#pragma once
// The CUDA backend as the rest of tessera sees it (no CUDA header here).
// Built from kernels/cuda/*.cpp when the CUDA toolkit is found, else from
// cuda_stub.cpp, whose make_cuda_device throws NotCompiled.
#include <cstddef>
#include <memory>

#include "platform/device.hpp"

namespace tessera::kernels {

// CUDA devices the driver reports; 0 when there is none (or no driver).
int cuda_device_count();

// GPU `gpu_index` (1-based, for names) of this node on CUDA device `ordinal`;
// `memory_cap` bytes of its memory at most (0: what is free at start).
std::unique_ptr<platform::Device> make_cuda_device(int gpu_index, int ordinal, std::size_t memory_cap);

}  // namespace tessera::kernels
