#pragma once
// Kernel identifiers carried by TaskDesc::kernel.
#include <cstdint>

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
};

const char* kernel_name(std::uint16_t k);

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

// Leftmost output columns first: they are on the critical path. Among tasks
// of one output column, earlier steps first.
inline std::int32_t column_priority(int q, int out_col, int k) { return (q - out_col) * (q + 1) + (q - k); }

}  // namespace tessera
