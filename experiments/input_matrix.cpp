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

// A sum of terms of any finite magnitude, compensated (Neumaier) and held
// against a running power-of-two scale (a term of a larger exponent rescales
// what was summed; the scaling is exact but where it underflows, which
// drops parts below 2^-1074 of the largest term), so that neither the sum nor
// the sum of magnitudes overflows whatever the file holds.
class ScaledSum {
 public:
  void add(double t) {
    if (t == 0) return;
    int e = 0;
    std::frexp(t, &e);            // |t| < 2^e
    if (abs_ == 0 || e > exp_) {  // the first term (nothing summed yet to rescale), or a larger one
      sum_ = std::ldexp(sum_, exp_ - e), comp_ = std::ldexp(comp_, exp_ - e), abs_ = std::ldexp(abs_, exp_ - e);
      exp_ = e;
    }
    const double x = std::ldexp(t, -exp_), s = sum_ + x;
    comp_ += std::abs(sum_) >= std::abs(x) ? (sum_ - s) + x : (x - s) + sum_;
    sum_ = s;
    abs_ += std::abs(x);
  }
  // |sum| / sum of |terms| (0 for no terms): scale-free.
  double relative() const { return abs_ > 0 ? std::abs(sum_ + comp_) / abs_ : 0.0; }

 private:
  double sum_ = 0, comp_ = 0, abs_ = 0;
  int exp_ = 0;
};

// The same for a file no node holds whole (a distributed run streams it):
// r^T (A - A^T) s = 0 for every r, s exactly when A is symmetric, so one pass
// with two fixed pseudo-random vectors (Freivalds' check, the same on every
// node) finds an asymmetric file without storing it. Entry a_ij adds
// a_ij (r_i s_j - s_i r_j): zero on the diagonal, and for a symmetric pair the
// negatives of each other bit for bit, so a symmetric file's sum is zero up to
// the compensated sum's rounding, whatever the magnitudes of its entries
// (rs - sr against the sum of |a_ij| let one large diagonal entry hide any
// asymmetry, and an overflowed sum accepted every file). A pair that differs
// by a relative d adds about d/2 of its own magnitude: the one-node check
// refuses d > 1e-12, so the file is refused when the sum exceeds 0.5e-12 of
// the sum of the terms' magnitudes (more lenient where other entries weigh
// more: one pass cannot weigh each pair alone).
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
  ScaledSum sum;
  scan_matrix_market(c.input, {}, [&](index_t i, index_t j, double v) { sum.add(v * (r[i] * s[j] - s[i] * r[j])); });
  if (sum.relative() > 0.5e-12)
    throw InputError("--input " + c.input + ": --algo " + c.algo +
                     " needs a symmetric matrix, but the file's general entries are not (for random r, s, r^T (A - "
                     "A^T) s is " +
                     fmt::format("{:.3g}", sum.relative()) +
                     " of the sum of its terms' magnitudes; a symmetric file's is 0 up to rounding)");
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

// Entry A(r, col) = v of the input file (0-based) in the run's precision. A
// value that float cannot hold (--precision s) is refused: it would become
// an infinity or 0, the one a NaN factor, the other a pivot that is not there.
template <class T>
T entry(const RunConfig& c, index_t r, index_t col, double v) {
  const T t = static_cast<T>(v);
  if (std::isinf(t) || (t == T(0) && v != 0))
    throw InputError(
        fmt::format("--input {}: A({},{}) = {:g} is outside the range of single precision (--precision "
                    "s holds magnitudes from about 1.4e-45 to 3.4e38): run it in double or scale the "
                    "matrix",
                    c.input, r + 1, col + 1, v));
  return t;
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
      if (T* t = a.tile(i, j))
        t[(r - L.row_offset(i)) + (col - L.col_offset(j)) * L.row_height(i)] = entry<T>(c, r, col, v);
    });
    return;
  }
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i) {
      T* t = a.tile(i, j);
      if (!t) continue;  // another node's
      const index_t h = L.row_height(i), r0 = L.row_offset(i), c0 = L.col_offset(j);
      for (index_t col = 0; col < L.col_width(j); ++col)
        for (index_t r = 0; r < h; ++r) t[r + col * h] = entry<T>(c, r0 + r, c0 + col, (*input)(r0 + r, c0 + col));
    }
}

template void fill<float>(TileMatrix<float>&, const RunConfig&, const DenseMatrix*);
template void fill<double>(TileMatrix<double>&, const RunConfig&, const DenseMatrix*);

}  // namespace tessera
