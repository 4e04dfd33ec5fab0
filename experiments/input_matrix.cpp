#include "experiments/input_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algorithms/factorization.hpp"
#include "base/error.hpp"
#include "base/matrix_gen.hpp"

namespace tessera {
namespace {

const char* const kKinds = "spd, graded, illcond, rankdef, general";

// A Cholesky input file must be symmetric (the factorization reads its lower triangle).
void require_symmetric(const RunConfig& c, const DenseMatrix& input) {
  for (index_t j = 0; j < c.n; ++j)
    for (index_t i = j + 1; i < c.n; ++i) {
      const double x = input(i, j), y = input(j, i);
      if (std::abs(x - y) > 1e-12 * std::max(std::abs(x), std::abs(y)))
        throw InputError("--input " + c.input + ": --algo " + c.algo + " needs a symmetric matrix, but A(" +
                         std::to_string(i + 1) + "," + std::to_string(j + 1) + ") = " + fmt::format("{:g}", x) +
                         " differs from A(" + std::to_string(j + 1) + "," + std::to_string(i + 1) +
                         ") = " + fmt::format("{:g}", y));
    }
}

// The same for a file no node holds whole (a distributed run streams it):
// r^T A s = s^T A r for every r, s exactly when A is symmetric, so one pass
// with two fixed pseudo-random vectors (Freivalds' check, the same on every
// node) finds an asymmetric file without storing it, up to rounding.
void require_symmetric_streamed(const RunConfig& c) {
  const index_t n = c.n;
  std::vector<double> r(static_cast<std::size_t>(n)), s(static_cast<std::size_t>(n));
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (index_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    r[i] = static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s[i] = static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;
  }
  double rs = 0, sr = 0, scale = 0;
  scan_matrix_market(c.input, {}, [&](index_t i, index_t j, double v) {
    rs += r[i] * v * s[j];
    sr += s[i] * v * r[j];
    scale += std::abs(v);
  });
  if (std::abs(rs - sr) > 1e-10 * scale)
    throw InputError(
        "--input " + c.input + ": --algo " + c.algo +
        " needs a symmetric matrix, but the file's general entries are not (r^T A s = " + fmt::format("{:.6g}", rs) +
        " differs from s^T A r = " + fmt::format("{:.6g}", sr) + " for random r, s)");
}

}  // namespace

DenseMatrix read_input_header(const std::string& path) {
  const MatrixMarketInfo info = read_matrix_market_header(path);
  DenseMatrix m;
  m.m = info.m;
  m.n = info.n;
  return m;
}

void resolve_matrix(RunConfig& c, const DenseMatrix* input) {
  if (input) {
    if (!c.matrix.empty())
      throw InputError("--matrix " + c.matrix + " generates a matrix, but --input " + c.input + " gives one: drop one");
    if (factorization(c.algo).symmetric_input()) {
      if (!input->a.empty()) require_symmetric(c, *input);
      else if (!read_matrix_market_header(c.input).symmetric) require_symmetric_streamed(c);
    }
    return;
  }
  if (c.matrix.empty()) {
    c.matrix = matrix_kind_name(factorization(c.algo).default_matrix());
    return;
  }
  const auto kind = matrix_kind_from_name(c.matrix);
  if (!kind) throw InputError("--matrix '" + c.matrix + "' is not one of: " + kKinds);
  if (c.phantom)
    throw InputError("--matrix " + c.matrix + " fills the matrix, which a simulated run has only with --sim-data");
  const std::string refusal = factorization(c.algo).matrix_refusal(*kind, c.m, c.n);
  if (!refusal.empty()) throw InputError("--matrix " + c.matrix + " " + refusal);
}

template <class T>
void fill(TileMatrix<T>& a, const RunConfig& c, const DenseMatrix* input) {
  if (!input) {
    generate(a, *matrix_kind_from_name(c.matrix), c.seed);
    return;
  }
  const TileLayout& L = a.layout();
  if (input->a.empty()) {
    // Streamed: this node keeps the entries of its own tiles only.
    for (int j = 0; j < a.q(); ++j)
      for (int i = 0; i < a.p(); ++i)
        if (T* t = a.tile(i, j)) std::fill(t, t + L.row_height(i) * L.col_width(j), T(0));
    scan_matrix_market(c.input, {}, [&](index_t r, index_t col, double v) {
      const int i = L.tile_row_of(r), j = L.tile_col_of(col);
      if (T* t = a.tile(i, j)) t[(r - L.row_offset(i)) + (col - L.col_offset(j)) * L.row_height(i)] = static_cast<T>(v);
    });
    return;
  }
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i) {
      T* t = a.tile(i, j);
      if (!t) continue;  // another node's
      const index_t h = L.row_height(i), r0 = L.row_offset(i), c0 = L.col_offset(j);
      for (index_t col = 0; col < L.col_width(j); ++col)
        for (index_t r = 0; r < h; ++r) t[r + col * h] = static_cast<T>((*input)(r0 + r, c0 + col));
    }
}

template void fill<float>(TileMatrix<float>&, const RunConfig&, const DenseMatrix*);
template void fill<double>(TileMatrix<double>&, const RunConfig&, const DenseMatrix*);

}  // namespace tessera
