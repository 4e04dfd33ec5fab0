#pragma once
// Numerical facts the kernels, the checks and the peers share: the unit
// roundoff, the scaled residual ratio every factorization check is written
// in (algorithms/check.hpp, lu_check.hpp, dist_check.hpp; the ScaLAPACK
// peer), and the test of a Cholesky factor's diagonal. Kept to C++17: CUDA
// sources include it.
#include <cmath>
#include <limits>

namespace tessera {

// The unit roundoff u of T, 2^-53 for double and 2^-24 for float: LAPACK's
// DLAMCH('E') / SLAMCH('E') (the relative machine precision of rounding
// arithmetic), the eps LAPACK's test programs divide their ratios by and
// under which their threshold 30 is set. numeric_limits::epsilon() is 2u.
template <class T>
constexpr double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2;
}

// resid / (scale * anorm * eps), divided in steps as LAPACK's xPOT01,
// xQRT01 and xGET01 do (((resid / scale) / anorm) / eps; here resid / anorm
// first, a relative error of order scale * eps): the product scale * anorm
// overflows for a finite ||A||_1 above DBL_MAX / scale (a ratio of 0 then
// passed any factor) and scale * anorm * eps underflows for a subnormal one
// (0 / 0 then failed an exact factor). A zero matrix (anorm 0) follows
// LAPACK's convention: 0 for a zero residual, else the residual against
// scale * eps alone. A NaN or infinite norm (factors that overflowed, or a
// matrix whose norm exceeds the range of double) gives NaN, which fails the
// check: a ratio that cannot be formed certifies nothing.
inline double scaled_ratio(double resid, double anorm, double scale, double eps) {
  if (!std::isfinite(resid) || !std::isfinite(anorm)) return std::numeric_limits<double>::quiet_NaN();
  if (anorm <= 0) return resid <= 0 ? 0.0 : resid / scale / eps;
  return resid / anorm / scale / eps;
}

// The 1-based column of the first diagonal entry of a Cholesky factor
// (n×n, leading dimension lda) that is not a finite positive number, 0 when
// all are. A POTRF that returned info = 0 can still have left one: OpenBLAS's
// tests only ajj <= 0, which a NaN passes (reference LAPACK's xPOTRF2 also
// tests DISNAN), so a matrix that is not positive definite and whose
// elimination overflowed, e.g. [1e-300 1e200; 1e200 1], gave NaN factors and
// success. An infinite one is the same breakdown: a positive definite
// matrix's L(j,j)^2 is at most A(j,j), finite.
template <class T>
long long first_bad_cholesky_diagonal(long long n, const T* a, long long lda) {
  for (long long j = 0; j < n; ++j) {
    const T d = a[j + j * lda];
    if (!(d > T(0)) || !std::isfinite(d)) return j + 1;
  }
  return 0;
}

}  // namespace tessera
