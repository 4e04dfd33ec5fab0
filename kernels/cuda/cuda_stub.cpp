// Stands in for cuda_device.cpp when tessera is built without CUDA.
#include "base/error.hpp"
#include "kernels/cuda/cuda_api.hpp"

namespace tessera::kernels {

int cuda_device_count() { return 0; }

std::string cuda_backend_unavailable() { return "tessera was built without CUDA"; }

std::unique_ptr<platform::Device> make_cuda_device(int, int, std::size_t, CudaKernelOptions) {
  throw NotCompiled("CUDA");
}

CusolverRun cusolver_factor(PeerRoutine, int, std::int64_t, std::int64_t, double*, double*) {
  throw NotCompiled("CUDA");
}
CusolverRun cusolver_factor(PeerRoutine, int, std::int64_t, std::int64_t, float*, float*) { throw NotCompiled("CUDA"); }

}  // namespace tessera::kernels
