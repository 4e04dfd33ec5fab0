// The peers: the vendor libraries' factorization of one dense matrix,
// LAPACK (OpenBLAS) on the host's cores or cuSOLVER on one GPU, each the
// routine the factorization registry names, checked like the runtime's runs.
#include <memory>
#include <optional>
#include <vector>

#include "experiments/driver_parts.hpp"
#include "experiments/host_pinning.hpp"
#include "experiments/input_matrix.hpp"
#include "experiments/test_fault.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/cuda/cuda_api.hpp"

namespace tessera::driver {

// The peer: LAPACKE's blocked factorization on one dense matrix, with
// OpenBLAS using as many threads as the tile runtime has compute threads.
template <class T>
void run_peer(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  const Factorization& F = c.factor ? *c.factor : factorization(c.algo);
  const TileLayout whole(c.m, c.n, c.B, 1, 0);  // one tile: the dense matrix itself
  r.p = r.q = 1;
  TileMatrix<T> a(whole);
  fill(a, c, input);
  std::vector<T> original;
  if (c.check) original = a.to_dense();
  T* d = a.tile(0, 0);
  kernels::set_blas_threads(c.threads);
  std::vector<T> aux;  // what the check needs besides the factor (QR: tau)
  int info = 0;
  if (c.impl == Impl::Cusolver) {
    // cuSOLVER on GPU 1 (CUDA device 0): time_s is the factorization alone,
    // with the matrix in device memory; copy_s the copies in and out.
    if (kernels::cuda_device_count() < 1 && TESSERA_HAVE_CUDA)
      throw InputError("--impl cusolver needs a CUDA GPU, and none is present");
    aux.assign(static_cast<std::size_t>(c.n), T(0));
    // The matrix page-locked as tessera's tiles are (unless --pageable), so
    // that copy_s is what a cuSOLVER user with pinned memory pays.
    std::unique_ptr<platform::Device> pinning_device;
    std::optional<HostPinning> pinned;
    if (!c.pageable && TESSERA_HAVE_CUDA) {
      pinning_device = kernels::make_cuda_device(1, 0, 0);
      pinned.emplace(*pinning_device,
                     std::vector<platform::HostRange>{{reinterpret_cast<std::byte*>(d), sizeof(T) * c.m * c.n}});
      r.pinned_bytes = pinned->bytes();
      r.pin_s = pinned->pin_s();
    }
    const kernels::CusolverRun g = kernels::cusolver_factor(F.cusolver_routine(), 0, c.m, c.n, d, aux.data());
    r.time_s = g.factor_s;
    r.copy_s = g.copy_s;
    r.gpu_warmup = GpuWarmup{g.warmup_s, 1, {}, {}, {}};  // the routine on an identity of the same size, untimed
    info = g.info;
    if (pinned) r.unpin_s = pinned->unpin();
  } else {
    const double t0 = platform.now(), cpu0 = process_cpu_s();
    info = F.lapack(c.m, c.n, d, aux);
    r.time_s = platform.now() - t0;
    r.cpu_s = process_cpu_s() - cpu0;
  }
  if (info > 0) F.throw_breakdown(info);
  if (info < 0) throw std::logic_error("LAPACKE returned info " + std::to_string(info));
  apply_test_fault(c, a);
  if (c.check) r.residuals = F.lapack_residual(original, a, aux);
  kernels::set_blas_threads(1);
}

template void run_peer<double>(RunResult&, platform::Platform&, const DenseMatrix*);
template void run_peer<float>(RunResult&, platform::Platform&, const DenseMatrix*);

}  // namespace tessera::driver
