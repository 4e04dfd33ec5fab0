#pragma once
// The files a command writes once its result exists (`run --json`/`--trace`,
// `tune --out`, `model comm --json`): checked before the work starts, written
// only after it, so a refused or failed command leaves every file as it was.
//
// Opening an output for writing at the start (truncating it) and removing it
// when the command fails would lose what a user had there: an earlier run's
// JSON, a tuned choice, or an input given by mistake as the output. So the
// check creates, truncates and removes nothing: an existing regular file
// must open for appending (no O_CREAT), a missing one needs a writable
// directory (the target's, where the path is a dangling link), and anything
// else that exists (a FIFO, /dev/stdout, /dev/null) is left to the write.
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace tessera {

// An option naming a file: "--json" and its path.
struct NamedPath {
  std::string option;
  std::string path;
};

// Throws InputError naming the option and the path when the path is a
// directory or cannot be written (its directory missing or not writable).
// An empty path is no output and passes.
void check_output_path(const NamedPath& output);

// Throws InputError naming both options and the path when two outputs are
// one file, or an output is the file an input is read from (regular files
// compared as files: a link or another spelling of the same path is the
// same file; devices such as /dev/null are never "one file"). Empty paths
// are skipped.
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Writes an output: `fill` writes its text. A regular file (or a missing one) is written to a temporary file beside it
// (a link's target's), checked at its close, forced to disk and renamed over it, keeping the replaced file's
// permissions, so that a failed write (a full disk, a quota) leaves what was there. Written in place instead: a FIFO
// or a device, a path under /dev or /proc (/dev/stdout), a file with other hard links, and an existing file whose
// directory takes no new file or rename. Throws InputError naming the option, the path and the system's reason.
void write_output(const NamedPath& output, const std::function<void(std::ostream&)>& fill);

// Node k > 0 of a cluster writes its copy of an output beside node 0's:
// "run.json" -> "run.node3.json" ("run" -> "run.node3" without an extension).
std::string node_output_path(const std::string& path, int node);

// The copies of `first` that nodes 1 .. nodes-1 write (node_output_path),
// checked in O(others + the directory's entries), whatever the node count:
// InputError when one of them is one of `others` (naming both options) or an
// existing directory.
void check_node_outputs(const NamedPath& first, int nodes, const std::vector<NamedPath>& others);

}  // namespace tessera
