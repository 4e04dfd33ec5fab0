#pragma once
// The files a command writes once its result exists (`run --json`/`--trace`,
// `tune --out`, `model comm --json`): checked before the work starts, written
// only after it, so a refused or failed command leaves every file as it was.
//
// Opening an output for writing at the start (truncating it) and removing it
// when the command fails would lose what a user had there: an earlier run's
// JSON, a tuned choice, or an input given by mistake as the output. So the
// check creates nothing that stays and truncates nothing; the output is
// opened, truncated and written at the end.
#include <cstddef>
#include <string>
#include <vector>

namespace tessera {

// An option naming a file: "--json" and its path.
struct NamedPath {
  std::string option;
  std::string path;
};

// Throws InputError naming the option and the path when the path is a
// directory or cannot be opened for writing (its directory missing or not
// writable). A file the check had to create is removed again; an existing
// one is not changed. An empty path is no output and passes.
void check_output_path(const NamedPath& output);

// Throws InputError naming both options and the path when two outputs are
// one file, or an output is the file an input is read from (compared as
// files: a link or another spelling of the same path is the same file).
// Empty paths are skipped. Outputs from index `distinct_from` on are
// distinct among themselves by construction (one file per node) and are
// compared only with the others and the inputs: O(n), not O(n^2), for a
// simulated cluster's thousand trace files.
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                          std::size_t distinct_from = static_cast<std::size_t>(-1));

}  // namespace tessera
