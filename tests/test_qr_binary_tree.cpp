// QR's binary reduction tree (--qr-tree binary, algorithms/qr_tree.hpp).
//
// The tree changes which kernels reduce a tile column and in what order,
// never the factorization: A = QR with Q orthogonal must hold to LAPACK's
// test-suite threshold (algorithms/check.hpp) on every shape, and R must
// equal the flat tree's up to the sign of each row (QR is unique up to
// those signs for a full-rank A). The structure is what saves messages:
// every row below the top is folded into one chain or pair exactly once,
// pairs across node rows are Pr' - 1 for the Pr' node rows a column spans,
// and a row's triangle crosses node rows at most ⌈log2 Pr⌉ times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "algorithms/check.hpp"
#include "algorithms/qr.hpp"
#include "algorithms/qr_tree.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/matrix_gen.hpp"
#include "dag_test_util.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {
namespace {

int node_row(int i, int v, int Pr) { return (i / v) % Pr; }

// Records the tasks a generator inserts.
TEST(QrTree, FlatWithOneNodeRowAndNoDomains) {
  const TileLayout L(1200, 600, 100, 1, 0);
  EXPECT_TRUE(QrTree().flat());
  EXPECT_TRUE(QrTree(L, 1, 2).flat());
  EXPECT_FALSE(QrTree(L, 2, 2).flat());
  EXPECT_FALSE(QrTree(L, 1, 2, 3).flat());  // domains of 3 rows on one node row
  EXPECT_THROW(QrTree(L, 0, 1), InputError);
  EXPECT_THROW(QrTree(L, 2, 1, -1), InputError);
}

TEST(QrTree, HeadsAreEachNodeRowsFirstRowBelowTheTop) {
  // 12 tile rows, v = 2, Pr = 3: node rows 0,0,1,1,2,2,0,0,1,1,2,2.
  const TileLayout L(1200, 600, 100, 1, 0);
  const QrTree tree(L, 3, 2);
  EXPECT_EQ(tree.heads_below(0), (std::vector<int>{2, 4}));
  EXPECT_EQ(tree.heads_below(3), (std::vector<int>{4, 6}));  // node row 1 holds 3 itself
  EXPECT_EQ(tree.heads_below(5), (std::vector<int>{6, 8}));
  EXPECT_EQ(tree.heads_below(11), (std::vector<int>{}));
  for (int t = 0; t < 12; ++t)
    for (int i = t + 1; i < 12; ++i) {
      const int h = tree.chain_head(i, t);
      EXPECT_EQ(node_row(h, 2, 3), node_row(i, 2, 3)) << "t=" << t << " i=" << i;
      EXPECT_LE(h, i);
      EXPECT_GE(h, t);
    }
  EXPECT_EQ(tree.chain_head(7, 0), 0);  // node row 0's chain starts at the top
  EXPECT_EQ(tree.chain_head(9, 0), 2);
  EXPECT_EQ(tree.chain_head(11, 3), 4);
}

TEST(QrTree, DomainsCutANodeRowsRows) {
  // One node row (Pr = 1), domains of 3 tile rows: heads every 3 rows below t.
  const TileLayout L(1000, 300, 100, 1, 0);
  const QrTree tree(L, 1, 1, 3);
  EXPECT_EQ(tree.heads_below(0), (std::vector<int>{3, 6, 9}));
  EXPECT_EQ(tree.heads_below(1), (std::vector<int>{4, 7}));
  EXPECT_EQ(tree.chain_head(5, 0), 3);
  EXPECT_EQ(tree.chain_head(2, 0), 0);
}

TEST(QrTree, AShortLastRowHeadsNoDomain) {
  // 1030 rows of B = 100: the last tile row has 30 rows, less than a column's width.
  const TileLayout L(1030, 300, 100, 1, 0);
  ASSERT_EQ(L.tile_rows(), 11);
  const QrTree tree(L, 5, 2);  // node rows 0,0,1,1,2,2,3,3,4,4,0
  // Below t = 9 (node row 4): node row 0's first row is 10, too short.
  EXPECT_EQ(tree.heads_below(9), (std::vector<int>{}));
  EXPECT_EQ(tree.chain_head(10, 9), 9);
  EXPECT_TRUE(tree.pairs(9).empty());
}

TEST(QrTree, HeadPanelsRoundTrip) {
  const TileLayout L(2000, 700, 100, 2, 25);
  const QrTree tree(L, 3, 1, 2);
  std::size_t count = 0;
  for (int k = 0; k < L.tile_cols(); ++k)
    for (const int h : tree.heads_below(L.col_top(k))) {
      const std::size_t x = tree.head_panel(k, h);
      EXPECT_EQ(x, count++);
      EXPECT_EQ(tree.head_panel_at(x), std::make_pair(k, h));
    }
  EXPECT_EQ(tree.head_panels(), count);
  EXPECT_THROW(tree.head_panel(0, L.col_top(0)), std::logic_error);
}

TEST(QrTree, PairsFoldEveryHeadIntoTheTopOnceAndCrossNodeRowsLogarithmically) {
  for (const int Pr : {2, 3, 4, 5, 8})
    for (const int v : {1, 2, 3})
      for (const int a : {0, 2}) {
        const TileLayout L(64 * 40, 64 * 4, 64, 1, 0);
        const QrTree tree(L, Pr, v, a);
        for (int t = 0; t < L.tile_rows(); ++t) {
          const auto pairs = tree.pairs(t);
          const auto& heads = tree.heads_below(t);
          std::set<int> gone;
          std::map<int, int> crossings;  // row -> node-row crossings of its triangle so far
          for (const auto& [up, low] : pairs) {
            EXPECT_LT(up, low);
            EXPECT_FALSE(gone.count(up) || gone.count(low)) << "a folded row is used again";
            gone.insert(low);
            crossings[up] = std::max(crossings[up], crossings[low] + (node_row(up, v, Pr) != node_row(low, v, Pr)));
          }
          EXPECT_EQ(gone, std::set<int>(heads.begin(), heads.end())) << "Pr=" << Pr << " t=" << t;
          std::set<int> rows{node_row(t, v, Pr)};
          for (const int h : heads) rows.insert(node_row(h, v, Pr));
          long across = std::count_if(pairs.begin(), pairs.end(), [&](const auto& p) {
            return node_row(p.first, v, Pr) != node_row(p.second, v, Pr);
          });
          EXPECT_EQ(across, static_cast<long>(rows.size()) - 1);
          EXPECT_LE(crossings[t], static_cast<int>(std::ceil(std::log2(Pr))));
        }
      }
}

TEST(QrTree, TaskCountsAndFlatEquivalence) {
  const TileLayout L(64 * 12, 64 * 5, 64, 2, 16);
  const QrTree tree(L, 3, 2);
  test::TaskList rec;
  qr_tasks(L, rec, tree);
  const int q = L.tile_cols();
  for (int k = 0; k < q; ++k) {
    const auto heads = tree.heads_below(L.col_top(k)).size();
    const auto pairs = tree.pairs(L.col_top(k)).size();
    EXPECT_EQ(pairs, heads);
    const auto of = [&](std::uint16_t kernel) {
      return std::count_if(rec.tasks.begin(), rec.tasks.end(),
                           [&](const TaskDesc& t) { return t.kernel == kernel && t.arg[0] == k; });
    };
    EXPECT_EQ(of(kTtqrt), static_cast<long>(heads));
    EXPECT_EQ(of(kTtmqr), static_cast<long>(heads) * (q - k - 1));
    EXPECT_EQ(of(kGeqrt), static_cast<long>(heads) + 1);
  }
  EXPECT_EQ(qr_data_count(L, tree), qr_data_count(L) + tree.head_panels());
  // One node row: the same task list as the flat tree, task for task.
  test::TaskList flat, one;
  qr_tasks(L, flat);
  qr_tasks(L, one, QrTree(L, 1, 2));
  ASSERT_EQ(flat.tasks.size(), one.tasks.size());
  for (std::size_t x = 0; x < flat.tasks.size(); ++x) {
    const TaskDesc &a = flat.tasks[x], &b = one.tasks[x];
    EXPECT_EQ(a.kernel, b.kernel);
    EXPECT_TRUE(std::equal(a.arg, a.arg + 4, b.arg));
    ASSERT_EQ(a.n_access, b.n_access);
    for (int y = 0; y < a.n_access; ++y) EXPECT_EQ(a.access[y].data, b.access[y].data);
  }
}

template <class T>
struct Factored {
  std::vector<T> r;  // R, dense upper triangle (n×n)
  Residuals res;
};

template <class T>
Factored<T> factor(const TileLayout& L, const QrTree& tree) {
  TileMatrix<T> a(L);
  generate(a, MatrixKind::General, 11);
  const std::vector<T> original = a.to_dense();
  QrFactors<T> f(L, 8, {}, tree);
  QrExecutor<T> ex(a, f);
  SequentialSink sink(ex, kernels::cpu_kernel_pair());
  qr_tasks(L, sink, tree);
  TileMatrix<T> e(L);
  for (index_t d = 0; d < L.n(); ++d) e.at(d, d) = T(1);
  QrFormQExecutor<T> qex(a, f, e);
  SequentialSink qsink(qex, kernels::cpu_kernel_pair());
  qr_form_q_tasks(L, qsink, tree);
  Factored<T> out;
  out.res = qr_residual(original, a, e.to_dense());
  for (index_t c = 0; c < L.n(); ++c)
    for (index_t r = 0; r <= c; ++r) out.r.push_back(a.at(r, c));
  return out;
}

template <class T>
class QrBinaryTree : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(QrBinaryTree, Precisions);

TYPED_TEST(QrBinaryTree, FactorsAreCorrectAndRMatchesTheFlatTree) {
  using T = TypeParam;
  kernels::set_blas_threads(1);
  struct Shape {
    index_t m, n, B;
    int s, Pr, v, a;
  };
  for (const Shape& c :
       {Shape{256, 256, 32, 1, 2, 1, 0}, Shape{768, 256, 32, 1, 3, 2, 0}, Shape{700, 230, 32, 2, 4, 1, 0},
        Shape{650, 200, 40, 3, 2, 2, 2}, Shape{1000, 180, 48, 1, 1, 1, 3}, Shape{500, 500, 32, 2, 3, 1, 2}}) {
    const TileLayout L(c.m, c.n, c.B, c.s, c.s > 1 ? c.B / (2 * c.s) : 0);
    const QrTree tree(L, c.Pr, c.v, c.a);
    ASSERT_FALSE(tree.flat());
    const Factored<T> bin = factor<T>(L, tree);
    EXPECT_TRUE(bin.res.passed()) << c.m << "x" << c.n << " Pr=" << c.Pr << ": " << bin.res.factor << " orth "
                                  << bin.res.value("orth");
    const Factored<T> flat = factor<T>(L, QrTree());
    // R up to the sign of each row.
    const double tol = 200 * std::numeric_limits<T>::epsilon() * static_cast<double>(c.m);
    double worst = 0, scale = 0;
    for (std::size_t x = 0; x < flat.r.size(); ++x) {
      worst =
          std::max(worst, std::abs(std::abs(static_cast<double>(bin.r[x])) - std::abs(static_cast<double>(flat.r[x]))));
      scale = std::max(scale, std::abs(static_cast<double>(flat.r[x])));
    }
    EXPECT_LT(worst, tol * scale) << c.m << "x" << c.n;
  }
}

TYPED_TEST(QrBinaryTree, TtKernelsKeepTheLowerTriangleAndInvertEachOther) {
  using T = TypeParam;
  const index_t n = 24, m = 24, ib = 8;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> r(n * n, T(0)), a(m * n), t(ib * n), w(ib * n);
  for (index_t c = 0; c < n; ++c)
    for (index_t x = 0; x <= c; ++x) r[x + c * n] = static_cast<T>(u(rng) + (x == c ? 4 : 0));
  for (auto& x : a) x = static_cast<T>(u(rng));
  const std::vector<T> a0 = a, r0 = r;
  kernels::ttqrt<T>(m, n, ib, r.data(), n, a.data(), m, t.data(), ib, w.data());
  for (index_t c = 0; c < n; ++c)
    for (index_t x = c + 1; x < m; ++x) EXPECT_EQ(a[x + c * m], a0[x + c * m]) << "strict lower part written";
  // Q^T [R0; triu(A0)] = [R; 0], with garbage below V's triangle that must not be read.
  std::vector<T> top = r0, bottom(m * n, T(0));
  for (index_t c = 0; c < n; ++c)
    for (index_t x = 0; x <= c && x < m; ++x) bottom[x + c * m] = a0[x + c * m];
  kernels::ttmqr<T>(true, m, n, n, ib, a.data(), m, t.data(), ib, top.data(), n, bottom.data(), m, w.data());
  const double tol = 100 * std::numeric_limits<T>::epsilon() * n;
  for (index_t c = 0; c < n; ++c)
    for (index_t x = 0; x <= c; ++x) EXPECT_NEAR(top[x + c * n], r[x + c * n], tol * 8) << x << "," << c;
  for (const T x : bottom) EXPECT_NEAR(x, T(0), tol * 8);
  // Q (Q^T X) = X on random X.
  std::vector<T> x1(n * 5), x2(m * 5);
  for (auto& x : x1) x = static_cast<T>(u(rng));
  for (auto& x : x2) x = static_cast<T>(u(rng));
  const std::vector<T> y1 = x1, y2 = x2;
  kernels::ttmqr<T>(true, m, 5, n, ib, a.data(), m, t.data(), ib, x1.data(), n, x2.data(), m, w.data());
  kernels::ttmqr<T>(false, m, 5, n, ib, a.data(), m, t.data(), ib, x1.data(), n, x2.data(), m, w.data());
  for (std::size_t x = 0; x < x1.size(); ++x) EXPECT_NEAR(x1[x], y1[x], tol);
  for (std::size_t x = 0; x < x2.size(); ++x) EXPECT_NEAR(x2[x], y2[x], tol);
}

TEST(QrBinaryTreeModels, TtKernelsTakeTheirProxysRate) {
  EXPECT_EQ(kernel_rate_proxy(kTtqrt), kTsqrt);
  EXPECT_EQ(kernel_rate_proxy(kTtmqr), kSsrfb);
  EXPECT_EQ(kernel_rate_proxy(kTtmqrQ), kSsrfbQ);
  EXPECT_EQ(kernel_rate_proxy(kGsmm), kGsmm);
  // Triangular flop counts: a third of TSQRT's, half of SSRFB's when square.
  EXPECT_NEAR(kernel_flops({kTtqrt, 'd', 300, 300, 0}) / kernel_flops({kTsqrt, 'd', 300, 300, 0}), 1.0 / 3, 1e-12);
  EXPECT_NEAR(kernel_flops({kTtmqr, 'd', 300, 200, 300}) / kernel_flops({kSsrfb, 'd', 300, 200, 300}), 0.5, 1e-12);
}

}  // namespace
}  // namespace tessera
