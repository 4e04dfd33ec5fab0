#include "base/matrix_gen.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/parallel_units.hpp"

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

// The Spd matrix's formula, extended to r >= n (uniform entries there).
double spd_value(std::uint64_t seed, index_t n, index_t r, index_t c) {
  const double u = uniform(seed, std::max(r, c), std::min(r, c));
  return r == c ? static_cast<double>(n) + u : u;
}

// The reflector vectors' stream: apart from the entries' (u(seed, r, c) uses c >= 0).
constexpr index_t kVectorColumn = -1;

std::vector<double> unit(std::vector<double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  const double norm = std::sqrt(s);
  for (double& x : v) x /= norm;
  return v;
}

}  // namespace

std::optional<MatrixKind> matrix_kind_from_name(const std::string& name) {
  for (MatrixKind k : {MatrixKind::General, MatrixKind::Spd, MatrixKind::Graded, MatrixKind::IllConditioned,
                       MatrixKind::RankDeficient})
    if (name == matrix_kind_name(k)) return k;
  return std::nullopt;
}

const char* matrix_kind_name(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::General: return "general";
    case MatrixKind::Spd: return "spd";
    case MatrixKind::Graded: return "graded";
    case MatrixKind::IllConditioned: return "illcond";
    case MatrixKind::RankDeficient: return "rankdef";
  }
  return "?";
}

double documented_condition(MatrixKind kind, char precision) {
  switch (kind) {
    case MatrixKind::Spd: return 3;
    case MatrixKind::Graded: return 3e12;
    case MatrixKind::IllConditioned: return precision == 's' ? 1e5 : 1e12;
    default: return 0;
  }
}

MatrixGenerator::MatrixGenerator(MatrixKind kind, std::uint64_t seed, index_t m, index_t n, char precision)
    : kind_(kind), seed_(seed), m_(m), n_(n) {
  if (kind == MatrixKind::Graded) {
    scale_.resize(static_cast<std::size_t>(m));
    for (index_t i = 0; i < m; ++i)
      scale_[i] = m > 1 ? std::pow(10.0, -6.0 * static_cast<double>(i) / static_cast<double>(m - 1)) : 1.0;
  }
  if (kind != MatrixKind::IllConditioned && kind != MatrixKind::RankDeficient) return;
  std::vector<double> w(static_cast<std::size_t>(m));
  for (index_t r = 0; r < m; ++r) w[r] = uniform(seed, r, kVectorColumn);
  z_ = unit(std::vector<double>(w.begin(), w.begin() + n));
  w_ = m == n ? z_ : unit(std::move(w));
  sigma_.resize(static_cast<std::size_t>(n));
  const double kappa = documented_condition(MatrixKind::IllConditioned, precision);
  const index_t rank = (n + 1) / 2;
  for (index_t k = 0; k < n; ++k) {
    if (kind == MatrixKind::RankDeficient) sigma_[k] = k < rank ? 1.0 : 0.0;
    else sigma_[k] = n > 1 ? std::pow(kappa, -static_cast<double>(k) / static_cast<double>(n - 1)) : 1.0;
  }
  for (index_t k = 0; k < n; ++k) cross_ += w_[k] * sigma_[k] * z_[k];
}

double MatrixGenerator::operator()(index_t r, index_t c) const {
  if (kind_ == MatrixKind::General) return uniform(seed_, r, c);
  if (m_ == n_ && r < c) std::swap(r, c);  // symmetric: the lower triangle's value, bit for bit
  switch (kind_) {
    case MatrixKind::Spd: return spd_value(seed_, n_, r, c);
    case MatrixKind::Graded: return scale_[r] * spd_value(seed_, n_, r, c) * scale_[c];
    default: {
      // (H_m Sigma H_n)(r, c) = [r < n] sigma_r (delta_rc - 2 z_r z_c) - 2 w_r (w_c sigma_c - 2 z_c cross).
      const double head = r < n_ ? sigma_[r] * ((r == c ? 1.0 : 0.0) - 2.0 * z_[r] * z_[c]) : 0.0;
      return head - 2.0 * w_[r] * (w_[c] * sigma_[c] - 2.0 * z_[c] * cross_);
    }
  }
}

double generated_value(MatrixKind kind, std::uint64_t seed, index_t n, index_t r, index_t c) {
  return MatrixGenerator(kind, seed, n, n)(r, c);
}

template <class T>
void generate(TileMatrix<T>& a, MatrixKind kind, std::uint64_t seed) {
  const TileLayout& L = a.layout();
  const MatrixGenerator gen(kind, seed, L.m(), L.n(), sizeof(T) == 4 ? 's' : 'd');
  // Each entry is a pure function of (seed, row, column), so the matrix is
  // filled in units of at most kColumns columns of one tile column, in any
  // order, on any thread, with the same bytes; a thread per 2^22 entries at
  // most, so that a small matrix stays on the caller's.
  constexpr index_t kColumns = 256;
  struct Unit {
    int j;
    index_t c0, c1;
  };
  // Only the tiles this node holds count: one node of a distributed run
  // fills its share, with threads for its share.
  std::vector<Unit> units;
  double entries = 0;
  for (int j = 0; j < a.q(); ++j) {
    double held = 0;
    for (int i = 0; i < a.p(); ++i)
      if (a.tile(i, j)) held += double(L.row_height(i)) * double(L.col_width(j));
    if (held == 0) continue;
    entries += held;
    for (index_t c0 = 0; c0 < L.col_width(j); c0 += kColumns)
      units.push_back({j, c0, std::min(c0 + kColumns, L.col_width(j))});
  }
  parallel_units(units.size(), static_cast<std::size_t>(entries / double(1 << 22)), [&](std::size_t u) {
    const Unit& w = units[u];
    for (int i = 0; i < a.p(); ++i) {
      T* t = a.tile(i, w.j);
      if (!t) continue;
      const index_t h = L.row_height(i), r0 = L.row_offset(i), c0 = L.col_offset(w.j);
      for (index_t c = w.c0; c < w.c1; ++c)
        for (index_t r = 0; r < h; ++r) t[r + c * h] = static_cast<T>(gen(r0 + r, c0 + c));
    }
  });
}

template void generate<float>(TileMatrix<float>&, MatrixKind, std::uint64_t);
template void generate<double>(TileMatrix<double>&, MatrixKind, std::uint64_t);

}  // namespace tessera
