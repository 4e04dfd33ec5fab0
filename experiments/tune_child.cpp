// A child `tessera run` of the tuner (experiments/tune.hpp, run_child): its own process, so that a candidate that
// fails or runs out of memory ends only itself.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "experiments/tune.hpp"

namespace tessera {

ChildRun run_child(const std::string& program, const std::vector<std::string>& args) {
  ChildRun r;
  // In $TMPDIR where it names a directory (a batch system's scratch), else /tmp.
  const char* tmpdir = std::getenv("TMPDIR");
  std::error_code no_dir;
  const std::string dir = tmpdir != nullptr && *tmpdir != '\0' && std::filesystem::is_directory(tmpdir, no_dir)
                              ? std::string(tmpdir)
                              : std::string("/tmp");
  std::string json_path = dir + "/tessera-tune-XXXXXX";
  const int json_fd = ::mkstemp(json_path.data());
  if (json_fd < 0)
    throw std::runtime_error("tune: cannot create a temporary file in " + dir + ": " + std::strerror(errno));
  ::close(json_fd);
  std::vector<std::string> all{program, "run"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  all.push_back(json_path);
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err[2];
  if (::pipe(err) != 0) throw std::runtime_error(std::string("tune: pipe failed: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("tune: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Ends with the tuner, however it ends (a run of its own would go on as an orphan, timing on cores it shares).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the tuner ended before the line above
    ::close(err[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    if (null > STDERR_FILENO) ::close(null);
    if (err[1] > STDERR_FILENO) ::close(err[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(err[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  r.error = text.substr(text.find_last_of('\n') + 1);  // npos + 1 = 0: the whole text when it is one line
  if (r.status == 127 && r.error.empty()) r.error = "cannot run " + program;
  if (r.status == 0) {
    try {
      std::ifstream in(json_path);
      const nlohmann::json j = nlohmann::json::parse(in);
      r.time_s = j.at("time_s").get<double>();
      if (j.contains("b")) r.b = j.at("b").get<std::int64_t>();
    } catch (const std::exception& e) {
      r.status = -1;
      r.error = std::string("its JSON is unreadable: ") + e.what();
    }
  }
  std::remove(json_path.c_str());
  return r;
}

}  // namespace tessera
