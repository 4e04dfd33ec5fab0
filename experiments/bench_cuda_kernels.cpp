// The GPU's tile kernels, one at a time (issue 15 point 4), as Google
// Benchmark cases beside bench_kernels (the cores'): every kernel the runtime
// runs on a GPU, d and s, square tiles of 1024, 2048 and 4096, QR's at inner
// blocking 32, 64, 128 and 256. Each iteration is one call timed as `tessera
// calibrate --device cuda` times it (experiments/calibrate_device.hpp:
// operands in device memory, the destroyed input restored, then the kernel
// and a synchronize), reported as manual time. Counters: TFlops (the
// factorization's standard flop count of the call) and of_gemm, the rate over
// cuBLAS GEMM's (GSMM) at the tile's width and precision, the ratio point 4
// sets targets on (QR kernels >= 0.6, Cholesky's >= 0.8). POTF2' and TRSM
// also recursing to leaves of 128, 256 and 512 (".../leafL"; the default is
// cuSOLVER's POTRF and cuBLAS's TRSM on the whole tile), TRSM through the
// inverses of its diagonal blocks of 128 to 1024 below the tile's order (".../inverseL"), QR's at ib 32 and 64 with
// other groups of reflectors applied at once (".../group0": one block of ib at a time); LU's panel (lu_panel,
// cuSOLVER's getrf) as --d 0 runs it, 32,768 rows tall
// (".../m32768"); and the kernels of --dist gpu-columns at N = 32,768 and
// columns of 1024 and 2048, the first (tallest) column's (".../m32768":
// POTF2', GEQRT and LARFB at ib 128, GEQRT also by Cholesky QR panels,
// LARFB also with groups of 512 reflectors and the whole column's at once,
// ".../group2048"; ".../m30720" at width 2048: the first GSMM_DIAG and the
// TRSM inside POTF2', the last also by inverted blocks of 128 to 1024);
// Cholesky QR panels with their Gram matrices summed from blocks of 512,
// 2048 or all of the 32,768 rows (".../gramR", CudaKernelOptions::
// cholqr_gram_rows; cholqr1 forms them by SYRK), and profiled (".../profile1":
// a counter ms_OP per operation of the panels, its milliseconds per call of
// the kernel, cholqr_panel.hpp's names: gram, potrf, solve_lt, lu_sign, ...;
// GEQRT at m32768 and TSQRT at 4096, ib 128);
// cuSOLVER's own potrf and geqrf of the whole tile (".../vendor0", run_vendor below);
// the unsuffixed rows: CudaKernelOptions' defaults.
//
//   build/bench_cuda_kernels --benchmark_filter='ssrfb' --benchmark_out=k.json
//
// Without a CUDA device it says why and exits 2.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/kernel_table.hpp"
#include "experiments/calibrate_device.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "platform/device.hpp"

namespace {
using namespace tessera;

double flops(const KernelShape& s) { return kernel_info(s.kernel)->flops(double(s.m), double(s.n), double(s.k)); }

// GSMM's rate per (device, size, precision), measured once on each device (10
// calls after 3 warm-up calls). Per device: main() makes several, each with
// its own kernel options, streams and handles, and a row's of_gemm is against
// the GEMM of the device that ran it, not of whichever was measured first.
double gemm_rate(platform::Device& dev, std::int64_t B, char p) {
  static std::map<std::tuple<const platform::Device*, std::int64_t, char>, double> rates;
  const auto key = std::make_tuple(&dev, B, p);
  if (const auto it = rates.find(key); it != rates.end()) return it->second;
  const KernelShape g{kGsmm, p, B, B, B, 0};
  kernels::DeviceKernelTimer timer(dev, g, kernels::CalibrationOptions{});
  for (int i = 0; i < 3; ++i) timer.call();
  double t = 0;
  for (int i = 0; i < 10; ++i) t += timer.call();
  return rates[key] = 10 * flops(g) / t;
}

// The device's profiled phases by name: (calls, seconds).
std::map<std::string, std::pair<std::uint64_t, double>> phases(const platform::Device& dev) {
  std::map<std::string, std::pair<std::uint64_t, double>> out;
  for (const platform::Device::KernelPhase& p : dev.kernel_phases()) out[p.name] = {p.calls, p.seconds};
  return out;
}

// The row's TFlops and of_gemm counters from its timed calls' total seconds.
void set_rate(benchmark::State& st, platform::Device& dev, const KernelShape& s, double total) {
  const double rate = flops(s) * double(st.iterations()) / total;
  st.counters["TFlops"] = rate / 1e12;
  // Against the square GEMM of the tile's width: the same as its height but for
  // LU's tall panel, whose m-sized GEMM (32,768³, 26 GB of operands) is no
  // reference for a 1,024-wide panel and cost minutes of a lent machine (the
  // H100's kernels step ran out of its 90 s two rows after that one).
  st.counters["of_gemm"] = rate / gemm_rate(dev, s.n, s.precision);
}

void run_case(benchmark::State& st, platform::Device& dev, KernelShape s) {
  kernels::CalibrationOptions o;
  if (s.ib > 0) o.ib = s.ib;
  try {
    kernels::DeviceKernelTimer timer(dev, s, o);
    for (int i = 0; i < 3; ++i) timer.call();
    const std::uint64_t fallbacks = dev.kernel_fallbacks();
    const auto phases_before = phases(dev);
    double total = 0;
    for (auto _ : st) {
      const double t = timer.call();
      st.SetIterationTime(t);
      total += t;
    }
    set_rate(st, dev, s, total);
    // Timed calls that took the slower path after a failed check (Cholesky QR panels: 0 on these random tiles).
    st.counters["fallbacks"] = static_cast<double>(dev.kernel_fallbacks() - fallbacks);
    // A profiled device's phases: milliseconds per timed call of the kernel.
    for (const auto& [name, p] : phases(dev)) {
      const auto before = phases_before.find(name);
      const double s0 = before == phases_before.end() ? 0 : before->second.second;
      st.counters["ms_" + name] = (p.second - s0) * 1e3 / double(st.iterations());
    }
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}

// The vendor's own factorization of a whole tile (cuSOLVER's potrf or geqrf,
// kernels::cusolver_factor: the operand already on the GPU, after a warm-up
// call on an identity of the same size; only the factorization is timed),
// as ".../vendor": how close the library itself comes to its GEMM on one
// tile's panel work, the yardstick for POTF2' and GEQRT's point 4 targets. A
// tile kernel runs the same panel plus what the tile's layout adds (GEQRT:
// its T factor), so a vendor row below 0.6 (QR) or 0.8 (Cholesky) of DGEMM
// is a measured bound on what one-call panels of the library can give. The
// operand: a random matrix (geqrf), or for potrf its symmetric part with n
// on the diagonal (strictly diagonally dominant, so positive definite);
// fresh operands each call, on the host (the copies, the stream and handle
// made per call and the identity warm-up are outside the timed part, which
// is why a row runs a fixed 10 iterations: Google Benchmark's minimum time
// counts manual time only, and a 1 ms POTRF would take hundreds of calls,
// each with tens of milliseconds around it). The time is the host's, from
// the launch to the stream's end: a launch's latency is in it.
template <class T>
void run_vendor(benchmark::State& st, platform::Device& dev, KernelShape s) {
  const bool potrf = s.kernel == kPotf2p;
  const std::size_t count = static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n);
  std::vector<T> a(count), tau(static_cast<std::size_t>(s.n));
  std::mt19937_64 gen(12345);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> fresh(count);
  for (T& x : fresh) x = static_cast<T>(u(gen));
  if (potrf)  // diagonally dominant: SPD without an O(n^3) product on the host
    for (std::int64_t i = 0; i < s.n; ++i) {
      for (std::int64_t j = 0; j < i; ++j) fresh[i + j * s.m] = fresh[j + i * s.m];
      fresh[i + i * s.m] = static_cast<T>(s.n);
    }
  const PeerRoutine routine = potrf ? PeerRoutine::Potrf : PeerRoutine::Geqrf;
  try {
    double total = 0;
    for (auto _ : st) {
      a = fresh;
      const kernels::CusolverRun r = kernels::cusolver_factor(routine, 0, s.m, s.n, a.data(), tau.data());
      if (r.info != 0) throw std::runtime_error("cuSOLVER returned info " + std::to_string(r.info));
      st.SetIterationTime(r.factor_s);
      total += r.factor_s;
    }
    set_rate(st, dev, s, total);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The runtime's device, and the same GPU with Cholesky's POTF2' and TRSM
  // recursing to leaves of these orders and QR's kernels applying other
  // groups of reflectors (0: one block of ib at a time), TRSM through
  // inverted blocks and QR's panels by Cholesky QR, for the rows
  // ".../leafL", ".../groupG", ".../inverseL" and ".../cholqr1" that choose
  // the defaults (cuda_api.hpp).
  std::unique_ptr<platform::Device> dev;
  std::map<int, std::unique_ptr<platform::Device>> other_leaf, other_group, other_inverse, other_cholqr, other_gram,
      other_profile;
  try {
    dev = kernels::make_cuda_device(1, 0, 0);
    for (const int leaf : {128, 256, 512}) {
      kernels::CudaKernelOptions o;
      o.recursion_leaf = leaf;
      other_leaf[leaf] = kernels::make_cuda_device(1, 0, 0, o);
    }
    for (const int group : {0, 128, 512, 2048}) {
      kernels::CudaKernelOptions o;
      o.reflector_group = group;
      other_group[group] = kernels::make_cuda_device(1, 0, 0, o);
    }
    for (const int inverse : {128, 256, 512, 1024}) {
      kernels::CudaKernelOptions o;
      o.trsm_inverse_leaf = inverse;
      other_inverse[inverse] = kernels::make_cuda_device(1, 0, 0, o);
    }
    {
      kernels::CudaKernelOptions o;
      o.cholqr_panels = true;
      other_cholqr[1] = kernels::make_cuda_device(1, 0, 0, o);
      for (const int rows : {512, 2048, 32768}) {
        o.cholqr_gram_rows = rows;
        other_gram[rows] = kernels::make_cuda_device(1, 0, 0, o);
      }
      o.cholqr_gram_rows = 0;
      o.profile_panels = true;
      other_profile[1] = kernels::make_cuda_device(1, 0, 0, o);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_kernels: no CUDA GPU to measure: %s\n", e.what());
    return 2;
  }
  const std::uint16_t cholesky[] = {kGsmm, kGsmmDiag, kTrsm, kPotf2p}, qr[] = {kGeqrt, kLarfb, kTsqrt, kSsrfb},
                      lu[] = {kLuTrsmU, kLuGemm, kLuDiag, kLuTrsmL};
  for (const char p : {'d', 's'})
    for (const std::int64_t B : {1024, 2048, 4096}) {
      // variant: "" (the default device), "leaf", "group" or "inverse" with its
      // value, "cholqr" (value 1: Cholesky QR panels), or "vendor" (value 0:
      // cuSOLVER's own routine on the tile, run_vendor, 10 iterations).
      const auto add = [&](std::uint16_t k, std::int64_t ib, const std::string& variant = "", int value = 0,
                           std::int64_t m = 0) {
        const KernelShape s{k, p, m > 0 ? m : B, B, kernel_info(k)->has_k ? B : 0, ib};
        std::string name = std::string(kernel_key(k)) + "/" + p + "/" + std::to_string(B);
        if (m > 0) name += "/m" + std::to_string(m);
        if (ib > 0) name += "/ib" + std::to_string(ib);
        if (!variant.empty()) name += "/" + variant + std::to_string(value);
        platform::Device* on = variant == "leaf"      ? other_leaf.at(value).get()
                               : variant == "group"   ? other_group.at(value).get()
                               : variant == "inverse" ? other_inverse.at(value).get()
                               : variant == "cholqr"  ? other_cholqr.at(value).get()
                               : variant == "gram"    ? other_gram.at(value).get()
                               : variant == "profile" ? other_profile.at(value).get()
                                                      : dev.get();
        const bool vendor = variant == "vendor";
        auto* b = benchmark::RegisterBenchmark(name.c_str(), [on, s, vendor](benchmark::State& st) {
          if (!vendor) run_case(st, *on, s);
          else if (s.precision == 'd') run_vendor<double>(st, *on, s);
          else run_vendor<float>(st, *on, s);
        });
        b->UseManualTime()->Unit(benchmark::kMillisecond);
        if (vendor) b->Iterations(10);
      };
      for (const auto k : cholesky) add(k, 0);
      for (const auto k : {kTrsm, kPotf2p})
        for (const auto& [leaf, d] : other_leaf) add(k, 0, "leaf", leaf);
      for (const auto& [inverse, d] : other_inverse)
        if (inverse < B) add(kTrsm, 0, "inverse", inverse);  // (one leaf: the library's TRSM)
      for (const auto k : qr)
        for (const std::int64_t ib : {32, 64, 128, 256}) {
          add(k, ib);
          if (ib < 128)
            for (const auto& [group, d] : other_group)
              if (group <= 512) add(k, ib, "group", group);
          if (k == kGeqrt || k == kTsqrt) add(k, ib, "cholqr", 1);
        }
      if (B == 4096) add(kTsqrt, 128, "profile", 1);
      // The vendor's whole-tile POTRF and GEQRF ("vendor0"; POTF2' of a square tile is the former plus nothing).
      add(kPotf2p, 0, "vendor", 0);
      add(kGeqrt, 0, "vendor", 0);
      if (B == 2048) add(kGeqrt, 0, "vendor", 0, 32768);
      for (const auto k : lu) add(k, 0);
      // LU's panel as --d 0 factors it on the GPU: all the rows of a column of N = 32,768.
      add(kLuPanel, 0, "", 0, 32768);
      // --dist gpu-columns, N = 32,768: the first column's panel and updates, one tile row tall.
      if (B <= 2048) {
        // POTF2' on all 32,768 rows; the first update and POTF2''s own TRSM on the 32,768 - B below.
        add(kPotf2p, 0, "", 0, 32768);
        for (const auto k : {kGsmmDiag, kTrsm}) add(k, 0, "", 0, 32768 - B);
        for (const auto& [inverse, d] : other_inverse)
          if (inverse < B) add(kTrsm, 0, "inverse", inverse, 32768 - B);
        add(kGeqrt, 128, "", 0, 32768);
        add(kGeqrt, 128, "cholqr", 1, 32768);
        for (const auto& [rows, d] : other_gram) add(kGeqrt, 128, "gram", rows, 32768);
        add(kGeqrt, 128, "profile", 1, 32768);
        add(kLarfb, 128, "", 0, 32768);
        for (const int group : {512, 2048}) add(kLarfb, 128, "group", group, 32768);
      }
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
