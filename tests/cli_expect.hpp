#pragma once
// The `tessera` binary as a process, and what its command line promises
// (README "Command line"): a good run prints one summary line on stdout and
// nothing on stderr; a failed one exits with its documented status, prints
// no summary line and exactly one line on stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_helpers.hpp"

#ifndef TESSERA_BIN
#error "TESSERA_BIN must name the tessera executable"
#endif

namespace tessera::test::cli {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Runs `tessera args...` (see run_process); `max_bytes` > 0 caps its address space.
inline Outcome run_tessera(const std::vector<std::string>& args, rlim_t max_bytes = 0) {
  return tessera::test::run_process(TESSERA_BIN, args, 120, max_bytes);
}

inline std::string join(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

// The exit statuses of README "Command line" (base/error.hpp maps errors to them).
constexpr int kInvalidInput = 2, kNotPositiveDefinite = 3, kOutOfMemory = 4, kInternalError = 5;

// A failed command: a normal exit with `status` (not a signal, not the
// timeout, not an exec failure), nothing on stdout (no summary line), and
// exactly one line on stderr, the error message ("tessera: internal error: "
// for status 5), containing every one of `values`.
inline void expect_rejected(int status, const std::vector<std::string>& args, const std::vector<std::string>& values,
                            rlim_t max_bytes = 0) {
  SCOPED_TRACE("tessera" + join(args));
  const Outcome o = run_tessera(args, max_bytes);
  ASSERT_TRUE(o.exited) << "crashed: " << o;
  ASSERT_NE(o.status, 124) << "timed out: " << o;
  EXPECT_EQ(o.status, status) << o;
  EXPECT_EQ(o.out, "") << o;
  ASSERT_FALSE(o.err.empty()) << "no message on stderr: " << o;
  EXPECT_THAT(o.err, StartsWith(status == kInternalError ? "tessera: internal error: " : "tessera: error: ")) << o;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "not exactly one line: " << o;
  EXPECT_EQ(o.err.back(), '\n') << o;
  for (const auto& v : values) EXPECT_THAT(o.err, HasSubstr(v)) << o;
}

inline std::vector<std::string> base(std::vector<std::string> extra, const std::string& algo = "cholesky") {
  std::vector<std::string> a = {"run", "--algo", algo};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A run that succeeds: exit 0, nothing on stderr, one summary line.
inline void expect_success(const Outcome& o) {
  ASSERT_TRUE(o.exited) << "crashed: " << o;
  ASSERT_EQ(o.status, 0) << o;
  EXPECT_EQ(o.err, "") << o;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << "expected one summary line: " << o;
}

}  // namespace tessera::test::cli
