#pragma once
// The tile kernels whose CUDA implementation waits on the host before the
// call returns: POTF2' reads its status back (cuda_tile_kernels.cu potf2p),
// LU's PANEL and DIAG their getrf's pivots and status (cuda_lu_kernels.cu
// getrf_waited, and the plan they write with from_host), and with Cholesky
// QR panels GEQRT, TSQRT and TTQRT their check's flag (cuda_cholqr.cu
// cholqr_failed). The manager thread that queued such a task can queue
// nothing else until its kernels have ended; `tessera calibrate --device
// cuda` writes this list into the machine file (node.gpus.host_waits) so
// that a simulated GPU's manager waits the same way. The simulation holds
// the manager until the whole task ends, while POTF2' on a tile taller than
// wide (m > n: the narrow columns of s >= 2) waits only for its n x n POTRF
// and queues its TRSM below without waiting, and TTQRT queues its last
// kernel after the wait: there the simulated wait is the longer. (Workspaces
// that grow also wait once, on their first calls: not listed.) Keep it in
// step with those files. No device code: the experiments layer reads it.
#include <cstdint>
#include <vector>

#include "base/kernel_table.hpp"

namespace tessera::kernels {

inline std::vector<std::uint16_t> cuda_host_waiting_kernels(bool cholqr_panels) {
  std::vector<std::uint16_t> k = {kPotf2p, kLuPanel, kLuDiag};
  if (cholqr_panels) k.insert(k.end(), {kGeqrt, kTsqrt, kTtqrt});
  return k;
}

}  // namespace tessera::kernels
