#pragma once
// One kernel call's operands and the call itself, as `tessera calibrate`
// (experiments/calibrate.cpp) times it: the operands in a few copies, what a
// call overwrites put back before the next (prepare, untimed), the call
// (run). One case per calibrated kernel of the kernel table, and the QR
// binary tree's TTQRT and TTMQR (not calibrated: a run's GPU warm-up calls
// them, experiments/gpu_warmup.hpp); LU's are the kernels/cpu/lu_kernels.hpp
// calls the CPU TileKernels make.
//
// A device's calibration (experiments/calibrate_device.cpp) keeps the
// operands in the device's memory: it mirrors the host copies there
// (operand), restores and calls through the device's TileKernels
// (prepare_on, run_on), and makes QR's V and T there itself (setup_on) when
// the host did not (host_factors false: a 4096-wide TSQRT on one core takes
// seconds).
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/task.hpp"
#include "kernels/cpu/lu_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "kernels/tile_kernels_api.hpp"

namespace tessera::kernels::calibration {

template <class T>
void fill(std::vector<T>& v, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = static_cast<T>(static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5);
  }
}

// Whether run_on has a case for `kernel`: every calibrated kernel but LU's
// candidate selection (LEAF, MERGE: CPU cores only), and the QR binary
// tree's TTQRT and TTMQR (which a calibration does not time: they take
// TSQRT's and SSRFB's rates; a run's GPU warm-up calls them,
// experiments/gpu_warmup.hpp).
inline bool has_device_call(std::uint16_t kernel) {
  switch (kernel) {
    case kPotf2p:
    case kTrsm:
    case kGsmm:
    case kGsmmDiag:
    case kGeqrt:
    case kLarfb:
    case kTsqrt:
    case kSsrfb:
    case kTtqrt:
    case kTtmqr:
    case kLuPanel:
    case kLuDiag:
    case kLuTrsmL:
    case kLuTrsmU:
    case kLuGemm: return true;
    default: return false;
  }
}

// One kernel call's operands, in `sets` copies.
template <class T>
class KernelCall {
 public:
  KernelCall(const KernelShape& s, std::int64_t ib, int sets, std::uint64_t seed, bool host_factors = true)
      : s_(s), m_(s.m), n_(s.n), k_(s.k), ib_(ib), host_factors_(host_factors) {
    for (int c = 0; c < sets; ++c) sets_.push_back(make_set(seed * 31 + c));
  }
  // The bytes of one set, in double: sizes past 2^32 overflow any integer product.
  static double set_bytes(const KernelShape& s, std::int64_t ib_elements) {
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
                 k = static_cast<double>(std::max<std::int64_t>(s.k, 1)), ib = static_cast<double>(ib_elements);
    double e = 0;
    switch (s.kernel) {
      case kPotf2p: e = 2 * m * n; break;
      case kTrsm:
      case kLuTrsmL: e = n * n + 2 * m * n; break;
      case kGsmm: e = m * k + n * k + m * n; break;
      case kGsmmDiag: e = m * k + m * n; break;
      case kGeqrt: e = 2 * m * n + 2 * ib * n; break;
      case kLarfb: e = m * k + ib * k + m * n + ib * n; break;
      case kTsqrt:
      case kTtqrt: e = 2 * (n * n + m * n) + 2 * ib * n; break;
      case kSsrfb:
      case kTtmqr: e = m * k + ib * k + k * n + m * n + ib * n; break;
      case kLuLeaf:
      case kLuMerge: e = m * n + std::min(m, n); break;
      case kLuPanel: e = 2 * m * n + std::min(m, n); break;
      case kLuDiag: e = 2 * m * n; break;
      case kLuTrsmU: e = m * m + 2 * m * n; break;
      case kLuGemm: e = m * k + k * n + m * n; break;
      default: break;
    }
    return e * sizeof(T);
  }
  int sets() const { return static_cast<int>(sets_.size()); }

  // Puts back the operands a call overwrites in a way that would change the
  // next call's speed (untimed).
  void prepare(int c) {
    Set& x = sets_[c];
    if (restores_a()) std::memcpy(x.a.data(), x.a0.data(), x.a.size() * sizeof(T));
    if (restores_b()) std::memcpy(x.b.data(), x.b0.data(), x.b.size() * sizeof(T));
  }

  // Evicts what prepare() restored from every cache level (clflush, line by
  // line, then a fence), so that the call finds its destroyed input in
  // memory, as a run's task finds a tile another task wrote (untimed). A
  // no-op where the instruction set has no cache flush.
  void flush_restored(int c) {
    Set& x = sets_[c];
    if (restores_a()) flush(x.a);
    if (restores_b()) flush(x.b);
  }

  void run(int c) {
    Set& x = sets_[c];
    switch (s_.kernel) {
      case kPotf2p:
        if (potf2p<T>(m_, n_, x.a.data(), m_) != 0) throw std::logic_error("calibration: POTF2' input not SPD");
        break;
      case kTrsm: trsm<T>(m_, n_, x.b.data(), n_, x.a.data(), m_); break;
      case kGsmm: gsmm<T>(m_, n_, k_, x.a.data(), m_, x.b.data(), n_, x.c.data(), m_); break;
      case kGsmmDiag: gsmm_diag<T>(m_, n_, k_, x.a.data(), m_, x.c.data(), m_); break;
      case kGeqrt: geqrt<T>(m_, n_, ib_, x.a.data(), m_, x.t.data(), ib_, x.w.data()); break;
      case kLarfb: larfb<T>(true, m_, n_, k_, ib_, x.b.data(), m_, x.t.data(), ib_, x.c.data(), m_, x.w.data()); break;
      case kTsqrt: tsqrt<T>(m_, n_, ib_, x.b.data(), n_, x.a.data(), m_, x.t.data(), ib_, x.w.data()); break;
      case kTtqrt: ttqrt<T>(m_, n_, ib_, x.b.data(), n_, x.a.data(), m_, x.t.data(), ib_, x.w.data()); break;
      case kTtmqr:
        ttmqr<T>(true, m_, n_, k_, ib_, x.b.data(), m_, x.t.data(), ib_, x.a.data(), k_, x.c.data(), m_, x.w.data());
        break;
      case kSsrfb:
        ssrfb<T>(true, m_, n_, k_, ib_, x.b.data(), m_, x.t.data(), ib_, x.a.data(), k_, x.c.data(), m_, x.w.data());
        break;
      // LEAF and MERGE: GEPP's selection on a copy it makes itself (the input stays as it is).
      case kLuLeaf:
      case kLuMerge: select_pivot_rows<T>(m_, n_, x.a.data(), m_, x.piv.data()); break;
      // PANEL: GEPP in place, as the runtime runs it on the gathered panel (prepare restores the input).
      case kLuPanel: getrf_panel<T>(m_, n_, x.a.data(), m_, x.piv.data()); break;
      case kLuDiag:
        if (getrf_nopiv<T>(m_, n_, x.a.data(), m_) != 0)
          throw std::logic_error("calibration: LU_DIAG met a zero pivot");
        break;
      case kLuTrsmL: trsm_upper_right<T>(m_, n_, x.b.data(), n_, x.a.data(), m_); break;
      case kLuTrsmU: trsm_unit_lower<T>(m_, n_, x.b.data(), m_, x.a.data(), m_); break;
      case kLuGemm: gemm_update<T>(m_, n_, k_, x.a.data(), m_, x.b.data(), k_, x.c.data(), m_); break;
      default: throw std::logic_error("calibration: no benchmark for kernel " + std::to_string(s_.kernel));
    }
  }

  // --- On a device (see the top of this file) ---
  enum Operand { kA, kA0, kB, kB0, kC, kT, kR, kOperands };
  // Host operand `which` of copy c (empty when the kernel has none). LU's
  // pivot rows are not among them: PANEL's pivots come back to the host
  // (device_pivots_), and LEAF and MERGE run on CPU cores only
  // (kernels/tile_kernels_api.hpp), so a device is not timed on them.
  std::vector<T>& operand(int c, int which) {
    Set& x = sets_[c];
    std::vector<T>* all[kOperands] = {&x.a, &x.a0, &x.b, &x.b0, &x.c, &x.t, &x.r};
    return *all[which];
  }
  // Makes LARFB's, SSRFB's and TTMQR's V and T on the device from the random
  // panel it holds (host_factors false), as GEQRT, TSQRT and TTQRT leave them.
  void setup_on(TileKernels<T>& K, T* const* p) {
    if (host_factors_) return;
    if (s_.kernel == kLarfb) K.geqrt(m_, k_, ib_, p[kB], m_, p[kT], ib_);
    if (s_.kernel == kSsrfb) K.tsqrt(m_, k_, ib_, p[kR], k_, p[kB], m_, p[kT], ib_);
    if (s_.kernel == kTtmqr) K.ttqrt(m_, k_, ib_, p[kR], k_, p[kB], m_, p[kT], ib_);
  }
  // prepare() on the device: the destroyed inputs restored from their pristine copies.
  void prepare_on(TileKernels<T>& K, T* const* p) {
    const auto restore = [&](int to, int from, std::size_t n) {
      K.copy(static_cast<index_t>(n), 1, p[from], static_cast<index_t>(n), p[to], static_cast<index_t>(n));
    };
    if (restores_a()) restore(kA, kA0, sets_[0].a.size());
    if (restores_b()) restore(kB, kB0, sets_[0].b.size());
  }
  // run() through the device's kernels, on its copies p[Operand].
  void run_on(TileKernels<T>& K, T* const* p) {
    switch (s_.kernel) {
      case kPotf2p:
        if (K.potf2p(m_, n_, p[kA], m_) != 0) throw std::logic_error("calibration: POTF2' input not SPD");
        break;
      case kTrsm: K.trsm(m_, n_, p[kB], n_, p[kA], m_); break;
      case kGsmm: K.gsmm(m_, n_, k_, p[kA], m_, p[kB], n_, p[kC], m_); break;
      case kGsmmDiag: K.gsmm_diag(m_, n_, k_, p[kA], m_, p[kC], m_); break;
      case kGeqrt: K.geqrt(m_, n_, ib_, p[kA], m_, p[kT], ib_); break;
      case kLarfb: K.larfb(true, m_, n_, k_, ib_, p[kB], m_, p[kT], ib_, p[kC], m_); break;
      case kTsqrt: K.tsqrt(m_, n_, ib_, p[kB], n_, p[kA], m_, p[kT], ib_); break;
      case kSsrfb: K.ssrfb(true, m_, n_, k_, ib_, p[kB], m_, p[kT], ib_, p[kA], k_, p[kC], m_); break;
      case kTtqrt: K.ttqrt(m_, n_, ib_, p[kB], n_, p[kA], m_, p[kT], ib_); break;
      case kTtmqr: K.ttmqr(true, m_, n_, k_, ib_, p[kB], m_, p[kT], ib_, p[kA], k_, p[kC], m_); break;
      case kLuPanel:
        device_pivots_.resize(static_cast<std::size_t>(std::min(m_, n_)));
        K.lu_getrf(m_, n_, p[kA], m_, device_pivots_.data());
        break;
      case kLuDiag:
        if (K.lu_getrf_nopiv(m_, n_, p[kA], m_) != 0) throw std::logic_error("calibration: LU_DIAG met a zero pivot");
        break;
      case kLuTrsmL: K.lu_trsm_l(m_, n_, p[kB], n_, p[kA], m_); break;
      case kLuTrsmU: K.lu_trsm_u(m_, n_, p[kB], m_, p[kA], m_); break;
      case kLuGemm: K.lu_gemm(m_, n_, k_, p[kA], m_, p[kB], k_, p[kC], m_); break;
      default:
        throw std::logic_error(std::string("calibration: ") + kernel_name(s_.kernel) + " does not run on a device");
    }
  }

 private:
  // Whether a call destroys its input A (B): restored from A0 (B0) before the next call.
  bool restores_a() const {
    switch (s_.kernel) {
      case kPotf2p:
      case kTrsm:
      case kGeqrt:
      case kTsqrt:
      case kTtqrt:
      case kLuPanel:
      case kLuDiag:
      case kLuTrsmL:
      case kLuTrsmU: return true;
      default: return false;
    }
  }
  bool restores_b() const { return s_.kernel == kTsqrt || s_.kernel == kTtqrt; }
  static void flush(const std::vector<T>& v) {
#if defined(__x86_64__) || defined(__i386__)
    const auto* p = reinterpret_cast<const char*>(v.data());
    for (std::size_t i = 0; i < v.size() * sizeof(T); i += 64) _mm_clflush(p + i);
    _mm_mfence();
#else
    (void)v;
#endif
  }
  struct Set {
    std::vector<T> a, a0, b, b0, c, t, w;
    std::vector<T> r;          // SSRFB (TTMQR) on a device: the R its TSQRT (TTQRT) starts from
    std::vector<index_t> piv;  // LU: pivot rows
  };
  Set make_set(std::uint64_t seed) {
    Set x;
    // Elements of an r x c operand, checked: r * c wrapped in int64 from 3037000500^2 and a size past what a
    // vector holds threw length_error (an internal error, exit 5; calibrate checks the bytes first).
    const auto sz = [this](std::int64_t r, std::int64_t c) {
      if (r > 0 && c > static_cast<std::int64_t>(std::vector<T>().max_size()) / r)
        throw OutOfMemory("out of memory: an operand of " + std::to_string(r) + " x " + std::to_string(c) + " for " +
                          std::string(kernel_name(s_.kernel)) + " has more elements than a process can address");
      return static_cast<std::size_t>(r * c);
    };
    switch (s_.kernel) {
      case kPotf2p:
        // Diagonally dominant top block: SPD.
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed);
        for (std::int64_t i = 0; i < n_; ++i) x.a0[i + i * m_] += T(2 * n_);
        for (std::int64_t j = 0; j < n_; ++j)
          for (std::int64_t i = j + 1; i < n_; ++i) x.a0[j + i * m_] = x.a0[i + j * m_];
        x.a = x.a0;
        break;
      case kTrsm:
      case kLuTrsmL:
        // An n×n triangle with a dominant diagonal (TRSM: L, LU_TRSM_L: U):
        // A times its inverse stays of the order of A.
        x.b.resize(sz(n_, n_));
        fill(x.b, seed);
        for (std::int64_t i = 0; i < n_; ++i) x.b[i + i * n_] += T(n_);
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed + 1);
        x.a = x.a0;
        break;
      case kGsmm:
        x.a.resize(sz(m_, k_));
        x.b.resize(sz(n_, k_));
        x.c.resize(sz(m_, n_));
        fill(x.a, seed), fill(x.b, seed + 1), fill(x.c, seed + 2);
        break;
      case kGsmmDiag:
        x.a.resize(sz(m_, k_));
        x.c.resize(sz(m_, n_));
        fill(x.a, seed), fill(x.c, seed + 2);
        break;
      case kGeqrt:
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed);
        x.a = x.a0;
        x.t.resize(sz(ib_, n_));
        x.w.resize(sz(ib_, n_));
        break;
      case kLarfb:
        // V and T from a real GEQRT of an m×k panel.
        x.b.resize(sz(m_, k_));
        fill(x.b, seed);
        x.t.resize(sz(ib_, k_));
        x.w.resize(sz(ib_, std::max(n_, k_)));
        if (host_factors_) geqrt<T>(m_, k_, ib_, x.b.data(), m_, x.t.data(), ib_, x.w.data());
        x.c.resize(sz(m_, n_));
        fill(x.c, seed + 2);
        break;
      case kTsqrt:
      case kTtqrt:  // (A's upper trapezoid only, for TTQRT)
        x.b0.resize(sz(n_, n_));
        fill(x.b0, seed);
        for (std::int64_t i = 0; i < n_; ++i) x.b0[i + i * n_] += T(n_);
        x.b = x.b0;
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed + 1);
        x.a = x.a0;
        x.t.resize(sz(ib_, n_));
        x.w.resize(sz(ib_, n_));
        break;
      case kSsrfb:
      case kTtmqr: {
        // V and T from a real TSQRT (TTMQR: TTQRT) of [R (k×k); A (m×k)].
        std::vector<T> r(sz(k_, k_));
        fill(r, seed + 3);
        for (std::int64_t i = 0; i < k_; ++i) r[i + i * k_] += T(k_);
        x.b.resize(sz(m_, k_));
        fill(x.b, seed);
        x.t.resize(sz(ib_, k_));
        x.w.resize(sz(ib_, std::max(n_, k_)));
        if (host_factors_ && s_.kernel == kSsrfb)
          tsqrt<T>(m_, k_, ib_, r.data(), k_, x.b.data(), m_, x.t.data(), ib_, x.w.data());
        else if (host_factors_) ttqrt<T>(m_, k_, ib_, r.data(), k_, x.b.data(), m_, x.t.data(), ib_, x.w.data());
        else x.r = std::move(r);
        x.a.resize(sz(k_, n_));
        x.c.resize(sz(m_, n_));
        fill(x.a, seed + 1), fill(x.c, seed + 2);
        break;
      }
      case kLuLeaf:
      case kLuMerge:
        x.a.resize(sz(m_, n_));
        fill(x.a, seed);
        x.piv.resize(static_cast<std::size_t>(std::min(m_, n_)));
        break;
      case kLuPanel:
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed);
        x.a = x.a0;
        x.piv.resize(static_cast<std::size_t>(std::min(m_, n_)));
        break;
      case kLuDiag:
        // Diagonally dominant: no pivoting needed, no zero pivot.
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed);
        for (std::int64_t i = 0; i < std::min(m_, n_); ++i) x.a0[i + i * m_] += T(2 * n_);
        x.a = x.a0;
        break;
      case kLuTrsmU:
        // L m×m unit lower with entries below the diagonal of at most 1/(2m): L^{-1} A stays of the order of A
        // (a unit triangle with O(1) random entries has an inverse that grows exponentially with m).
        x.b.resize(sz(m_, m_));
        fill(x.b, seed);
        for (T& e : x.b) e /= T(m_);
        x.a0.resize(sz(m_, n_));
        fill(x.a0, seed + 1);
        x.a = x.a0;
        break;
      case kLuGemm:
        x.a.resize(sz(m_, k_));
        x.b.resize(sz(k_, n_));
        x.c.resize(sz(m_, n_));
        fill(x.a, seed), fill(x.b, seed + 1), fill(x.c, seed + 2);
        break;
      default: throw std::logic_error("calibration: no benchmark for kernel " + std::to_string(s_.kernel));
    }
    return x;
  }

  KernelShape s_;
  std::int64_t m_, n_, k_, ib_;
  bool host_factors_ = true;
  std::vector<Set> sets_;
  std::vector<index_t> device_pivots_;  // PANEL on a device: its pivots, returned to the host
};

}  // namespace tessera::kernels::calibration
