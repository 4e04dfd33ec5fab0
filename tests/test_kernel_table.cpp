// The kernel table (base/kernel_table.hpp): one row per kernel id, unique
// names and keys, keys that parse back, the flop formulas against hand
// counts, the calibrated kernels and the "known: ..." text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/kernel_table.hpp"

namespace {
using namespace tessera;

TEST(KernelTable, OneRowPerKernelId) {
  std::multiset<int> ids;
  for (const KernelInfo& r : kernel_table()) ids.insert(r.id);
  for (int id = 1; id < kKernelIdEnd; ++id) {
    EXPECT_EQ(ids.count(id), 1u) << "kernel id " << id;
    ASSERT_NE(kernel_info(static_cast<std::uint16_t>(id)), nullptr) << "kernel id " << id;
    EXPECT_EQ(kernel_info(static_cast<std::uint16_t>(id))->id, id);
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kKernelIdEnd - 1));
  EXPECT_EQ(kernel_info(0), nullptr);
  EXPECT_EQ(kernel_info(kKernelIdEnd), nullptr);
  EXPECT_STREQ(kernel_name(kKernelIdEnd), "?");
  EXPECT_STREQ(kernel_key(kKernelIdEnd), "?");
}

TEST(KernelTable, NamesAndKeysAreUniqueAndParseBack) {
  std::set<std::string> names, keys;
  for (const KernelInfo& r : kernel_table()) {
    ASSERT_NE(r.name, nullptr);
    EXPECT_TRUE(names.insert(r.name).second) << "name " << r.name << " twice";
    EXPECT_STREQ(kernel_name(r.id), r.name);
    if (!r.key) {
      EXPECT_STREQ(kernel_key(r.id), "?");
      continue;
    }
    EXPECT_TRUE(keys.insert(r.key).second) << "key " << r.key << " twice";
    EXPECT_STREQ(kernel_key(r.id), r.key);
    const auto back = kernel_from_key(kernel_key(r.id));
    ASSERT_TRUE(back.has_value()) << r.key;
    EXPECT_EQ(*back, r.id) << r.key;
  }
  EXPECT_FALSE(kernel_from_key("nosuch").has_value());
  EXPECT_FALSE(kernel_from_key("").has_value());
  EXPECT_FALSE(kernel_from_key("?").has_value());
}

// The names and keys traces, machine files and the CLI have always used.
TEST(KernelTable, NamesAndKeysAsBefore) {
  EXPECT_STREQ(kernel_name(kPotf2p), "POTF2'");
  EXPECT_STREQ(kernel_name(kGsmmDiag), "GSMM_DIAG");
  EXPECT_STREQ(kernel_name(kCheckGram), "CHECK_GRAM");
  EXPECT_STREQ(kernel_key(kPotf2p), "potf2p");
  EXPECT_STREQ(kernel_key(kSsrfbQ), "ssrfb_q");
  EXPECT_EQ(kernel_from_key("gsmm_diag"), kGsmmDiag);
  EXPECT_EQ(kernel_from_key("nop"), kNop);
  EXPECT_FALSE(kernel_from_key("check_qr").has_value());
}

TEST(KernelTable, FlopsOfKnownShapes) {
  const double m = 30, n = 20, k = 10;
  const auto flops = [](std::uint16_t kernel, double m, double n, double k) {
    return kernel_flops(KernelShape{kernel, 'd', static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                                    static_cast<std::int64_t>(k)});
  };
  EXPECT_DOUBLE_EQ(flops(kGsmm, m, n, k), 2 * m * n * k);  // 12000
  EXPECT_DOUBLE_EQ(flops(kGsmm, m, n, k), 12000);
  EXPECT_DOUBLE_EQ(flops(kGsmmDiag, m, n, k), n * n * k + 2 * (m - n) * n * k);  // 4000 + 4000
  EXPECT_DOUBLE_EQ(flops(kTrsm, m, n, 0), m * n * n);                            // 12000
  EXPECT_DOUBLE_EQ(flops(kPotf2p, m, n, 0), n * n * n / 3 + (m - n) * n * n);    // 8000/3 + 4000
  EXPECT_DOUBLE_EQ(flops(kPotf2p, 30, 30, 0), 9000);                             // n³/3
  EXPECT_DOUBLE_EQ(flops(kGeqrt, m, n, 0), 2 * m * n * n - 2 * n * n * n / 3);   // 24000 - 16000/3
  EXPECT_DOUBLE_EQ(flops(kLarfb, m, n, k), 4 * m * n * k - 2 * n * k * k);       // 24000 - 4000
  EXPECT_DOUBLE_EQ(flops(kLarfbQ, m, n, k), 20000);
  EXPECT_DOUBLE_EQ(flops(kTsqrt, m, n, 0), 2 * m * n * n);  // 24000
  EXPECT_DOUBLE_EQ(flops(kSsrfb, m, n, k), 4 * m * n * k);  // 24000
  EXPECT_DOUBLE_EQ(flops(kSsrfbQ, m, n, k), 24000);
  EXPECT_DOUBLE_EQ(flops(kNop, m, n, k), 0);
  EXPECT_DOUBLE_EQ(flops(kCheckQr, m, n, k), 0);
  EXPECT_DOUBLE_EQ(flops(0, m, n, k), 0);
  EXPECT_DOUBLE_EQ(flops(kKernelIdEnd, m, n, k), 0);
  // LU (002): GEPP of an m x n panel (PANEL, and the tournament's LEAF and
  // MERGE, DIAG without pivoting) mn^2 - n^3/3; U's row block L^-1 A with L
  // m x m and A m x n (TRSM_U) m^2 n; L's column block A U^-1 with U n x n
  // (TRSM_L) mn^2; the update 2mnk.
  for (const std::uint16_t id : {kLuPanel, kLuLeaf, kLuMerge, kLuDiag})
    EXPECT_DOUBLE_EQ(flops(id, m, n, 0), m * n * n - n * n * n / 3) << kernel_name(id);  // 12000 - 8000/3
  EXPECT_DOUBLE_EQ(flops(kLuTrsmU, m, n, 0), 18000);                                     // m^2 n
  EXPECT_DOUBLE_EQ(flops(kLuTrsmL, m, n, 0), 12000);                                     // m n^2
  EXPECT_DOUBLE_EQ(flops(kLuGemm, m, n, k), 12000);
  for (const std::uint16_t id : {kLuGather, kLuScatter, kLuPivots, kLuSwap, kLuExchange})
    EXPECT_DOUBLE_EQ(flops(id, m, n, k), 0) << kernel_name(id);  // row moves: no flops
}

// The reduction tree's kernels (--qr-tree binary) on a short last tile row:
// TTQRT factors [R1; R2] with R1 n x n upper triangular and R2 m x n upper
// trapezoidal (m <= n rows), so column j has r_j = min(j + 1, m) entries below
// R1 to annihilate, and its reflector costs about 4 r_j flops per column
// right of j; TTMQR applies k such reflectors to [A1 (k x n); A2 (m x n)], 4
// r_j n each. The table's closed forms are those sums' leading terms; here
// they are checked against the sums themselves, on shapes with m < n (and m <
// k), where swapping m and n or the branch of m >= k moves them by 25% or more.
TEST(KernelTable, ReductionTreeFlopsAreTheSumsOverTheirReflectors) {
  const auto flops = [](std::uint16_t kernel, std::int64_t m, std::int64_t n, std::int64_t k) {
    return kernel_flops(KernelShape{kernel, 'd', m, n, k});
  };
  const auto ttqrt_sum = [](std::int64_t m, std::int64_t n) {
    double s = 0;
    for (std::int64_t j = 0; j < n; ++j) s += 4.0 * static_cast<double>(std::min(j + 1, m) * (n - j - 1));
    return s;
  };
  const auto ttmqr_sum = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    double s = 0;
    for (std::int64_t j = 0; j < k; ++j) s += 4.0 * static_cast<double>(std::min(j + 1, m) * n);
    return s;
  };
  for (const auto [m, n] : {std::pair<std::int64_t, std::int64_t>{400, 400}, {100, 400}, {250, 400}}) {
    EXPECT_NEAR(flops(kTtqrt, m, n, 0) / ttqrt_sum(m, n), 1.0, 0.02) << m << " x " << n;
    EXPECT_NEAR(flops(kTtmqr, m, 300, n) / ttmqr_sum(m, 300, n), 1.0, 0.02) << m << " x 300, k = " << n;
    EXPECT_DOUBLE_EQ(flops(kTtmqrQ, m, 300, n), flops(kTtmqr, m, 300, n));
  }
  // A full triangle below (m = n = k): a third of TSQRT's 2n^3, half of SSRFB's 4n^3.
  EXPECT_DOUBLE_EQ(flops(kTtqrt, 300, 300, 0), 2.0 * 300 * 300 * 300 / 3);
  EXPECT_DOUBLE_EQ(flops(kTtmqr, 300, 300, 300), 2.0 * 300 * 300 * 300);
}

TEST(KernelTable, DimsAndInnerBlocking) {
  for (const std::uint16_t id : {kGsmm, kGsmmDiag, kLarfb, kSsrfb, kLarfbQ, kSsrfbQ})
    EXPECT_TRUE(kernel_info(id)->has_k) << kernel_name(id);
  for (const std::uint16_t id : {kPotf2p, kTrsm, kGeqrt, kTsqrt})
    EXPECT_FALSE(kernel_info(id)->has_k) << kernel_name(id);
  // ib is bounded by the reflectors a call computes (n) or applies (k).
  EXPECT_EQ(kernel_ib(kGeqrt, 20, 0, 32), 20);
  EXPECT_EQ(kernel_ib(kGeqrt, 64, 0, 32), 32);
  EXPECT_EQ(kernel_ib(kTsqrt, 20, 0, 32), 20);
  EXPECT_EQ(kernel_ib(kLarfb, 64, 16, 32), 16);
  EXPECT_EQ(kernel_ib(kSsrfb, 8, 64, 32), 32);
  EXPECT_EQ(kernel_ib(kSsrfbQ, 64, 16, 32), 16);
  for (const std::uint16_t id : {kPotf2p, kTrsm, kGsmm, kGsmmDiag, kNop})
    EXPECT_EQ(kernel_ib(id, 64, 64, 32), 0) << kernel_name(id);
}

TEST(KernelTable, CalibratedKernelsInFamilyOrder) {
  const std::vector<std::uint16_t> chol = {kPotf2p, kTrsm, kGsmmDiag, kGsmm};
  const std::vector<std::uint16_t> qr = {kGeqrt, kLarfb, kTsqrt, kSsrfb};
  // LU's flop-bearing kernels; its row moves (no flop formula) are not calibrated.
  const std::vector<std::uint16_t> lu = {kLuLeaf, kLuMerge, kLuPanel, kLuDiag, kLuTrsmL, kLuTrsmU, kLuGemm};
  std::vector<std::uint16_t> all = chol;
  all.insert(all.end(), qr.begin(), qr.end());
  all.insert(all.end(), lu.begin(), lu.end());
  EXPECT_EQ(calibrated_kernels(), all);
  EXPECT_EQ(calibrated_kernels("cholesky"), chol);
  EXPECT_EQ(calibrated_kernels("qr"), qr);
  EXPECT_EQ(calibrated_kernels("lu"), lu);
  EXPECT_EQ(kernel_families(), (std::vector<std::string_view>{"cholesky", "qr", "lu"}));
  for (const std::uint16_t id :
       {kLarfbQ, kSsrfbQ, kNop, kCheckQr, kCheckGram, kLuGather, kLuScatter, kLuPivots, kLuSwap, kLuExchange})
    EXPECT_FALSE(kernel_info(id)->calibrated) << kernel_name(id);
}

// The tasks of a step's output column, which the next step waits for.
TEST(KernelTable, PanelKernels) {
  for (const std::uint16_t k : {kPotf2p, kTrsm, kGeqrt, kTsqrt, kTtqrt, kLuPanel, kLuDiag, kLuTrsmL})
    EXPECT_TRUE(panel_kernel(k)) << kernel_name(k);
  for (const std::uint16_t k : {kGsmm, kGsmmDiag, kLarfb, kSsrfb, kTtmqr, kLuTrsmU, kLuGemm, kLuSwap, kNop})
    EXPECT_FALSE(panel_kernel(k)) << kernel_name(k);
}

TEST(KernelTable, KnownKeysText) {
  const std::string calibrated = kernel_keys_text(KernelKeys::kCalibrated);
  EXPECT_EQ(
      calibrated,
      "potf2p, trsm, gsmm_diag, gsmm, geqrt, larfb, tsqrt, ssrfb, lu_leaf, lu_merge, lu_panel, lu_diag, lu_trsm_l, "
      "lu_trsm_u, lu_gemm");
  for (const std::uint16_t id : calibrated_kernels())
    EXPECT_NE(calibrated.find(kernel_key(id)), std::string::npos) << kernel_key(id);
  const std::string all = kernel_keys_text();
  for (const KernelInfo& r : kernel_table()) {
    if (!r.key) continue;
    EXPECT_NE((", " + all + ",").find(", " + std::string(r.key) + ","), std::string::npos) << r.key;
  }
  EXPECT_EQ(all.find("check"), std::string::npos);
  EXPECT_EQ(all.find('?'), std::string::npos);
}

// The generators' priorities (column_priority): every task whose output is
// an earlier column runs first (that column's panel is next on the critical
// path: the lookahead), and among tasks of one output column the earlier
// step first; every (column, step) pair has its own priority.
TEST(KernelTable, ColumnPriorityOrdersByOutputColumnThenStep) {
  const int q = 6;
  std::set<std::int32_t> seen;
  for (int j = 0; j < q; ++j)
    for (int k = 0; k <= j; ++k) {
      EXPECT_TRUE(seen.insert(column_priority(q, j, k)).second) << "column " << j << " step " << k;
      for (int j2 = 0; j2 < q; ++j2)
        for (int k2 = 0; k2 <= j2; ++k2)
          if (j < j2 || (j == j2 && k < k2))
            EXPECT_GT(column_priority(q, j, k), column_priority(q, j2, k2))
                << "column " << j << " step " << k << " against column " << j2 << " step " << k2;
    }
}

// Past q = 46,339 tile columns the keys (q - j)(q + 1) + (q - k) exceed
// 2^31 - 1 (in int they wrapped negative from q = 46,340, which the run's
// 2^30-tile bound allows: Cholesky --n 1482880 --B 64 --s 2 has q = 46,340).
// The order of the small-q formula holds: an earlier output column strictly
// first, an earlier step never later (steps two apart still apart at
// q = 50,000), and the same for the binary tree's step-first order.
TEST(KernelTable, PrioritiesKeepTheirOrderBeyondThirtyOneBits) {
  for (const int q : {46'340, 50'000, 1 << 30}) {
    SCOPED_TRACE(q);
    const std::vector<int> at = {0, 1, 2, 3, q / 3, q / 2, q / 2 + 1, q - 2, q - 1, q};
    for (const int j : at)
      for (const int k : at) {
        if (k > j) continue;
        EXPECT_GE(column_priority(q, j, k), 0);
        EXPECT_GE(step_priority(q, j, k), 0);
        for (const int j2 : at)
          for (const int k2 : at) {
            if (k2 > j2) continue;
            if (j < j2) EXPECT_GT(column_priority(q, j, k), column_priority(q, j2, k2)) << j << " " << k;
            if (j == j2 && k < k2) EXPECT_GE(column_priority(q, j, k), column_priority(q, j2, k2)) << j << " " << k;
            if (k < k2) EXPECT_GT(step_priority(q, j, k), step_priority(q, j2, k2)) << j << " " << k;
            if (k == k2 && j < j2) EXPECT_GE(step_priority(q, j, k), step_priority(q, j2, k2)) << j << " " << k;
          }
      }
    // Forming Q's order and the extremes of y: x first, whatever y.
    EXPECT_GT(lexicographic_priority(q, 1, 0), lexicographic_priority(q, 0, q));
    EXPECT_LE(lexicographic_priority(q, q, q), std::numeric_limits<std::int32_t>::max());
    // Steps two apart stay apart at q = 50,000 (42,948 priorities for 50,001 steps).
    if (q == 50'000) EXPECT_GT(column_priority(q, q - 1, 0), column_priority(q, q - 1, 2));
  }
  // Below, the keys themselves (the exhaustive test above).
  EXPECT_EQ(column_priority(46'339, 0, 0), 46'339 * 46'341);
}

}  // namespace
