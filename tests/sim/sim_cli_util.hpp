#pragma once
// The `tessera` binary as a process, for the simulated-cluster tests: each
// run is its own process, so each has its own SimGrid engine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_helpers.hpp"

#ifndef TESSERA_BIN
#error "TESSERA_BIN must name the tessera executable"
#endif

namespace tessera::test {

inline Outcome run_tessera(const std::vector<std::string>& args) { return run_process(TESSERA_BIN, args, 240); }

// A run that must succeed; returns its JSON result (`--json` is added).
inline nlohmann::json run_ok(const std::vector<std::string>& args, Outcome* outcome = nullptr) {
  TempDir dir;
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--json", dir.path() + "/r.json"});
  const Outcome o = run_tessera(a);
  if (outcome) *outcome = o;
  EXPECT_TRUE(o.exited && o.status == 0) << o;
  const std::string text = read_text(dir.path() + "/r.json");
  if (text.empty()) {
    ADD_FAILURE() << "no JSON result: " << o;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text);
}

}  // namespace tessera::test
