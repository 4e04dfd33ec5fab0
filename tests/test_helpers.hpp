#pragma once
// Small helpers shared by the test programs: a scratch directory that removes
// itself, writing a text file into it, and a seeded random matrix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <ostream>
#include <vector>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace tessera::test {

// An m×n column-major matrix of uniform values in [-1, 1) from `seed`.
inline std::vector<double> uniform_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (double& x : a) x = u(gen);
  return a;
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tessera-test-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` verbatim to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + p);
    return p;
  }

 private:
  std::string path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// What a child process did: how it ended and what it printed.
struct Outcome {
  bool exited = false;  // false: killed by a signal
  int status = -1;      // exit status, or the signal
  std::string out, err;
};

inline std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << (o.exited ? "exit " : "signal ") << o.status << "\n--- stdout ---\n"
            << o.out << "--- stderr ---\n"
            << o.err;
}

// Runs `binary args...` under `timeout -k 10 seconds` so nothing can hang the
// suite, stdin from /dev/null, stdout and stderr captured separately;
// `max_bytes` > 0 caps its address space.
inline Outcome run_process(const std::string& binary, const std::vector<std::string>& args, int seconds,
                           rlim_t max_bytes = 0) {
  TempDir dir;
  const std::string out_path = dir.path() + "/stdout", err_path = dir.path() + "/stderr";
  std::vector<std::string> argv_s = {"timeout", "-k", "10", std::to_string(seconds), binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0) _exit(126);
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer reserves terabytes of shadow address space as the
    // program starts, which no cap leaves it: where the cap is a safety net it
    // is dropped (./setup.sh asan leaves out the tests whose subject it is).
    max_bytes = 0;
#endif
    if (max_bytes > 0) {
      const rlimit lim{max_bytes, max_bytes};
      if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(126);
    }
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  Outcome r;
  r.exited = WIFEXITED(st);
  r.status = r.exited ? WEXITSTATUS(st) : WTERMSIG(st);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

// The --matrix of a checked run: the factorization's default (""), but for
// Cholesky in single precision illcond (kappa 1e5 in single). The default spd
// matrix (diagonal n + u) makes every Schur update O(1/n) of the matrix, and
// its scaled residual stays below 30 in single precision even with every
// diagonal update left out (1.94 at N = 1000, B = 96), where illcond's does
// not. tests/CMakeLists.txt's check_matrix makes the same choice for the CLI
// tests.
inline std::string checked_matrix(const std::string& algo, char precision) {
  return algo == "cholesky" && precision == 's' ? "illcond" : "";
}

}  // namespace tessera::test
