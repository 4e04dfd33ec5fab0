#pragma once
// The dense routine a factorization's vendor-library peer calls (LAPACK's
// name; cuSOLVER's has the same stem): the factorization registry names it,
// the CUDA adapter maps it to its call. Kept to C++17: CUDA sources include it.
#include <cstdint>

namespace tessera {

enum class PeerRoutine : std::uint8_t { Potrf, Geqrf, Getrf };

}  // namespace tessera
