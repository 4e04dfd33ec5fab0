#include "algorithms/registry.hpp"

#include <array>

#include "base/error.hpp"

namespace tessera {
namespace {

// The one list of factorizations: a new one is added here (and declared in registry.hpp).
std::array<const Factorization*, 2> registered() { return {&cholesky_factorization(), &qr_factorization()}; }

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
