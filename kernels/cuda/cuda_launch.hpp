#pragma once
// What the CUDA tile kernels' translation units share for launching their
// own kernels and calling the libraries: the int dimensions cuBLAS and
// cuSOLVER take, the QR kernels' check of ib, and the block shapes of the
// element-wise kernels.
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "kernels/tile_kernels_api.hpp"  // index_t

namespace tessera::kernels::launch {

// cuBLAS and cuSOLVER take int dimensions; a tile is far below INT_MAX.
inline int to_int(index_t v) {
  if (v < 0 || v > INT_MAX)
    throw std::length_error("CUDA tile kernels: dimension " + std::to_string(v) + " out of range");
  return static_cast<int>(v);
}

// As LAPACK's xGEQRT/xGEMQRT/xTPQRT/xTPMQRT require: 1 <= ib <= k unless k = 0.
inline void check_ib(const char* kernel, index_t ib, index_t k) {
  if (ib < 1 || (ib > k && k > 0))
    throw std::logic_error(std::string(kernel) + ": inner block size ib = " + std::to_string(ib) + " is not in [1, " +
                           std::to_string(k) + "]");
}

constexpr int kThreads = 256;

inline unsigned blocks_for(index_t rows) { return static_cast<unsigned>((rows + kThreads - 1) / kThreads); }

// The LU's row kernels run one thread per element of a rows×cols block,
// element i at row i % rows and column i / rows (consecutive threads on
// consecutive rows of a column), striding by the grid for blocks larger than
// kMaxBlocks * kThreads elements.
constexpr index_t kMaxBlocks = 4096;

inline unsigned element_blocks(index_t rows, index_t cols) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (rows * cols + kThreads - 1) / kThreads));
}

}  // namespace tessera::kernels::launch
