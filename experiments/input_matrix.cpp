#include "experiments/input_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "algorithms/factorization.hpp"

namespace tessera {
namespace {

const char* const kKinds = "spd, graded, illcond, rankdef, general";

// A Cholesky input file must be symmetric (the factorization reads its lower triangle).
void require_symmetric(const RunConfig& c, const DenseMatrix& input) {
  for (index_t j = 0; j < c.n; ++j)
    for (index_t i = j + 1; i < c.n; ++i) {
      const double x = input(i, j), y = input(j, i);
      if (std::abs(x - y) > 1e-12 * std::max(std::abs(x), std::abs(y)))
        throw InputError("--input " + c.input + ": --algo " + c.algo + " needs a symmetric matrix, but A(" + std::to_string(i + 1) + "," +
                         std::to_string(j + 1) + ") = " + fmt::format("{:g}", x) + " differs from A(" +
                         std::to_string(j + 1) + "," + std::to_string(i + 1) + ") = " + fmt::format("{:g}", y));
    }
}

}  // namespace

void resolve_matrix(RunConfig& c, const DenseMatrix* input) {
  if (input) {
    if (!c.matrix.empty())
      throw InputError("--matrix " + c.matrix + " generates a matrix, but --input " + c.input + " gives one: drop one");
    if (factorization(c.algo).symmetric_input()) require_symmetric(c, *input);
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
