// Single-core speed of the tile kernels over tile shapes (Google Benchmark).
// Used to choose default tile sizes and, later, to calibrate kernel models.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/tile_kernels.hpp"

namespace {
using namespace tessera::kernels;

template <class T>
std::vector<T> rnd(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(g));
  return v;
}

template <class T>
void BM_Gsmm(benchmark::State& st) {
  const index_t B = st.range(0);
  set_blas_threads(1);
  auto a = rnd<T>(B * B, 1), b = rnd<T>(B * B, 2), c = rnd<T>(B * B, 3);
  for (auto _ : st) gsmm<T>(B, B, B, a.data(), B, b.data(), B, c.data(), B);
  st.counters["GFlops"] =
      benchmark::Counter(2.0 * B * B * B, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

template <class T>
void BM_Ssrfb(benchmark::State& st) {
  const index_t B = st.range(0), ib = st.range(1);
  set_blas_threads(1);
  auto r = rnd<T>(B * B, 1), a = rnd<T>(B * B, 2), t = rnd<T>(ib * B, 3), a1 = rnd<T>(B * B, 4), a2 = rnd<T>(B * B, 5);
  std::vector<T> w(ib * B);
  for (index_t i = 0; i < B; ++i) r[i + i * B] += T(B);
  tsqrt<T>(B, B, ib, r.data(), B, a.data(), B, t.data(), ib, w.data());
  for (auto _ : st) ssrfb<T>(true, B, B, B, ib, a.data(), B, t.data(), ib, a1.data(), B, a2.data(), B, w.data());
  // Useful flops of the update in the standard count: 4 B^3.
  st.counters["GFlops"] =
      benchmark::Counter(4.0 * B * B * B, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

BENCHMARK_TEMPLATE(BM_Gsmm, double)->Arg(128)->Arg(192)->Arg(256)->Arg(320)->Arg(384)->Arg(512);
BENCHMARK_TEMPLATE(BM_Gsmm, float)->Arg(128)->Arg(256)->Arg(384)->Arg(512);
BENCHMARK_TEMPLATE(BM_Ssrfb, double)
    ->Args({256, 32})
    ->Args({256, 64})
    ->Args({320, 32})
    ->Args({320, 64})
    ->Args({384, 48});
BENCHMARK_TEMPLATE(BM_Ssrfb, float)->Args({256, 32})->Args({384, 48})->Args({384, 64});

}  // namespace

BENCHMARK_MAIN();

namespace {
template <class T>
void BM_Trsm(benchmark::State& st) {
  const index_t B = st.range(0);
  set_blas_threads(1);
  auto l = rnd<T>(B * B, 1), a = rnd<T>(B * B, 2);
  for (index_t i = 0; i < B; ++i) l[i + i * B] += T(B);
  for (auto _ : st) trsm<T>(B, B, l.data(), B, a.data(), B);
  st.counters["GFlops"] =
      benchmark::Counter(1.0 * B * B * B, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
template <class T>
void BM_GsmmDiag(benchmark::State& st) {
  const index_t B = st.range(0);
  set_blas_threads(1);
  auto a = rnd<T>(B * B, 1), c = rnd<T>(B * B, 3);
  for (auto _ : st) gsmm_diag<T>(B, B, B, a.data(), B, c.data(), B);
  st.counters["GFlops"] =
      benchmark::Counter(1.0 * B * B * B, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
template <class T>
void BM_Potf2p(benchmark::State& st) {
  const index_t B = st.range(0);
  set_blas_threads(1);
  auto a0 = rnd<T>(B * B, 1);
  for (index_t i = 0; i < B; ++i) a0[i + i * B] += T(B);
  auto a = a0;
  for (auto _ : st) {
    st.PauseTiming();
    a = a0;
    st.ResumeTiming();
    potf2p<T>(B, B, a.data(), B);
  }
  st.counters["GFlops"] =
      benchmark::Counter(B * B * B / 3.0, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK_TEMPLATE(BM_Trsm, double)->Arg(256)->Arg(384);
BENCHMARK_TEMPLATE(BM_Trsm, float)->Arg(256)->Arg(384);
BENCHMARK_TEMPLATE(BM_GsmmDiag, double)->Arg(256)->Arg(384);
BENCHMARK_TEMPLATE(BM_GsmmDiag, float)->Arg(256)->Arg(384);
BENCHMARK_TEMPLATE(BM_Potf2p, double)->Arg(256)->Arg(384);
BENCHMARK_TEMPLATE(BM_Potf2p, float)->Arg(256)->Arg(384);
}  // namespace
