#pragma once
// The CPU/GPU split of asynchronous CALU (paper 002, §4): the first d block
// columns of the matrix go to the CPU cores, the other N − d to the GPU(s).
// 002 §4.1 balances the CPUs' work per step, one panel plus d − 1 block-column
// updates at P·g1, against the GPU's N_K − d block-column updates at g2
// (T1 = T2); with W_panel / W_update → 1 (b ≪ m_K) this gives eq. (1):
//
//   d / N_K = P·g1 / (P·g1 + g2)
//
// where N_K is the number of block columns of the trailing matrix at step K,
// P the number of CPU cores, g1 one core's speed and g2 the GPU's. 002 keeps
// the fraction constant over the run (§4.1: re-evaluating it per step gains
// very little), so callers pass the whole matrix's block columns N = ceil(n/b)
// as N_K. The speeds are GEMM speeds (the update is a rank-b GEMM; eq. (1)
// is a ratio, so any consistent unit will do). 002 defines g1 and g2 as the
// manufacturers' peaks but computes d in its experiments at 80% of the CPUs'
// peak and 90% of the GPU's (§4.5: "using 80% of the CPUs' peak and 90% of
// the GPUs' peak leads to reliable values"); cpu_block_columns_from_peaks
// applies that convention, cpu_block_columns takes speeds as they are (from
// a machine file's kernel models or a calibration). With several GPUs, g2 is
// their sum (002 uses one GPU; eq. (1) treats the GPU side as one device).
#include <cstdint>

namespace tessera::models {

// 002 §4.5: the fractions of the manufacturers' peaks at which eq. (1) is
// evaluated in 002's experiments.
inline constexpr double kCpuPeakFraction = 0.8;
inline constexpr double kGpuPeakFraction = 0.9;

// d / N_K of eq. (1): P·g1 / (P·g1 + g2), in (0, 1). Throws
// std::invalid_argument, naming the value, when cores < 1 or a speed is not
// a finite positive number.
double cpu_column_fraction(int cores, double g1, double g2);

// d from eq. (1) for n_k block columns. Rounding: down, d = floor(N_K·P·g1 /
// (P·g1 + g2)), with a relative tolerance of 1e-9 so that a product that is
// an integer in exact arithmetic is not lost to rounding error. Down because
// 002 §4.1 asks for T1 <= T2 (a CPU side slower than the GPU's leaves the
// GPU idle waiting for panels, the costlier imbalance) and §4.4 notes that
// the panel's synchronization makes the CPU side slower than the model, so
// "the percentage of the CPUs should be slightly decreased". Then clamped to
// [1, N_K − 1] when N_K >= 2: the CPUs always hold the panel (d >= 1, 002
// Alg. 2), and the GPU keeps at least one block column (d = N_K would leave
// it nothing to do). N_K = 1 gives 1: the only block column is the panel.
// Throws std::invalid_argument, naming the value, when n_k < 1, cores < 1
// or a speed is not a finite positive number.
std::int64_t cpu_block_columns(std::int64_t n_k, int cores, double g1, double g2);

// cpu_block_columns at 002 §4.5's convention: g1 = kCpuPeakFraction ·
// core_peak, g2 = kGpuPeakFraction · gpu_peak, from the manufacturers' peaks
// of one core and of the GPU(s) (e.g. 002 Table 1). Throws as
// cpu_block_columns, naming the peak.
std::int64_t cpu_block_columns_from_peaks(std::int64_t n_k, int cores, double core_peak, double gpu_peak);

// The whole run's balance, the default of --d auto. Eq. (1) balances one
// step's work, but d stays fixed while the trailing matrix shrinks, so over
// the run the CPU side (which keeps its d columns to the end, and alone
// does the last d steps) gets more than d/N of the work: with eq. (1)'s d
// the cores are the bottleneck (simulated 002 Fig. 5-7 on the Opteron 6172
// + S2050 machine file: eq. (1) overshot the best d by 1.3-2x and ran
// 23-52% slower; experiments/README.md). This sums each side's flops over
// every step of a p×q tile LU (square tiles of unit size): at step k the
// CPUs factor the panel (p - k - 1/3) and update the trailing columns j < k
// + d, the GPU the others, each column a TRSM (1) and p - k - 1 GEMMs (2
// each); and returns the d in [1, q - 1] that minimizes max(CPU flops / (P·g1),
// GPU flops / g2) (the smallest such d; 1 when q = 1). Interchanges and the
// tournament's extra flops are left out, as in eq. (1). Throws
// std::invalid_argument as cpu_block_columns, or when p < q or q < 1.
std::int64_t cpu_block_columns_whole_run(std::int64_t p, std::int64_t q, int cores, double g1, double g2);

}  // namespace tessera::models
