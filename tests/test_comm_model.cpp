// The communication-cost model of 000 App. A.2 and Table 1
// (models/comm_model.hpp): hand-computed values on small inputs, the
// summation against a literal loop over j, the summation against the closed
// form, --grid parsing and bad input; the binary tree's own count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "base/error.hpp"
#include "models/comm_model.hpp"
#include "runtime/distribution.hpp"

namespace {

using ::testing::HasSubstr;
using tessera::CommShape;

constexpr double kExact = 1e-9;  // hand-computed values are exact in binary or short decimals

// Cholesky, n = 8, B = 2, s = 1, grid 2x2 (P = 4, log P = 2, sqrt P = 2).
// Iterations j = 0..3 with #rows = 8, 6, 4, 2 (sum 20).
const CommShape kChol{.n = 8, .B = 2, .s = 1, .Pr = 2, .Pc = 2};

TEST(CommModel, CholeskyHandComputed) {
  // sum: 4 x log2(Pr)=1, plus (#rows/(B Pr)) log2(Pr+Pc) = #rows/4 * 2 summed = 20/2 = 10 -> 14.
  EXPECT_NEAR(tessera::msg_chol_sum(kChol), 14.0, kExact);
  // closed: ns/(2B) lg P = 8/4*2 = 4; n^2 s/(4 B^2 sqrt P) lg P = 64/32*2 = 4;
  //         n^2 s/(2 B^2 sqrt P) = 64/16 = 4 -> 12.
  EXPECT_NEAR(tessera::msg_chol_closed(kChol), 12.0, kExact);
  // words, sum: diagonal 4 msgs x B^2/(2s) = 2 -> 8; panel 10 msgs x B^2/s = 4 -> 40; total 48.
  EXPECT_NEAR(tessera::word_chol_sum(kChol), 48.0, kExact);
  // words, closed: nB/4 lg P = 4*2 = 8; n^2/(4 sqrt P) lg P = 8*2 = 16; n^2/(2 sqrt P) = 16 -> 40.
  EXPECT_NEAR(tessera::word_chol_closed(kChol), 40.0, kExact);
  // PDPOTRF, nb = 2: words (nb n/4 + n^2/sqrt P) lg P = (4 + 32)*2 = 72; msgs 3n/(2nb) lg P = 6*2 = 12.
  EXPECT_NEAR(tessera::pdpotrf_words(kChol, 2), 72.0, kExact);
  EXPECT_NEAR(tessera::pdpotrf_messages(kChol, 2), 12.0, kExact);
  // Lower bounds: n^2/sqrt P = 32 words, sqrt P = 2 messages.
  EXPECT_NEAR(tessera::lower_bound_words(kChol), 32.0, kExact);
  EXPECT_NEAR(tessera::lower_bound_messages(kChol), 2.0, kExact);
}

TEST(CommModel, CholeskySumWithRaggedLastTileAndNonSquareGrid) {
  // n = 5, B = 2: ceil(5/2) = 3 top-level rows, #rows = 5, 3, 1 (sum 9), grid 2x2.
  // msgs: 3 x 1 + 9/4 * 2 = 7.5; words: 3 x 2 + 4.5 x 4 = 24.
  const CommShape ragged{.n = 5, .B = 2, .s = 1, .Pr = 2, .Pc = 2};
  EXPECT_NEAR(tessera::msg_chol_sum(ragged), 7.5, kExact);
  EXPECT_NEAR(tessera::word_chol_sum(ragged), 24.0, kExact);
  // n = 8, B = 4, s = 2, grid 1x3: log2(1) = 0, so no diagonal broadcast;
  // #rows = 8, 8, 4, 4 (each top-level row twice, s = 2), log2(1+3) = 2:
  // msgs 24/4 * 2 = 12; words 12 x B^2/s = 12 x 8 = 96.
  const CommShape row{.n = 8, .B = 4, .s = 2, .Pr = 1, .Pc = 3};
  EXPECT_NEAR(tessera::msg_chol_sum(row), 12.0, kExact);
  EXPECT_NEAR(tessera::word_chol_sum(row), 96.0, kExact);
}

TEST(CommModel, QrHandComputed) {
  // Default v = n/(B Pr) = 8/4 = 2. Per iteration: #rows^2/(v B^2 P) + #rows lg(Pc)/(B Pr)
  // = #rows^2/32 + #rows/4; #rows^2 = 64+36+16+4 = 120 -> 3.75; #rows sum 20 -> 5; total 8.75.
  const double v = tessera::paper_virtual_tile_height(kChol);
  EXPECT_NEAR(v, 2.0, kExact);
  EXPECT_NEAR(tessera::msg_qr_sum(kChol, v), 8.75, kExact);
  // closed: n^3 s/(3 v B^3 P) = 512/192 = 8/3; n^2 s/(4 B^2 sqrt P) lg P = 4 -> 20/3.
  EXPECT_NEAR(tessera::msg_qr_closed(kChol, v), 20.0 / 3, kExact);
  // Every message is one B x B/s tile of 4 words: 35 and 80/3; the paper's
  // word_qr n^3/(3vBP) + n^2/(4 sqrt P) lg P = 32/3 + 16 = 80/3 too.
  EXPECT_NEAR(tessera::word_qr_sum(kChol, v), 35.0, kExact);
  EXPECT_NEAR(tessera::word_qr_closed(kChol, v), 80.0 / 3, kExact);
  // PDGEQRF, nb = 2: words (3/4 n^2/sqrt P + 3/4 n nb) lg P = (24 + 12)*2 = 72;
  // msgs (3/2 + 5/(2 nb)) n lg P = 2.75 * 16 = 44.
  EXPECT_NEAR(tessera::pdgeqrf_words(kChol, 2), 72.0, kExact);
  EXPECT_NEAR(tessera::pdgeqrf_messages(kChol, 2), 44.0, kExact);
}

TEST(CommModel, QrSumDropsTheDownwardMessageOnOneProcessRow) {
  // n = 8, B = 2, s = 1, grid 1x4, v = 1: nothing below (Pr = 1), so only
  // the broadcast right: #rows lg(4)/(B Pr) = 20 * 2/2 = 20 msgs, 80 words.
  const CommShape one_row{.n = 8, .B = 2, .s = 1, .Pr = 1, .Pc = 4};
  EXPECT_NEAR(tessera::msg_qr_sum(one_row, 1.0), 20.0, kExact);
  EXPECT_NEAR(tessera::word_qr_sum(one_row, 1.0), 80.0, kExact);
  // n = 4, B = 2, s = 2, grid 2x1, v = 1: lg(Pc) = 0, so only the messages
  // down: #rows = 4, 4, 2, 2, squares sum 40, / (v B^2 P = 8) = 5 msgs;
  // words 5 x B^2/s = 10.
  const CommShape one_col{.n = 4, .B = 2, .s = 2, .Pr = 2, .Pc = 1};
  EXPECT_NEAR(tessera::msg_qr_sum(one_col, 1.0), 5.0, kExact);
  EXPECT_NEAR(tessera::word_qr_sum(one_col, 1.0), 10.0, kExact);
}

TEST(CommModel, DefaultVirtualTileHeightIsAtLeastOne) {
  EXPECT_NEAR(tessera::paper_virtual_tile_height({.n = 3, .B = 2, .s = 1, .Pr = 4, .Pc = 1}), 1.0, kExact);
  EXPECT_NEAR(tessera::paper_virtual_tile_height({.n = 100, .B = 10, .s = 1, .Pr = 4, .Pc = 4}), 2.5, kExact);
}

// The per-iteration sums of A.2.1 and A.2.2 written as literally as possible,
// one j at a time, to check the power sums the library evaluates them with.
struct Literal {
  double msg_chol = 0, msg_qr = 0;
};
Literal literal_sums(const CommShape& c, double v) {
  Literal out;
  const double B = static_cast<double>(c.B);
  const std::int64_t top_rows = (c.n + c.B - 1) / c.B;
  for (std::int64_t j = 0; j < top_rows * c.s; ++j) {
    const double rows = static_cast<double>(c.n - (j / c.s) * c.B);
    out.msg_chol += std::log2(c.Pr) + rows / (B * c.Pr) * std::log2(c.Pr + c.Pc);
    const double down = c.Pr == 1 ? 0.0 : rows / (v * B * c.Pr) * (rows / (B * c.Pc));
    out.msg_qr += down + rows / (B * c.Pr) * std::log2(c.Pc);
  }
  return out;
}

TEST(CommModel, SummationMatchesALiteralLoopOverJ) {
  for (const CommShape& c :
       {CommShape{.n = 100, .B = 7, .s = 3, .Pr = 3, .Pc = 5}, CommShape{.n = 64, .B = 64, .s = 4, .Pr = 1, .Pc = 1},
        CommShape{.n = 1000, .B = 32, .s = 1, .Pr = 4, .Pc = 2},
        CommShape{.n = 999, .B = 10, .s = 5, .Pr = 1, .Pc = 6}}) {
    SCOPED_TRACE(testing::Message() << "n=" << c.n << " B=" << c.B << " s=" << c.s << " grid=" << c.Pr << "x" << c.Pc);
    const double v = 1.5;
    const Literal lit = literal_sums(c, v);
    EXPECT_NEAR(tessera::msg_chol_sum(c), lit.msg_chol, 1e-9 * lit.msg_chol + kExact);
    EXPECT_NEAR(tessera::msg_qr_sum(c, v), lit.msg_qr, 1e-9 * lit.msg_qr + kExact);
  }
}

// The closed forms keep only the leading terms of the sums over
// k = floor(j/s) = 0 .. n/B - 1: the sum of #rows is (n/B)(n/B + 1)B/2, not
// (n/B)^2 B/2, and the sum of #rows^2 is (n/B)(n/B+1)(2n/B+1)B^2/6, not
// (n/B)^3 B^2/3, so the two forms differ by a relative O(B/n): about 1.5 B/n
// at most for these terms. With n/B = 10^4 that is below 2e-4; 1e-3 leaves room.
TEST(CommModel, SummationAgreesWithClosedFormOnSquareGridsForLargeNOverB) {
  const double tolerance = 1e-3;
  for (const int side : {2, 4, 8, 16})
    for (const int s : {1, 4}) {
      const CommShape c{.n = 1'000'000, .B = 100, .s = s, .Pr = side, .Pc = side};
      SCOPED_TRACE(testing::Message() << "grid " << side << "x" << side << " s=" << s);
      const double v = tessera::paper_virtual_tile_height(c);
      const auto rel = [](double a, double b) { return std::abs(a - b) / std::abs(b); };
      EXPECT_LT(rel(tessera::msg_chol_sum(c), tessera::msg_chol_closed(c)), tolerance);
      EXPECT_LT(rel(tessera::word_chol_sum(c), tessera::word_chol_closed(c)), tolerance);
      EXPECT_LT(rel(tessera::msg_qr_sum(c, v), tessera::msg_qr_closed(c, v)), tolerance);
      EXPECT_LT(rel(tessera::word_qr_sum(c, v), tessera::word_qr_closed(c, v)), tolerance);
    }
  // For small n/B the dropped terms matter: n/B = 4 above gives 14 vs 12.
  EXPECT_GT(std::abs(tessera::msg_chol_sum(kChol) - tessera::msg_chol_closed(kChol)), 1.0);
}

TEST(CommModel, QrClosedFormWithDefaultVMatchesThePapersSimplification) {
  // With v = n/(B Pr) on a square grid, v B sqrt(P) = n and A.2.2 gives
  // msg_qr = n^2 s/(3 B^2 sqrt P) + n^2 s/(4 B^2 sqrt P) lg P and
  // word_qr = (1/(3 lg P) + 1/4) n^2/sqrt(P) lg P.
  const CommShape c{.n = 4096, .B = 256, .s = 2, .Pr = 4, .Pc = 4};
  const double n = 4096, B = 256, s = 2, sqrt_p = 4, lg = 4;
  const double v = tessera::paper_virtual_tile_height(c);
  EXPECT_NEAR(tessera::msg_qr_closed(c, v), n * n * s / (3 * B * B * sqrt_p) + n * n * s / (4 * B * B * sqrt_p) * lg,
              1e-9);
  EXPECT_NEAR(tessera::word_qr_closed(c, v), (1 / (3 * lg) + 0.25) * n * n / sqrt_p * lg, 1e-6);
}

TEST(CommModel, ReportPicksTheRowsOfTheAlgorithmAndTheDefaults) {
  const auto chol = tessera::comm_report(tessera::CommAlgo::Cholesky, kChol, std::nullopt, std::nullopt);
  EXPECT_EQ(chol.nb, 2);  // nb defaults to B
  EXPECT_NEAR(chol.msg_sum, 14.0, kExact);
  EXPECT_NEAR(chol.scalapack_words, 72.0, kExact);
  // v defaults to the one `tessera run` uses for the shape; 2 is the paper's n/(B Pr).
  const auto run_v = tessera::comm_report(tessera::CommAlgo::Qr, kChol, std::nullopt, 4);
  EXPECT_NEAR(run_v.v, tessera::default_virtual_tile_height(4, 2), kExact);
  EXPECT_NEAR(run_v.msg_sum, tessera::msg_qr_sum(kChol, run_v.v), kExact);
  const auto qr = tessera::comm_report(tessera::CommAlgo::Qr, kChol, 2.0, 4);
  EXPECT_NEAR(qr.v, 2.0, kExact);
  EXPECT_EQ(qr.nb, 4);
  EXPECT_NEAR(qr.msg_sum, 8.75, kExact);
  // PDGEQRF, nb = 4: msgs (3/2 + 5/8) * 8 * 2 = 34.
  EXPECT_NEAR(qr.scalapack_messages, 34.0, kExact);
  EXPECT_NEAR(qr.lower_bound_words, 32.0, kExact);
}

TEST(CommModel, ParseGridAcceptsPrxPc) {
  EXPECT_EQ(tessera::parse_grid("2x3"), std::make_pair(2, 3));
  EXPECT_EQ(tessera::parse_grid("1x1"), std::make_pair(1, 1));
  EXPECT_EQ(tessera::parse_grid("16x128"), std::make_pair(16, 128));
}

void expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError";
  } catch (const tessera::InputError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(CommModel, ParseGridRejectsAnythingElse) {
  for (const std::string bad : {"2", "x3", "2x", "axb", "2x3x4", "", "x", " 2x3", "2x3 ", "2X3", "99999999999x2"})
    expect_input_error([&] { tessera::parse_grid(bad); }, {"--grid " + bad + ":", "PrxPc"});
  expect_input_error([] { tessera::parse_grid("0x2"); }, {"--grid 0x2: Pr must be >= 1"});
  expect_input_error([] { tessera::parse_grid("2x-1"); }, {"--grid 2x-1: Pc must be >= 1"});
  expect_input_error([] { tessera::parse_grid("-3x2"); }, {"--grid -3x2: Pr must be >= 1"});
}

// The binary tree's sends per column, S(D) = (D - 1) + the upper operands,
// against its pairs written out: D = 4: (0,1) (2,3) (0,2): uppers 0 and 2;
// D = 5: (0,1) (2,3) (0,2) (0,4): uppers 0 and 2; D = 8: 0, 2, 4, 6.
TEST(CommModel, BinaryTreeSendsPerColumn) {
  EXPECT_EQ(tessera::qr_binary_pairs_sends(1), 0);  // one domain: no pair
  EXPECT_EQ(tessera::qr_binary_pairs_sends(2), 2);
  EXPECT_EQ(tessera::qr_binary_pairs_sends(3), 3);  // (0,1) (0,2)
  EXPECT_EQ(tessera::qr_binary_pairs_sends(4), 5);
  EXPECT_EQ(tessera::qr_binary_pairs_sends(5), 6);
  EXPECT_EQ(tessera::qr_binary_pairs_sends(8), 11);
}

// 2x1, v = 1, N = 32 tile rows: D = 2 but for the last row, S(2)/2 = 1 send
// per column from k on, no node column to broadcast to: sum over k < 31 of
// (32 - k) = 527 messages (the simulated 8192/256 run sends 525 at v = 2).
// 1x4: no tree, each tile of column k to 3 of 4 node columns, 3/4 send
// per tile for the average node: 3/4 x 528 = 396.
TEST(CommModel, BinaryTreeHandComputed) {
  const CommShape two_rows{.n = 8192, .B = 256, .s = 1, .Pr = 2, .Pc = 1};
  EXPECT_NEAR(tessera::msg_qr_binary_sum(two_rows, 1.0), 527.0, kExact);
  EXPECT_NEAR(tessera::word_qr_binary_sum(two_rows, 1.0, 32), 527.0 * 256 * 256, 1e-3);
  const CommShape one_row{.n = 8192, .B = 256, .s = 1, .Pr = 1, .Pc = 4};
  EXPECT_NEAR(tessera::msg_qr_binary_sum(one_row, 1.0), 396.0, kExact);
  // A broadcast message carries its T factor: (B + ib) x B words.
  EXPECT_NEAR(tessera::word_qr_binary_sum(one_row, 1.0, 32), 396.0 * (256 + 32) * 256, 1e-3);
}

TEST(CommModel, BinaryTreeSumApproachesItsClosedForm) {
  // n/B = 2048 tile rows, v = 1 (every node row holds rows until the last Pr).
  for (const auto& [pr, pc] : {std::pair{4, 4}, {8, 2}, {2, 8}}) {
    const CommShape c{.n = 2048 * 256, .B = 256, .s = 2, .Pr = pr, .Pc = pc};
    EXPECT_NEAR(tessera::msg_qr_binary_sum(c, 1.0) / tessera::msg_qr_binary_closed(c), 1.0, 0.01) << pr << "x" << pc;
    EXPECT_NEAR(tessera::word_qr_binary_sum(c, 1.0, 32) / tessera::word_qr_binary_closed(c, 32), 1.0, 0.01);
  }
}

TEST(CommModel, ReportTakesTheBinaryTree) {
  const CommShape c{.n = 8192, .B = 256, .s = 1, .Pr = 2, .Pc = 1};
  const tessera::CommReport r = tessera::comm_report(tessera::CommAlgo::Qr, c, 1.0, std::nullopt, {true, 16});
  EXPECT_TRUE(r.binary_tree);
  EXPECT_EQ(r.ib, 16);
  EXPECT_NEAR(r.msg_sum, 527.0, kExact);
  const tessera::CommReport flat = tessera::comm_report(tessera::CommAlgo::Qr, c, 1.0, std::nullopt);
  EXPECT_FALSE(flat.binary_tree);
  EXPECT_NEAR(flat.msg_sum, tessera::msg_qr_sum(c, 1.0), kExact);
}

TEST(CommModel, BadInputThrowsNamingTheOption) {
  const auto shape = [](std::int64_t n, std::int64_t B, int s, int Pr, int Pc) { return CommShape{n, B, s, Pr, Pc}; };
  expect_input_error([&] { tessera::msg_chol_sum(shape(0, 1, 1, 1, 1)); }, {"--n 0"});
  expect_input_error([&] { tessera::msg_chol_closed(shape(8, 0, 1, 1, 1)); }, {"--B 0"});
  expect_input_error([&] { tessera::word_chol_sum(shape(8, 2, 0, 1, 1)); }, {"--s 0"});
  expect_input_error([&] { tessera::msg_qr_sum(shape(8, 2, 1, 0, 2), 1.0); }, {"--grid 0x2: Pr must be >= 1"});
  expect_input_error([&] { tessera::word_qr_closed(shape(8, 2, 1, 2, -1), 1.0); }, {"--grid 2x-1: Pc must be >= 1"});
  expect_input_error([&] { tessera::lower_bound_words(shape(8, 9, 1, 1, 1)); }, {"--B 9", "n = 8"});
  expect_input_error([&] { tessera::word_chol_closed(shape(8, 2, 3, 1, 1)); }, {"--s 3", "B = 2"});
  expect_input_error([&] { tessera::msg_qr_closed(kChol, 0.5); }, {"--v 0.5"});
  expect_input_error([&] { tessera::pdgeqrf_words(kChol, 0); }, {"--nb 0"});
  expect_input_error([&] { tessera::comm_report(tessera::CommAlgo::Cholesky, kChol, 2.0, std::nullopt); },
                     {"--v 2", "qr only"});
  expect_input_error(
      [&] { tessera::comm_report(tessera::CommAlgo::Cholesky, kChol, std::nullopt, std::nullopt, {true}); },
      {"--qr-tree binary", "qr only"});
  expect_input_error(
      [&] {
        tessera::comm_report(tessera::CommAlgo::Qr, kChol, std::nullopt, std::nullopt, {false, 32});
      },
      {"--ib 32", "binary"});
  expect_input_error([&] { tessera::word_qr_binary_sum(kChol, 1.0, 0); }, {"--ib 0"});
  expect_input_error([&] { tessera::msg_qr_binary_sum(kChol, 0.5); }, {"--v 0.5"});
}

// Sizes near int64's end: ceil(n/B) was (n + B - 1) / B, which wrapped
// (negative counts for n = 2^63 - 1, B = 2; a QR default v "of -1 tile
// rows" for B = 2^62), the tile rows were cast to int (n = 10^11, B = 1
// gave v = 37992256), and the binary tree looped once per tile row (n/B =
// 10^11: hours). A shape whose tiles a run would refuse (ceil(n/B)^2 s >
// 2^30) is refused with the run's message; within it, counts are finite.
TEST(CommModel, SizesARunRefusesAreRefusedAndTheRestStayFinite) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const auto shape = [](std::int64_t n, std::int64_t B, int s, int Pr, int Pc) { return CommShape{n, B, s, Pr, Pc}; };
  expect_input_error([&] { tessera::msg_chol_sum(shape(kMax, 2, 1, 2, 2)); },
                     {"--n 9223372036854775807 with --B 2 and --s 1", "2^30"});
  expect_input_error([&] { tessera::run_virtual_tile_height(shape(100'000'000'000, 1, 1, 4, 4)); },
                     {"--n 100000000000", "1e+22 tiles", "2^30"});
  expect_input_error([&] { tessera::msg_qr_binary_sum(shape(100'000'000'000, 1, 1, 4, 4), 1.0); }, {"2^30"});
  expect_input_error([&] { tessera::msg_qr_sum(shape(std::int64_t{1} << 31, 1, 1, 2, 2), 1.0); }, {"--B 1", "2^30"});
  // 32,768^2 tiles are 2^30, which a run names; --s 2 doubles them.
  EXPECT_GT(tessera::msg_chol_sum(shape(32'768, 1, 1, 2, 2)), 0);
  expect_input_error([&] { tessera::msg_chol_sum(shape(65'536, 2, 2, 2, 2)); }, {"--s 2", "2.15e+09 tiles"});
  // n = 2^63 - 1 in tiles of 2^62: 2 x 2 tiles; in one tile: 1.
  const CommShape two = shape(kMax, std::int64_t{1} << 62, 1, 2, 2), one = shape(kMax, kMax, 1, 2, 2);
  EXPECT_EQ(tessera::run_virtual_tile_height(two), 1.0);
  EXPECT_EQ(tessera::run_virtual_tile_height(one), 1.0);
  for (const CommShape& c : {two, one}) {
    const tessera::CommReport r = tessera::comm_report(tessera::CommAlgo::Qr, c, std::nullopt, std::nullopt);
    EXPECT_TRUE(std::isfinite(r.msg_sum) && r.msg_sum > 0) << r.msg_sum;
    EXPECT_TRUE(std::isfinite(tessera::msg_qr_binary_sum(c, 1.0)));
    EXPECT_TRUE(std::isfinite(tessera::msg_chol_sum(c)) && tessera::msg_chol_sum(c) > 0);
  }
  // 2^15 tile rows, the most a square run has at s = 1: the tree's loop, and v = 2^15 / (8 * 4) = 1024.
  const CommShape most = shape(32'768, 1, 1, 4, 4);
  EXPECT_EQ(tessera::run_virtual_tile_height(most), 1024.0);
  EXPECT_TRUE(std::isfinite(tessera::msg_qr_binary_sum(most, 1024.0)));
}

}  // namespace
