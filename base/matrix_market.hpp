#pragma once
// Dense input from Matrix Market files (array or coordinate format; real,
// integer or pattern fields; general, symmetric or skew-symmetric). Entries a
// coordinate file omits are zero. Errors name the file, the line and the value.
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

DenseMatrix read_matrix_market(const std::string& path);

}  // namespace tessera
