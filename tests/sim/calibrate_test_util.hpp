#pragma once
// Helpers for the calibration tests.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tessera::test {

// Each shape's median from the progress lines of `tessera calibrate` and of
// its --device calibration ("[3/24] x2 GSMM      d m=32 n=32 k=32: median
// 12.3 us, ..."), appended under the shape's words with runs of spaces made
// one ("x2 GSMM d m=32 n=32 k=32"), in microseconds as printed (to 0.1 us);
// a line without a median (the link's) is left out.
inline void record_median(std::map<std::string, std::vector<double>>& us, const std::string& line) {
  const auto colon = line.find(": median ");
  if (colon == std::string::npos) return;
  const auto start = line.find("] ") + 2;
  std::string key = line.substr(start, colon - start);
  key.erase(std::unique(key.begin(), key.end(), [](char a, char b) { return a == ' ' && b == ' '; }), key.end());
  us[key].push_back(std::stod(line.substr(colon + 9)));
}

}  // namespace tessera::test
