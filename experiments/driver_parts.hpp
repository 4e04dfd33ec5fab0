#pragma once
// The parts of one run (experiments/driver.cpp puts them together):
//   run_config.cpp       the configuration: defaults resolved, every option checked before work starts
//   run_local.cpp        one node without GPUs: the runtime on threads (or a simulated node)
//   run_distributed.cpp  one node of a distributed run, or one node with GPUs: the protocol's runtime
//   peers.cpp            LAPACK and cuSOLVER on one dense matrix
//   report.cpp           the summary line and the result JSON
// Every part looks the algorithm up in the factorization registry
// (algorithms/factorization.hpp); none branches on it.
#include <chrono>

#include "algorithms/factorization.hpp"
#include "base/matrix_market.hpp"
#include "experiments/driver.hpp"

namespace tessera::driver {

// The tasks of a run whose matrix does not exist: only their shapes, for the kernel model.
class PhantomExecutor final : public Executor {
 public:
  PhantomExecutor(const Factorization& f, const TileLayout& l, const RunConfig& c)
      : f_(f), l_(l), precision_(c.precision), ib_(c.ib) {}
  void execute(const TaskDesc&, WorkerContext&) override {
    throw std::logic_error("a phantom run has no data to run a kernel on");
  }
  KernelShape shape(const TaskDesc& t) const override { return f_.shape(l_, t, precision_, ib_); }

 private:
  const Factorization& f_;
  const TileLayout& l_;
  char precision_;
  index_t ib_;
};

// CPU seconds the whole process has used (every thread).
double process_cpu_s();
// Wall seconds since t0 (a steady clock's reading).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// Resolves the defaults of `c` and checks every option (InputError naming it).
void resolve(RunConfig& c, const DenseMatrix* input);
// The GPU options' values and combinations (--gpu-streams, --gpu-kernel-depth)
// against the run's GPUs and backend (c.machine: a simulated run's file);
// InputError naming them. resolve() calls it; --B auto first, so that a bad
// combination is refused before every child run of the tuning fails on it.
void check_gpu_options(const RunConfig& c);
RuntimeOptions runtime_options(const RunConfig& c);
// The CUDA device ordinal of a rank's GPU g (1-based) of `gpus`, with
// `present` devices on the host and `local_ranks` ranks of the job on it
// (mpirun's OMPI_COMM_WORLD_LOCAL_SIZE; this one local_rank): local rank r
// takes devices r*gpus .. r*gpus + gpus - 1, so that no two ranks plan
// against and allocate on one device, each taking its whole memory for its
// own; fewer than local_ranks*gpus devices is an InputError. Where the user
// chose each rank's devices (CUDA_VISIBLE_DEVICES set: `chosen`), they are
// taken as given, from 0.
int cuda_ordinal(int g, int gpus, int present, int local_rank, int local_ranks, bool chosen);

template <class T>
void run_local(RunResult& r, platform::Platform& platform, const DenseMatrix* input);
template <class T>
void run_distributed(RunResult& r, platform::Platform& platform, const DenseMatrix* input);
template <class T>
void run_peer(RunResult& r, platform::Platform& platform, const DenseMatrix* input);

}  // namespace tessera::driver
