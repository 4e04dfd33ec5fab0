// parallel_units (base/parallel_units.hpp): every unit runs exactly once,
// on no more workers than asked for or the process may run on, the caller's
// thread among them, and with no workers to spare on the caller's alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
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
// the constructor allocates them all or a node's share.
TEST(ParallelUnits, NewTileMatricesReadAsZeros) {
  const tessera::TileLayout L(1000, 900, 128, 1, 0);
  for (const bool all : {true, false}) {
    tessera::TileMatrix<double> a = all ? tessera::TileMatrix<double>(L)
                                        : tessera::TileMatrix<double>(L, [](int i, int j) { return (i + j) % 2 == 0; });
    for (int j = 0; j < a.q(); ++j)
      for (int i = 0; i < a.p(); ++i) {
        const double* t = a.tile(i, j);
        ASSERT_EQ(t != nullptr, all || (i + j) % 2 == 0);
        if (t) ASSERT_TRUE(std::all_of(t, t + L.row_height(i) * L.col_width(j), [](double x) { return x == 0.0; }));
      }
  }
}

}  // namespace
