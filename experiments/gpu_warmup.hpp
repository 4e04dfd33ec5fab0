#pragma once
// A real run's GPUs warmed before its clock starts (`tessera run
// --gpu-warmup`): each GPU calls once, on scratch operands, every kernel
// shape the run will give it, so that the libraries' one-time costs of a
// process stay out of the factorization's time, as they stay out of the
// cuSOLVER peer's (kernels/cuda/cusolver_peer.cpp warms up before its
// timing).
//
// Why (results/gpu-node/2026-11-25-h200, the traces of the real runs): the
// first call of each kernel took far longer than the others: Cholesky d at
// N = 32,768, B = 2048 on the H200, the first TRSM 69.9 ms against a median
// of 0.91, the first POTF2' 13.9 against 0.96, the first GSMM_DIAG 6.0
// against 0.20; QR's first GEQRT 193.6 against 36.1. Since CUDA 12.2 a
// kernel's module is loaded on its first launch (the CUDA C++ Programming
// Guide, "Lazy Loading"), and cuBLAS and cuSOLVER size their workspaces on
// first use. Those 88 ms were 20% of the Cholesky run, and the whole of the
// simulator's error on it (issue 15 point 7): without them the run's task
// times are within 4% of the calibration's medians.
//
// Which shapes: the run's tasks' kernel shapes (Factorization::shape) of the
// kernels a GPU runs (calibrate_device.hpp runs_on_device), per kernel,
// precision and inner blocking the most frequent and the largest (a library
// picks its kernels by size, and the largest sets the workspaces' high-water
// mark): at most two calls per kernel. Each on every compute stream a task
// of it may take (platform/kernel_lanes.hpp: a panel kernel on the panels'
// stream and, beside a panel already there, on the others; every other
// kernel on the others), each stream having its own library handles and
// workspaces. A shape whose operands do not fit beside the device's
// capacity is skipped and named in the report. Afterwards the device frees
// what it kept of the scratch buffers (Device::free_kept), so that the run
// starts from the memory it had.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/task.hpp"

namespace tessera::platform {
class Device;
}

namespace tessera::driver {

// The shapes to warm, from the run's tasks: `generate` inserts them into a
// sink, `shape` gives a task's kernel shape. In kernel-table order, then by
// size.
std::vector<KernelShape> warmup_shapes(const std::function<void(TaskSink&)>& generate,
                                       const std::function<KernelShape(const TaskDesc&)>& shape);

struct GpuWarmup {
  double seconds = 0;                // every device, from the first upload to the last call's end
  int calls = 0;                     // kernel calls made, over devices and streams
  std::vector<std::string> skipped;  // "GPU 1: TSQRT d 4096x4096 ib 32: <why>"
};

// Warms each device with `shapes` (one device after another).
GpuWarmup warm_up_gpus(const std::vector<platform::Device*>& devices, const std::vector<KernelShape>& shapes);

}  // namespace tessera::driver
