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
// Which shapes: the kernel shapes (Factorization::shape) of the run's tasks
// that run on one of this node's GPUs (the device of the task's main output
// or the one the task names: 000 §6 rule 1; not the host's tasks, nor other
// nodes'), per kernel,
// precision and inner blocking the most frequent and the largest (a library
// picks its kernels by size, and the largest sets the workspaces' high-water
// mark): at most two calls per kernel. Each on every compute stream a task
// of it may take (platform/kernel_lanes.hpp: a panel kernel on the panels'
// stream and, beside a panel already there, on the others; every other
// kernel on the others), each stream having its own library handles and
// workspaces. A shape whose operands do not fit beside the device's
// capacity is skipped and named in the report. Afterwards the device frees
// what it kept of the scratch buffers (Device::free_kept), so that the run
// starts from the memory it had. A kernel the warm-up cannot call (one that
// experiments/kernel_call.hpp has no device case for: LU's row moves on a
// GPU, GATHER, SCATTER, SWAP and EXCHANGE) keeps its first call in the run:
// the plan names it (`cold`).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/task.hpp"

namespace tessera::platform {
class Device;
}

namespace tessera::driver {

struct WarmupPlan {
  std::vector<KernelShape> shapes;  // in kernel-table order, then by size
  std::vector<std::string> cold;    // kernels of GPU tasks the warm-up cannot call ("LU_SWAP")
};

// The plan from the run's tasks: `generate` inserts them into a sink,
// `shape` gives a task's kernel shape, `on_gpu` whether a task runs on one of
// this node's GPUs.
WarmupPlan plan_warmup(const std::function<void(TaskSink&)>& generate,
                       const std::function<KernelShape(const TaskDesc&)>& shape,
                       const std::function<bool(const TaskDesc&)>& on_gpu);

struct GpuWarmup {
  double seconds = 0;                // every device, from the first upload to the last call's end
  int calls = 0;                     // kernel calls made, over devices and streams
  std::vector<std::string> shapes;   // the plan's shapes: "TRSM d 2048x2048", "SSRFB d 4096x4096 k 4096 ib 32"
  std::vector<std::string> skipped;  // "GPU 1: TSQRT d 4096x4096 ib 32: <why>"
  std::vector<std::string> cold;     // the plan's
};

// Warms each device with the plan's shapes (one device after another).
GpuWarmup warm_up_gpus(const std::vector<platform::Device*>& devices, const WarmupPlan& plan);

}  // namespace tessera::driver
