// The CUDA kernels under other CudaKernelOptions than the runtime's
// (kernels/cuda/cuda_api.hpp): the libraries' whole-tile POTRF and TRSM and
// one block of ib reflectors at a time ({0, 0}, the kernels as they were
// before recursion and merging), other leaves and groups, and a group that
// is not a power of two, and TRSM through inverted diagonal blocks. Each must give the CPU kernels' results, on
// operands with padded leading dimensions (a confusion of ldt with ib or ldv
// with m would show). bench_cuda_kernels times the same options; this checks
// them. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/cuda_api.hpp"
#include "tests/cuda_test_util.hpp"

namespace tessera {
namespace {

using kernels::index_t;
using namespace cuda_test;

template <class T>
class CudaKernelOptionsTest : public cuda_test::CudaTilesTest<T> {};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaKernelOptionsTest, Precisions);

kernels::CudaKernelOptions options(int leaf, int group, int inverse = 0) {
  kernels::CudaKernelOptions o;
  o.recursion_leaf = leaf;
  o.reflector_group = group;
  o.trsm_inverse_leaf = inverse;
  return o;
}
// The last two: TRSM through inverted diagonal blocks, 450 = 3 x 128 + 66 and 4 x 96 + 66 (a short last block).
const kernels::CudaKernelOptions kOptions[] = {options(0, 0),     options(128, 128),    options(64, 96),
                                               options(256, 256), options(0, 256, 128), options(64, 256, 96)};

// Column-major rows×cols with leading dimension ld >= rows, the padding set
// to `pad` (which no kernel may read into a result or write).
template <class T>
std::vector<T> padded(const std::vector<T>& a, index_t rows, index_t cols, index_t ld, T pad) {
  std::vector<T> p(static_cast<std::size_t>(ld * cols), pad);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) p[i + j * ld] = a[i + j * rows];
  return p;
}

TYPED_TEST(CudaKernelOptionsTest, CholeskyKernelsMatchCpu) {
  using T = TypeParam;
  const index_t m = 560, n = 450, lda = m + 5, ldl = n + 3;
  for (const auto& o : kOptions) {
    SCOPED_TRACE(testing::Message() << "leaf " << o.recursion_leaf << " group " << o.reflector_group << " inverse "
                                    << o.trsm_inverse_leaf);
    this->reopen(o);
    std::vector<T> want = padded(spd_panel<T>(m, n, 31, T(30)), m, n, lda, T(-7));
    T* d = this->upload(want);
    EXPECT_EQ(this->cpu_.potf2p(m, n, want.data(), lda), 0);
    EXPECT_EQ(this->gpu().potf2p(m, n, d, lda), 0);
    expect_close(want, this->download(d, want.size()), lda, n, n, "potf2p", lower);
    const auto [l, x] = trsm_operands<T>(m, n, 33);
    const std::vector<T> lp = padded(l, n, n, ldl, T(1e3));
    std::vector<T> want_x = padded(x, m, n, lda, T(-7));
    const T* dl = this->upload(lp);
    T* dx = this->upload(want_x);
    this->cpu_.trsm(m, n, lp.data(), ldl, want_x.data(), lda);
    this->gpu().trsm(m, n, dl, ldl, dx, lda);
    expect_close(want_x, this->download(dx, want_x.size()), lda, n, n, "trsm");
  }
}

TYPED_TEST(CudaKernelOptionsTest, QrKernelsMatchCpu) {
  using T = TypeParam;
  const index_t m = 520, n = 410, ib = 32, lda = m + 3, ldt = ib + 2, ldr = n + 4, ncols = 70;
  for (const auto& o : kOptions) {
    SCOPED_TRACE(testing::Message() << "leaf " << o.recursion_leaf << " group " << o.reflector_group << " inverse "
                                    << o.trsm_inverse_leaf);
    this->reopen(o);
    // GEQRT, then LARFB with its factors (Q^T and Q).
    std::vector<T> v = padded(random_matrix<T>(m, n, 41), m, n, lda, T(5));
    std::vector<T> t(static_cast<std::size_t>(ldt * n), T(7));
    T* dv = this->upload(v);
    T* dt = this->upload(t);
    this->cpu_.geqrt(m, n, ib, v.data(), lda, t.data(), ldt);
    this->gpu().geqrt(m, n, ib, dv, lda, dt, ldt);
    expect_close(v, this->download(dv, v.size()), lda, n, m, "geqrt V and R");
    expect_close(t, this->download(dt, t.size()), ldt, n, m, "geqrt T", t_blocks, ib);
    for (const bool trans : {true, false}) {
      std::vector<T> c = padded(random_matrix<T>(m, ncols, 42), m, ncols, lda, T(3));
      const T* cv = this->upload(v);
      const T* ct = this->upload(t);
      T* dc = this->upload(c);
      this->cpu_.larfb(trans, m, ncols, n, ib, v.data(), lda, t.data(), ldt, c.data(), lda);
      this->gpu().larfb(trans, m, ncols, n, ib, cv, lda, ct, ldt, dc, lda);
      expect_close(c, this->download(dc, c.size()), lda, ncols, m, trans ? "larfb Q^T" : "larfb Q");
    }
    // TSQRT on [R; A], then SSRFB with its factors.
    std::vector<T> r = padded(random_matrix<T>(n, n, 43), n, n, ldr, T(9));
    for (index_t j = 0; j < n; ++j) r[j + j * ldr] += T(n);
    std::vector<T> a = padded(random_matrix<T>(m, n, 44), m, n, lda, T(5));
    std::vector<T> t2(static_cast<std::size_t>(ldt * n), T(7));
    T* dr = this->upload(r);
    T* da = this->upload(a);
    T* dt2 = this->upload(t2);
    this->cpu_.tsqrt(m, n, ib, r.data(), ldr, a.data(), lda, t2.data(), ldt);
    this->gpu().tsqrt(m, n, ib, dr, ldr, da, lda, dt2, ldt);
    expect_close(r, this->download(dr, r.size()), ldr, n, m + n, "tsqrt R");
    expect_close(a, this->download(da, a.size()), lda, n, m + n, "tsqrt V");
    expect_close(t2, this->download(dt2, t2.size()), ldt, n, m + n, "tsqrt T", t_blocks, ib);
    for (const bool trans : {true, false}) {
      std::vector<T> a1 = padded(random_matrix<T>(n, ncols, 45), n, ncols, ldr, T(2));
      std::vector<T> a2 = padded(random_matrix<T>(m, ncols, 46), m, ncols, lda, T(4));
      const T* sv = this->upload(a);
      const T* st = this->upload(t2);
      T* d1 = this->upload(a1);
      T* d2 = this->upload(a2);
      this->cpu_.ssrfb(trans, m, ncols, n, ib, a.data(), lda, t2.data(), ldt, a1.data(), ldr, a2.data(), lda);
      this->gpu().ssrfb(trans, m, ncols, n, ib, sv, lda, st, ldt, d1, ldr, d2, lda);
      expect_close(a1, this->download(d1, a1.size()), ldr, ncols, m + n, "ssrfb A1");
      expect_close(a2, this->download(d2, a2.size()), lda, ncols, m + n, "ssrfb A2");
    }
  }
}

}  // namespace
}  // namespace tessera
