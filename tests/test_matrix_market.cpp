// The Matrix Market reader: every format, field and symmetry it accepts, and
// error messages that name the file, the line and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "base/error.hpp"
#include "base/matrix_market.hpp"
#include "test_helpers.hpp"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using test::TempDir;

void expect_matrix(const DenseMatrix& A, index_t m, index_t n, const std::vector<std::vector<double>>& rows) {
  ASSERT_EQ(A.m, m);
  ASSERT_EQ(A.n, n);
  ASSERT_EQ(A.a.size(), static_cast<std::size_t>(m * n));
  for (index_t r = 0; r < m; ++r)
    for (index_t c = 0; c < n; ++c) EXPECT_EQ(A(r, c), rows[r][c]) << "A(" << r + 1 << "," << c + 1 << ")";
}

TEST(MatrixMarket, ArrayGeneralIsColumnMajor) {
  TempDir dir;
  const auto p = dir.write("a.mtx",
                           "%%MatrixMarket matrix array real general\n"
                           "2 3\n"
                           "1\n2\n3\n4\n5\n6.5\n");
  expect_matrix(read_matrix_market(p), 2, 3, {{1, 3, 5}, {2, 4, 6.5}});
}

TEST(MatrixMarket, ArraySymmetricListsTheLowerTriangle) {
  TempDir dir;
  const auto p = dir.write("s.mtx",
                           "%%MatrixMarket matrix array real symmetric\n"
                           "3 3\n"
                           "4\n-1\n0.5\n5\n-2\n6\n");
  expect_matrix(read_matrix_market(p), 3, 3, {{4, -1, 0.5}, {-1, 5, -2}, {0.5, -2, 6}});
}

TEST(MatrixMarket, ArraySkewSymmetricOmitsTheDiagonal) {
  TempDir dir;
  const auto p = dir.write("k.mtx",
                           "%%MatrixMarket matrix array real skew-symmetric\n"
                           "3 3\n"
                           "1\n2\n3\n");
  expect_matrix(read_matrix_market(p), 3, 3, {{0, -1, -2}, {1, 0, -3}, {2, 3, 0}});
}

// The header alone says whether the file stores a symmetric matrix's lower
// triangle, which a distributed Cholesky trusts instead of checking the
// streamed matrix: a skew-symmetric file's is no symmetric matrix.
TEST(MatrixMarket, HeaderSaysSymmetricOnlyForSymmetricFiles) {
  TempDir dir;
  for (const auto& [symmetry, want] :
       {std::pair<const char*, bool>{"symmetric", true}, {"skew-symmetric", false}, {"general", false}}) {
    const auto p = dir.write(std::string(symmetry) + ".mtx",
                             std::string("%%MatrixMarket matrix coordinate real ") + symmetry + "\n3 3 1\n2 1 1\n");
    const MatrixMarketInfo info = read_matrix_market_header(p);
    EXPECT_EQ(info.symmetric, want) << symmetry;
    EXPECT_EQ(info.m, 3);
    EXPECT_EQ(info.n, 3);
  }
}

TEST(MatrixMarket, CoordinateGeneralOmittedEntriesAreZero) {
  TempDir dir;
  const auto p = dir.write("c.mtx",
                           "%%MatrixMarket matrix coordinate real general\n"
                           "3 4 4\n"
                           "1 1 1.5\n"
                           "3 4 -2\n"
                           "2 3 7e-1\n"
                           "3 1 8\n");
  expect_matrix(read_matrix_market(p), 3, 4, {{1.5, 0, 0, 0}, {0, 0, 0.7, 0}, {8, 0, 0, -2}});
}

TEST(MatrixMarket, CoordinateSymmetricMirrorsEntries) {
  TempDir dir;
  const auto p = dir.write("cs.mtx",
                           "%%MatrixMarket matrix coordinate real symmetric\n"
                           "3 3 4\n"
                           "1 1 2\n"
                           "3 1 -1\n"
                           "2 2 3\n"
                           "3 3 4\n");
  expect_matrix(read_matrix_market(p), 3, 3, {{2, 0, -1}, {0, 3, 0}, {-1, 0, 4}});
}

TEST(MatrixMarket, CoordinatePatternEntriesAreOne) {
  TempDir dir;
  const auto p = dir.write("pat.mtx",
                           "%%MatrixMarket matrix coordinate pattern general\n"
                           "2 2 2\n"
                           "1 2\n"
                           "2 1\n");
  expect_matrix(read_matrix_market(p), 2, 2, {{0, 1}, {1, 0}});
}

TEST(MatrixMarket, IntegerFieldAndCaseInsensitiveBanner) {
  TempDir dir;
  const auto p = dir.write("i.mtx",
                           "%%MATRIXMARKET Matrix Coordinate Integer Symmetric\n"
                           "2 2 2\n"
                           "1 1 3\n"
                           "2 1 -4\n");
  expect_matrix(read_matrix_market(p), 2, 2, {{3, -4}, {-4, 0}});
}

TEST(MatrixMarket, CommentsBlankLinesAndCrLfAreSkipped) {
  TempDir dir;
  const auto p = dir.write("cm.mtx",
                           "%%MatrixMarket matrix array real general\r\n"
                           "% a comment\r\n"
                           "\r\n"
                           "   % an indented comment\n"
                           "2 2\n"
                           "\n"
                           "1\n"
                           "%\n"
                           "  2  \n"
                           "\t\n"
                           "3\n"
                           "4\n"
                           "% trailing comment\n"
                           "\n");
  expect_matrix(read_matrix_market(p), 2, 2, {{1, 3}, {2, 4}});
}

// The error for `text` must be an InputError naming the file, `line N` and
// each of `values`.
void expect_error(const std::string& text, int line, const std::vector<std::string>& values) {
  TempDir dir;
  const auto p = dir.write("bad.mtx", text);
  try {
    read_matrix_market(p);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr(p)) << "message does not name the file";
    EXPECT_THAT(msg, HasSubstr("line " + std::to_string(line))) << "message does not name the line";
    for (const auto& v : values) EXPECT_THAT(msg, HasSubstr(v));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than InputError: " << e.what();
  }
}

TEST(MatrixMarketErrors, BadBanner) {
  expect_error("%%MatrixMarket tensor array real general\n1 1\n1\n", 1, {"tensor"});
  expect_error("1 1\n1\n", 1, {"banner"});
  expect_error("%%MatrixMarket matrix array real\n1 1\n1\n", 1, {"banner"});
  expect_error("%%MatrixMarket matrix diagonal real general\n1 1\n1\n", 1, {"diagonal"});
  expect_error("%%MatrixMarket matrix array complex general\n1 1\n1 0\n", 1, {"complex"});
  expect_error("%%MatrixMarket matrix array pattern general\n1 1\n1\n", 1, {"pattern"});
  expect_error("%%MatrixMarket matrix array real hermitian\n1 1\n1\n", 1, {"hermitian"});
}

TEST(MatrixMarketErrors, EmptyFile) {
  TempDir dir;
  const auto p = dir.write("empty.mtx", "");
  try {
    read_matrix_market(p);
    ADD_FAILURE() << "no error for an empty file";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(p));
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }
}

TEST(MatrixMarketErrors, SizeLine) {
  expect_error("%%MatrixMarket matrix array real general\n% c\n", 2, {"size"});
  expect_error("%%MatrixMarket matrix array real general\n2 2 4\n", 2, {"2 2 4"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2\n", 2, {"2 2"});
  expect_error("%%MatrixMarket matrix array real general\n2 x\n", 2, {"'x'"});
  expect_error("%%MatrixMarket matrix array real general\n0 3\n", 2, {"0 x 3"});
  expect_error("%%MatrixMarket matrix array real symmetric\n% c\n2 3\n1\n", 3, {"2 x 3"});
  expect_error("%%MatrixMarket matrix array real skew-symmetric\n2 3\n1\n", 2, {"2 x 3"});
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 2 1\n2 1 1\n", 2, {"3 x 2"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 -1\n", 2, {"-1"});
}

TEST(MatrixMarketErrors, NonNumericValue) {
  expect_error("%%MatrixMarket matrix array real general\n2 1\n1.0\n% c\nabc\n", 5, {"'abc'"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1.5x\n", 4, {"'1.5x'"});
  expect_error("%%MatrixMarket matrix array real general\n1 2\n1\nnan\n", 4, {"'nan'"});
  expect_error("%%MatrixMarket matrix array real general\n1 1\n1e999\n", 3, {"'1e999'"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1.5 1 1\n", 3, {"'1.5'"});
}

TEST(MatrixMarketErrors, TooFewEntries) {
  expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5, {"(2, 2)"});
  expect_error("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n% c\n2 2 1\n", 5, {"2 of 3"});
}

TEST(MatrixMarketErrors, WrongNumberOfTokensInAnEntry) {
  expect_error("%%MatrixMarket matrix array real general\n2 1\n1 2\n2\n", 3, {"'1 2'"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3, {"'1 1'"});
  expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3, {"'1 1 1'"});
}

TEST(MatrixMarketErrors, IndexOutOfRange) {
  expect_error("%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1\n% c\n4 1 2\n", 5, {"(4, 1)", "3 x 2"});
  expect_error("%%MatrixMarket matrix coordinate real general\n3 2 1\n2 3 1\n", 3, {"(2, 3)"});
  expect_error("%%MatrixMarket matrix coordinate real general\n3 2 1\n0 1 1\n", 3, {"(0, 1)"});
  expect_error("%%MatrixMarket matrix coordinate real general\n3 2 1\n1 -2 1\n", 3, {"(1, -2)"});
}

TEST(MatrixMarketErrors, DataAfterTheLastEntry) {
  expect_error("%%MatrixMarket matrix array real general\n1 1\n1\n% ok\n2\n", 5, {"'2'"});
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", 4, {"'2 2 1'"});
}

TEST(MatrixMarketErrors, MissingFileIsNamed) {
  TempDir dir;
  const std::string p = dir.path() + "/does-not-exist.mtx";
  try {
    read_matrix_market(p);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

}  // namespace
}  // namespace tessera
