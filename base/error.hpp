#pragma once
// The one error hierarchy of every layer. Each error carries the command
// line's exit status for it, so there is one mapping (exit_status_of) from a
// failure to a status, whoever meets it: main(), a rank of a distributed run
// that ends the whole job, a simulated node.
//
//   0  success                      (a result, not an error)
//   1  --check failed               (a result, not an error)
//   2  InputError, NotCompiled      invalid input, or a backend left out of the build
//   3  PivotBreakdown               the factorization met a pivot it cannot use
//      (NotPositiveDefinite, SingularMatrix)
//   4  OutOfMemory (and std::bad_alloc, DeviceOutOfMemory)
//   5  anything else                an internal error; also SimulatedFailure
//
// A bad input is reported by throwing one of these with a message that
// names the input and the offending value.
//
// Kept to C++17: the CUDA sources include it.
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int exit_status) : std::runtime_error(what), status_(exit_status) {}
  int exit_status() const { return status_; }

 private:
  int status_;
};

// A user-supplied value (option, file, machine description) is invalid.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what, 2) {}
};

// Thrown by a backend that was left out at configure time: the binary still
// links (the backend is a stub) and fails with this message when chosen.
class NotCompiled : public Error {
 public:
  explicit NotCompiled(const std::string& backend)
      : Error("tessera was built without " + backend + " (reconfigure with -DTESSERA_WITH_" + upper(backend) +
                  "=ON once it is installed)",
              2) {}

 private:
  static std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return s;
  }
};

// The factorization met a pivot it cannot use (exit 3): the base of the
// factorization-specific errors below, each naming the global column.
class PivotBreakdown : public Error {
 public:
  PivotBreakdown(const std::string& what, std::int64_t global_column) : Error(what, 3), column_(global_column) {}
  // 1-based global column of the failed pivot.
  std::int64_t column() const { return column_; }

 private:
  std::int64_t column_;
};

// The Cholesky factorization met a non-positive pivot.
class NotPositiveDefinite : public PivotBreakdown {
 public:
  explicit NotPositiveDefinite(std::int64_t global_column)
      : PivotBreakdown("input matrix is not positive definite: the leading minor of order " +
                           std::to_string(global_column) + " is not positive (factorization failed at global column " +
                           std::to_string(global_column) + ", 1-based)",
                       global_column) {}
};

// An LU factorization met an exactly zero pivot U(j,j): the matrix is
// singular (with pivoting), or its leading minor of order j is (without).
class SingularMatrix : public PivotBreakdown {
 public:
  SingularMatrix(std::int64_t global_column, const std::string& pivoting)
      : PivotBreakdown("input matrix is singular: the pivot U(" + std::to_string(global_column) + "," +
                           std::to_string(global_column) + ") is exactly zero (LU with --pivot " + pivoting +
                           " failed at global column " + std::to_string(global_column) + ", 1-based)",
                       global_column) {}
};

// Memory the run needs is not there: host memory found short before
// allocating (named with what is needed and what the machine has), or a
// device's.
class OutOfMemory : public Error {
 public:
  explicit OutOfMemory(const std::string& what) : Error(what, 4) {}
};

// A device has no room for a buffer: names the device, what was asked, what
// is in use and the capacity.
class DeviceOutOfMemory : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

// A failure injected into a simulated run (--fail) ended it: the message
// names the host or link and the simulated time. Shares status 5 with
// internal errors, but is none: the command line reports it as an error.
class SimulatedFailure : public Error {
 public:
  explicit SimulatedFailure(const std::string& what) : Error(what, 5) {}
};

// Another node of a distributed run failed (it reports its own error); this
// node stops with the same exit status instead of waiting for it.
class RemoteFailure : public Error {
 public:
  RemoteFailure(int node, int exit_status)
      : Error("node " + std::to_string(node) + " failed (its message above says why); this node stops too",
              exit_status),
        node_(node) {}
  int node() const { return node_; }

 private:
  int node_;
};

// The command line's exit status for an error (see the table above).
inline int exit_status_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return x.exit_status();
  } catch (const std::bad_alloc&) {
    return 4;
  } catch (...) {
    return 5;
  }
}

}  // namespace tessera
