// One node without GPUs: the node runtime on the platform's threads (or, on
// a simulated node without data, only the tasks' modeled durations).
#include "experiments/driver_parts.hpp"
#include "experiments/input_matrix.hpp"
#include "experiments/test_fault.hpp"
#include "kernels/cpu/tile_kernels.hpp"

namespace tessera::driver {
template <class T>
void run_local(RunResult& r, platform::Platform& platform, const DenseMatrix* input) {
  const RunConfig& c = r.config;
  const Factorization& F = c.factor ? *c.factor : factorization(c.algo);
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  r.p = L.tile_rows();
  r.q = L.tile_cols();
  const RuntimeOptions opt = runtime_options(c);
  const Generator gen = [&](TaskSink& s) { F.tasks(L, s); };
  RunStats st;
  if (c.phantom) {
    PhantomExecutor ex(F, L, c);
    const double cpu0 = process_cpu_s();
    st = NodeRuntime(platform, opt).run(F.data_count(L), gen, ex);
    r.cpu_s = process_cpu_s() - cpu0;  // the simulator's own cost
  } else {
    // --column-major: the matrix a LAPACK caller holds, made first; then timed as that caller would pay them, the
    // tile store's allocation and the copy into it (the pages' first touch), with the run's threads.
    std::vector<T> dense;
    if (c.column_major) {
      TileMatrix<T> made(L);
      fill(made, c, input);
      dense = made.to_dense();
    }
    const auto convert0 = std::chrono::steady_clock::now();
    TileMatrix<T> a = c.column_major ? TileMatrix<T>::from_dense(L, dense.data(), c.m, c.threads) : TileMatrix<T>(L);
    if (c.column_major) r.convert_s = seconds_since(convert0);
    else fill(a, c, input);
    std::vector<T> original;
    if (c.check) original = c.column_major ? dense : a.to_dense();
    const std::unique_ptr<FactorData<T>> data = F.data(a, c.ib, {});
    kernels::set_blas_threads(1);
    r.settle_s = platform.settle();
    const double cpu0 = process_cpu_s();
    st = NodeRuntime(platform, opt).run(F.data_count(L), gen, data->executor());
    r.cpu_s = process_cpu_s() - cpu0;
    if (c.column_major) {  // the factors back where the caller wants them
      const auto back0 = std::chrono::steady_clock::now();
      a.to_dense(dense.data(), c.m, static_cast<std::size_t>(c.threads));
      r.convert_s += seconds_since(back0);
    }
    apply_test_fault(c, a);
    if (c.check) {
      RuntimeOptions copt = opt;
      copt.observer = nullptr;
      // Task graphs of the check run one BLAS thread per worker, like the factorization.
      const LocalGraphRun check_run = [&](std::size_t n, const Generator& g, Executor& ex) {
        kernels::set_blas_threads(1);
        NodeRuntime(platform, copt).run(n, g, ex);
        kernels::set_blas_threads(c.threads);
      };
      kernels::set_blas_threads(c.threads);
      r.residuals = data->residual(original, check_run);
      kernels::set_blas_threads(1);  // a later run in this process gets single-threaded kernels again
    }
  }
  r.time_s = st.elapsed_s;
  r.tasks = st.tasks;
  r.busy_s = st.busy_s;
}

template void run_local<double>(RunResult&, platform::Platform&, const DenseMatrix*);
template void run_local<float>(RunResult&, platform::Platform&, const DenseMatrix*);

}  // namespace tessera::driver
