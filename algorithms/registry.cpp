// The factorization registry: the one list of factorizations. A new one is
// defined in its own algorithms/<name>_factorization.cpp and added here, in
// the declarations and the list.
#include <array>

#include "algorithms/factorization.hpp"
#include "base/error.hpp"

namespace tessera {

const Factorization& cholesky_factorization();  // algorithms/cholesky_factorization.cpp
const Factorization& qr_factorization();        // algorithms/qr_factorization.cpp
const Factorization& lu_factorization();        // algorithms/lu_factorization.cpp

namespace {

std::array<const Factorization*, 3> registered() {
  return {&cholesky_factorization(), &qr_factorization(), &lu_factorization()};
}

}  // namespace

const Factorization& factorization(std::string_view name) {
  for (const Factorization* f : registered())
    if (f->name() == name) return *f;
  throw InputError("--algo '" + std::string(name) + "' is not one of: " + factorization_list());
}

std::vector<std::string_view> factorization_names() {
  std::vector<std::string_view> names;
  for (const Factorization* f : registered()) names.push_back(f->name());
  return names;
}

std::string factorization_list() {
  std::string s;
  for (const std::string_view n : factorization_names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace tessera
