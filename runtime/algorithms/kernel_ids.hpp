#pragma once
// Kernel identifiers carried by TaskDesc::kernel.
#include <cstdint>

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
};

const char* kernel_name(std::uint16_t k);

}  // namespace tessera
