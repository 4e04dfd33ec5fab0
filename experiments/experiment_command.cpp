#include "experiments/experiment_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR must name the source tree (set in CMakeLists.txt)"
#endif

namespace tessera {

namespace {

constexpr const char* kPython = "/usr/bin/python3";

void say(const std::string& line) {
  const std::string text = line + "\n";
  if (::write(STDERR_FILENO, text.data(), text.size()) < 0) return;
}

}  // namespace

int run_experiment_command(int argc, char** argv) {
  if (argc < 2) return -1;
  // `tessera experiment` and `tessera explore` are Python scripts sharing experiments/runner/.
  const bool explore = std::strcmp(argv[1], "explore") == 0;
  if (!explore && std::strcmp(argv[1], "experiment") != 0) return -1;
  const std::string script =
      std::string(TESSERA_SOURCE_DIR) + (explore ? "/experiments/explore.py" : "/experiments/experiment.py");
  if (::access(script.c_str(), R_OK) != 0) {
    say(std::string("tessera: error: the ") + (explore ? "explorer " : "experiment runner ") + script +
        " is not readable (" + std::strerror(errno) + "): this binary was built from that source tree");
    return 2;
  }
  // The runner runs this very binary for every experiment run.
  char self[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len > 0) {
    self[len] = '\0';
    ::setenv("TESSERA_BIN", self, 1);
  }
  std::vector<char*> args{const_cast<char*>(kPython), const_cast<char*>(script.c_str())};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(kPython, args.data());
  say(std::string("tessera: error: cannot run ") + kPython + " " + script + ": " + std::strerror(errno));
  return 2;
}

void add_experiment_help(CLI::App& app) {
  app.add_subcommand(
         "experiment",
         "paper figures as experiments: list | run NAME [--quick] [--out DIR] [--jobs J] [--force] | plot NAME "
         "| report (experiments/experiment.py; see experiments/definitions/README.md)")
      ->allow_extras();
  app.add_subcommand("explore",
                     "what-if sweeps on a simulated machine: --machine FILE --algo A --n N [--nodes P] [--dist ...] "
                     "[--B ...] [--set FIELD=VALUES] [--jobs J] [--out DIR] [--dry-run] (experiments/explore.py; see "
                     "experiments/README.md)")
      ->allow_extras();
}

}  // namespace tessera
