#include "experiments/output_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include "base/error.hpp"

namespace tessera {

namespace {

namespace fs = std::filesystem;

// Two paths name one file: the same regular file where both exist, else the
// same normalized absolute path (a file not written yet). Devices and FIFOs
// are not compared (two outputs may both go to /dev/null).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const fs::file_status sa = fs::status(a, ea), sb = fs::status(b, eb);
  const bool exists_a = !ea && fs::exists(sa), exists_b = !eb && fs::exists(sb);
  if ((exists_a && !fs::is_regular_file(sa)) || (exists_b && !fs::is_regular_file(sb))) return false;
  if (exists_a && exists_b) {
    std::error_code e;
    return fs::equivalent(a, b, e) && !e;
  }
  std::error_code e1, e2;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a), e1), pb = fs::weakly_canonical(fs::absolute(b), e2);
  return !e1 && !e2 && pa == pb;
}

// The file a write to `path` creates: the path, or a dangling link's target.
fs::path created_file(const std::string& path) {
  std::error_code e;
  fs::path p = fs::absolute(path, e);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, e)); ++hops) {
    const fs::path target = fs::read_symlink(p, e);
    if (e) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.lexically_normal();
}

// k when `p` is node_output_path(first, k) for some k >= 1, compared in one directory.
std::optional<int> node_of(const fs::path& first, const fs::path& p) {
  const std::string stem = first.stem().string(), ext = first.extension().string(), name = p.filename().string();
  const std::string head = stem + ".node";
  if (name.size() <= head.size() + ext.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    return std::nullopt;
  int k = 0;
  const char* digits = name.data() + head.size();
  const char* end = name.data() + name.size() - ext.size();
  const auto [stop, ec] = std::from_chars(digits, end, k);
  if (ec != std::errc() || stop != end || *digits == '0' || k < 1) return std::nullopt;
  return k;
}

// Whether two directories are one.
bool same_directory(const fs::path& a, const fs::path& b) {
  std::error_code e;
  if (fs::exists(a, e) && fs::exists(b, e)) return fs::equivalent(a, b, e) && !e;
  return a.lexically_normal() == b.lexically_normal();
}

}  // namespace

void check_output_path(const NamedPath& o) {
  if (o.path.empty()) return;
  std::error_code e;
  const fs::file_status st = fs::status(o.path, e);
  if (!e && fs::is_directory(st)) throw InputError(o.option + " " + o.path + ": is a directory, not a file");
  if (!e && fs::exists(st)) {
    if (!fs::is_regular_file(st)) return;  // a FIFO or a device: opening it now could block or consume a reader
    const int fd = ::open(o.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);  // no O_CREAT, no O_TRUNC
    if (fd < 0) throw InputError(o.option + " " + o.path + ": cannot open for writing (" + std::strerror(errno) + ")");
    ::close(fd);
    return;
  }
  // Missing: the directory that would hold it must exist and be writable.
  fs::path dir = created_file(o.path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, e))
    throw InputError(o.option + " " + o.path + ": cannot open for writing (no directory " + dir.string() + ")");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(o.option + " " + o.path + ": cannot open for writing (directory " + dir.string() +
                     " is not writable)");
}

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& o = outputs[i];
    if (o.path.empty()) continue;
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same_file(o.path, outputs[j].path))
        throw InputError(o.option + " " + o.path + " and " + outputs[j].option + " " + outputs[j].path +
                         " are one file: each output needs its own");
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(o.path, in.path))
        throw InputError(o.option + " " + o.path + " is the file " + in.option +
                         " reads: writing the output would overwrite it");
  }
}

std::string node_output_path(const std::string& path, int node) {
  const std::size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  const bool ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string tag = ".node" + std::to_string(node);
  return ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

void check_node_outputs(const NamedPath& first, int nodes, const std::vector<NamedPath>& others) {
  if (first.path.empty() || nodes < 2) return;
  const fs::path base = fs::absolute(first.path).lexically_normal();
  const auto name = [&](int k) { return first.option + " (node " + std::to_string(k) + ")"; };
  for (const NamedPath& o : others) {
    if (o.path.empty()) continue;
    const fs::path p = fs::absolute(o.path).lexically_normal();
    if (!same_directory(p.parent_path(), base.parent_path())) continue;
    if (const std::optional<int> k = node_of(base, p); k && *k < nodes)
      throw InputError(o.option + " " + o.path + " and " + name(*k) + " " + node_output_path(first.path, *k) +
                       " are one file: each output needs its own");
  }
  std::error_code e;
  for (fs::directory_iterator it(base.parent_path(), e), end; !e && it != end; it.increment(e))
    if (const std::optional<int> k = node_of(base, it->path()); k && *k < nodes && it->is_directory(e))
      throw InputError(name(*k) + " " + node_output_path(first.path, *k) + ": is a directory, not a file");
  // Each node's file as node 0's is checked (a link to a missing directory, a file not writable): found after the
  // run, the run's work and its other outputs would be lost.
  for (int k = 1; k < nodes; ++k) check_output_path({name(k), node_output_path(first.path, k)});
}

void write_output(const NamedPath& o, const std::function<void(std::ostream&)>& fill) {
  const auto failed = [&](const std::string& what, int err) {
    return InputError(o.option + " " + o.path + ": " + what +
                      (err != 0 ? " (" + std::string(std::strerror(err)) + ")" : ""));
  };
  std::error_code e;
  const fs::file_status st = fs::status(o.path, e);
  if (!e && fs::exists(st) && !fs::is_regular_file(st)) {  // a FIFO or a device (/dev/stdout): written in place
    std::ofstream out(o.path);
    if (!out) throw failed("cannot open for writing", errno);
    errno = 0;
    fill(out);
    out.flush();
    if (!out) throw failed("write failed", errno);
    return;
  }
  // A regular file, or none yet: written beside it, then renamed over it, so that a write that fails (a full disk)
  // leaves the file that was there, not a part of the new one.
  const fs::path target = created_file(o.path);
  std::string tmp = (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw failed("cannot open for writing", errno);
  // The mode a plain create would give (mkstemp's is 0600), or the replaced file's own.
  mode_t mode = 0;
  if (!e && fs::exists(st)) {
    mode = static_cast<mode_t>(st.permissions() & fs::perms::mask);
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  ::close(fd);
  int err = 0;
  {
    std::ofstream out(tmp, std::ios::trunc);
    errno = 0;
    if (out) fill(out);
    out.flush();
    if (!out) err = errno != 0 ? errno : EIO;
  }
  if (err == 0 && std::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    throw failed("write failed", err);
  }
}

}  // namespace tessera
