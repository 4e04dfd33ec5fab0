#pragma once
// Dense input from Matrix Market files (array or coordinate format; real,
// integer or pattern fields; general, symmetric or skew-symmetric). Entries a
// coordinate file omits are zero. Errors name the file, the line and the value.
#include <functional>
#include <string>
#include <vector>

#include "base/tile_layout.hpp"

namespace tessera {

struct DenseMatrix {
  index_t m = 0, n = 0;
  std::vector<double> a;  // column-major, leading dimension m
  double& operator()(index_t r, index_t c) { return a[r + c * m]; }
  double operator()(index_t r, index_t c) const { return a[r + c * m]; }
};

// The whole file as a dense matrix (one node's input).
DenseMatrix read_matrix_market(const std::string& path);

// What the banner and the size line say.
struct MatrixMarketInfo {
  index_t m = 0, n = 0;
  bool symmetric = false;  // the file stores the lower triangle of a symmetric matrix
};
MatrixMarketInfo read_matrix_market_header(const std::string& path);

// Reads the file once, keeping nothing: on_size(info) after the size line,
// then visit(row, column, value) (0-based) for every value the file stores
// and, for a symmetric or skew-symmetric file, its mirror; entries a
// coordinate file omits are zero and not visited. A distributed run's node
// keeps only its own tiles this way. Errors are read_matrix_market's.
MatrixMarketInfo scan_matrix_market(const std::string& path,
                                    const std::function<void(const MatrixMarketInfo&)>& on_size,
                                    const std::function<void(index_t, index_t, double)>& visit);

}  // namespace tessera
