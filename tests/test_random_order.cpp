// The parallel runtime must reproduce the serial algorithm bit for bit: every
// tile is updated by the same kernels, on the same inputs, in the same order
// per tile, whatever order the ready tasks are run in. Random ready-queue
// orders, thread counts and a tiny window (a generator that blocks) must all
// give exactly the bytes the serial run gives.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "base/matrix_gen.hpp"
#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "kernels/cpu/tile_kernels.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {
namespace {

struct Case {
  std::string algo;  // cholesky | qr
  char precision;    // d | s
  index_t m, n, B;
  int s;
  index_t b;
};

std::string case_name(const Case& c) {
  return c.algo + "_" + c.precision + "_m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_B" +
         std::to_string(c.B) + "_s" + std::to_string(c.s) + "_b" + std::to_string(c.b);
}

// Readable parameters in test names and failure messages.
void PrintTo(const Case& x, std::ostream* os) { *os << case_name(x); }

struct ParallelRun {
  int threads;
  std::size_t capacity;
  std::uint64_t seed;
};

#ifdef TESSERA_TSAN
// ThreadSanitizer slows the runtime ~10x: fewer, smaller runs still cover
// every interleaving-sensitive path (blocking generator, several workers).
const ParallelRun kRuns[] = {{3, 16384, 11}, {2, 4, 12}, {3, 1, 13}};
const std::pair<index_t, index_t> kShapes[] = {{37, 32}, {150, 48}, {300, 64}};  // (n, B)
#else
const ParallelRun kRuns[] = {{1, 16384, 1}, {2, 16384, 2}, {3, 16384, 3}, {3, 16384, 4}, {3, 4, 5}, {2, 1, 6}};
const std::pair<index_t, index_t> kShapes[] = {{37, 32}, {150, 48}, {300, 64}};  // (n, B)
#endif

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string algo : {"cholesky", "qr"})
    for (char prec : {'d', 's'})
      for (int s : {1, 2, 3})
        for (const auto& shape : kShapes) {
          const auto [n, B] = shape;
          // QR: make the largest case tall, with m not a multiple of B.
          const index_t m = algo == "qr" && n >= 150 ? n + n / 3 + 5 : n;
          out.push_back({algo, prec, m, n, B, s, s == 1 ? 0 : B / 4});
        }
  return out;
}

// A snapshot of every byte a factorization produces.
struct Bytes {
  std::vector<std::vector<unsigned char>> tiles, t, v;
};

template <class T>
std::vector<unsigned char> bytes_of(const T* p, std::size_t count) {
  std::vector<unsigned char> out(count * sizeof(T));
  std::memcpy(out.data(), p, out.size());
  return out;
}

template <class T>
void snapshot_tiles(const TileMatrix<T>& a, Bytes& out) {
  const TileLayout& L = a.layout();
  for (int j = 0; j < a.q(); ++j)
    for (int i = 0; i < a.p(); ++i)
      out.tiles.push_back(bytes_of(a.tile(i, j), static_cast<std::size_t>(L.row_height(i) * L.col_width(j))));
}

// Runs `algo` on a fresh copy of the generated matrix, serially when
// run == nullptr, else on the parallel runtime with ReadyPolicy::Random.
template <class T>
Bytes factor(const Case& c, const ParallelRun* run) {
  const TileLayout L(c.m, c.n, c.B, c.s, c.b);
  TileMatrix<T> a(L);
  generate(a, c.algo == "cholesky" ? MatrixKind::Spd : MatrixKind::General, 42);
  platform::NativePlatform plat;
  RuntimeOptions opt;
  if (run) {
    opt.threads = run->threads;
    opt.window_capacity = run->capacity;
    opt.policy = ReadyPolicy::Random;
    opt.seed = run->seed;
  }
  NodeRuntime rt(plat, opt);
  Bytes out;
  if (c.algo == "cholesky") {
    CholeskyExecutor<T> ex(a);
    if (run) {
      const RunStats st = rt.run(
          cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
      EXPECT_GT(st.tasks, 0u);
    } else {
      SequentialSink sink(ex, kernels::cpu_kernel_pair());
      cholesky_tasks(L, sink);
    }
    snapshot_tiles(a, out);
  } else {
    const index_t ib = 8;  // below the tile widths, so the inner blocking is exercised
    QrFactors<T> f(L, ib);
    QrExecutor<T> ex(a, f);
    if (run) {
      rt.run(
          qr_data_count(L), [&](TaskSink& s) { qr_tasks(L, s); }, ex);
    } else {
      SequentialSink sink(ex, kernels::cpu_kernel_pair());
      qr_tasks(L, sink);
    }
    snapshot_tiles(a, out);
    for (int k = 0; k < L.tile_cols(); ++k) {
      const auto wk = static_cast<std::size_t>(L.col_width(k));
      for (int i = L.col_top(k); i < L.tile_rows(); ++i) out.t.push_back(bytes_of(f.t(i, k), f.ib(k) * wk));
      const auto rows = static_cast<std::size_t>(L.row_height(L.col_top(k)) - L.col_local_offset(k));
      out.v.push_back(bytes_of(f.v(k), rows * wk));
    }
  }
  return out;
}

// First difference between two lists of byte blocks, or "" when identical.
std::string first_difference(const char* what, const std::vector<std::vector<unsigned char>>& want,
                             const std::vector<std::vector<unsigned char>>& got) {
  if (want.size() != got.size())
    return std::string(what) + ": " + std::to_string(got.size()) + " blocks, expected " + std::to_string(want.size());
  for (std::size_t x = 0; x < want.size(); ++x) {
    if (want[x].size() != got[x].size()) return std::string(what) + " block " + std::to_string(x) + ": size differs";
    if (std::memcmp(want[x].data(), got[x].data(), want[x].size()) != 0)
      return std::string(what) + " block " + std::to_string(x) + " differs";
  }
  return "";
}

class RandomOrder : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { kernels::set_blas_threads(1); }
};

TEST_P(RandomOrder, ParallelRunsMatchSequentialBitForBit) {
  const Case c = GetParam();
  auto check = [&](auto tag) {
    using T = decltype(tag);
    const Bytes ref = factor<T>(c, nullptr);
    ASSERT_FALSE(ref.tiles.empty());
    // The reference must actually have been factored (not left as generated).
    const TileLayout L(c.m, c.n, c.B, c.s, c.b);
    TileMatrix<T> gen(L);
    generate(gen, c.algo == "cholesky" ? MatrixKind::Spd : MatrixKind::General, 42);
    ASSERT_NE(0, std::memcmp(ref.tiles[0].data(), gen.tile(0, 0), ref.tiles[0].size()));
    for (const ParallelRun& run : kRuns) {
      SCOPED_TRACE("threads " + std::to_string(run.threads) + " window " + std::to_string(run.capacity) + " seed " +
                   std::to_string(run.seed));
      const Bytes got = factor<T>(c, &run);
      EXPECT_EQ(first_difference("tiles", ref.tiles, got.tiles), "");
      EXPECT_EQ(first_difference("T factors", ref.t, got.t), "");
      EXPECT_EQ(first_difference("V copies", ref.v, got.v), "");
    }
  };
  if (c.precision == 'd') check(double{});
  else check(float{});
}

INSTANTIATE_TEST_SUITE_P(Factorizations, RandomOrder, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return case_name(info.param); });

}  // namespace
}  // namespace tessera
