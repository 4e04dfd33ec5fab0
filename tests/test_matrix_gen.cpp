// The generated matrices (--matrix): the same whatever the tile layout and
// whichever node holds which tiles (so every node of a distributed run can
// generate its own), symmetric kinds symmetric bit for bit, and the condition
// numbers base/matrix_gen.hpp documents, measured by LAPACK's SVD.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/matrix_gen.hpp"
#include "base/tile_matrix.hpp"

namespace {

using namespace tessera;

const MatrixKind kKinds[] = {MatrixKind::General, MatrixKind::Spd, MatrixKind::Graded, MatrixKind::IllConditioned,
                             MatrixKind::RankDeficient};

// Every element a holds equals the generator's, converted to T.
template <class T>
void expect_generated(const TileMatrix<T>& a, const MatrixGenerator& gen) {
  const TileLayout& L = a.layout();
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i) {
      const T* t = a.tile(i, j);
      if (!t) continue;
      for (index_t c = 0; c < L.col_width(j); ++c)
        for (index_t r = 0; r < L.row_height(i); ++r)
          ASSERT_EQ(t[r + c * L.row_height(i)], static_cast<T>(gen(L.row_offset(i) + r, L.col_offset(j) + c)))
              << "tile (" << i << "," << j << ") element (" << r << "," << c << ")";
    }
}

TEST(MatrixGen, SameMatrixWhateverTheLayoutAndTheNode) {
  for (const MatrixKind kind : kKinds)
    for (const index_t m : {index_t{45}, index_t{61}}) {
      SCOPED_TRACE(std::string(matrix_kind_name(kind)) + " m=" + std::to_string(m));
      const index_t n = 45;
      const MatrixGenerator gen(kind, 11, m, n);
      for (const TileLayout& L : {TileLayout(m, n, 8, 3, 2), TileLayout(m, n, 13, 1, 0), TileLayout(m, n, 45, 1, 0)}) {
        TileMatrix<double> whole(L);
        generate(whole, kind, 11);
        expect_generated(whole, gen);
        // One node of a 2-node run: the tiles on a checkerboard.
        TileMatrix<double> mine(L, [](int i, int j) { return (i + j) % 2 == 0; });
        generate(mine, kind, 11);
        expect_generated(mine, gen);
      }
      TileMatrix<float> single(TileLayout(m, n, 13, 1, 0));
      generate(single, kind, 11);
      expect_generated(single, MatrixGenerator(kind, 11, m, n, 's'));
    }
}

// A matrix of more than 2^23 entries is filled by several threads, units of
// up to 256 columns of a tile column dealt round-robin: every entry still the
// generator's, on a whole matrix (tiles of 256 and of 1000, split into units
// with a narrower last one, and a single 3001-wide tile) and on one node's
// checkerboard of tiles, edge tiles included.
TEST(MatrixGen, ThreadedFillOfALargeMatrixIsTheGenerators) {
  const index_t n = 3001;
  for (const index_t B : {index_t{256}, index_t{1000}, n}) {
    const TileLayout L(n, n, B, 1, 0);
    for (const MatrixKind kind : {MatrixKind::General, MatrixKind::Spd}) {
      SCOPED_TRACE(std::string(matrix_kind_name(kind)) + " B=" + std::to_string(B));
      const MatrixGenerator gen(kind, 5, n, n);
      TileMatrix<double> whole(L);
      generate(whole, kind, 5);
      expect_generated(whole, gen);
      TileMatrix<double> mine(L, [B, n](int i, int j) { return (i + j) % 2 == 1 || B == n; });
      generate(mine, kind, 5);
      expect_generated(mine, gen);
    }
  }
}

TEST(MatrixGen, SquareKindsAreSymmetricBitForBit) {
  const index_t n = 37;
  for (const MatrixKind kind : kKinds) {
    if (kind == MatrixKind::General) continue;
    const MatrixGenerator gen(kind, 5, n, n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j + 1; i < n; ++i)
        ASSERT_EQ(gen(i, j), gen(j, i)) << matrix_kind_name(kind) << " (" << i << "," << j << ")";
  }
}

TEST(MatrixGen, SeedsAndNamesDiffer) {
  for (const MatrixKind kind : kKinds) {
    EXPECT_NE(MatrixGenerator(kind, 1, 30, 30)(7, 3), MatrixGenerator(kind, 2, 30, 30)(7, 3)) << matrix_kind_name(kind);
    EXPECT_EQ(matrix_kind_from_name(matrix_kind_name(kind)), kind);
  }
  EXPECT_FALSE(matrix_kind_from_name("hilbert"));
  // The two kinds that existed before --matrix keep their values.
  EXPECT_EQ(generated_value(MatrixKind::Spd, 7, 20, 4, 4), MatrixGenerator(MatrixKind::Spd, 7, 20, 20)(4, 4));
  EXPECT_GE(generated_value(MatrixKind::Spd, 7, 20, 4, 4), 19.5);
}

// Singular values, largest first, of the m x n matrix in precision T.
template <class T>
std::vector<double> singular_values(MatrixKind kind, index_t m, index_t n) {
  TileMatrix<T> a(TileLayout(m, n, m, 1, 0));
  generate(a, kind, 3);
  std::vector<double> d(a.tile(0, 0), a.tile(0, 0) + m * n), s(static_cast<std::size_t>(n)),
      superb(static_cast<std::size_t>(n));
  EXPECT_EQ(
      LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', m, n, d.data(), m, s.data(), nullptr, 1, nullptr, 1, superb.data()),
      0);
  return s;
}

TEST(MatrixGen, DocumentedConditionNumbers) {
  for (const index_t m : {index_t{120}, index_t{150}}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    const index_t n = 120;
    auto kappa = [](const std::vector<double>& s) { return s.front() / s.back(); };
    // Exact: singular values 1 ... 1e-12 (double), 1 ... 1e-5 (single).
    const auto ill = singular_values<double>(MatrixKind::IllConditioned, m, n);
    EXPECT_NEAR(ill.front(), 1.0, 1e-12);
    EXPECT_NEAR(kappa(ill) / documented_condition(MatrixKind::IllConditioned, 'd'), 1.0, 0.01);
    EXPECT_NEAR(kappa(singular_values<float>(MatrixKind::IllConditioned, m, n)) /
                    documented_condition(MatrixKind::IllConditioned, 's'),
                1.0, 0.05);
    // Rank ceil(n/2): 60 singular values 1, the rest zero up to rounding.
    const auto def = singular_values<double>(MatrixKind::RankDeficient, m, n);
    EXPECT_NEAR(def[59], 1.0, 1e-12);
    EXPECT_LT(def[60], 1e-13);
    if (m != n) continue;
    // Bounds, square: kappa_2 <= 3 (Spd), <= 3e12 (Graded), and the grading does make it ill-conditioned.
    EXPECT_LE(kappa(singular_values<double>(MatrixKind::Spd, n, n)), documented_condition(MatrixKind::Spd, 'd'));
    const double graded = kappa(singular_values<double>(MatrixKind::Graded, n, n));
    EXPECT_LE(graded, documented_condition(MatrixKind::Graded, 'd'));
    EXPECT_GE(graded, 1e11);
  }
}

// An odd order: rank ceil(n/2), square and tall (n = 121: 61 singular values 1).
TEST(MatrixGen, RankDeficientOfOddOrderHasRankCeilHalf) {
  for (const index_t m : {index_t{121}, index_t{150}}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    const auto def = singular_values<double>(MatrixKind::RankDeficient, m, 121);
    EXPECT_NEAR(def[60], 1.0, 1e-12);
    EXPECT_LT(def[61], 1e-13);
  }
}

// Graded is D S D with D = diag(10^(-6 i/(m-1))) over the m rows (and the
// first n of them for the columns), S the Spd kind of the same seed and
// shape: square, tall, and one column.
TEST(MatrixGen, GradedIsTheSpdKindScaledOverTheRows) {
  for (const auto& [m, n] : {std::pair<index_t, index_t>{40, 40}, {150, 40}, {90, 1}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    const MatrixGenerator graded(MatrixKind::Graded, 9, m, n), spd(MatrixKind::Spd, 9, m, n);
    // (m by an init-capture: clang before 16 cannot capture a structured binding)
    const auto d = [rows = m](index_t i) {
      return std::pow(10.0, -6.0 * static_cast<double>(i) / static_cast<double>(rows - 1));
    };
    for (index_t c = 0; c < n; ++c)
      for (index_t r = 0; r < m; ++r) {
        const double want = d(r) * spd(r, c) * d(c);
        ASSERT_NEAR(graded(r, c), want, 1e-14 * std::abs(want)) << "(" << r << "," << c << ")";
      }
    EXPECT_NEAR(std::abs(graded(m - 1, 0) / spd(m - 1, 0)), 1e-6, 1e-20);
  }
}

}  // namespace
