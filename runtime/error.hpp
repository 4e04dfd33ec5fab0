#pragma once
// Error types shared by every layer. A bad input is reported by throwing one of
// these with a message that names the input and the offending value; the
// command line prints the message and exits non-zero.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera {

// A user-supplied value (option, file, machine description) is invalid.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The Cholesky factorization met a non-positive pivot.
class NotPositiveDefinite : public std::runtime_error {
 public:
  explicit NotPositiveDefinite(std::int64_t global_column)
      : std::runtime_error("input matrix is not positive definite: the leading minor of order " +
                           std::to_string(global_column) + " is not positive (factorization failed at global column " +
                           std::to_string(global_column) + ", 1-based)"),
        column_(global_column) {}
  std::int64_t column() const { return column_; }

 private:
  std::int64_t column_;
};

}  // namespace tessera
