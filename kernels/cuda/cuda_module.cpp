// The module's one exported symbol (cuda_module.hpp): the table of the CUDA
// backend's entry points, defined in cuda_device.cpp and cusolver_peer.cpp.
#include "kernels/cuda/cuda_module.hpp"

namespace {

tessera::kernels::CusolverRun cusolver_d(tessera::PeerRoutine r, int ordinal, std::int64_t m, std::int64_t n, double* a,
                                         double* tau) {
  return tessera::kernels::cusolver_factor(r, ordinal, m, n, a, tau);
}
tessera::kernels::CusolverRun cusolver_s(tessera::PeerRoutine r, int ordinal, std::int64_t m, std::int64_t n, float* a,
                                         float* tau) {
  return tessera::kernels::cusolver_factor(r, ordinal, m, n, a, tau);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const tessera::kernels::CudaModule* tessera_cuda_module() {
  static constexpr tessera::kernels::CudaModule table{tessera::kernels::kCudaModuleAbi,
                                                      &tessera::kernels::cuda_device_count,
                                                      &tessera::kernels::make_cuda_device, &cusolver_d, &cusolver_s};
  return &table;
}
