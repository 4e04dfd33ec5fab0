#pragma once
// Helpers for simulated-run tests.
//
// SimGrid allows one s4u::Engine per process, and a second Engine in the same
// process keeps the first one's clock, so every simulation of these tests runs
// in a forked child that sends its result back through a pipe. The tests then
// behave the same whether ctest runs them one per process or the binary runs
// them all at once.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

namespace tessera::test {

// Runs `body` in a child process and returns the bytes it returned. An
// exception in the child is rethrown here as std::runtime_error with its message.
// A failed assertion (EXPECT_*, ASSERT_*) in the child fails the calling test
// here, with the child's messages, and throws: the child's own record of it
// dies with the child, and its result is not to be trusted.
inline std::string run_in_child(const std::function<std::string()>& body) {
  constexpr int kChildAssertionsFailed = 4;
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fd[0]);
    std::string out;
    int code = 0;
    // Every thread's assertions (SimGrid's actors may run on threads) land
    // here rather than in the test's record; this thread's also when the
    // parent intercepted them for itself (EXPECT_NONFATAL_FAILURE).
    ::testing::TestPartResultArray parts;
    {
      using Reporter = ::testing::ScopedFakeTestPartResultReporter;
      const Reporter other_threads(Reporter::INTERCEPT_ALL_THREADS, &parts);
      const Reporter this_thread(Reporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
      try {
        out = body();
      } catch (const std::exception& e) {
        out = e.what();
        code = 1;
      } catch (...) {
        out = "unknown exception";
        code = 1;
      }
    }
    std::string failed;
    for (int i = 0; i < parts.size(); ++i) {
      const ::testing::TestPartResult& part = parts.GetTestPartResult(i);
      if (!part.failed()) continue;
      failed += std::string(part.file_name() != nullptr ? part.file_name() : "?") + ":" +
                std::to_string(part.line_number()) + ": " + part.message() + "\n";
    }
    if (!failed.empty()) {
      out = code == 0 ? failed : out + "\n" + failed;
      if (code == 0) code = kChildAssertionsFailed;
    }
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t w = write(fd[1], out.data() + done, out.size() - done);
      if (w <= 0) _exit(3);
      done += static_cast<std::size_t>(w);
    }
    close(fd[1]);
    _exit(code);  // skip the parent's atexit handlers (gtest, SimGrid)
  }
  close(fd[1]);
  std::string out;
  char buf[65536];
  for (ssize_t r; (r = read(fd[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(r));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status))
    throw std::runtime_error("simulation child died (signal " + std::to_string(WTERMSIG(status)) + ")");
  if (WEXITSTATUS(status) == kChildAssertionsFailed) {
    ADD_FAILURE() << "assertions failed in the simulation child:\n" << out;
    throw std::runtime_error("the simulation child's assertions failed (reported above)");
  }
  if (WEXITSTATUS(status) != 0) throw std::runtime_error("simulation child failed: " + out);
  return out;
}

// Exact text of a double (hexadecimal floating point), for bitwise comparisons.
inline std::string exact(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%a", x);
  return b;
}

// A hand-made machine file: `nodes` nodes of `cores` cores on a star network
// of the given link, and the kernel model "pow2" for tiles of 64, every
// Cholesky kernel call timed by a power of two so that sums of durations are
// exact in binary (POTF2' 0.5 s, TRSM 0.25, the diagonal GSMM 0.125, GSMM
// 0.0625). `task_s`: the model's per-task cost of the runtime, when given;
// `calibrated` false: the link's figures are nominal (SimGrid corrects them).
inline std::string pow2_machine(int nodes, int cores, double bandwidth_Bps = 1e9, double latency_s = 0,
                                const std::string& task_s = "", bool calibrated = true) {
  char net[200];
  std::snprintf(net, sizeof net, R"("network": { "topology": "star", "bandwidth_Bps": %.17g, "latency_s": %.17g%s },)",
                bandwidth_Bps, latency_s, calibrated ? "" : R"(, "calibrated": false)");
  return R"({
    "name": "hand-made", "nodes": )" +
         std::to_string(nodes) + R"(,
    "node": { "cores": { "count": )" +
         std::to_string(cores) + R"(, "model": "pow2" } },
    )" + net +
         R"(
    "kernel_models": { "pow2": { "type": "calibrated", )" +
         (task_s.empty() ? std::string() : "\"task_s\": " + task_s + ", ") + R"("measurements": [
      { "kernel": "potf2p",    "precision": "d", "m": 64, "n": 64,          "median_s": 0.5 },
      { "kernel": "trsm",      "precision": "d", "m": 64, "n": 64,          "median_s": 0.25 },
      { "kernel": "gsmm_diag", "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.125 },
      { "kernel": "gsmm",      "precision": "d", "m": 64, "n": 64, "k": 64, "median_s": 0.0625 } ] } }
  })";
}

}  // namespace tessera::test
