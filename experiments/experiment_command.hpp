#pragma once
// `tessera experiment ...`: the experiment runner (experiments/experiment.py,
// Python), started from the tessera binary so that one command line serves
// both. The runner parses its own arguments; see experiments/definitions/README.md.
#include <CLI/CLI.hpp>

namespace tessera {

// When argv[1] is "experiment" (or "explore"), replaces this process with
// /usr/bin/python3 <source dir>/experiments/experiment.py (explore.py) argv[2..],
// with TESSERA_BIN naming this binary; returns only when that cannot start, with
// exit status 2 after one error line. Returns -1 for any other command line.
int run_experiment_command(int argc, char** argv);

// Lists `experiment` and `explore` in `tessera --help` (their arguments are the scripts').
void add_experiment_help(CLI::App& app);

}  // namespace tessera
