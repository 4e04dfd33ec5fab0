// DataRelevance (runtime/relevance.hpp): the data each node's protocol
// follows are its own and those its tasks access, found in one pass, and
// they leave tasks that no node but their own needs (the point of it).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/factorization.hpp"
#include "algorithms/qr.hpp"
#include "dag_test_util.hpp"
#include "runtime/distribution.hpp"
#include "runtime/relevance.hpp"

namespace tessera {
namespace {

// Brute force against the definition, and how many tasks a node skips.
void check(const std::string& algo, const TileLayout& L, int pr, int pc) {
  const MultiLevelBlockCyclic dist(L, pr, pc, 0, 1);
  const Placement where = factorization(algo).placement(L, dist);
  const Generator gen = [&](TaskSink& s) { factorization(algo).tasks(L, s); };
  const std::size_t n = factorization(algo).data_count(L);
  const int P = pr * pc;
  const DataRelevance r(n, P, gen, where);
  test::TaskList all;
  gen(all);
  EXPECT_EQ(r.tasks(), all.tasks.size());
  std::vector<std::vector<char>> want(P, std::vector<char>(n, 0));
  for (std::size_t x = 0; x < n; ++x) want[where(static_cast<DataId>(x)).node][x] = 1;
  for (const TaskDesc& t : all.tasks) {
    const int at = where(t.access[t.main_output()].data).node;
    for (int a = 0; a < t.n_access; ++a) want[at][t.access[a].data] = 1;
  }
  for (int k = 0; k < P; ++k) {
    std::size_t c = 0;
    for (std::size_t x = 0; x < n; ++x) {
      ASSERT_EQ(r.relevant(k, static_cast<DataId>(x)), want[k][x] != 0) << algo << " node " << k << " datum " << x;
      // A node's tables number its data in increasing order, without gaps.
      if (want[k][x]) ASSERT_EQ(r.index(k, static_cast<DataId>(x)), c) << algo << " node " << k << " datum " << x;
      c += want[k][x];
    }
    EXPECT_EQ(r.count(k), c);
    // Some tasks access none of node k's data: those the node skips.
    std::size_t followed = 0;
    for (const TaskDesc& t : all.tasks) {
      bool f = false;
      for (int a = 0; a < t.n_access; ++a) f = f || r.relevant(k, t.access[a].data);
      followed += f;
    }
    if (P >= 9) EXPECT_LT(followed, all.tasks.size()) << algo << " node " << k << " follows every task";
  }
}

TEST(DataRelevance, IsEachNodesDataAndItsTasksAccesses) {
  check("cholesky", TileLayout(600, 600, 40, 1, 0), 3, 3);
  check("cholesky", TileLayout(600, 600, 60, 2, 20), 2, 3);
  check("qr", TileLayout(640, 600, 40, 1, 0), 3, 3);
  check("lu", TileLayout(600, 600, 50, 1, 0), 3, 3);
}

TEST(DataRelevance, RefusesWhatDoesNotFit) {
  const TileLayout L(200, 200, 50, 1, 0);
  const MultiLevelBlockCyclic dist(L, 2, 2, 0, 1);
  const Placement where = factorization("cholesky").placement(L, dist);
  const Generator gen = [&](TaskSink& s) { cholesky_tasks(L, s); };
  EXPECT_THROW(DataRelevance(cholesky_data_count(L), 0, gen, where), std::logic_error);
  // Data placed on nodes 0..3 of a run said to have 2.
  EXPECT_THROW(DataRelevance(cholesky_data_count(L), 2, gen, where), std::logic_error);
  // A task accessing a datum beyond the run's.
  EXPECT_THROW(DataRelevance(cholesky_data_count(L) - 1, 4, gen, where), std::logic_error);
}

}  // namespace
}  // namespace tessera
