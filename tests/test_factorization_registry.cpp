// The factorization registry (algorithms/registry.cpp): the one list the
// command line, the peers and the tests take factorizations from. What each
// factorization tells its peers and the generator must be its own: README
// "Command line" gives Cholesky the spd matrix by default and QR and LU the
// general one, and the cuSOLVER peer (`--impl cusolver`) calls potrf, geqrf
// and getrf respectively; an unknown --algo names itself and the list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "algorithms/factorization.hpp"
#include "base/error.hpp"
#include "base/matrix_gen.hpp"
#include "base/peer_routine.hpp"

namespace tessera {
namespace {

TEST(FactorizationRegistry, EachFactorizationsPeersAndDefaultMatrix) {
  EXPECT_EQ(factorization_names(), (std::vector<std::string_view>{"cholesky", "qr", "lu"}));
  EXPECT_EQ(factorization_list(), "cholesky, qr, lu");
  struct Expected {
    const char* name;
    PeerRoutine cusolver;
    MatrixKind matrix;
  };
  for (const Expected& e : {Expected{"cholesky", PeerRoutine::Potrf, MatrixKind::Spd},
                            Expected{"qr", PeerRoutine::Geqrf, MatrixKind::General},
                            Expected{"lu", PeerRoutine::Getrf, MatrixKind::General}}) {
    SCOPED_TRACE(e.name);
    const Factorization& f = factorization(e.name);
    EXPECT_EQ(f.name(), e.name);
    EXPECT_EQ(f.cusolver_routine(), e.cusolver);
    EXPECT_EQ(f.default_matrix(), e.matrix);
  }
}

TEST(FactorizationRegistry, AnUnknownNameIsRefusedNamingTheList) {
  try {
    (void)factorization("ldlt");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--algo 'ldlt' is not one of: cholesky, qr, lu"));
  }
}

}  // namespace
}  // namespace tessera
