#include "runtime/matrix_gen.hpp"

#include <algorithm>

namespace tessera {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double uniform(std::uint64_t seed, index_t r, index_t c) {
  const std::uint64_t key = splitmix64(seed) ^ (static_cast<std::uint64_t>(r) * 0xD6E8FEB86659FD93ull) ^
                            splitmix64(static_cast<std::uint64_t>(c) + 0x632BE59BD9B4E019ull);
  return static_cast<double>(splitmix64(key) >> 11) * 0x1.0p-53 - 0.5;
}

}  // namespace

double generated_value(MatrixKind kind, std::uint64_t seed, index_t n, index_t r, index_t c) {
  if (kind == MatrixKind::General) return uniform(seed, r, c);
  const double u = uniform(seed, std::max(r, c), std::min(r, c));
  return r == c ? static_cast<double>(n) + u : u;
}

template <class T>
void generate(TileMatrix<T>& a, MatrixKind kind, std::uint64_t seed) {
  const TileLayout& L = a.layout();
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i) {
      T* t = a.tile(i, j);
      if (!t) continue;
      const index_t h = L.row_height(i), r0 = L.row_offset(i), c0 = L.col_offset(j);
      for (index_t c = 0; c < L.col_width(j); ++c)
        for (index_t r = 0; r < h; ++r) t[r + c * h] = static_cast<T>(generated_value(kind, seed, L.n(), r0 + r, c0 + c));
    }
}

template void generate<float>(TileMatrix<float>&, MatrixKind, std::uint64_t);
template void generate<double>(TileMatrix<double>&, MatrixKind, std::uint64_t);

}  // namespace tessera
