#include "base/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/error.hpp"

namespace tessera {

void require_regular_file(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code e;
  const fs::file_status st = fs::status(path, e);
  if (e || !fs::exists(st))
    throw InputError(option + " " + path + ": cannot open the file (" +
                     (e ? e.message() : std::string("No such file or directory")) + ")");
  if (fs::is_directory(st)) throw InputError(option + " " + path + ": is a directory, not a file");
  if (!fs::is_regular_file(st) && !fs::is_fifo(st))
    throw InputError(option + " " + path + ": not a regular file or a pipe (a device or a socket is not read)");
}

std::string read_text_file(const std::string& option, const std::string& path) {
  require_regular_file(option, path);
  std::ifstream in(path);
  if (!in) throw InputError(option + " " + path + ": cannot open the file (" + std::strerror(errno) + ")");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(option + " " + path + ": read error");
  return text.str();
}

}  // namespace tessera
