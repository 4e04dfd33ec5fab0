#include "experiments/progress_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "base/error.hpp"

namespace tessera {

ProgressFile::ProgressFile(std::string path, RuntimeObserver* inner) : path_(std::move(path)), inner_(inner) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path_, ec))
    throw InputError("--progress-file " + path_ + ": exists already (it must mark this run alone)");
  const fs::path parent = fs::path(path_).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (::access(dir.c_str(), W_OK) != 0)
    throw InputError("--progress-file " + path_ + ": directory " + dir + " is not writable");
}

void ProgressFile::on_run_start(int threads, const Executor& executor, double now) {
  if (inner_) inner_->on_run_start(threads, executor, now);
}

void ProgressFile::on_run_end(double now) {
  if (inner_) inner_->on_run_end(now);
}

void ProgressFile::on_task_start(int worker, const TaskDesc& t, double now) {
  if (inner_) inner_->on_task_start(worker, t, now);
}

void ProgressFile::on_task_end(int worker, const TaskDesc& t, double now) {
  if (inner_) inner_->on_task_end(worker, t, now);
  if (marked_.exchange(true)) return;
  // Created once; a failure to create it leaves the run alone (whoever waits for it times out).
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) ::close(fd);
}

void ProgressFile::on_copy(int gpu, bool to_device, DataId d, std::size_t bytes, double start, double end) {
  if (inner_) inner_->on_copy(gpu, to_device, d, bytes, start, end);
}

void ProgressFile::on_message(int from, int to, DataId d, std::size_t bytes, double start, double end) {
  if (inner_) inner_->on_message(from, to, d, bytes, start, end);
}

}  // namespace tessera
