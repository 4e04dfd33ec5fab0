#include "experiments/output_path.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/error.hpp"

namespace tessera {

namespace {

namespace fs = std::filesystem;

// Two paths name one file: the same file where both exist, else the same
// normalized absolute path (a file not written yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const bool both = fs::exists(a, ea) && fs::exists(b, eb);
  if (both) {
    std::error_code e;
    return fs::equivalent(a, b, e) && !e;
  }
  std::error_code e1, e2;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a), e1), pb = fs::weakly_canonical(fs::absolute(b), e2);
  return !e1 && !e2 && pa == pb;
}

}  // namespace

void check_output_path(const NamedPath& o) {
  if (o.path.empty()) return;
  std::error_code e;
  if (fs::is_directory(o.path, e)) throw InputError(o.option + " " + o.path + ": is a directory, not a file");
  const bool existed = access(o.path.c_str(), F_OK) == 0;
  {
    // Append mode creates a missing file and leaves an existing one as it is.
    std::ofstream probe(o.path, std::ios::app);
    if (!probe) throw InputError(o.option + " " + o.path + ": cannot open for writing");
  }
  if (!existed) std::remove(o.path.c_str());
}

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                          std::size_t distinct_from) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& o = outputs[i];
    if (o.path.empty()) continue;
    for (std::size_t j = i + 1; j < outputs.size() && (i < distinct_from || j < distinct_from); ++j)
      if (!outputs[j].path.empty() && same_file(o.path, outputs[j].path))
        throw InputError(o.option + " " + o.path + " and " + outputs[j].option + " " + outputs[j].path +
                         " are one file: each output needs its own");
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(o.path, in.path))
        throw InputError(o.option + " " + o.path + " is the file " + in.option +
                         " reads: writing the output would overwrite it");
  }
}

}  // namespace tessera
