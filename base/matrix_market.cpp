#include "base/matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/input_file.hpp"

namespace tessera {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(checked(path)), in_(path) {
    if (!in_) throw InputError("--input " + path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  static const std::string& checked(const std::string& path) {
    require_regular_file("--input", path);
    return path;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("--input " + path_ + ", line " + std::to_string(line_no_) + ": " + what);
  }
  // Next line that is neither blank nor a comment; false at end of file.
  bool next(std::string& line) {
    while (std::getline(in_, line)) {
      ++line_no_;
      if (line_no_ == 1) return true;  // the banner starts with %%
      const auto p = line.find_first_not_of(" \t\r");
      if (p == std::string::npos || line[p] == '%') continue;
      return true;
    }
    if (in_.bad()) fail("read error");
    return false;
  }
  index_t parse_index(const std::string& tok, const char* what) const {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(tok.c_str(), &end, 10);
    if (errno || end == tok.c_str() || *end) fail(std::string("malformed ") + what + " '" + tok + "'");
    return v;
  }
  double parse_value(const std::string& tok) const {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end) fail("malformed value '" + tok + "'");
    if (!std::isfinite(v)) fail("value '" + tok + "' is not finite");
    // strtod's underflow to zero (a subnormal result also sets ERANGE, and is kept).
    if (errno == ERANGE && v == 0)
      fail("value '" + tok + "' is below the smallest double (about 4.9e-324) and would be read as 0");
    return v;
  }

 private:
  std::string path_;
  std::ifstream in_;
  long line_no_ = 0;
};

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> out;
  for (std::string t; ss >> t;) out.push_back(t);
  return out;
}

}  // namespace

MatrixMarketInfo scan_matrix_market(const std::string& path,
                                    const std::function<void(const MatrixMarketInfo&)>& on_size,
                                    const std::function<void(index_t, index_t, double)>& visit) {
  Reader rd(path);
  std::string line;
  if (!rd.next(line)) rd.fail("empty file");
  const auto banner = tokens(line);
  if (banner.size() != 5 || lower(banner[0]) != "%%matrixmarket" || lower(banner[1]) != "matrix")
    rd.fail("expected banner '%%MatrixMarket matrix <format> <field> <symmetry>', got '" + line + "'");
  const std::string format = lower(banner[2]), field = lower(banner[3]), symmetry = lower(banner[4]);
  if (format != "array" && format != "coordinate") rd.fail("unsupported format '" + banner[2] + "'");
  if (field != "real" && field != "integer" && field != "double" && !(field == "pattern" && format == "coordinate"))
    rd.fail("unsupported field '" + banner[3] + "' (real, integer or pattern expected)");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    rd.fail("unsupported symmetry '" + banner[4] + "'");
  const bool sym = symmetry == "symmetric", skew = symmetry == "skew-symmetric";

  if (!rd.next(line)) rd.fail("missing size line");
  const auto size = tokens(line);
  if (size.size() != (format == "array" ? 2u : 3u)) rd.fail("malformed size line '" + line + "'");
  MatrixMarketInfo info;
  info.m = rd.parse_index(size[0], "row count");
  info.n = rd.parse_index(size[1], "column count");
  info.symmetric = sym;
  if (info.m < 1 || info.n < 1) rd.fail("matrix size " + size[0] + " x " + size[1] + " must be at least 1 x 1");
  if ((sym || skew) && info.m != info.n)
    rd.fail("a " + symmetry + " matrix must be square, got " + size[0] + " x " + size[1]);
  if (on_size) on_size(info);
  if (!visit) return info;
  auto store = [&](index_t r, index_t c, double v) {
    visit(r, c, v);
    if (sym && r != c) visit(c, r, v);
    if (skew) visit(c, r, -v);
  };

  if (format == "array") {
    // Column-major; symmetric files list the lower triangle only.
    for (index_t c = 0; c < info.n; ++c)
      for (index_t r = (sym ? c : skew ? c + 1 : 0); r < info.m; ++r) {
        if (!rd.next(line))
          rd.fail("file ends before entry (" + std::to_string(r + 1) + ", " + std::to_string(c + 1) + ")");
        const auto tok = tokens(line);
        if (tok.size() != 1) rd.fail("expected one value, got '" + line + "'");
        store(r, c, rd.parse_value(tok[0]));
      }
  } else {
    const index_t nnz = rd.parse_index(size[2], "entry count");
    if (nnz < 0) rd.fail("entry count " + size[2] + " must be >= 0");
    for (index_t e = 0; e < nnz; ++e) {
      if (!rd.next(line)) rd.fail("file ends after " + std::to_string(e) + " of " + size[2] + " entries");
      const auto tok = tokens(line);
      if (tok.size() != (field == "pattern" ? 2u : 3u)) rd.fail("malformed entry '" + line + "'");
      const index_t r = rd.parse_index(tok[0], "row index") - 1, c = rd.parse_index(tok[1], "column index") - 1;
      if (r < 0 || r >= info.m || c < 0 || c >= info.n)
        rd.fail("entry (" + tok[0] + ", " + tok[1] + ") is outside the " + size[0] + " x " + size[1] + " matrix");
      store(r, c, field == "pattern" ? 1.0 : rd.parse_value(tok[2]));
    }
  }
  if (rd.next(line)) rd.fail("unexpected data after the last entry: '" + line + "'");
  return info;
}

DenseMatrix read_matrix_market(const std::string& path) {
  DenseMatrix A;
  scan_matrix_market(
      path,
      [&](const MatrixMarketInfo& info) {
        if (static_cast<double>(info.m) * static_cast<double>(info.n) > 4e9)
          throw InputError("--input " + path + ": matrix " + std::to_string(info.m) + " x " + std::to_string(info.n) +
                           " is too large for a dense input on one node");
        A.m = info.m;
        A.n = info.n;
        A.a.assign(static_cast<std::size_t>(A.m * A.n), 0.0);
      },
      [&](index_t r, index_t c, double v) { A(r, c) = v; });
  return A;
}

MatrixMarketInfo read_matrix_market_header(const std::string& path) { return scan_matrix_market(path, {}, {}); }

}  // namespace tessera
