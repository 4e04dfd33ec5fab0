// Task graphs the serial algorithms generate (hand-checked).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "dag_test_util.hpp"

namespace tessera {
namespace {

using namespace test;

using AccessList = std::vector<std::pair<DataId, AccessMode>>;

struct Expected {
  KernelId kernel;
  int k, i, j;
  AccessList access;
};

AccessList sorted_accesses(const TaskDesc& d) {
  AccessList out;
  for (int a = 0; a < d.n_access; ++a) out.emplace_back(d.access[a].data, d.access[a].mode);
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const AccessList& acc) {
  std::string s;
  for (auto [d, m] : acc) s += " d" + std::to_string(d) + (m == R ? ":R" : m == W ? ":W" : ":RW");
  return s;
}

void expect_sequence(const std::vector<TaskDesc>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t n = 0; n < want.size(); ++n) {
    SCOPED_TRACE("task " + std::to_string(n) + " expected " + kernel_name(want[n].kernel) + "(" +
                 std::to_string(want[n].k) + "," + std::to_string(want[n].i) + "," + std::to_string(want[n].j) + ")");
    EXPECT_EQ(got[n].kernel, want[n].kernel) << "got " << kernel_name(got[n].kernel);
    EXPECT_EQ(got[n].arg[0], want[n].k);
    EXPECT_EQ(got[n].arg[1], want[n].i);
    EXPECT_EQ(got[n].arg[2], want[n].j);
    AccessList w = want[n].access;
    std::sort(w.begin(), w.end());
    const AccessList g = sorted_accesses(got[n]);
    EXPECT_EQ(g, w) << "got" << describe(g) << " want" << describe(w);
  }
}

// ---------------------------------------------------------------------------
// Cholesky
// ---------------------------------------------------------------------------

TEST(CholeskyDag, ThreeByThreeTilesHandChecked) {
  // N = 3, B = 1: 3×3 tiles of one element; datum of tile (i,j) = i + 3j.
  const TileLayout L(3, 3, 1, 1, 0);
  ASSERT_EQ(cholesky_data_count(L), 9u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 3 * j); };
  test::TaskList rec;
  cholesky_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kPotf2p, 0, 0, 0, {{d(0, 0), RW}}},
                                 {kTrsm, 0, 1, 0, {{d(0, 0), R}, {d(1, 0), RW}}},
                                 {kTrsm, 0, 2, 0, {{d(0, 0), R}, {d(2, 0), RW}}},
                                 {kGsmmDiag, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}}},
                                 {kGsmm, 0, 2, 1, {{d(2, 0), R}, {d(1, 0), R}, {d(2, 1), RW}}},
                                 {kGsmmDiag, 0, 2, 2, {{d(2, 0), R}, {d(2, 2), RW}}},
                                 {kPotf2p, 1, 1, 1, {{d(1, 1), RW}}},
                                 {kTrsm, 1, 2, 1, {{d(1, 1), R}, {d(2, 1), RW}}},
                                 {kGsmmDiag, 1, 2, 2, {{d(2, 1), R}, {d(2, 2), RW}}},
                                 {kPotf2p, 2, 2, 2, {{d(2, 2), RW}}},
                             });
}

TEST(CholeskyDag, TwoLevelHandChecked) {
  // N = 8, B = 4, s = 2, b = 1: tile columns 0 (w 1) 1 (w 3) | 2 (w 1) 3 (w 3);
  // two tile rows; datum of tile (i,j) = i + 2j.
  const TileLayout L(8, 8, 4, 2, 1);
  ASSERT_EQ(L.tile_rows(), 2);
  ASSERT_EQ(L.tile_cols(), 4);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 2 * j); };
  test::TaskList rec;
  cholesky_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 // k = 0 (tile row 0)
                                 {kPotf2p, 0, 0, 0, {{d(0, 0), RW}}},
                                 {kGsmmDiag, 0, 0, 1, {{d(0, 0), R}, {d(0, 1), RW}}},
                                 {kTrsm, 0, 1, 0, {{d(0, 0), R}, {d(1, 0), RW}}},
                                 {kGsmm, 0, 1, 1, {{d(1, 0), R}, {d(0, 0), R}, {d(1, 1), RW}}},
                                 {kGsmmDiag, 0, 1, 2, {{d(1, 0), R}, {d(1, 2), RW}}},
                                 {kGsmmDiag, 0, 1, 3, {{d(1, 0), R}, {d(1, 3), RW}}},
                                 // k = 1 (tile row 0, local offset 1)
                                 {kPotf2p, 1, 0, 1, {{d(0, 1), RW}}},
                                 {kTrsm, 1, 1, 1, {{d(0, 1), R}, {d(1, 1), RW}}},
                                 {kGsmmDiag, 1, 1, 2, {{d(1, 1), R}, {d(1, 2), RW}}},
                                 {kGsmmDiag, 1, 1, 3, {{d(1, 1), R}, {d(1, 3), RW}}},
                                 // k = 2 (tile row 1)
                                 {kPotf2p, 2, 1, 2, {{d(1, 2), RW}}},
                                 {kGsmmDiag, 2, 1, 3, {{d(1, 2), R}, {d(1, 3), RW}}},
                                 // k = 3
                                 {kPotf2p, 3, 1, 3, {{d(1, 3), RW}}},
                             });
}

// Task counts per kernel, computed independently from the definition of
// Alg. 1: for column k (tile row t), one POTF2', one GSMM per later column of
// the same top-level block, one TRSM per tile row below, and one update per
// lower tile (i,j), i > t, j > k.
std::map<int, int> cholesky_counts(const TileLayout& L) {
  std::map<int, int> c;
  for (int k = 0; k < L.tile_cols(); ++k) {
    const int t = L.col_top(k);
    ++c[kPotf2p];
    for (int j = k + 1; j < L.tile_cols(); ++j)
      if (L.col_top(j) == t) ++c[kGsmmDiag];
    for (int i = t + 1; i < L.tile_rows(); ++i) {
      ++c[kTrsm];
      for (int j = k + 1; j < L.tile_cols(); ++j) {
        if (L.col_top(j) > i) continue;  // upper part
        ++c[L.col_top(j) == i ? kGsmmDiag : kGsmm];
      }
    }
  }
  return c;
}

std::map<int, int> count_kernels(const std::vector<TaskDesc>& ts) {
  std::map<int, int> c;
  for (const auto& t : ts) ++c[t.kernel];
  return c;
}

TEST(CholeskyDag, CountsWithTwoLevelTiles) {
  // N = 100, B = 16, s = 2, b = 4: 7 tile rows, 13 tile columns.
  const TileLayout L(100, 100, 16, 2, 4);
  ASSERT_EQ(L.tile_rows(), 7);
  ASSERT_EQ(L.tile_cols(), 13);
  test::TaskList rec;
  cholesky_tasks(L, rec);
  const auto got = count_kernels(rec.tasks);
  EXPECT_EQ(got, cholesky_counts(L));
  // Closed forms for this shape: 13 POTF2'; TRSMs: each of the two columns of
  // top-level block t has 6 - t tile rows below (last block: one column).
  EXPECT_EQ(got.at(kPotf2p), 13);
  EXPECT_EQ(got.at(kTrsm), 2 * (6 + 5 + 4 + 3 + 2 + 1));
  EXPECT_EQ(rec.tasks.size(), 13u + 42u + static_cast<std::size_t>(got.at(kGsmm) + got.at(kGsmmDiag)));
}

TEST(CholeskyDag, EveryTaskTouchesOnlyLowerTilesAndValidData) {
  for (const TileLayout& L : {TileLayout(100, 100, 16, 3, 4), TileLayout(37, 37, 8, 2, 3), TileLayout(5, 5, 8, 1, 0)}) {
    test::TaskList rec;
    cholesky_tasks(L, rec);
    EXPECT_EQ(count_kernels(rec.tasks), cholesky_counts(L));
    for (const auto& t : rec.tasks) {
      int writes_n = 0;
      for (int a = 0; a < t.n_access; ++a) {
        const DataId dd = t.access[a].data;
        ASSERT_LT(dd, cholesky_data_count(L));
        const int i = static_cast<int>(dd % L.tile_rows()), j = static_cast<int>(dd / L.tile_rows());
        EXPECT_LE(L.col_top(j), i) << kernel_name(t.kernel) << " touches upper tile (" << i << "," << j << ")";
        if (writes(t.access[a].mode)) {
          ++writes_n;
          // The written tile is the task's output tile (i, j) = (arg1, arg2).
          EXPECT_EQ(i, t.arg[1]);
          EXPECT_EQ(j, t.arg[2]);
        }
      }
      EXPECT_EQ(writes_n, 1) << kernel_name(t.kernel);
    }
  }
}

// ---------------------------------------------------------------------------
// QR
// ---------------------------------------------------------------------------

TEST(QrDag, TwoByTwoTilesHandChecked) {
  // m = n = 2, B = 1: 2×2 tiles; tile (i,j) = i + 2j; panel copy of column k = 4 + k.
  const TileLayout L(2, 2, 1, 1, 0);
  ASSERT_EQ(qr_data_count(L), 6u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 2 * j); };
  auto panel = [](int k) { return static_cast<DataId>(4 + k); };
  test::TaskList rec;
  qr_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kGeqrt, 0, 0, 0, {{d(0, 0), RW}, {panel(0), W}}},
                                 {kLarfb, 0, 0, 1, {{panel(0), R}, {d(0, 1), RW}}},
                                 {kTsqrt, 0, 1, 0, {{d(1, 0), RW}, {d(0, 0), RW}}},
                                 {kSsrfb, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}, {d(0, 1), RW}}},
                                 {kGeqrt, 1, 1, 1, {{d(1, 1), RW}, {panel(1), W}}},
                             });
}

TEST(QrDag, TallThreeByTwoTilesHandChecked) {
  // m = 3, n = 2, B = 1: tile (i,j) = i + 3j; panels 6, 7.
  const TileLayout L(3, 2, 1, 1, 0);
  ASSERT_EQ(qr_data_count(L), 8u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 3 * j); };
  test::TaskList rec;
  qr_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kGeqrt, 0, 0, 0, {{d(0, 0), RW}, {6, W}}},
                                 {kLarfb, 0, 0, 1, {{6, R}, {d(0, 1), RW}}},
                                 {kTsqrt, 0, 1, 0, {{d(1, 0), RW}, {d(0, 0), RW}}},
                                 {kTsqrt, 0, 2, 0, {{d(2, 0), RW}, {d(0, 0), RW}}},
                                 {kSsrfb, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}, {d(0, 1), RW}}},
                                 {kSsrfb, 0, 2, 1, {{d(2, 0), R}, {d(2, 1), RW}, {d(0, 1), RW}}},
                                 {kGeqrt, 1, 1, 1, {{d(1, 1), RW}, {7, W}}},
                                 {kTsqrt, 1, 2, 1, {{d(2, 1), RW}, {d(1, 1), RW}}},
                             });
}

TEST(QrDag, CountsWithTwoLevelTilesAndFormQ) {
  // m = 50, n = 40, B = 16, s = 2, b = 4: p = 4, q = 6 (blocks 16, 16, 8).
  const TileLayout L(50, 40, 16, 2, 4);
  ASSERT_EQ(L.tile_rows(), 4);
  ASSERT_EQ(L.tile_cols(), 6);
  std::map<int, int> want;
  std::map<int, int> want_q;
  for (int k = 0; k < 6; ++k) {
    const int t = L.col_top(k), below = 4 - t - 1, right = 6 - k - 1;
    want[kGeqrt] += 1;
    want[kLarfb] += right;
    want[kTsqrt] += below;
    want[kSsrfb] += below * right;
    want_q[kLarfbQ] += right + 1;
    want_q[kSsrfbQ] += below * (right + 1);
  }
  test::TaskList rec;
  qr_tasks(L, rec);
  EXPECT_EQ(count_kernels(rec.tasks), want);
  // 6 GEQRT, LARFB 5+4+3+2+1, TSQRT 3+3+2+2+1+1 = 12.
  EXPECT_EQ(want[kGeqrt], 6);
  EXPECT_EQ(want[kLarfb], 15);
  EXPECT_EQ(want[kTsqrt], 12);
  for (const auto& t : rec.tasks)
    for (int a = 0; a < t.n_access; ++a) ASSERT_LT(t.access[a].data, qr_data_count(L));
  test::TaskList recq;
  qr_form_q_tasks(L, recq);
  EXPECT_EQ(count_kernels(recq.tasks), want_q);
  // Forming Q applies the reflectors of the last column first.
  ASSERT_FALSE(recq.tasks.empty());
  EXPECT_EQ(recq.tasks.front().arg[0], 5);
  EXPECT_EQ(recq.tasks.back().arg[0], 0);
}

TEST(QrDag, WideMatrixIsRejected) {
  const TileLayout L(10, 20, 4, 1, 0);
  test::TaskList rec;
  try {
    qr_tasks(L, rec);
    ADD_FAILURE() << "qr_tasks accepted m < n";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("m = 10"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("n = 20"));
  }
  EXPECT_TRUE(rec.tasks.empty());
}

}  // namespace
}  // namespace tessera
