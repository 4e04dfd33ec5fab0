#pragma once
// Successful `tessera run` calls whose result is read back from --json, for
// the command-line claim tests (test_cli_claims*.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.hpp"
#include "test_helpers.hpp"

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree"
#endif

namespace tessera::test::cli {

inline const std::string kKeeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A successful run with --json DIR/name: exit 0, nothing on stderr, `lines`
// lines on stdout (2 for a simulated run: the summary and its cost); returns
// the JSON and, in `out`, stdout. A file left by an earlier run is removed
// first, so it cannot stand for this one's.
inline nlohmann::json run_ok(const TempDir& dir, std::vector<std::string> args, int lines = 1,
                             std::string* out = nullptr, const std::string& name = "r.json") {
  const std::string json = dir.path() + "/" + name;
  std::remove(json.c_str());
  args.insert(args.end(), {"--json", json});
  SCOPED_TRACE("tessera" + join(args));
  const Outcome o = run_tessera(args);
  EXPECT_TRUE(o.exited && o.status == 0) << o;
  EXPECT_EQ(o.err, "") << o;
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), lines) << o;
  if (out) *out = o.out;
  return read_json(json);
}

// `tessera run --algo algo extra...` on the simulated keeneland.json.
inline std::vector<std::string> sim(std::vector<std::string> extra, const std::string& algo = "cholesky") {
  auto a = base(std::move(extra), algo);
  a.insert(a.end(), {"--backend", "sim", "--machine", kKeeneland});
  return a;
}

}  // namespace tessera::test::cli
