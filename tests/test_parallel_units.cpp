// parallel_units (base/parallel_units.hpp): every unit runs exactly once,
// on no more workers than asked for, the caller's thread among them, and
// with no workers to spare on the caller's thread alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/parallel_units.hpp"
#include "base/tile_matrix.hpp"

namespace {

using tessera::parallel_units;

struct Seen {
  std::vector<std::atomic<int>> calls;
  std::mutex m;
  std::set<std::thread::id> threads;
  explicit Seen(std::size_t n) : calls(n) {}
  void operator()(std::size_t u) {
    calls[u].fetch_add(1);
    const std::lock_guard lock(m);
    threads.insert(std::this_thread::get_id());
  }
};

TEST(ParallelUnits, EveryUnitOnceOnAtMostTheWorkersAskedFor) {
  for (const std::size_t workers : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{64}}) {
    SCOPED_TRACE(workers);
    Seen seen(1000);
    parallel_units(1000, workers, [&](std::size_t u) { seen(u); });
    for (std::size_t u = 0; u < 1000; ++u) ASSERT_EQ(seen.calls[u].load(), 1) << "unit " << u;
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    EXPECT_LE(seen.threads.size(), std::max<std::size_t>(1, std::min(workers, hw)));
    EXPECT_EQ(seen.threads.count(std::this_thread::get_id()), 1u);
  }
}

TEST(ParallelUnits, NoUnitsNoCalls) {
  int calls = 0;
  parallel_units(0, 8, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

// A matrix of many tiles and one of a single large tile are zeroed when
// allocated (by several threads above 64 MiB), every entry.
TEST(ParallelUnits, NewTileMatricesAreZeroed) {
  for (const tessera::TileLayout& L :
       {tessera::TileLayout(4099, 4099, 512, 1, 0), tessera::TileLayout(4097, 4097, 4097, 1, 0)}) {
    tessera::TileMatrix<double> a(L);
    for (int j = 0; j < a.q(); ++j)
      for (int i = 0; i < a.p(); ++i) {
        const double* t = a.tile(i, j);
        const auto n = L.row_height(i) * L.col_width(j);
        ASSERT_TRUE(std::all_of(t, t + n, [](double x) { return x == 0.0; })) << "tile " << i << "," << j;
      }
  }
}

}  // namespace
