#pragma once
// The registered factorizations, each defined in its own file
// (algorithms/<name>_factorization.cpp); algorithms/registry.cpp lists them.
#include "algorithms/factorization.hpp"

namespace tessera {

const Factorization& cholesky_factorization();
const Factorization& qr_factorization();

}  // namespace tessera
