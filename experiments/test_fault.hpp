#pragma once
// --test-fault KIND, a test-only option: makes a healthy run fail on purpose,
// so that the tests can pin the exit statuses no correct run reaches
// (README "Command line", exit statuses). Both faults act on every node
// between the factorization and the check:
//   corrupt-factor  doubles element (0, 0) of the factor and adds 1 (on the
//                   node that holds tile (0, 0)): --check then fails, exit 1;
//   internal-error  throws an internal error, exit 5.
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "base/tile_matrix.hpp"
#include "experiments/driver.hpp"

namespace tessera {

// Rejects an unknown KIND, and a corrupted factor that no --check would see.
inline void validate_test_fault(const RunConfig& c) {
  if (c.test_fault.empty()) return;
  if (c.phantom) throw InputError("--test-fault acts on the factor, which a simulated run has only with --sim-data");
  if (c.test_fault == "internal-error") return;
  if (c.test_fault != "corrupt-factor")
    throw InputError("--test-fault '" + c.test_fault + "' is not one of: corrupt-factor, internal-error");
  if (!c.check) throw InputError("--test-fault corrupt-factor perturbs the factor for --check to find: add --check");
}

// `a` holds this node's tiles of the factor.
template <class T>
void apply_test_fault(const RunConfig& c, TileMatrix<T>& a) {
  if (c.test_fault == "internal-error")
    throw std::logic_error("--test-fault internal-error: an internal error raised on purpose after the factorization");
  if (c.test_fault == "corrupt-factor")
    if (T* t = a.tile(0, 0)) t[0] = T(2) * t[0] + T(1);
}

}  // namespace tessera
