#pragma once
// Kernel identifiers carried by TaskDesc::kernel, and the one table of what
// is known about each kernel (base/kernel_table.cpp): its display name, its
// key in machine files, its flop formula, its dimensions, its inner blocking,
// whether calibration measures it and the factorization it belongs to. Every
// name, key list, flop count and "known: ..." message is generated from it;
// a new kernel is one enumerator here and one row there.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/task.hpp"

namespace tessera {

enum KernelId : std::uint16_t {
  kPotf2p = 1,  // POTF2' on the diagonal tile of a column
  kTrsm,        // L_ik = A_ik L_kk^{-T}
  kGsmm,        // A_ij -= L_ik L_jk^T, off-diagonal tile
  kGsmmDiag,    // same on a tile that holds column j's diagonal block (SYRK + GEMM)
  kGeqrt,       // QR of a panel's diagonal tile
  kLarfb,       // apply a GEQRT's Q^T along the tile row
  kTsqrt,       // QR of [R; A_ik]
  kSsrfb,       // apply a TSQRT's Q^T to [A_tj; A_ij]
  kLarfbQ,      // apply Q (not Q^T) of a GEQRT: forming Q for the check
  kSsrfbQ,      // apply Q of a TSQRT: forming Q for the check
  kNop,         // empty kernel (window benchmarks)
  kCheckQr,     // distributed check: C_ij -= Q_ik R_kj
  kCheckGram,   // distributed check: W_rj[a rows] += Q_ia^T Q_ij
  kLuLeaf,      // LU tournament leaf: GEPP on a tile's panel rows, its candidate pivot rows
  kLuMerge,     // LU tournament reduction: GEPP on two stacked candidate sets
  kLuGather,    // LU partial pivoting: a tile's panel rows copied into the panel buffer
  kLuPanel,     // LU partial pivoting: GEPP on the whole panel, its pivot rows
  kLuScatter,   // LU partial pivoting: the factored panel's rows back into a tile
  kLuPivots,    // LU: the root's candidates as the step's row-interchange plan
  kLuSwap,      // LU: a tile's row permutation inside the panel's top tile row
  kLuExchange,  // LU: rows exchanged between the top tile row and tile row i
  kLuDiag,      // LU without pivoting of the panel's top tile (pivots on top)
  kLuTrsmL,     // L_ik = A_ik U_kk^{-1}
  kLuTrsmU,     // U_kj = L_kk^{-1} A_kj
  kLuGemm,      // A_ij -= L_ik U_kj
  kTtqrt,       // QR reduction tree: QR of [R_a; R_b], two domains' triangles
  kTtmqr,       // apply a TTQRT's Q^T to [A_aj; A_bj]
  kTtmqrQ,      // apply Q of a TTQRT: forming Q for the check
  kKernelIdEnd  // one past the last id: a new kernel goes before it
};

// How a kernel's inner blocking ib is bounded: the kernel takes none, or the
// call's ib is min(ib, n) (the kernels that compute reflectors: n of them) or
// min(ib, k) (the kernels that apply k reflectors).
enum class KernelIb : std::uint8_t { kNone, kUpToN, kUpToK };

// One row of the kernel table.
struct KernelInfo {
  KernelId id;
  const char* name;  // display name: traces, progress lines, test messages
  const char* key;   // key in machine files (kernel models); nullptr: none
  // Floating-point operations of one call of shape m×n(×k); nullptr: none counted.
  double (*flops)(double m, double n, double k);
  bool has_k;          // k is one of the call's dimensions (KernelShape::k)
  KernelIb ib;         // the inner blocking it takes
  bool calibrated;     // machine files time it and `tessera calibrate` measures it
  const char* family;  // the factorization it belongs to: "cholesky", "qr", "lu", or "" for none
};

// Every kernel, one row per KernelId. Rows of a family are in the order a
// factorization first calls them (calibration measures first calls in it).
std::span<const KernelInfo> kernel_table();

// The row of `kernel`; nullptr for an id that is not in KernelId.
const KernelInfo* kernel_info(std::uint16_t kernel);

// Display name ("GSMM"); "?" for an unknown id.
const char* kernel_name(std::uint16_t kernel);
// Machine-file key ("gsmm"); "?" for an id that has none.
const char* kernel_key(std::uint16_t kernel);
// The id of a machine-file key; nullopt when no kernel has it.
std::optional<std::uint16_t> kernel_from_key(std::string_view key);

// Whether a kernel factors a panel: the tasks of a step's output column
// (column_priority's first), on which the next step waits: POTF2' and TRSM,
// GEQRT, TSQRT and TTQRT, LU's PANEL, DIAG and TRSM_L. A GPU with several
// compute streams runs them on its high-priority one, beside the trailing
// updates (platform/device.hpp begin_kernels).
bool panel_kernel(std::uint16_t kernel);

// The kernel whose measured or modeled rate a kernel without its own takes
// at the same shape (a model assumption, stated where the model is read):
// TTQRT that of TSQRT, TTMQR that of SSRFB, TTMQR_Q that of SSRFB_Q, and
// LARFB_Q and SSRFB_Q (forming Q for the check: Q applied instead of Q^T,
// the same operations) those of LARFB and SSRFB, which calibrations measure.
// The kernel itself when it has none.
std::uint16_t kernel_rate_proxy(std::uint16_t kernel);

// Floating-point operations of one kernel call (the table's formula of the
// shape's m, n, k; 0 for a kernel without one).
double kernel_flops(const KernelShape& s);

// The inner blocking a call of this kernel with n columns and k reflectors
// runs with when the factorization's is `ib` (0 for a kernel that takes none).
std::int64_t kernel_ib(std::uint16_t kernel, std::int64_t n, std::int64_t k, std::int64_t ib);

// The kernels calibration measures, in table order; of one family only when
// `family` is not empty.
std::vector<std::uint16_t> calibrated_kernels(std::string_view family = {});
// The families of the calibrated kernels, in table order ("cholesky", "qr").
std::vector<std::string_view> kernel_families();

// Which keys kernel_keys_text lists.
enum class KernelKeys : std::uint8_t { kAll, kCalibrated };
// "potf2p, trsm, ...": the keys kernel_from_key accepts (kAll) or those of
// the calibrated kernels, in table order, for "known: ..." messages.
std::string kernel_keys_text(KernelKeys which = KernelKeys::kAll);

// A task of a tile algorithm step: kernel, step k, tile (i, j), priority.
inline TaskDesc make_task(KernelId kernel, int k, int i, int j, std::int32_t prio) {
  TaskDesc d;
  d.kernel = kernel;
  d.arg[0] = k;
  d.arg[1] = i;
  d.arg[2] = j;
  d.priority = prio;
  return d;
}

// The priority of the pair (x, y), x and y in 0 .. q for a factorization
// with q tile columns, ordered by x, then y: the key x (q + 1) + y where it
// fits TaskDesc's 32 bits. The keys reach (q + 1)^2 - 1, past 2^31 - 1 from
// q = 46,340, which the 2^30-tile bound allows (in int they wrapped to
// negative priorities: Cholesky --n 1482880 --B 64 --s 2 has q = 46,340).
// There, in 64 bits, each x gets `fit` = (2^31 - 1) / (q + 1) priorities and
// y is scaled into them: a larger x is still strictly first, a larger y
// never after (y values less than (q + 1) / fit apart may share one).
inline std::int32_t lexicographic_priority(int q, std::int64_t x, std::int64_t y) {
  constexpr std::int64_t kTop = std::numeric_limits<std::int32_t>::max();
  const std::int64_t width = std::int64_t{q} + 1, fit = kTop / width;
  if (fit >= width) return static_cast<std::int32_t>(x * width + y);
  return static_cast<std::int32_t>(x * fit + y * fit / width);
}

// Leftmost output columns first: they are on the critical path. Among tasks
// of one output column, earlier steps first.
inline std::int32_t column_priority(int q, int out_col, int k) { return lexicographic_priority(q, q - out_col, q - k); }

// Earlier steps first; within a step, leftmost output columns first (QR's
// binary tree, whose node rows must stay at the same step: algorithms/qr.cpp).
inline std::int32_t step_priority(int q, int out_col, int k) { return lexicographic_priority(q, q - k, q - out_col); }

}  // namespace tessera
