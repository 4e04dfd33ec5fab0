// Unit tests of the LU kernels (kernels/cpu/lu_kernels.hpp, issue 14): the
// tournament pivot selection of CALU / TSLU (002 §2.4) against GEPP
// (LAPACKE ?getrf) on the same rows, the swap-vector conversions, LU without
// pivoting, and the backward error of whole panels and small CALU / GEPP
// factorizations built from the kernels, ‖PA − LU‖₁ / (n ‖A‖₁ ε) < 30: the
// threshold of LAPACK's test routine DGET01 (LAPACK Working Note 41, the
// installation guide of LAPACK, whose test ratios pass below 30).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/lu_kernels.hpp"

namespace tessera::kernels {
namespace {

constexpr double kDget01Threshold = 30.0;  // LAWN 41: a test ratio passes below 30

template <class T>
std::vector<T> random_matrix(index_t m, index_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(m * n));
  for (auto& x : a) x = static_cast<T>(u(gen));
  return a;
}

lapack_int getrf_ref(lapack_int m, lapack_int n, double* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}
lapack_int getrf_ref(lapack_int m, lapack_int n, float* a, lapack_int lda, lapack_int* ipiv) {
  return LAPACKE_sgetrf(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);
}

// GEPP (LAPACKE, straight from the library) on the given rows of A stacked in
// that order; returns the min(#rows, b) rows it pivots on, in pivot order.
// Written independently of the kernel's select step, with a full permutation.
template <class T>
std::vector<index_t> gepp_rows(const std::vector<T>& a, index_t lda, index_t b, const std::vector<index_t>& rows) {
  const index_t h = static_cast<index_t>(rows.size());
  std::vector<T> s(static_cast<std::size_t>(h * b));
  for (index_t i = 0; i < h; ++i)
    for (index_t j = 0; j < b; ++j) s[i + j * h] = a[rows[i] + j * lda];
  const index_t k = std::min(h, b);
  std::vector<lapack_int> piv(static_cast<std::size_t>(std::max<index_t>(k, 1)));
  const lapack_int info = getrf_ref(static_cast<lapack_int>(h), static_cast<lapack_int>(b), s.data(),
                                    static_cast<lapack_int>(std::max<index_t>(h, 1)), piv.data());
  EXPECT_GE(info, 0);
  std::vector<index_t> perm(rows);
  for (index_t i = 0; i < k; ++i) std::swap(perm[i], perm[piv[i] - 1]);
  perm.resize(static_cast<std::size_t>(k));
  return perm;
}

std::vector<index_t> range_rows(index_t r0, index_t r1) {
  std::vector<index_t> r;
  for (index_t i = r0; i < r1; ++i) r.push_back(i);
  return r;
}
std::vector<index_t> concat(std::vector<index_t> x, const std::vector<index_t>& y) {
  x.insert(x.end(), y.begin(), y.end());
  return x;
}

template <class T>
std::vector<index_t> select(const std::vector<T>& a, index_t m, index_t b, index_t row_block, Tree tree) {
  std::vector<index_t> out(static_cast<std::size_t>(std::min(m, b)) + 1, -7);
  const index_t k = tournament_select(m, b, a.data(), m, row_block, tree, out.data());
  EXPECT_EQ(k, std::min(m, b));
  EXPECT_EQ(out[k], -7) << "wrote past k rows";
  out.resize(static_cast<std::size_t>(k));
  return out;
}

void expect_valid_selection(const std::vector<index_t>& rows, index_t m, index_t b) {
  ASSERT_EQ(static_cast<index_t>(rows.size()), std::min(m, b));
  std::set<index_t> seen;
  for (const index_t r : rows) {
    EXPECT_GE(r, 0);
    EXPECT_LT(r, m);
    EXPECT_TRUE(seen.insert(r).second) << "row " << r << " selected twice";
  }
}

// ‖P A − L U‖₁ / (n ‖A‖₁ ε) for the m×n A0 and its in-place factors F (L
// unit lower trapezoidal, U upper), with P given as a 0-based swap vector
// over the first min(m,n) rows; computed in double.
template <class T>
double backward_error(index_t m, index_t n, const std::vector<T>& a0, const std::vector<T>& f,
                      const std::vector<index_t>& ipiv) {
  std::vector<T> pa(a0);
  laswp_rows(n, pa.data(), m, 0, static_cast<index_t>(ipiv.size()), ipiv.data());
  const index_t k = std::min(m, n);
  double rnorm = 0, anorm = 0;
  for (index_t j = 0; j < n; ++j) {
    double rcol = 0, acol = 0;
    for (index_t i = 0; i < m; ++i) {
      double lu = 0;
      for (index_t p = 0; p <= std::min({i, j, k - 1}); ++p) {
        const double l = p == i ? 1.0 : static_cast<double>(f[i + p * m]);
        lu += l * static_cast<double>(f[p + j * m]);
      }
      rcol += std::abs(static_cast<double>(pa[i + j * m]) - lu);
      acol += std::abs(static_cast<double>(a0[i + j * m]));
    }
    rnorm = std::max(rnorm, rcol);
    anorm = std::max(anorm, acol);
  }
  return rnorm / (static_cast<double>(n) * anorm * std::numeric_limits<T>::epsilon());
}

// --- tournament selection against GEPP -------------------------------------

TEST(TournamentSelect, SingleBlockEqualsGepp) {
  for (const Tree tree : {Tree::Binary, Tree::Flat}) {
    for (const auto& [m, b] : {std::pair<index_t, index_t>{40, 16}, {64, 64}, {100, 64}, {10, 16}}) {
      const auto a = random_matrix<double>(m, b, 11 + m);
      // row_block >= m: one block, so the tournament is GEPP on the panel.
      EXPECT_EQ(select(a, m, b, m, tree), gepp_rows(a, m, b, range_rows(0, m))) << "m=" << m << " b=" << b;
      EXPECT_EQ(select(a, m, b, 4 * m, tree), gepp_rows(a, m, b, range_rows(0, m)));
    }
  }
}

TEST(TournamentSelect, TwoBlocksEqualGeppOnTheStackedCandidates) {
  const index_t m = 90, b = 8, rb = 50;  // blocks 0..49, 50..89
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const auto a = random_matrix<double>(m, b, seed);
    const auto c0 = gepp_rows(a, m, b, range_rows(0, 50));
    const auto c1 = gepp_rows(a, m, b, range_rows(50, 90));
    EXPECT_EQ(select(a, m, b, rb, Tree::Binary), gepp_rows(a, m, b, concat(c0, c1)));
    // Flat: block 1 enters whole, on top of block 0's candidates.
    EXPECT_EQ(select(a, m, b, rb, Tree::Flat), gepp_rows(a, m, b, concat(c0, range_rows(50, 90))));
  }
}

TEST(TournamentSelect, TreesOfSeveralBlocksFollowTheirReductionOrder) {
  const index_t m = 70, b = 6, rb = 20;  // blocks 0..19, 20..39, 40..59, 60..69 (shorter)
  const auto a = random_matrix<float>(m, b, 5);
  std::vector<std::vector<index_t>> leaf;
  for (index_t r0 = 0; r0 < m; r0 += rb) leaf.push_back(gepp_rows(a, m, b, range_rows(r0, std::min(m, r0 + rb))));
  const auto left = gepp_rows(a, m, b, concat(leaf[0], leaf[1]));
  const auto right = gepp_rows(a, m, b, concat(leaf[2], leaf[3]));
  EXPECT_EQ(select(a, m, b, rb, Tree::Binary), gepp_rows(a, m, b, concat(left, right)));
  auto flat = leaf[0];
  for (index_t r0 = rb; r0 < m; r0 += rb) flat = gepp_rows(a, m, b, concat(flat, range_rows(r0, std::min(m, r0 + rb))));
  EXPECT_EQ(select(a, m, b, rb, Tree::Flat), flat);

  // Five blocks: block 4 waits a level ((0,1),(2,3)),4 in the binary tree.
  const index_t m5 = 95;
  const auto a5 = random_matrix<float>(m5, b, 6);
  std::vector<std::vector<index_t>> l5;
  for (index_t r0 = 0; r0 < m5; r0 += rb) l5.push_back(gepp_rows(a5, m5, b, range_rows(r0, std::min(m5, r0 + rb))));
  const auto top = gepp_rows(
      a5, m5, b, concat(gepp_rows(a5, m5, b, concat(l5[0], l5[1])), gepp_rows(a5, m5, b, concat(l5[2], l5[3]))));
  EXPECT_EQ(select(a5, m5, b, rb, Tree::Binary), gepp_rows(a5, m5, b, concat(top, l5[4])));
}

TEST(TournamentSelect, BestPivotInTheLastRowBlockIsSelectedFirst) {
  const index_t m = 1000, b = 64;
  for (const index_t rb : {index_t{128}, index_t{100}}) {
    auto a = random_matrix<double>(m, b, 21);
    const index_t best = m - 3;  // in the last block (896..999 or 900..999)
    a[best] = 50.0;
    for (const Tree tree : {Tree::Binary, Tree::Flat}) {
      const auto rows = select(a, m, b, rb, tree);
      expect_valid_selection(rows, m, b);
      EXPECT_EQ(rows.front(), best) << "row_block " << rb;
    }
  }
}

TEST(TournamentSelect, BinaryAndFlatGiveValidSelectionsWithGeppsFirstPivot) {
  const index_t m = 1000, b = 64;
  for (const index_t rb : {index_t{128}, index_t{100}, index_t{64}, index_t{30}}) {
    const auto a = random_matrix<double>(m, b, 31 + rb);
    const auto gepp = gepp_rows(a, m, b, range_rows(0, m));
    // Unambiguous: the largest |A(i,0)| is unique.
    index_t ties = 0;
    for (index_t i = 0; i < m; ++i) ties += std::abs(a[i]) == std::abs(a[gepp[0]]);
    ASSERT_EQ(ties, 1);
    const auto bin = select(a, m, b, rb, Tree::Binary);
    const auto flat = select(a, m, b, rb, Tree::Flat);
    expect_valid_selection(bin, m, b);
    expect_valid_selection(flat, m, b);
    EXPECT_EQ(bin.front(), gepp.front());
    EXPECT_EQ(flat.front(), gepp.front());
  }
}

TEST(TournamentSelect, FewerRowsThanColumnsSelectsEveryRowInGeppOrder) {
  // m < b: every set keeps all its rows, so the root runs GEPP on a row
  // permutation of the whole panel and picks GEPP's order.
  const index_t m = 10, b = 16;
  const auto a = random_matrix<double>(m, b, 41);
  const auto gepp = gepp_rows(a, m, b, range_rows(0, m));
  for (const Tree tree : {Tree::Binary, Tree::Flat})
    for (const index_t rb : {index_t{1}, index_t{3}, index_t{4}, index_t{10}}) {
      const auto rows = select(a, m, b, rb, tree);
      expect_valid_selection(rows, m, b);
      EXPECT_EQ(rows, gepp) << "row_block " << rb;
    }
}

TEST(TournamentSelect, ZeroColumnStillGivesDistinctRows) {
  const index_t m = 50, b = 8;
  auto a = random_matrix<double>(m, b, 43);
  for (index_t i = 0; i < m; ++i) a[i + 3 * m] = 0;
  for (const Tree tree : {Tree::Binary, Tree::Flat}) expect_valid_selection(select(a, m, b, 7, tree), m, b);
}

TEST(TournamentSelect, TiesInTheFirstColumnGoToTheUpperRowLikeGepp) {
  // Rows 5 (block 0) and 95 (block 1) share the largest |A(i,0)|: GEPP on
  // the panel pivots on the upper one, and so does the tournament, whose
  // stacks put the upper candidates on top.
  const index_t m = 120, b = 8;
  auto a = random_matrix<double>(m, b, 44);
  a[5] = 10.0;
  a[95] = -10.0;
  ASSERT_EQ(gepp_rows(a, m, b, range_rows(0, m)).front(), 5);
  for (const Tree tree : {Tree::Binary, Tree::Flat})
    for (const index_t rb : {index_t{50}, index_t{30}, index_t{7}}) EXPECT_EQ(select(a, m, b, rb, tree).front(), 5);
}

TEST(TournamentSelect, RejectsBadArguments) {
  const auto a = random_matrix<double>(10, 4, 1);
  std::vector<index_t> out(4);
  EXPECT_THROW(tournament_select(index_t{10}, index_t{4}, a.data(), index_t{10}, index_t{0}, Tree::Binary, out.data()),
               std::invalid_argument);
  EXPECT_THROW(tournament_select(index_t{10}, index_t{4}, a.data(), index_t{9}, index_t{5}, Tree::Flat, out.data()),
               std::invalid_argument);
  EXPECT_THROW(tournament_select(index_t{-1}, index_t{4}, a.data(), index_t{10}, index_t{5}, Tree::Flat, out.data()),
               std::invalid_argument);
  EXPECT_EQ(tournament_select(index_t{0}, index_t{4}, a.data(), index_t{1}, index_t{5}, Tree::Flat, out.data()), 0);
}

// --- swap vectors ----------------------------------------------------------

TEST(SwapVectors, RowsToIpivBringsTheRowsToTheTopInOrder) {
  const index_t m = 12, n = 3;
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) a[i + j * m] = 100.0 * i + j;  // row i is recognizable
  const std::vector<index_t> rows = {7, 0, 11, 1, 5};
  std::vector<index_t> ipiv(rows.size());
  rows_to_ipiv(m, 5, rows.data(), ipiv.data());
  for (std::size_t i = 0; i < ipiv.size(); ++i) EXPECT_GE(ipiv[i], static_cast<index_t>(i));
  laswp_rows(n, a.data(), m, 0, 5, ipiv.data());
  for (index_t i = 0; i < 5; ++i)
    for (index_t j = 0; j < n; ++j) EXPECT_EQ(a[i + j * m], 100.0 * rows[i] + j);
  // Still a permutation of the rows.
  std::set<double> first_col(a.begin(), a.begin() + m);
  EXPECT_EQ(first_col.size(), static_cast<std::size_t>(m));
  // And back: the permutation of that swap vector is the rows.
  std::vector<index_t> back(rows.size());
  pivots_to_permutation(5, ipiv.data(), back.data());
  EXPECT_EQ(back, rows);
}

TEST(SwapVectors, RoundTripOfGetrfPivotsAndLaswpMatchesLapack) {
  const index_t m = 200, n = 40;
  const auto a0 = random_matrix<double>(m, n, 51);
  auto f = a0;
  std::vector<index_t> ipiv(n);
  ASSERT_EQ(getrf_panel(m, n, f.data(), m, ipiv.data()), 0);
  std::vector<index_t> rows(n), ipiv2(n);
  pivots_to_permutation(n, ipiv.data(), rows.data());
  rows_to_ipiv(m, n, rows.data(), ipiv2.data());
  EXPECT_EQ(ipiv2, ipiv);
  EXPECT_EQ(rows, gepp_rows(a0, m, n, range_rows(0, m)));
  // laswp_rows against LAPACKE_dlaswp (1-based) on the same columns.
  auto x = random_matrix<double>(m, 7, 52), y = x;
  laswp_rows(7, x.data(), m, 0, n, ipiv.data());
  std::vector<lapack_int> p1(n);
  for (index_t i = 0; i < n; ++i) p1[i] = static_cast<lapack_int>(ipiv[i] + 1);
  ASSERT_EQ(LAPACKE_dlaswp(LAPACK_COL_MAJOR, 7, y.data(), m, 1, static_cast<lapack_int>(n), p1.data(), 1), 0);
  EXPECT_EQ(x, y);
}

TEST(SwapVectors, RandomRowSetsRoundTrip) {
  // Dense collisions (k close to m): rows are moved into places other rows
  // were moved out of, many times over.
  std::mt19937_64 gen(53);
  for (int trial = 0; trial < 200; ++trial) {
    const index_t m = 1 + static_cast<index_t>(gen() % 40);
    const index_t k = static_cast<index_t>(gen() % (m + 1));
    std::vector<index_t> all = range_rows(0, m);
    std::shuffle(all.begin(), all.end(), gen);
    const std::vector<index_t> rows(all.begin(), all.begin() + k);
    std::vector<index_t> ipiv(static_cast<std::size_t>(k)), back(static_cast<std::size_t>(k));
    rows_to_ipiv(m, k, rows.data(), ipiv.data());
    std::vector<double> x(static_cast<std::size_t>(m));
    for (index_t i = 0; i < m; ++i) x[i] = static_cast<double>(i);
    laswp_rows(1, x.data(), m, 0, k, ipiv.data());
    for (index_t i = 0; i < k; ++i) {
      ASSERT_GE(ipiv[i], i);
      ASSERT_EQ(x[i], static_cast<double>(rows[i])) << "trial " << trial << " m=" << m << " k=" << k;
    }
    std::sort(x.begin(), x.end());
    for (index_t i = 0; i < m; ++i) ASSERT_EQ(x[i], static_cast<double>(i));  // still a permutation
    pivots_to_permutation(k, ipiv.data(), back.data());
    ASSERT_EQ(back, rows);
  }
}

TEST(SwapVectors, RejectBadRows) {
  std::vector<index_t> ipiv(3);
  const std::vector<index_t> dup = {2, 4, 2}, out_of_range = {0, 9, 1};
  EXPECT_THROW(rows_to_ipiv(8, 3, dup.data(), ipiv.data()), std::invalid_argument);
  EXPECT_THROW(rows_to_ipiv(8, 3, out_of_range.data(), ipiv.data()), std::invalid_argument);
  const std::vector<index_t> backwards = {1, 0, 2};
  std::vector<index_t> rows(3);
  EXPECT_THROW(pivots_to_permutation(3, backwards.data(), rows.data()), std::invalid_argument);
}

// --- LU without pivoting, zero pivots --------------------------------------

// A = L U with small integer L (unit) and U, so every step of elimination is
// exact in floating point: the factors come back exactly, and a zero on U's
// diagonal is met exactly where it was put.
template <class T>
std::vector<T> integer_lu_product(index_t m, index_t n, index_t zero_at, std::vector<T>& l, std::vector<T>& u) {
  std::mt19937_64 gen(61);
  std::uniform_int_distribution<int> d(-1, 1);
  const index_t k = std::min(m, n);
  l.assign(static_cast<std::size_t>(m * k), 0);
  u.assign(static_cast<std::size_t>(k * n), 0);
  for (index_t p = 0; p < k; ++p) {
    l[p + p * m] = 1;
    for (index_t i = p + 1; i < m; ++i) l[i + p * m] = static_cast<T>(d(gen));
    u[p + p * k] = p == zero_at ? T(0) : T(1);
    for (index_t j = p + 1; j < n; ++j) u[p + j * k] = static_cast<T>(d(gen));
  }
  std::vector<T> a(static_cast<std::size_t>(m * n), 0);
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p)
      for (index_t i = 0; i < m; ++i) a[i + j * m] += l[i + p * m] * u[p + j * k];
  return a;
}

TEST(GetrfNopiv, RecoversExactIntegerFactors) {
  for (const auto& [m, n] : {std::pair<index_t, index_t>{100, 64}, {64, 64}, {30, 50}, {5, 3}}) {
    std::vector<double> l, u;
    auto a = integer_lu_product<double>(m, n, -1, l, u);
    ASSERT_EQ(getrf_nopiv(m, n, a.data(), m), 0);
    const index_t k = std::min(m, n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        // Below the diagonal L (then j < i < m, so j < k); on and above it U.
        const double want = i > j ? l[i + j * m] : u[i + j * k];
        ASSERT_EQ(a[i + j * m], want) << "m=" << m << " n=" << n << " (" << i << "," << j << ")";
      }
  }
}

TEST(GetrfNopiv, ReturnsTheColumnOfTheFirstZeroPivot) {
  auto a = random_matrix<double>(20, 10, 71);
  a[0] = 0.0;
  EXPECT_EQ(getrf_nopiv(index_t{20}, index_t{10}, a.data(), index_t{20}), 1);
  auto s = random_matrix<float>(20, 10, 72);
  s[0] = 0.0f;
  EXPECT_EQ(getrf_nopiv(index_t{20}, index_t{10}, s.data(), index_t{20}), 1);
  // Deep in the recursion: column 41 of 64 (1-based), in a right half.
  std::vector<double> l, u;
  auto z = integer_lu_product<double>(100, 64, 40, l, u);
  EXPECT_EQ(getrf_nopiv(index_t{100}, index_t{64}, z.data(), index_t{100}), 41);
  auto z3 = integer_lu_product<double>(100, 64, 3, l, u);
  EXPECT_EQ(getrf_nopiv(index_t{100}, index_t{64}, z3.data(), index_t{100}), 4);
}

TEST(GetrfPanel, ReturnsTheColumnOfTheFirstZeroPivotOfASingularPanel) {
  const index_t m = 30, n = 6;
  auto a = random_matrix<double>(m, n, 81);
  for (index_t i = 0; i < m; ++i) a[i + 2 * m] = 0.0;  // column 3 (1-based) zero
  for (index_t i = 0; i < m; ++i) a[i + 4 * m] = 0.0;  // and column 5
  std::vector<index_t> ipiv(n);
  EXPECT_EQ(getrf_panel(m, n, a.data(), m, ipiv.data()), 3);
  // Column 2 a copy of column 1, whose entries are powers of two: the
  // elimination cancels it exactly.
  std::mt19937_64 gen(82);
  std::uniform_int_distribution<int> e(-4, 4), sign(0, 1);
  auto s = random_matrix<float>(m, n, 83);
  for (index_t i = 0; i < m; ++i) s[i] = s[i + m] = std::ldexp(sign(gen) ? 1.0f : -1.0f, e(gen));
  EXPECT_EQ(getrf_panel(m, n, s.data(), m, ipiv.data()), 2);
  for (index_t i = 0; i < n; ++i) {
    EXPECT_GE(ipiv[i], i);
    EXPECT_LT(ipiv[i], m);
  }
}

// --- backward error ----------------------------------------------------------

template <class T>
void panel_backward_error(index_t m, index_t b, index_t rb, Tree tree) {
  const auto a0 = random_matrix<T>(m, b, 91 + rb);
  std::vector<index_t> rows(static_cast<std::size_t>(std::min(m, b))), ipiv(rows.size());
  const index_t k = tournament_select(m, b, a0.data(), m, rb, tree, rows.data());
  rows_to_ipiv(m, k, rows.data(), ipiv.data());
  auto f = a0;
  laswp_rows(b, f.data(), m, 0, k, ipiv.data());
  ASSERT_EQ(getrf_nopiv(m, b, f.data(), m), 0);
  const double ratio = backward_error(m, b, a0, f, ipiv);
  EXPECT_LT(ratio, kDget01Threshold) << "m=" << m << " b=" << b << " row_block=" << rb;
  // No multiplier is huge: |L| stays moderate on random panels (GEPP: <= 1).
  double lmax = 0;
  for (index_t j = 0; j < b; ++j)
    for (index_t i = j + 1; i < m; ++i) lmax = std::max(lmax, std::abs(static_cast<double>(f[i + j * m])));
  EXPECT_LT(lmax, 100.0);
}

TEST(PanelBackwardError, TournamentThenNopivDouble) {
  for (const Tree tree : {Tree::Binary, Tree::Flat})
    for (const index_t rb : {index_t{128}, index_t{100}}) panel_backward_error<double>(1000, 64, rb, tree);
}

TEST(PanelBackwardError, TournamentThenNopivFloat) {
  for (const Tree tree : {Tree::Binary, Tree::Flat})
    for (const index_t rb : {index_t{128}, index_t{100}}) panel_backward_error<float>(1000, 64, rb, tree);
}

TEST(PanelBackwardError, ShortAndSingleBlockPanels) {
  panel_backward_error<double>(10, 16, 4, Tree::Binary);     // m < b
  panel_backward_error<double>(37, 16, 10, Tree::Flat);      // blocks shorter than b
  panel_backward_error<float>(300, 32, 1000, Tree::Binary);  // one row block
}

TEST(PanelBackwardError, GetrfPanel) {
  const index_t m = 1000, b = 64;
  const auto a0 = random_matrix<double>(m, b, 95);
  auto f = a0;
  std::vector<index_t> ipiv(b);
  ASSERT_EQ(getrf_panel(m, b, f.data(), m, ipiv.data()), 0);
  EXPECT_LT(backward_error(m, b, a0, f, ipiv), kDget01Threshold);
}

// A whole right-looking LU built from the kernels, as the runtime will run
// it: per step the panel's pivots (tournament, or GEPP in the panel), their
// swaps applied across the full rows, the U row by trsm_unit_lower and the
// trailing update by gemm_update.
template <class T>
double blocked_lu(index_t n, index_t b, bool tournament, Tree tree, index_t rb) {
  const auto a0 = random_matrix<T>(n, n, 101 + n);
  auto a = a0;
  std::vector<index_t> ipiv_all(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; k += b) {
    const index_t kb = std::min(b, n - k), mk = n - k;
    T* panel = a.data() + k + k * n;
    std::vector<index_t> ipiv(static_cast<std::size_t>(kb));
    if (tournament) {
      std::vector<index_t> rows(static_cast<std::size_t>(kb));
      EXPECT_EQ(tournament_select(mk, kb, panel, n, rb, tree, rows.data()), kb);
      rows_to_ipiv(mk, kb, rows.data(), ipiv.data());
      laswp_rows(n, a.data() + k, n, 0, kb, ipiv.data());  // all columns, rows k..n
      EXPECT_EQ(getrf_nopiv(mk, kb, panel, n), 0);
    } else {
      EXPECT_EQ(getrf_panel(mk, kb, panel, n, ipiv.data()), 0);
      laswp_rows(k, a.data() + k, n, 0, kb, ipiv.data());                          // left
      laswp_rows(n - k - kb, a.data() + k + (k + kb) * n, n, 0, kb, ipiv.data());  // right
    }
    for (index_t i = 0; i < kb; ++i) ipiv_all[k + i] = ipiv[i] + k;
    if (k + kb < n) {
      T* urow = a.data() + k + (k + kb) * n;
      trsm_unit_lower(kb, n - k - kb, panel, n, urow, n);
      gemm_update(mk - kb, n - k - kb, kb, panel + kb, n, urow, n, a.data() + (k + kb) + (k + kb) * n, n);
    }
  }
  return backward_error(n, n, a0, a, ipiv_all);
}

TEST(BlockedLu, CaluAndGeppFromTheKernelsPassDget01) {
  // N not a multiple of b; panels shrink to fewer rows than row_block.
  EXPECT_LT(blocked_lu<double>(300, 32, true, Tree::Binary, 50), kDget01Threshold);
  EXPECT_LT(blocked_lu<double>(300, 32, true, Tree::Flat, 64), kDget01Threshold);
  EXPECT_LT(blocked_lu<float>(250, 48, true, Tree::Binary, 100), kDget01Threshold);
  EXPECT_LT(blocked_lu<double>(300, 32, false, Tree::Binary, 0), kDget01Threshold);
  EXPECT_LT(blocked_lu<float>(250, 48, false, Tree::Binary, 0), kDget01Threshold);
  EXPECT_LT(blocked_lu<double>(20, 32, true, Tree::Binary, 8), kDget01Threshold);  // N < b
}

TEST(BlasWrappers, TrsmAndGemmMatchTheirDefinitions) {
  const index_t b = 5, n = 4, m = 6;
  auto l = random_matrix<double>(b, b, 111);
  auto x = random_matrix<double>(b, n, 112);
  // A = L X with L unit lower: trsm_unit_lower(A) gives X back.
  std::vector<double> a(static_cast<std::size_t>(b * n), 0);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < b; ++i)
      for (index_t p = 0; p <= i; ++p) a[i + j * b] += (p == i ? 1.0 : l[i + p * b]) * x[p + j * b];
  trsm_unit_lower(b, n, l.data(), b, a.data(), b);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], x[i], 1e-13);
  auto ga = random_matrix<float>(m, b, 113), gb = random_matrix<float>(b, n, 114), c = random_matrix<float>(m, n, 115);
  auto want = c;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      for (index_t p = 0; p < b; ++p) want[i + j * m] -= ga[i + p * m] * gb[p + j * b];
  gemm_update(m, n, b, ga.data(), m, gb.data(), b, c.data(), m);
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], want[i], 1e-5);
}

}  // namespace
}  // namespace tessera::kernels
