#pragma once
// Error types shared by every layer. A bad input is reported by throwing one of
// these with a message that names the input and the offending value; the
// command line prints the message and exits non-zero.
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "platform/device.hpp"
#include "platform/not_compiled.hpp"

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

// Another node of a distributed run failed (it reports its own error); this
// node stops with the same exit status instead of waiting for it.
class RemoteFailure : public std::runtime_error {
 public:
  RemoteFailure(int node, int exit_status)
      : std::runtime_error("node " + std::to_string(node) + " failed (its message above says why); this node stops too"),
        node_(node), status_(exit_status) {}
  int node() const { return node_; }
  int exit_status() const { return status_; }

 private:
  int node_, status_;
};

// The command line's exit status for an error, the one mapping every path
// uses (main(), and a rank of a distributed run that ends the whole job):
// 2 invalid input or a backend that was not built, 3 not positive definite,
// 4 out of memory, 5 anything else (an internal error). 0 is success and 1 a
// failed --check, which are results, not errors.
inline int exit_status_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError&) {
    return 2;
  } catch (const platform::NotCompiled&) {
    return 2;
  } catch (const NotPositiveDefinite&) {
    return 3;
  } catch (const std::bad_alloc&) {
    return 4;
  } catch (const platform::DeviceOutOfMemory&) {
    return 4;
  } catch (const RemoteFailure& r) {
    return r.exit_status();
  } catch (...) {
    return 5;
  }
}

}  // namespace tessera
