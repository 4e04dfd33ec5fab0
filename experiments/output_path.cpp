#include "experiments/output_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
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
  // The directory as the kernel resolves it (a link in it first, then ".."), not ".." removed by text.
  const fs::path dir = fs::weakly_canonical(p.parent_path(), e);
  return e ? p.lexically_normal() : dir / p.filename();
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

namespace {

// The process's umask, read without changing it (umask(2) sets it: a thread creating a file meanwhile would get
// 0666); 022 where /proc/self/status has no Umask line (Linux before 4.7).
mode_t umask_now() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

struct Written {
  bool opened = false;
  int err = 0;  // 0: written (and, asked to, on disk)
};

// Writes `fill`'s text to `path` (truncating it), checked at the close, where a full quota or disk shows on some
// file systems (NFS), and with `sync` forced to disk before it counts as written.
Written write_stream(const std::string& path, const std::function<void(std::ostream&)>& fill, bool sync) {
  Written w;
  errno = 0;
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    w.err = errno != 0 ? errno : EIO;
    return w;
  }
  w.opened = true;
  errno = 0;
  fill(out);
  out.close();
  if (!out) {
    w.err = errno != 0 ? errno : EIO;
    return w;
  }
  if (sync) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && ::fsync(fd) != 0) w.err = errno;
    if (fd >= 0) ::close(fd);
  }
  return w;
}

}  // namespace

void write_output(const NamedPath& o, const std::function<void(std::ostream&)>& fill) {
  const auto failed = [&](const Written& w) {
    return InputError(o.option + " " + o.path + ": " + (w.opened ? "write failed" : "cannot open for writing") +
                      (w.err != 0 ? " (" + std::string(std::strerror(w.err)) + ")" : ""));
  };
  std::error_code e;
  // This process's own standard output or error: through its stream, whose offset the command's other lines share
  // (a file opened anew there would write over them, or they over it, where the stream goes to a file).
  const std::string abs = fs::absolute(o.path, e).lexically_normal().string();
  for (const auto& [name, stream] : {std::pair<const char*, std::ostream*>{"/dev/stdout", &std::cout},
                                     {"/proc/self/fd/1", &std::cout},
                                     {"/dev/stderr", &std::cerr},
                                     {"/proc/self/fd/2", &std::cerr}})
    if (abs == name) {
      errno = 0;
      fill(*stream);
      stream->flush();
      if (!*stream) throw failed(Written{true, errno});
      return;
    }
  const fs::file_status st = fs::status(o.path, e);
  const bool exists = !e && fs::exists(st);
  // Written in place: a FIFO or a device; anything under /dev or /proc (/dev/stdout redirected to a file is that
  // file, and a rename over it would leave the command's later lines to an unlinked one); a file with other hard
  // links (each must see the new text).
  bool in_place = (exists && !fs::is_regular_file(st)) || abs.rfind("/dev/", 0) == 0 || abs.rfind("/proc/", 0) == 0;
  if (exists && !in_place) in_place = fs::hard_link_count(o.path, e) > 1 && !e;
  // Otherwise written beside it and renamed over it, so that a write that fails (a full disk) leaves the file that was
  // there, not a part of the new one.
  const fs::path target = created_file(o.path);
  std::string tmp_name = ".";  // (appended, not "." + name + ...: GCC 12 warns falsely of overlapping copies there)
  tmp_name += target.filename().string();
  tmp_name += ".XXXXXX";
  std::string tmp = (target.parent_path() / tmp_name).string();
  int fd = -1;
  if (!in_place) {
    fd = ::mkstemp(tmp.data());
    // A file that can be written in a directory that cannot (the check only opened the file): written in place.
    if (fd < 0 && exists && (errno == EACCES || errno == EPERM || errno == EROFS)) in_place = true;
    else if (fd < 0) throw failed(Written{false, errno});
  }
  if (in_place) {
    if (const Written w = write_stream(o.path, fill, false); w.err != 0) throw failed(w);
    return;
  }
  ::fchmod(fd, exists ? static_cast<mode_t>(st.permissions() & fs::perms::mask) : 0666 & ~umask_now());
  ::close(fd);
  Written w;
  try {
    w = write_stream(tmp, fill, true);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (w.err == 0 && std::rename(tmp.c_str(), target.c_str()) != 0) {
    w.err = errno;
    if (exists && (w.err == EPERM || w.err == EACCES)) {  // a sticky directory, another owner's file: in place
      std::remove(tmp.c_str());
      if (const Written again = write_stream(o.path, fill, false); again.err != 0) throw failed(again);
      return;
    }
  }
  if (w.err != 0) {
    std::remove(tmp.c_str());
    w.opened = true;
    throw failed(w);
  }
}

}  // namespace tessera
