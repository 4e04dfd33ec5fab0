#pragma once
// Tile kernels that run as late as a device may run them (tests only).
//
// An emulated GPU's kernels end before they return, so a runtime that
// finished a task (readied its successors, copied its outputs home, freed
// its buffers) before its kernels ended would still compute the right
// factors on it. A CUDA GPU's kernels only queue work on a stream
// (kernels/cuda/cuda_tile_kernels.hpp), which runs it some time before the
// manager's wait for it returns. DeferredKernels queues each call instead of
// running it, and KernelStream runs the queued calls at the last moment the
// device contract (platform/device.hpp) allows: a task's batch when its mark
// is waited for (wait_kernels), everything at synchronize(). A runtime that
// used a task's outputs earlier reads what was there before the task, and the
// factors differ.
//
// Every virtual of kernels::TileKernels is forwarded here: one added there
// must be added here too (else it reaches the base's "not implemented").
//
// Like the CUDA kernels, the calls whose caller needs a result or whose host
// data it may reuse on return (potf2p, lu_getrf, lu_getrf_nopiv, lu_select,
// lu_permute_from_host, from_host) first run everything queued, then run.
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/tile_kernels_api.hpp"

namespace tessera::test {

// One device's queue of kernel calls, in stream order, cut into batches by
// the marks of platform::Device::end_kernels. One thread (the GPU's manager)
// uses it.
class KernelStream {
 public:
  void queue(std::function<void()> call) { open_.push_back(std::move(call)); }
  // The calls queued since the last close belong to `mark`.
  void close(std::uint64_t mark) {
    closed_.emplace_back(mark, std::move(open_));
    open_.clear();
  }
  // Runs the batches up to and including `mark`, oldest first.
  void run_through(std::uint64_t mark) {
    while (!closed_.empty() && closed_.front().first <= mark) {
      std::vector<std::function<void()>> batch = std::move(closed_.front().second);
      closed_.pop_front();
      for (auto& call : batch) call();
    }
  }
  // Runs every queued call.
  void flush() {
    while (!closed_.empty()) run_through(closed_.front().first);
    std::vector<std::function<void()>> batch = std::move(open_);
    open_.clear();
    for (auto& call : batch) call();
  }
  std::uint64_t calls = 0;  // calls queued over the stream's life

 private:
  std::deque<std::pair<std::uint64_t, std::vector<std::function<void()>>>> closed_;
  std::vector<std::function<void()>> open_;
};

template <class T>
class DeferredKernels final : public kernels::TileKernels<T> {
 public:
  using index_t = kernels::index_t;
  DeferredKernels(kernels::TileKernels<T>& k, KernelStream& s) : k_(k), s_(s) {}

  int potf2p(index_t m, index_t n, T* a, index_t lda) override {
    now();
    return k_.potf2p(m, n, a, lda);
  }
  void trsm(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override {
    later([=, this] { k_.trsm(m, n, l, ldl, a, lda); });
  }
  void gsmm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
            index_t ldc) override {
    later([=, this] { k_.gsmm(m, n, k, a, lda, b, ldb, c, ldc); });
  }
  void gsmm_diag(index_t m, index_t n, index_t k, const T* a, index_t lda, T* c, index_t ldc) override {
    later([=, this] { k_.gsmm_diag(m, n, k, a, lda, c, ldc); });
  }
  void geqrt(index_t m, index_t n, index_t ib, T* a, index_t lda, T* t, index_t ldt) override {
    later([=, this] { k_.geqrt(m, n, ib, a, lda, t, ldt); });
  }
  void larfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* c, index_t ldc) override {
    later([=, this] { k_.larfb(trans, m, n, k, ib, v, ldv, t, ldt, c, ldc); });
  }
  void tsqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override {
    later([=, this] { k_.tsqrt(m, n, ib, r, ldr, a, lda, t, ldt); });
  }
  void ssrfb(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override {
    later([=, this] { k_.ssrfb(trans, m, n, k, ib, v, ldv, t, ldt, a1, lda1, a2, lda2); });
  }
  void copy(index_t rows, index_t cols, const T* a, index_t lda, T* b, index_t ldb) override {
    later([=, this] { k_.copy(rows, cols, a, lda, b, ldb); });
  }
  void ttqrt(index_t m, index_t n, index_t ib, T* r, index_t ldr, T* a, index_t lda, T* t, index_t ldt) override {
    later([=, this] { k_.ttqrt(m, n, ib, r, ldr, a, lda, t, ldt); });
  }
  void ttmqr(bool trans, index_t m, index_t n, index_t k, index_t ib, const T* v, index_t ldv, const T* t, index_t ldt,
             T* a1, index_t lda1, T* a2, index_t lda2) override {
    later([=, this] { k_.ttmqr(trans, m, n, k, ib, v, ldv, t, ldt, a1, lda1, a2, lda2); });
  }
  index_t lu_select(index_t m, index_t n, const T* a, index_t lda, index_t* rows) override {
    now();
    return k_.lu_select(m, n, a, lda, rows);
  }
  index_t lu_getrf(index_t m, index_t n, T* a, index_t lda, index_t* ipiv) override {
    now();
    return k_.lu_getrf(m, n, a, lda, ipiv);
  }
  index_t lu_getrf_nopiv(index_t m, index_t n, T* a, index_t lda) override {
    now();
    return k_.lu_getrf_nopiv(m, n, a, lda);
  }
  void lu_trsm_l(index_t m, index_t n, const T* u, index_t ldu, T* a, index_t lda) override {
    later([=, this] { k_.lu_trsm_l(m, n, u, ldu, a, lda); });
  }
  void lu_trsm_u(index_t m, index_t n, const T* l, index_t ldl, T* a, index_t lda) override {
    later([=, this] { k_.lu_trsm_u(m, n, l, ldl, a, lda); });
  }
  void lu_gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
               index_t ldc) override {
    later([=, this] { k_.lu_gemm(m, n, k, a, lda, b, ldb, c, ldc); });
  }
  void lu_permute(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override {
    later([=, this] { k_.lu_permute(rows, cols, a, lda, perm); });
  }
  void lu_permute_from_host(index_t rows, index_t cols, T* a, index_t lda, const std::int64_t* perm) override {
    now();
    k_.lu_permute_from_host(rows, cols, a, lda, perm);
  }
  void from_host(void* dst, const void* src, std::size_t bytes) override {
    now();
    k_.from_host(dst, src, bytes);
  }
  void lu_exchange(index_t w, index_t cols, T* top, index_t ldt, T* a, index_t lda, const std::int64_t* xch, index_t lo,
                   index_t hi) override {
    later([=, this] { k_.lu_exchange(w, cols, top, ldt, a, lda, xch, lo, hi); });
  }

 private:
  void later(std::function<void()> call) {
    ++s_.calls;
    s_.queue(std::move(call));
  }
  void now() { s_.flush(); }
  kernels::TileKernels<T>& k_;
  KernelStream& s_;
};

}  // namespace tessera::test
