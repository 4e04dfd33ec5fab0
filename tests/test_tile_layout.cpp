// TileLayout geometry (001 §3.1), its parameter validation, and the tiled
// storage built on it (TileMatrix, generated matrices).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "base/tile_layout.hpp"
#include "base/tile_matrix.hpp"

namespace tessera {
namespace {

using ::testing::HasSubstr;

struct Geometry {
  index_t m, n, B;
  int s;
  index_t b;
};

std::string name_of(const Geometry& g) {
  return "m" + std::to_string(g.m) + "_n" + std::to_string(g.n) + "_B" + std::to_string(g.B) + "_s" +
         std::to_string(g.s) + "_b" + std::to_string(g.b);
}

// Readable parameters in test names and failure messages.
void PrintTo(const Geometry& x, std::ostream* os) { *os << name_of(x); }

// Shapes that exercise each way the last top-level block can end: N = 1,
// N < B, B not dividing N, B dividing N, and tall matrices; every s in 1..5
// with the narrowest (b = 1) and widest valid narrow columns.
std::vector<Geometry> geometries() {
  struct Shape {
    index_t m, n, B;
  };
  const Shape shapes[] = {
      {1, 1, 8},      // N = 1
      {5, 5, 8},      // N < B
      {37, 37, 8},    // B does not divide N
      {64, 64, 16},   // B divides N
      {23, 23, 10},   // last block narrower than (s-1)b for larger s
      {100, 37, 16},  // tall, B does not divide m or n
      {96, 48, 16},   // tall, B divides both
      {7, 3, 2},      // tiny tiles
  };
  std::vector<Geometry> out;
  for (const Shape& sh : shapes)
    for (int s = 1; s <= 5; ++s) {
      if (s == 1) {
        out.push_back({sh.m, sh.n, sh.B, 1, 0});
        continue;
      }
      const index_t widest = (sh.B - 1) / (s - 1);  // largest b with (s-1)b < B
      if (widest < 1) continue;
      out.push_back({sh.m, sh.n, sh.B, s, 1});
      if (widest > 1) out.push_back({sh.m, sh.n, sh.B, s, widest});
      if (widest > 3) out.push_back({sh.m, sh.n, sh.B, s, widest / 2});
    }
  return out;
}

class LayoutGeometry : public ::testing::TestWithParam<Geometry> {};

TEST_P(LayoutGeometry, RowsAreCutIntoTilesOfHeightB) {
  const Geometry g = GetParam();
  const TileLayout L(g.m, g.n, g.B, g.s, g.b);
  EXPECT_EQ(L.m(), g.m);
  EXPECT_EQ(L.n(), g.n);
  EXPECT_EQ(L.B(), g.B);
  EXPECT_EQ(L.s(), g.s);
  const int p = L.tile_rows();
  ASSERT_EQ(p, (g.m + g.B - 1) / g.B);
  EXPECT_EQ(L.row_offset(0), 0);
  EXPECT_EQ(L.row_offset(p), g.m);
  for (int i = 0; i < p; ++i) {
    EXPECT_EQ(L.row_offset(i), i * g.B) << "tile row " << i;
    EXPECT_GE(L.row_height(i), 1) << "tile row " << i;
    EXPECT_EQ(L.row_height(i), std::min(g.B, g.m - i * g.B)) << "tile row " << i;
  }
  for (index_t r = 0; r < g.m; ++r) {
    const int i = L.tile_row_of(r);
    ASSERT_GE(i, 0);
    ASSERT_LT(i, p);
    ASSERT_LE(L.row_offset(i), r) << "row " << r;
    ASSERT_LT(r, L.row_offset(i) + L.row_height(i)) << "row " << r;
  }
}

TEST_P(LayoutGeometry, ColumnsAreContiguousAndCoverTheMatrix) {
  const Geometry g = GetParam();
  const TileLayout L(g.m, g.n, g.B, g.s, g.b);
  const int q = L.tile_cols();
  ASSERT_GE(q, 1);
  EXPECT_EQ(L.col_offset(0), 0);
  EXPECT_EQ(L.col_offset(q), g.n);
  index_t expect_offset = 0;
  for (int j = 0; j < q; ++j) {
    EXPECT_EQ(L.col_offset(j), expect_offset) << "tile column " << j;
    EXPECT_GE(L.col_width(j), 1) << "tile column " << j << " is empty";
    expect_offset += L.col_width(j);
  }
  EXPECT_EQ(expect_offset, g.n);
  for (index_t c = 0; c < g.n; ++c) {
    const int j = L.tile_col_of(c);
    ASSERT_GE(j, 0) << "column " << c;
    ASSERT_LT(j, q) << "column " << c;
    ASSERT_LE(L.col_offset(j), c) << "column " << c;
    ASSERT_LT(c, L.col_offset(j) + L.col_width(j)) << "column " << c;
  }
}

TEST_P(LayoutGeometry, EveryElementLiesInExactlyOneTile) {
  const Geometry g = GetParam();
  const TileLayout L(g.m, g.n, g.B, g.s, g.b);
  std::vector<int> hits(static_cast<std::size_t>(g.m * g.n), 0);
  index_t area = 0;
  for (int i = 0; i < L.tile_rows(); ++i)
    for (int j = 0; j < L.tile_cols(); ++j) {
      area += L.row_height(i) * L.col_width(j);
      for (index_t c = L.col_offset(j); c < L.col_offset(j) + L.col_width(j); ++c)
        for (index_t r = L.row_offset(i); r < L.row_offset(i) + L.row_height(i); ++r) {
          ASSERT_GE(r, 0);
          ASSERT_LT(r, g.m);
          ASSERT_GE(c, 0);
          ASSERT_LT(c, g.n);
          ++hits[r + c * g.m];
        }
    }
  EXPECT_EQ(area, g.m * g.n);
  for (index_t c = 0; c < g.n; ++c)
    for (index_t r = 0; r < g.m; ++r) {
      ASSERT_EQ(hits[r + c * g.m], 1) << "element (" << r << "," << c << ")";
      // ... and the tile that holds it is the one tile_row_of / tile_col_of name.
      const int i = L.tile_row_of(r), j = L.tile_col_of(c);
      ASSERT_TRUE(r >= L.row_offset(i) && r < L.row_offset(i + 1) && c >= L.col_offset(j) && c < L.col_offset(j + 1));
    }
}

TEST_P(LayoutGeometry, TopLevelBlocksHoldSMinusOneNarrowColumnsThenTheRemainder) {
  const Geometry g = GetParam();
  const TileLayout L(g.m, g.n, g.B, g.s, g.b);
  const int tops = L.top_cols();
  ASSERT_EQ(tops, (g.n + g.B - 1) / g.B);
  EXPECT_EQ(L.first_col_of_top(0), 0);
  EXPECT_EQ(L.first_col_of_top(tops), L.tile_cols());
  for (int t = 0; t < tops; ++t) {
    const int j0 = L.first_col_of_top(t), j1 = L.first_col_of_top(t + 1);
    ASSERT_LT(j0, j1) << "top-level block " << t << " has no tile column";
    EXPECT_EQ(L.col_offset(j0), t * g.B) << "top-level block " << t << " does not start at t*B";
    const index_t W = std::min(g.B, g.n - t * g.B);  // width of this top-level block
    EXPECT_EQ(L.col_offset(j1) - L.col_offset(j0), W) << "top-level block " << t;
    // Narrow columns: as many as fit with a non-empty remainder, at most s-1.
    const int narrow = static_cast<int>(g.s == 1 ? 0 : std::min<index_t>(g.s - 1, (W - 1) / g.b));
    ASSERT_EQ(j1 - j0, narrow + 1) << "top-level block " << t << " (width " << W << ")";
    if (W == g.B) {
      ASSERT_EQ(j1 - j0, g.s) << "a full top-level block has s tile columns";
    }
    for (int j = j0; j < j1; ++j) {
      const int d = j - j0;
      EXPECT_EQ(L.col_top(j), t) << "tile column " << j;
      EXPECT_EQ(L.col_sub(j), d) << "tile column " << j;
      EXPECT_EQ(L.col_local_offset(j), L.col_offset(j) - t * g.B) << "tile column " << j;
      EXPECT_EQ(L.col_local_offset(j), static_cast<index_t>(d) * g.b) << "tile column " << j;
      EXPECT_EQ(L.is_remainder(j), j == j1 - 1) << "tile column " << j;
      if (j < j1 - 1) {
        EXPECT_EQ(L.col_width(j), g.b) << "narrow tile column " << j;
      } else {
        EXPECT_EQ(L.col_width(j), W - static_cast<index_t>(narrow) * g.b) << "remainder column " << j;
        if (W == g.B) {
          EXPECT_EQ(L.col_width(j), g.B - (g.s - 1) * g.b) << "remainder of a full block";
        }
      }
      // The diagonal of a tile column starts inside tile row col_top(j).
      if (L.col_offset(j) < g.m) {
        EXPECT_EQ(L.tile_row_of(L.col_offset(j)), t);
        EXPECT_EQ(L.row_offset(t) + L.col_local_offset(j), L.col_offset(j));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayoutGeometry, ::testing::ValuesIn(geometries()),
                         [](const ::testing::TestParamInfo<Geometry>& info) { return name_of(info.param); });

TEST(TileLayout, HandCheckedTwoLevelWidths) {
  // N = 23, B = 10, s = 3, b = 3: blocks [3 3 4] [3 3 4] and a last block of
  // width 3 that can keep no narrow column (its remainder would be empty).
  const TileLayout L(23, 23, 10, 3, 3);
  ASSERT_EQ(L.tile_cols(), 7);
  const index_t widths[] = {3, 3, 4, 3, 3, 4, 3};
  const int tops[] = {0, 0, 0, 1, 1, 1, 2};
  const int subs[] = {0, 1, 2, 0, 1, 2, 0};
  for (int j = 0; j < 7; ++j) {
    EXPECT_EQ(L.col_width(j), widths[j]) << j;
    EXPECT_EQ(L.col_top(j), tops[j]) << j;
    EXPECT_EQ(L.col_sub(j), subs[j]) << j;
  }
  EXPECT_EQ(L.tile_col_of(0), 0);
  EXPECT_EQ(L.tile_col_of(5), 1);
  EXPECT_EQ(L.tile_col_of(6), 2);
  EXPECT_EQ(L.tile_col_of(9), 2);
  EXPECT_EQ(L.tile_col_of(10), 3);
  EXPECT_EQ(L.tile_col_of(22), 6);
  // Width 7 in the last block with b = 3: two narrow columns would leave 1.
  const TileLayout L2(27, 27, 10, 3, 3);
  ASSERT_EQ(L2.tile_cols(), 9);
  EXPECT_EQ(L2.col_width(6), 3);
  EXPECT_EQ(L2.col_width(7), 3);
  EXPECT_EQ(L2.col_width(8), 1);
  // Width 6 = 2b: one narrow column, remainder b.
  const TileLayout L3(26, 26, 10, 3, 3);
  ASSERT_EQ(L3.tile_cols(), 8);
  EXPECT_EQ(L3.col_width(6), 3);
  EXPECT_EQ(L3.col_width(7), 3);
  EXPECT_TRUE(L3.is_remainder(7));
  EXPECT_FALSE(L3.is_remainder(6));
}

// The message must carry the offending value, so a user can see what was wrong.
void expect_input_error(index_t m, index_t n, index_t B, int s, index_t b, const std::string& value) {
  try {
    TileLayout L(m, n, B, s, b);
    ADD_FAILURE() << "TileLayout(" << m << "," << n << "," << B << "," << s << "," << b << ") did not throw";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(value))
        << "TileLayout(" << m << "," << n << "," << B << "," << s << "," << b << ")";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than InputError: " << e.what();
  }
}

TEST(TileLayout, InvalidParametersThrowInputErrorNamingTheValue) {
  expect_input_error(0, 5, 4, 1, 0, "m = 0");
  expect_input_error(-7, 5, 4, 1, 0, "-7");
  expect_input_error(5, 0, 4, 1, 0, "n = 0");
  expect_input_error(5, -13, 4, 1, 0, "-13");
  expect_input_error(5, 5, 0, 1, 0, "B = 0");
  expect_input_error(5, 5, -9, 1, 0, "-9");
  expect_input_error(5, 5, 4, 0, 0, "s = 0");
  expect_input_error(5, 5, 4, -3, 1, "-3");
  expect_input_error(50, 50, 16, 2, 0, "b = 0");
  expect_input_error(50, 50, 16, 2, -6, "-6");
  // (s-1) b >= B: equal, and above.
  expect_input_error(50, 50, 16, 3, 8, "16");
  expect_input_error(50, 50, 12, 4, 5, "15");
  expect_input_error(50, 50, 12, 13, 1, "12");
}

TEST(TileLayout, LargestValidNarrowWidthIsAccepted) {
  // (s-1) b = B - 1 is the widest split that leaves a remainder column.
  const TileLayout L(40, 40, 16, 4, 5);
  EXPECT_EQ(L.col_width(3), 1);
  EXPECT_TRUE(L.is_remainder(3));
  // With s = 1, b is ignored.
  EXPECT_NO_THROW(TileLayout(40, 40, 16, 1, 1000));
}

// TileMatrix: tiles hold the elements the layout assigns them, round-trip
// through dense storage with a leading dimension larger than m.
template <class T>
class TileMatrixTest : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TileMatrixTest, Precisions);

TYPED_TEST(TileMatrixTest, DenseRoundTripAndAtAgree) {
  using T = TypeParam;
  for (const Geometry& g : {Geometry{37, 37, 8, 3, 2}, Geometry{45, 29, 16, 2, 5}, Geometry{1, 1, 4, 1, 0},
                            Geometry{20, 20, 20, 1, 0}, Geometry{33, 17, 5, 5, 1}}) {
    SCOPED_TRACE(name_of(g));
    const TileLayout L(g.m, g.n, g.B, g.s, g.b);
    const index_t lda = g.m + 3;
    std::vector<T> dense(static_cast<std::size_t>(lda * g.n));
    for (index_t c = 0; c < g.n; ++c)
      for (index_t r = 0; r < lda; ++r) dense[r + c * lda] = static_cast<T>(r < g.m ? 1000 * c + r + 1 : -1);
    TileMatrix<T> a(L);
    ASSERT_EQ(a.p(), L.tile_rows());
    ASSERT_EQ(a.q(), L.tile_cols());
    a.from_dense(dense.data(), lda);
    for (index_t c = 0; c < g.n; ++c)
      for (index_t r = 0; r < g.m; ++r) {
        ASSERT_EQ(a.at(r, c), dense[r + c * lda]) << "(" << r << "," << c << ")";
        // at() addresses the tile the layout names, column-major with ld = tile height.
        const int i = L.tile_row_of(r), j = L.tile_col_of(c);
        ASSERT_EQ(a.ld(i), L.row_height(i));
        ASSERT_EQ(a.tile(i, j)[(r - L.row_offset(i)) + (c - L.col_offset(j)) * a.ld(i)], dense[r + c * lda]);
        const TileMatrix<T>& ca = a;
        ASSERT_EQ(ca.at(r, c), dense[r + c * lda]);
      }
    // Tiles are 64-byte aligned.
    for (int i = 0; i < a.p(); ++i)
      for (int j = 0; j < a.q(); ++j) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.tile(i, j)) % 64, 0u);
    // Writes through at() show up in to_dense; padding rows are left alone.
    a.at(g.m - 1, 0) = T(-5);
    a.at(0, g.n - 1) = T(-6);
    std::vector<T> back(dense.size(), T(42));
    a.to_dense(back.data(), lda);
    for (index_t c = 0; c < g.n; ++c)
      for (index_t r = 0; r < lda; ++r) {
        T want = r < g.m ? dense[r + c * lda] : T(42);
        if (r == g.m - 1 && c == 0) want = T(-5);
        if (r == 0 && c == g.n - 1) want = T(-6);
        ASSERT_EQ(back[r + c * lda], want) << "(" << r << "," << c << ")";
      }
  }
}

// The passes over a large matrix run a tile column per unit on several threads (one per 2^22 entries, at most
// max_threads): every entry lands once, at its place, whatever the thread count, and TileMatrix::from_dense
// builds the same matrix without zeroing it first (ragged last tiles, a leading dimension beyond m).
TYPED_TEST(TileMatrixTest, ThreadedDensePassesAndTheFactoryAgree) {
  using T = TypeParam;
  const TileLayout L(3001, 2999, 256, 2, 64);
  const index_t lda = L.m() + 5;
  std::vector<T> dense(static_cast<std::size_t>(lda * L.n()));
  for (index_t c = 0; c < L.n(); ++c)
    for (index_t r = 0; r < lda; ++r) dense[r + c * lda] = static_cast<T>(r < L.m() ? (7 * c + 3 * r) % 4093 : -1);
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, TileMatrix<T>::kAnyThreads}) {
    SCOPED_TRACE(threads);
    const TileMatrix<T> a = TileMatrix<T>::from_dense(L, dense.data(), lda, threads);
    TileMatrix<T> b(L);
    b.from_dense(dense.data(), lda, threads);
    for (const TileMatrix<T>* m : {&a, static_cast<const TileMatrix<T>*>(&b)}) {
      std::vector<T> back(dense.size(), T(42));
      m->to_dense(back.data(), lda, threads);
      for (index_t c = 0; c < L.n(); ++c)
        for (index_t r = 0; r < lda; ++r)
          ASSERT_EQ(back[r + c * lda], r < L.m() ? dense[r + c * lda] : T(42)) << "(" << r << "," << c << ")";
    }
  }
}

TYPED_TEST(TileMatrixTest, UnallocatedTilesAreNullUntilAllocatedAndThenZero) {
  using T = TypeParam;
  const TileLayout L(30, 30, 8, 2, 3);
  TileMatrix<T> a(L, false);
  for (int i = 0; i < a.p(); ++i)
    for (int j = 0; j < a.q(); ++j) EXPECT_EQ(a.tile(i, j), nullptr);
  a.allocate(2, 3);
  ASSERT_NE(a.tile(2, 3), nullptr);
  EXPECT_EQ(a.tile(2, 2), nullptr);
  for (index_t e = 0; e < L.row_height(2) * L.col_width(3); ++e) EXPECT_EQ(a.tile(2, 3)[e], T(0));
  T* before = a.tile(2, 3);
  a.allocate(2, 3);  // allocating twice keeps the tile
  EXPECT_EQ(a.tile(2, 3), before);
}

// A generated matrix does not depend on the tile layout that holds it.
TEST(MatrixGen, SameMatrixWhateverTheLayout) {
  const index_t n = 41;
  TileMatrix<double> a(TileLayout(n, n, 8, 3, 2)), b(TileLayout(n, n, 41, 1, 0)), c(TileLayout(n, n, 5, 1, 0));
  generate(a, MatrixKind::Spd, 7);
  generate(b, MatrixKind::Spd, 7);
  generate(c, MatrixKind::Spd, 7);
  std::vector<double> da(n * n), db(n * n), dc(n * n);
  a.to_dense(da.data(), n);
  b.to_dense(db.data(), n);
  c.to_dense(dc.data(), n);
  EXPECT_EQ(0, std::memcmp(da.data(), db.data(), da.size() * sizeof(double)));
  EXPECT_EQ(0, std::memcmp(da.data(), dc.data(), da.size() * sizeof(double)));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      EXPECT_EQ(da[i + j * n], da[j + i * n]) << "SPD matrix not symmetric at (" << i << "," << j << ")";
      EXPECT_EQ(da[i + j * n], generated_value(MatrixKind::Spd, 7, n, i, j));
    }
  // Another seed gives another matrix; General is not symmetric.
  TileMatrix<double> d(TileLayout(n, n, 8, 1, 0));
  generate(d, MatrixKind::General, 7);
  std::vector<double> dd(n * n);
  d.to_dense(dd.data(), n);
  EXPECT_NE(dd[1], dd[n]);
  EXPECT_NE(generated_value(MatrixKind::General, 7, n, 3, 4), generated_value(MatrixKind::General, 8, n, 3, 4));
}

// ceil(a/b) for sizes up to 2^63 - 1: (a + b - 1) / b wrapped (n = B =
// 2^63 - 1 gave 0 tile rows), and the layout's r += B stepped past int64's
// end after the last row of m = 2^63 - 1 in tiles of 2^62.
TEST(TileLayout, SizesNearInt64sEnd) {
  constexpr index_t kMax = std::numeric_limits<index_t>::max(), kHalf = index_t{1} << 62;
  EXPECT_EQ(ceil_div(0, 5), 0);
  EXPECT_EQ(ceil_div(10, 5), 2);
  EXPECT_EQ(ceil_div(11, 5), 3);
  EXPECT_EQ(ceil_div(kMax, kMax), 1);
  EXPECT_EQ(ceil_div(kMax, kHalf), 2);
  EXPECT_EQ(ceil_div(kMax, 1), kMax);
  EXPECT_EQ(tile_count(kMax, kMax, kMax, 1), 1.0);
  EXPECT_EQ(tile_count(kMax, kMax, 1, 2), 2.0 * static_cast<double>(kMax) * static_cast<double>(kMax));
  const TileLayout L(kMax, kMax, kHalf, 2, kHalf / 2);
  ASSERT_EQ(L.tile_rows(), 2);
  EXPECT_EQ(L.row_offset(1), kHalf);
  EXPECT_EQ(L.row_height(1), kMax - kHalf);
  ASSERT_EQ(L.tile_cols(), 4);
  EXPECT_EQ(L.col_offset(3), kHalf + kHalf / 2);
  EXPECT_EQ(L.col_width(3), kMax - kHalf - kHalf / 2);
  // The bound a run and the communication model share: 2^30 tiles, named.
  check_tile_count(32'768, 32'768, 1, 1);
  try {
    check_tile_count(2'000'000, 2'097'152, 64, 2);
    ADD_FAILURE() << "2.15e9 tiles accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--n 2097152 --m 2000000 with --B 64 and --s 2 makes 2.05e+09 tiles"));
    EXPECT_THAT(e.what(), HasSubstr("2^30"));
  }
}

}  // namespace
}  // namespace tessera
