#pragma once
// The ScaLAPACK peer's view of BLACS, ScaLAPACK/PBLAS and OpenBLAS: Debian ships no C header for them, so their
// prototypes are declared here, and Scalapack<T> names one precision's routines for the peer's templates
// (experiments/scalapack_peer.cpp). No MPI header is needed: BLACS contexts are ints.
#include <cstddef>

// BLACS (C interface) and ScaLAPACK/PBLAS (Fortran interface) prototypes.
// Debian ships no C header for them. Fortran passes every CHARACTER argument's
// length as a hidden trailing size_t (gfortran >= 8); it is declared and passed
// because omitting it is undefined for the Fortran routines (PDPOTRF, PDLANGE,
// ...); the PBLAS routines (PDGEMM, PDSYRK, PDTRMM, PDGEADD), written in C,
// ignore the extra arguments, which is harmless in the x86-64 calling
// convention. Each ScaLAPACK routine comes in double (pd...) and single (ps...)
// precision with the same arguments: SCALAPACK_REAL_ROUTINES declares one set;
// a REAL function (PSLANGE) returns a float.
using FortranLen = std::size_t;
#define SCALAPACK_REAL_ROUTINES(T, p)                                                                                  \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desca, int* info,      \
                 FortranLen uplo_len);                                                                                 \
  void p##geqrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* desca, T* tau, T* work,    \
                 const int* lwork, int* info);                                                                         \
  void p##orgqr_(const int* m, const int* n, const int* k, T* a, const int* ia, const int* ja, const int* desca,       \
                 const T* tau, T* work, const int* lwork, int* info);                                                  \
  void p##getrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* desca, int* ipiv,          \
                 int* info);                                                                                           \
  void p##lapiv_(const char* direc, const char* rowcol, const char* pivroc, const int* m, const int* n, T* a,          \
                 const int* ia, const int* ja, const int* desca, int* ipiv, const int* ip, const int* jp,              \
                 const int* descip, int* iwork, FortranLen direc_len, FortranLen rowcol_len, FortranLen pivroc_len);   \
  T p##lange_(const char* norm, const int* m, const int* n, const T* a, const int* ia, const int* ja,                  \
              const int* desca, T* work, FortranLen norm_len);                                                         \
  T p##lansy_(const char* norm, const char* uplo, const int* n, const T* a, const int* ia, const int* ja,              \
              const int* desca, T* work, FortranLen norm_len, FortranLen uplo_len);                                    \
  T p##lantr_(const char* norm, const char* uplo, const char* diag, const int* m, const int* n, const T* a,            \
              const int* ia, const int* ja, const int* desca, T* work, FortranLen norm_len, FortranLen uplo_len,       \
              FortranLen diag_len);                                                                                    \
  void p##laset_(const char* uplo, const int* m, const int* n, const T* alpha, const T* beta, T* a, const int* ia,     \
                 const int* ja, const int* desca, FortranLen uplo_len);                                                \
  void p##lacpy_(const char* uplo, const int* m, const int* n, const T* a, const int* ia, const int* ja,               \
                 const int* desca, T* b, const int* ib, const int* jb, const int* descb, FortranLen uplo_len);         \
  void p##syrk_(const char* uplo, const char* trans, const int* n, const int* k, const T* alpha, const T* a,           \
                const int* ia, const int* ja, const int* desca, const T* beta, T* c, const int* ic, const int* jc,     \
                const int* descc, FortranLen uplo_len, FortranLen trans_len);                                          \
  void p##gemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const T* alpha,      \
                const T* a, const int* ia, const int* ja, const int* desca, const T* b, const int* ib, const int* jb,  \
                const int* descb, const T* beta, T* c, const int* ic, const int* jc, const int* descc,                 \
                FortranLen transa_len, FortranLen transb_len);                                                         \
  void p##trmm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,  \
                const T* alpha, const T* a, const int* ia, const int* ja, const int* desca, T* b, const int* ib,       \
                const int* jb, const int* descb, FortranLen side_len, FortranLen uplo_len, FortranLen transa_len,      \
                FortranLen diag_len);                                                                                  \
  void p##geadd_(const char* trans, const int* m, const int* n, const T* alpha, const T* a, const int* ia,             \
                 const int* ja, const int* desca, const T* beta, T* c, const int* ic, const int* jc, const int* descc, \
                 FortranLen trans_len);

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int not_done);

int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
void descset_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
              const int* ictxt, const int* lld);

SCALAPACK_REAL_ROUTINES(double, pd)
SCALAPACK_REAL_ROUTINES(float, ps)
#undef SCALAPACK_REAL_ROUTINES

void openblas_set_num_threads(int num_threads);
char* openblas_get_corename(void);
}

// The ScaLAPACK routines of one precision, for the templates below.
template <typename T>
struct Scalapack;
#define SCALAPACK_REAL_TABLE(p)            \
  static constexpr auto potrf = p##potrf_; \
  static constexpr auto geqrf = p##geqrf_; \
  static constexpr auto orgqr = p##orgqr_; \
  static constexpr auto getrf = p##getrf_; \
  static constexpr auto lapiv = p##lapiv_; \
  static constexpr auto lange = p##lange_; \
  static constexpr auto lansy = p##lansy_; \
  static constexpr auto lantr = p##lantr_; \
  static constexpr auto laset = p##laset_; \
  static constexpr auto lacpy = p##lacpy_; \
  static constexpr auto syrk = p##syrk_;   \
  static constexpr auto gemm = p##gemm_;   \
  static constexpr auto trmm = p##trmm_;   \
  static constexpr auto geadd = p##geadd_;
template <>
struct Scalapack<double> {
  SCALAPACK_REAL_TABLE(pd)
};
template <>
struct Scalapack<float> {
  SCALAPACK_REAL_TABLE(ps)
};
#undef SCALAPACK_REAL_TABLE
