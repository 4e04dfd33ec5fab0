#pragma once
// TileKernels on one CUDA device, all work queued on one stream (the device's
// compute stream): cuBLAS for GEMM, SYRK, TRSM, TRMM and GEAM, cuSOLVER for
// POTRF, the Householder panels (GEQRF) and LU's panels (GETRF), and small
// kernels of our own for what the libraries do not offer: the QR's T
// factors and two reshapings of a panel (cuda_tile_kernels.cu), the Cholesky
// QR panels' shift, check, signed LU and rescalings (cuda_cholqr.cu), and the
// LU's row permutation and row exchange (cuda_lu_kernels.cu, with the other
// LU members). The tournament's candidate selection (lu_select) keeps
// TileKernels' default, which throws: the LU task graph runs it on CPU cores
// only.
//
// Results equal CpuTileKernels' to rounding and use the same layout (V below
// the diagonal, R on and above it, LAPACK's compact-WY T: ib×n, block i's
// upper triangle in columns i*ib..), so tiles and T factors can move between
// a GPU and a CPU mid-factorization. How each QR kernel is built is told
// next to it in the .cu file.
//
// Every call only queues work and returns, except potf2p, lu_getrf and
// lu_getrf_nopiv, which wait for cuSOLVER's info (the caller needs the
// failing column; lu_getrf's caller needs the pivots), lu_permute_from_host
// and from_host, which wait for their host data to be copied, and a call that has
// to grow the workspace, which first waits until the stream is done with the
// old one (a few times in an object's life: the workspace only grows). With
// Cholesky QR panels, GEQRT, TSQRT and TTQRT wait once per call, for the
// panels' check.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_api.hpp"
#include "kernels/cuda/cuda_raii.hpp"
#include "kernels/tile_kernels_api.hpp"

namespace tessera::kernels {

template <class T>
class CudaTileKernels final : public TileKernels<T> {
 public:
  // Kernels on device `ordinal` that queue their work on `stream` (not owned;
  // it must outlive this object). options (cuda_api.hpp): the order POTF2'
  // and TRSM recurse to (recursive_blocking.hpp), and how many reflectors
  // the QR kernels apply at once (compact_wy.hpp).
  CudaTileKernels(int ordinal, cudaStream_t stream, CudaKernelOptions options);
  ~CudaTileKernels() override;
  CudaTileKernels(const CudaTileKernels&) = delete;
  CudaTileKernels& operator=(const CudaTileKernels&) = delete;

  int potf2p(index_t m, index_t n, T* a, index_t lda) override;
  void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override;
  void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
            index_t ldc) override;
  void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) override;
  void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt) override;
  void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* c, index_t ldc) override;
  void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override;
  void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override;
  void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override;
  void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override;
  void copy(index_t rows, index_t cols, const T* a, index_t lda, T* b, index_t ldb) override;
  void lu_trsm_l(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) override;
  void lu_trsm_u(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override;
  void lu_gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
               index_t ldc) override;
  void lu_permute(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override;
  void lu_exchange(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch, index_t lo,
                   index_t hi) override;
  index_t lu_getrf(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) override;
  index_t lu_getrf_nopiv(index_t m, index_t n, T* a, index_t lda) override;
  void lu_permute_from_host(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override;
  void from_host(void* dst, const void* src, std::size_t bytes) override;

  cudaStream_t stream() const { return stream_; }
  // Tiles whose Cholesky QR panels failed their check and were factored
  // again with GEQRF, in this object's life.
  std::uint64_t cholqr_fallbacks() const { return cholqr_fallbacks_; }
  // With CudaKernelOptions::profile_panels: each Cholesky QR panel operation's
  // calls and seconds (on the stream, between the events before it and
  // before the next), in this object's life; empty without.
  struct PhaseTime {
    std::uint64_t calls = 0;
    double seconds = 0;
  };
  const std::map<std::string, PhaseTime>& panel_phases() const { return phases_; }

 private:
  // Pieces of the workspace for one call (null where not asked for).
  struct Scratch {
    int* info = nullptr;  // cuSOLVER's devInfo (one per POTRF leaf)
    T* tau = nullptr;     // a panel's Householder scalars
    T* g = nullptr;       // V^T V of a panel, for its T; then a group's merged T
    T* v = nullptr;       // a panel's V in explicit form, a TSQRT panel, or lu_permute's rows
    T* w = nullptr;       // the ib×n product of a block reflector update
    T* lapack = nullptr;  // cuSOLVER's workspace
  };
  Scratch scratch(index_t n_tau, index_t n_g, index_t n_v, index_t n_w, index_t n_lapack, index_t n_info = 1);
  // Queues the test of a Cholesky factor's diagonal (n×n, lda): *slot (device
  // memory) becomes the 1-based column of its first entry that is not a
  // finite positive number, 0 when all are (cuda_pivot_check.cu).
  void first_bad_diagonal(index_t n, const T* a, index_t lda, int* slot);
  // cuBLAS's A = A L^{-T}.
  void library_trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda);
  // W (leaf×n, leading dimension leaf) = the inverses of L's diagonal blocks
  // of order leaf (the last one n mod leaf), in one batched cuBLAS TRSM on
  // identities (and one plain TRSM for a short last block); `ptrs` holds
  // 2·(n / leaf) device pointers (recursive::trsm_rlt_inverted's invert_leaves).
  void invert_leaves(index_t n, const T* l, index_t ldl, index_t leaf, T* w, T** ptrs);
  // cuSOLVER's xGETRF, with pivots (0-based into ipiv) or without (ipiv
  // null); waits for its status, which it returns (cuda_lu_kernels.cu).
  index_t getrf_waited(index_t m, index_t n, T* a, index_t lda, index_t* ipiv);

  // W (rows×cols, leading dimension rows) = the unit lower trapezoidal V
  // that v (ldv) holds below its diagonal, in explicit form (unit_lower_kernel).
  void explicit_v(index_t rows, index_t cols, const T* v, index_t ldv, T* w);
  // T (b×b) of the panel's reflectors from V (rows×b, explicit) and tau.
  void form_t(index_t rows, index_t b, const T* v, index_t ldv, const Scratch& s, T* t, index_t ldt);
  // C (m×n) = (I - V T V^T)^T C (trans) or (I - V T V^T) C; V m×b explicit.
  void apply_block(bool trans, index_t m, index_t n, index_t b, const T* v, index_t ldv, const T* t, index_t ldt, T* c,
                   index_t ldc, T* w);
  // The T (b×b, upper) of b reflectors V (rows×b, explicit; b a multiple of
  // ib or the last group's remainder) from their blocks' T (t, ldt, LAPACK's
  // ib×b layout), merged in `work` (b·b elements); t itself when b <= ib.
  const T* merged_t(index_t rows, index_t b, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt, T* work,
                    index_t& ld_out);
  // The same for a triangle-on-top reflector block (TPMQRT, l = 0): the
  // vectors are [I; V] on [A1 (b×n); A2 (m×n)].
  void apply_ts_block(bool trans, index_t m, index_t n, index_t b, const T* v, index_t ldv, const T* t, index_t ldt,
                      T* a1, index_t lda1, T* a2, index_t lda2, T* w);
  // GEQRT and TSQRT with each panel by cuSOLVER's GEQRF or (cholqr) by
  // cholqr_factor; the public kernels choose, and fall back.
  void geqrt_panels(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt, bool cholqr);
  void tsqrt_panels(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt,
                    bool cholqr);

  // Cholesky QR panels (cuda_cholqr.cu, kernels/cuda/cholqr_panel.hpp).
  // A column-major block of a tile, saved before a factorization that may
  // have to start again.
  struct Block {
    T* p;
    index_t ld, rows, cols;
  };
  // Saves the blocks, clears the failure flag and sizes the panels'
  // workspace for panels of up to ib columns.
  void cholqr_begin(index_t ib, Block first, Block second = {nullptr, 0, 0, 0});
  // The panel x (n×b, ldx) factored in place, its T (b×b) in t; a failed
  // check raises the flag on the device. top_upper: x's top b×b is upper
  // triangular (TSQRT's stack).
  void cholqr_factor(index_t n, index_t b, T* x, index_t ldx, T* t, index_t ldt, bool top_upper);
  // Waits for the stream; if the flag was raised, puts the saved blocks back
  // and returns true (the caller factors them again with GEQRF).
  bool cholqr_failed(Block first, Block second = {nullptr, 0, 0, 0});

  int ordinal_;
  cudaStream_t stream_;
  cuda::CublasHandle blas_;
  cuda::CusolverHandle solver_;
  index_t leaf_;
  index_t group_;
  index_t inverse_leaf_;
  bool cholqr_;
  // A TT kernel's triangle with zeros below (elems elements), apart from
  // work_, which the TSQRT and SSRFB it calls use.
  T* triangle(index_t elems);

  cuda::DeviceBuffer work_;
  cuda::DeviceBuffer triangle_;
  cuda::DeviceBuffer cholqr_work_;  // a panel's Gram matrix, R, signs, cuSOLVER's POTRF workspace, status, flag
  cuda::DeviceBuffer backup_;       // the blocks cholqr_begin saved
  index_t cholqr_ib_ = 0;           // the panel width cholqr_work_ is laid out for
  int cholqr_lwork_ = 0;
  std::size_t cholqr_shared_ = 0;  // shared memory a panel's signed LU may take (cuda_cholqr.cu shared_lu_limit)
  bool cholqr_shared_known_ = false;
  std::uint64_t cholqr_fallbacks_ = 0;
  index_t gram_rows_ = 0;     // CudaKernelOptions::cholqr_gram_rows
  index_t cholqr_slots_ = 0;  // the Gram's partial products cholqr_work_ holds room for
  bool profile_ = false;      // CudaKernelOptions::profile_panels
  // The panel operations' timing events on stream_ (reused), each with the
  // name of the operation it starts (null: none, the end of a panel), the
  // first marks_used_ of them recorded since the last wait.
  std::vector<cuda::Event> mark_events_;
  std::vector<const char*> mark_names_;
  std::size_t marks_used_ = 0;
  std::map<std::string, PhaseTime> phases_;
  // Records the next event, starting operation `name` (null: a panel's end).
  void mark(const char* name);
  // After a wait for the stream: the recorded marks' intervals added to phases_.
  void add_marks();
};

extern template class CudaTileKernels<float>;
extern template class CudaTileKernels<double>;

}  // namespace tessera::kernels
