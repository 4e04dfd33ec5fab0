// The CPU/GPU split of asynchronous CALU, 002 §4 eq. (1) (models/lu_split.hpp):
// hand-computed cases, 002 §4.5's own figures, rounding, clamping, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/lu_split.hpp"

namespace tessera::models {
namespace {

using ::testing::HasSubstr;

TEST(LuSplit, HandComputedCases) {
  // 12 cores at 8.4 GFlop/s (002 Table 1: Opteron 6172, 403.2 / 48) and one
  // GPU at 504: d/N = 100.8 / 604.8 = 1/6.
  EXPECT_DOUBLE_EQ(cpu_column_fraction(12, 8.4, 504), 100.8 / 604.8);
  EXPECT_EQ(cpu_block_columns(100, 12, 8.4, 504), 16);  // 16.67, down
  EXPECT_EQ(cpu_block_columns(60, 12, 8.4, 504), 10);   // 10 exactly
  // P·g1 = g2: half the columns.
  EXPECT_EQ(cpu_block_columns(10, 4, 25, 100), 5);
  EXPECT_EQ(cpu_block_columns(11, 4, 25, 100), 5);  // 5.5, down
  // The units cancel: GFlop/s or flop/s give the same d.
  EXPECT_EQ(cpu_block_columns(100, 12, 8.4e9, 504e9), 16);
}

TEST(LuSplit, PaperConventionOfEightyAndNinetyPercent) {
  // 002 §4.5: on the Xeon E5-2670 (16 cores, 332.8 GFlop/s) with a Tesla
  // M2090 (665), "the model suggests to use 30% of the matrix", and with 48
  // such cores (998.4) "d would represent 57%"; both at 80% / 90% of peak.
  EXPECT_NEAR(cpu_column_fraction(16, kCpuPeakFraction * 20.8, kGpuPeakFraction * 665), 0.30, 0.01);
  EXPECT_NEAR(cpu_column_fraction(48, kCpuPeakFraction * 20.8, kGpuPeakFraction * 665), 0.57, 0.01);
  // At the raw peaks the first would be 33%: the convention matters.
  EXPECT_NEAR(cpu_column_fraction(16, 20.8, 665), 0.3335, 0.001);
  // 002 Fig. 5's machine (Opteron 6172, 12 cores, Tesla S2050 at 504):
  // 12·0.8·8.4 = 80.64 against 0.9·504 = 453.6; N = 10112 / 64 = 158 block
  // columns -> 158 · 80.64 / 534.24 = 23.85 -> 23.
  EXPECT_EQ(cpu_block_columns_from_peaks(158, 12, 8.4, 504), 23);
  EXPECT_EQ(cpu_block_columns_from_peaks(158, 12, 8.4, 504), cpu_block_columns(158, 12, 0.8 * 8.4, 0.9 * 504));
}

TEST(LuSplit, AnIntegerInExactArithmeticIsNotRoundedBelow) {
  // 0.3 / (0.3 + 0.1) is 3/4 exactly, but in doubles 8 times it is
  // 5.999999999999999: d is 6, not 5.
  ASSERT_LT(8 * cpu_column_fraction(1, 0.3, 0.1), 6.0);
  EXPECT_EQ(cpu_block_columns(8, 1, 0.3, 0.1), 6);
}

TEST(LuSplit, ClampsToAtLeastOneAndLeavesTheGpuAColumn) {
  EXPECT_EQ(cpu_block_columns(50, 1, 1, 1e6), 1);    // 0.00005 -> at least the panel
  EXPECT_EQ(cpu_block_columns(50, 64, 1e6, 1), 49);  // ~50 -> the GPU keeps one
  EXPECT_EQ(cpu_block_columns(2, 64, 1e6, 1), 1);
  EXPECT_EQ(cpu_block_columns(2, 1, 1, 1e6), 1);
  EXPECT_EQ(cpu_block_columns(1, 64, 1e6, 1), 1);  // the only column is the panel
  EXPECT_EQ(cpu_block_columns(1, 1, 1, 1e6), 1);
}

TEST(LuSplit, GrowsWithCoresAndShrinksWithTheGpu) {
  // 002 §4.2's reading of eq. (1).
  std::int64_t last = 0;
  for (int p = 1; p <= 48; ++p) {
    const std::int64_t d = cpu_block_columns(1000, p, 8.4, 504);
    EXPECT_GE(d, last);
    last = d;
  }
  EXPECT_GT(cpu_block_columns(1000, 12, 8.4, 504), cpu_block_columns(1000, 12, 8.4, 1008));
}

// Runs f, expects std::invalid_argument whose message contains `needle`.
template <class F>
void expect_invalid(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(needle));
  }
}

TEST(LuSplit, BadInputsThrowNamingTheValue) {
  expect_invalid([] { cpu_block_columns(0, 12, 8.4, 504); }, "N_K (block columns) = 0");
  expect_invalid([] { cpu_block_columns(-3, 12, 8.4, 504); }, "N_K (block columns) = -3");
  expect_invalid([] { cpu_block_columns(10, 0, 8.4, 504); }, "P (CPU cores) = 0");
  expect_invalid([] { cpu_block_columns(10, -2, 8.4, 504); }, "P (CPU cores) = -2");
  expect_invalid([] { cpu_block_columns(10, 12, 0, 504); }, "g1 (one core's speed) = 0");
  expect_invalid([] { cpu_block_columns(10, 12, 8.4, -1.5); }, "g2 (the GPU's speed) = -1.5");
  expect_invalid([] { cpu_block_columns(10, 12, std::nan(""), 504); }, "g1 (one core's speed) = nan");
  expect_invalid([] { cpu_block_columns(10, 12, 8.4, std::numeric_limits<double>::infinity()); },
                 "g2 (the GPU's speed) = inf");
  expect_invalid([] { cpu_column_fraction(0, 8.4, 504); }, "P (CPU cores) = 0");
  expect_invalid([] { cpu_block_columns_from_peaks(10, 12, 8.4, 0); }, "the GPU's peak = 0");
  expect_invalid([] { cpu_block_columns_from_peaks(10, 12, -8.4, 504); }, "one core's peak = -8.4");
}

// The whole-run balance (the default of --d auto): values from an
// independent evaluation of the same sums (experiments/lu_002_sim.py's
// side_flops), and the properties any balance must have.
TEST(LuSplit, WholeRunBalanceMatchesTheSums) {
  EXPECT_EQ(cpu_block_columns_whole_run(40, 40, 12, 6.72, 453.6), 4);
  EXPECT_EQ(cpu_block_columns_whole_run(79, 79, 12, 6.72, 453.6), 8);
  EXPECT_EQ(cpu_block_columns_whole_run(40, 40, 1, 1, 1), 14);  // equal sides: the cores take about a third
  EXPECT_EQ(cpu_block_columns_whole_run(10, 10, 4, 25, 100), 4);
  EXPECT_EQ(cpu_block_columns_whole_run(100, 10, 2, 1, 1), 5);  // tall
  EXPECT_EQ(cpu_block_columns_whole_run(5, 1, 4, 1, 1), 1);     // one block column: the panel
}

TEST(LuSplit, WholeRunBalanceFollowsTheSpeeds) {
  // Below eq. (1)'s d, which leaves the cores the bottleneck over a run.
  for (int P : {4, 12, 48})
    EXPECT_LE(cpu_block_columns_whole_run(79, 79, P, 6.72, 453.6), cpu_block_columns(79, P, 6.72, 453.6)) << P;
  std::int64_t last = 0;
  for (int P : {1, 2, 4, 8, 16, 32, 64}) {  // more cores, more columns
    const std::int64_t d = cpu_block_columns_whole_run(60, 60, P, 5, 400);
    EXPECT_GE(d, last) << P;
    last = d;
  }
  EXPECT_EQ(cpu_block_columns_whole_run(60, 60, 1, 1, 1e9), 1);   // an infinitely fast GPU takes all it can
  EXPECT_EQ(cpu_block_columns_whole_run(60, 60, 1, 1e9, 1), 59);  // and a slow one keeps one column
  expect_invalid([] { cpu_block_columns_whole_run(10, 20, 4, 1, 1); }, "p >= q");
  expect_invalid([] { cpu_block_columns_whole_run(10, 10, 0, 1, 1); }, "P (CPU cores) = 0");
  expect_invalid([] { cpu_block_columns_whole_run(10, 10, 4, 1, 0); }, "g2 (the GPU's speed) = 0");
}

}  // namespace
}  // namespace tessera::models
