#pragma once
// Reproducible test matrices. Element (r, c) is a pure function of the seed
// and the global indices, so a matrix is the same whatever its tile layout.
#include <cstdint>

#include "runtime/tile_matrix.hpp"

namespace tessera {

enum class MatrixKind {
  General,  // entries uniform in [-0.5, 0.5)
  Spd,      // symmetric, same off-diagonal entries, diagonal n + u: strictly diagonally dominant, hence SPD
};

double generated_value(MatrixKind kind, std::uint64_t seed, index_t n, index_t r, index_t c);

template <class T>
void generate(TileMatrix<T>& a, MatrixKind kind, std::uint64_t seed);

}  // namespace tessera
