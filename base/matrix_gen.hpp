#pragma once
// Reproducible test matrices. Element (r, c) of a generated m x n matrix is
// a pure function of the kind, the seed, m, n, the precision and the global
// indices, so a matrix is the same whatever its tile layout and whichever
// node of a distributed run generates which of its tiles.
//
// Kinds (`--matrix`), with their 2-norm condition numbers; N = n:
//   General         entries uniform in [-0.5, 0.5) (not controlled; QR's default)
//   Spd             symmetric, same off-diagonal entries, diagonal n + u:
//                   strictly diagonally dominant, eigenvalues in [n/2, 3n/2],
//                   so kappa_2 <= 3 (Cholesky's default)
//   Graded          D S D with S the Spd matrix (extended below row n by
//                   uniform entries when m > n) and D = diag(10^(-6 i/(m-1))):
//                   rows and columns graded over 6 orders of magnitude each,
//                   kappa_2 <= 3e12 for m = n
//   IllConditioned  H_m Sigma H_n, H the Householder reflectors I - 2 w w^T
//                   of a seeded unit vector w (H_n's is w's first n entries,
//                   renormalized: the same reflector when m = n, so the
//                   matrix is symmetric positive definite), Sigma's singular
//                   values geometric from 1 down to 1/kappa (LAPACK dlatms
//                   mode 3): kappa_2 = 1e12 in double, 1e5 in single (a
//                   single-precision copy of a 1e12 matrix would round its
//                   small singular values away)
//   RankDeficient   the same with singular values 1 (the first ceil(n/2))
//                   and 0: rank ceil(n/2)
// Every kind but General is symmetric when m = n; it is then evaluated at
// (max(r, c), min(r, c)), so that it is symmetric bit for bit.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/tile_matrix.hpp"

namespace tessera {

enum class MatrixKind { General, Spd, Graded, IllConditioned, RankDeficient };

// "general", "spd", "graded", "illcond", "rankdef" and back; nullopt for an unknown name.
std::optional<MatrixKind> matrix_kind_from_name(const std::string& name);
const char* matrix_kind_name(MatrixKind kind);

// The documented 2-norm condition number of a kind in a precision ('d' or
// 's'): exact for IllConditioned, a bound for Spd and Graded (m = n), 0
// where it is not controlled (General) or infinite (RankDeficient).
double documented_condition(MatrixKind kind, char precision);

class MatrixGenerator {
 public:
  MatrixGenerator(MatrixKind kind, std::uint64_t seed, index_t m, index_t n, char precision = 'd');
  double operator()(index_t r, index_t c) const;

 private:
  MatrixKind kind_;
  std::uint64_t seed_;
  index_t m_, n_;
  std::vector<double> w_, z_, sigma_;  // IllConditioned, RankDeficient: unit vectors, singular values
  double cross_ = 0;                   // sum_k w_k sigma_k z_k
  std::vector<double> scale_;          // Graded: D's diagonal
};

// Element (r, c) of the square n x n double matrix of this kind.
double generated_value(MatrixKind kind, std::uint64_t seed, index_t n, index_t r, index_t c);

// Fills the tiles `a` holds (a distributed run's node: its own) with the
// kind's matrix of a's size, in T's precision.
template <class T>
void generate(TileMatrix<T>& a, MatrixKind kind, std::uint64_t seed);

}  // namespace tessera
