#pragma once
// A machine description: the nodes of a cluster, their cores and GPUs, the
// links between them and the kernel models that time their kernels.
// Loaded from platform/machines/*.json (format: platform/machines/README.md);
// platform/simgrid builds the SimGrid platform of one.
//
// Every node of a machine is alike (the clusters of the papers are).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platform/kernel_time_model.hpp"

namespace tessera::platform {

struct LinkSpec {
  double bandwidth_Bps = 0;  // bytes per second
  double latency_s = 0;
};

struct GpuSpec {
  int count = 0;
  double memory_bytes = 0;
  LinkSpec pcie;      // host <-> this GPU
  std::string model;  // kernel model name; empty when count = 0
  // With several compute streams (--gpu-streams), how much of what a kernel
  // below GEMM's rate leaves of the GPU the other streams' kernels can use:
  // a kernel of share s (platform/kernel_time_model.hpp device_share) takes
  // 1 - stream_overlap (1 - s) of the GPU beside others. 1 (the default):
  // all of it; 0: none, every kernel fills the GPU while it runs (streams
  // then only reorder the work).
  double stream_overlap = 1;
  // The kernels whose implementation waits on the host before the call
  // returns (a CUDA GPU's: kernels/cuda/host_waits.hpp): with several
  // streams a simulated GPU's manager queues nothing else until they end.
  std::vector<std::uint16_t> host_waits;
  // Memory the GPU keeps per compute stream beyond the first, which
  // memory_bytes (measured with one) does not leave out: a simulated run
  // with --gpu-streams S and no --gpu-memory gives the runtime memory_bytes
  // less (S - 1) x this. 0: none (the default).
  double stream_reserve_bytes = 0;
};

struct NodeSpec {
  int cores = 1;
  std::string core_model;  // kernel model name
  // Optional: the core model of a run with T compute threads, by T (a
  // calibration measures kernels while T-1 others run). A run with T threads
  // uses the entry with the largest key <= T, else core_model.
  std::map<int, std::string> core_model_by_threads;
  GpuSpec gpus;
};

struct NetworkSpec {
  std::string topology = "star";  // every node has one link to a switch
  LinkSpec link;                  // one node's link to the switch
  // The figures are measured end-to-end values: SimGrid must not correct
  // them (its default LV08 model multiplies latency by 13.01, bandwidth by 0.97).
  bool calibrated = true;
};

class Machine {
 public:
  // Throws InputError naming the file, the field and the value when the file
  // is missing, malformed or describes an impossible machine.
  static Machine load(const std::string& path);
  // Same, from text; `origin` names it in messages.
  static Machine parse(const std::string& text, const std::string& origin);

  std::string name;
  std::string origin;  // file it came from
  // The OpenBLAS kernel set a calibrated file was measured with
  // (calibration.blas_core, written by tessera calibrate); empty when the file does not say.
  std::string blas_core;
  int nodes = 1;
  NodeSpec node;
  NetworkSpec network;

  // Kernel models by name (the file's "kernel_models").
  std::map<std::string, std::shared_ptr<const KernelTimeModel>> models;
  const KernelTimeModel& model(const std::string& name) const;
  const KernelTimeModel& core_model() const { return model(node.core_model); }
  const KernelTimeModel& core_model(int threads) const { return model(core_model_name(threads)); }
  const std::string& core_model_name(int threads) const;
};

}  // namespace tessera::platform
