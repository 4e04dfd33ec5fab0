// parallel_units (base/parallel_units.hpp): every unit runs exactly once,
// on no more workers than asked for or the process may run on, the caller's
// thread among them, and with no workers to spare on the caller's alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
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
    EXPECT_LE(seen.threads.size(), std::max<std::size_t>(1, std::min(workers, tessera::usable_cpus())));
    EXPECT_EQ(seen.threads.count(std::this_thread::get_id()), 1u);
  }
}

TEST(ParallelUnits, NoUnitsNoCalls) {
  int calls = 0;
  parallel_units(0, 8, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

// parallel_zero, which zeroes a new TileMatrix's tiles: every byte of ranges
// of odd lengths, across piece boundaries and with several workers (above
// four pieces), and nothing outside them. (Fresh tiles come from the system
// already zeroed, so a TileMatrix could not show a skipped piece.)
TEST(ParallelUnits, ZeroesEveryByteOfItsRangesAndNothingElse) {
  for (const std::size_t piece : {std::size_t{4096}, std::size_t{1} << 24}) {
    SCOPED_TRACE(piece);
    const std::size_t first = 4 * piece + 12345, second = 3 * piece + 7;
    std::vector<std::byte> buf(first + 64 + second + 64, std::byte{0xff});
    tessera::parallel_zero({{buf.data(), first}, {buf.data() + first + 64, second}}, piece);
    for (std::size_t x = 0; x < buf.size(); ++x) {
      const bool inside = x < first || (x >= first + 64 && x < first + 64 + second);
      ASSERT_EQ(buf[x], inside ? std::byte{0} : std::byte{0xff}) << "byte " << x;
    }
  }
}

// A TileMatrix's tiles read as zeros when it is made, every entry, whether
// the constructor allocates them all or a node's share, also in memory an
// earlier matrix filled with NaNs and freed: tiles from the system are zeroed
// already and would hide a tile left unzeroed, so the test first has two
// such matrices made and freed (glibc maps the first's large tiles and hands
// them back on free, then raises its mmap threshold: the second's come from
// the heap, and the new matrix's from what the second freed), and requires
// that some of the new tiles reuse their memory.
TEST(ParallelUnits, NewTileMatricesReadAsZeros) {
  const tessera::TileLayout L(1000, 900, 128, 1, 0);
  for (const bool all : {true, false}) {
    SCOPED_TRACE(all ? "every tile" : "a node's share");
    std::set<const double*> dirty;
    for (int round = 0; round < 2; ++round) {
      tessera::TileMatrix<double> used(L);
      dirty.clear();
      for (int j = 0; j < used.q(); ++j)
        for (int i = 0; i < used.p(); ++i) {
          double* t = used.tile(i, j);
          std::fill(t, t + L.row_height(i) * L.col_width(j), std::numeric_limits<double>::quiet_NaN());
          dirty.insert(t);
        }
    }
    tessera::TileMatrix<double> a = all ? tessera::TileMatrix<double>(L)
                                        : tessera::TileMatrix<double>(L, [](int i, int j) { return (i + j) % 2 == 0; });
    int reused = 0;
    for (int j = 0; j < a.q(); ++j)
      for (int i = 0; i < a.p(); ++i) {
        const double* t = a.tile(i, j);
        ASSERT_EQ(t != nullptr, all || (i + j) % 2 == 0);
        if (!t) continue;
        reused += dirty.count(t) > 0;
        ASSERT_TRUE(std::all_of(t, t + L.row_height(i) * L.col_width(j), [](double x) { return x == 0.0; }))
            << "tile (" << i << ", " << j << ")";
      }
    EXPECT_GT(reused, 0) << "no tile in freed memory: the zeros could be the system's";
  }
}

}  // namespace
