// Rules the task generators must keep that neither a residual nor a task
// count sees: where LU's tasks run under 002's CPU/GPU split, which rows of a
// hybrid layout LU's top tile row updates, that a released tile is released
// as soon as its last reader is inserted (000 §5.5's Release_Tile: a
// distributed run brings it home then, not at the end), and that Cholesky's
// kernel shapes are the tiles' parts on or below the diagonal (the simulator
// and the tuner time them).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/lu.hpp"
#include "algorithms/qr.hpp"
#include "algorithms/qr_tree.hpp"
#include "base/kernel_table.hpp"
#include "base/tile_layout.hpp"

namespace tessera {
namespace {

// Every insert and release, in the generator's order.
class Recorder final : public TaskSink {
 public:
  struct Event {
    bool release;
    TaskDesc task;  // an insert's
    DataId data;    // a release's
  };
  void insert(const TaskDesc& t) override { events.push_back({false, t, 0}); }
  void release(DataId d) override { events.push_back({true, {}, d}); }
  std::vector<TaskDesc> tasks() const {
    std::vector<TaskDesc> out;
    for (const Event& e : events)
      if (!e.release) out.push_back(e.task);
    return out;
  }
  std::vector<Event> events;
};

bool touches(const TaskDesc& t, DataId d) {
  for (int a = 0; a < t.n_access; ++a)
    if (t.access[a].data == d) return true;
  return false;
}

// 002 Alg. 2 with d block columns on the CPU side: at step k columns
// [k, k + d) and the finished ones (j < k) are the cores' (device 0), every
// other column the GPU its distribution gives it, 1 + (top-level block / Pc)
// mod G; the panel's tasks run with their column. d = 0: the GPUs hold every
// column, the tournament's candidate selection aside (not used here:
// partial pivoting).
TEST(LuTaskGraph, TheCpuShareHoldsColumnsKToKPlusD) {
  const TileLayout L(700, 700, 96, 1, 0);  // q = 8
  for (const int d : {0, 1, 2})
    for (const int gpus : {1, 2}) {
      SCOPED_TRACE("d=" + std::to_string(d) + " gpus=" + std::to_string(gpus));
      LuOptions o;
      o.d = d;
      o.gpus = gpus;
      Recorder rec;
      lu_tasks(L, o, rec);
      std::map<int, int> on_cores_at_step;  // step -> distinct columns seen on the cores, j >= k
      int checked = 0;
      for (const TaskDesc& t : rec.tasks()) {
        const int k = t.arg[0];
        int j = -1;
        if (t.kernel == kLuTrsmU || t.kernel == kLuGemm || t.kernel == kLuSwap || t.kernel == kLuExchange) j = t.arg[2];
        if (t.kernel == kLuGather || t.kernel == kLuPanel || t.kernel == kLuScatter) j = k;
        if (j < 0) continue;
        const bool cpu = d > 0 && j < k + d;
        const int want = cpu ? 0 : 1 + L.col_top(j) % gpus;
        ASSERT_EQ(t.device, want) << kernel_name(t.kernel) << " step " << k << " column " << j;
        ++checked;
      }
      EXPECT_GT(checked, 100);
    }
  // Without GPUs no split: every task where its tile lives (-1).
  Recorder rec;
  lu_tasks(L, LuOptions{}, rec);
  for (const TaskDesc& t : rec.tasks()) ASSERT_EQ(t.device, -1) << kernel_name(t.kernel);
}

// Hybrid tiles B = 97, s = 3, b = 48: each top-level block holds columns of
// 48, 48 and 1. Step k's top tile row t = col_top(k) has rows below column
// k's diagonal block when its offset plus width in the block is under 97:
// after the first narrow column (48 rows left below), after the second (1
// row left), never after the 1-wide remainder. Each such step updates those
// rows of every later column (LU_GEMM on tile (t, j)), a single row included.
TEST(LuTaskGraph, TheTopRowUpdatesEveryRowBelowTheDiagonalBlock) {
  const TileLayout L(194, 194, 97, 3, 48);
  ASSERT_EQ(L.tile_cols(), 6);
  ASSERT_EQ(L.col_width(2), 1);
  Recorder rec;
  lu_tasks(L, LuOptions{}, rec);
  std::map<int, std::vector<int>> top_row_gemms;  // step -> columns
  for (const TaskDesc& t : rec.tasks())
    if (t.kernel == kLuGemm && t.arg[1] == L.col_top(t.arg[0])) top_row_gemms[t.arg[0]].push_back(t.arg[2]);
  const std::map<int, std::vector<int>> want = {{0, {1, 2, 3, 4, 5}}, {1, {2, 3, 4, 5}}, {3, {4, 5}}, {4, {5}}};
  EXPECT_EQ(top_row_gemms, want);
}

// Release_Tile (000 §5.5): a released datum is touched by no task inserted
// after the release, and the release comes before any task of a step later
// than that of its last access (QR's finished R row right after the last
// column of its block, a column's reflectors after their step), so that a
// distributed run sends it home while the factorization goes on.
void expect_prompt_releases(const std::vector<Recorder::Event>& events, const std::string& what) {
  SCOPED_TRACE(what);
  std::map<DataId, int> last_step;
  int releases = 0;
  for (std::size_t e = 0; e < events.size(); ++e) {
    if (!events[e].release) {
      const TaskDesc& t = events[e].task;
      for (int a = 0; a < t.n_access; ++a) last_step[t.access[a].data] = t.arg[0];
      continue;
    }
    const DataId d = events[e].data;
    ++releases;
    ASSERT_TRUE(last_step.count(d)) << "datum " << d << " released before any task touched it";
    for (std::size_t f = e + 1; f < events.size(); ++f)
      if (!events[f].release) ASSERT_FALSE(touches(events[f].task, d)) << "datum " << d << " touched after its release";
    // The tasks inserted before the release are of steps up to its last access's.
    for (std::size_t f = 0; f < e; ++f)
      if (!events[f].release)
        ASSERT_LE(events[f].task.arg[0], last_step[d])
            << "datum " << d << " (last used at step " << last_step[d] << ") released only after a task of step "
            << events[f].task.arg[0] << " (" << kernel_name(events[f].task.kernel) << ")";
  }
  EXPECT_GT(releases, 0);
}

TEST(TaskGraphReleases, EveryTileIsReleasedAfterItsLastStep) {
  // Two-level tiles (each block's columns 8, 8 and 24 wide), and one-level tall ones.
  for (const TileLayout& L : {TileLayout(200, 200, 40, 3, 8), TileLayout(300, 200, 40, 1, 0)}) {
    const std::string shape = std::to_string(L.m()) + "x" + std::to_string(L.n()) + " s=" + std::to_string(L.s());
    Recorder chol, qr, binary, lu;
    if (L.m() == L.n()) cholesky_tasks(L, chol);
    qr_tasks(L, qr);
    qr_tasks(L, binary, QrTree(L, 2, 1));
    lu_tasks(L, LuOptions{}, lu);
    if (L.m() == L.n()) expect_prompt_releases(chol.events, "cholesky " + shape);
    expect_prompt_releases(qr.events, "qr " + shape);
    expect_prompt_releases(binary.events, "qr binary " + shape);
    expect_prompt_releases(lu.events, "lu " + shape);
    // QR brings every tile of the matrix home once, each when it is final
    // (its panel copies, data p*q on, are discarded: scratch).
    const auto tiles = static_cast<DataId>(L.tile_rows() * L.tile_cols());
    std::map<DataId, int> released;
    for (const auto& e : qr.events)
      if (e.release && e.data < tiles) ++released[e.data];
    EXPECT_EQ(released.size(), static_cast<std::size_t>(L.tile_rows()) * L.tile_cols()) << shape;
    for (const auto& [d, times] : released) EXPECT_EQ(times, 1) << shape << " datum " << d;
  }
}

// A Cholesky task's kernel works on its output tile's rows on or below the
// diagonal of the output column's first global column (the whole tile below
// the diagonal block): m is that count, n the output column's width, and k
// (the updates) the width of step k's column.
TEST(CholeskyShapes, AreTheTilesPartsOnOrBelowTheDiagonal) {
  for (const TileLayout& L : {TileLayout(200, 200, 40, 3, 8), TileLayout(203, 203, 40, 4, 6)}) {
    Recorder rec;
    cholesky_tasks(L, rec);
    std::map<int, int> seen;
    for (const TaskDesc& t : rec.tasks()) {
      const int k = t.arg[0];
      // Output tile (i, j): POTF2' writes (col_top(k), k), TRSM (i, k).
      const int i = t.kernel == kPotf2p ? L.col_top(k) : t.arg[1];
      const int j = t.kernel == kPotf2p || t.kernel == kTrsm ? k : t.arg[2];
      const index_t rows = L.row_offset(i + 1) - std::max(L.row_offset(i), L.col_offset(j));
      const KernelShape s = cholesky_shape(L, t, 'd');
      SCOPED_TRACE(std::string(kernel_name(t.kernel)) + " k=" + std::to_string(k) + " tile (" + std::to_string(i) +
                   "," + std::to_string(j) + ")");
      ASSERT_EQ(s.m, rows);
      ASSERT_EQ(s.n, L.col_width(j));
      if (t.kernel == kGsmm || t.kernel == kGsmmDiag) ASSERT_EQ(s.k, L.col_width(k));
      ++seen[t.kernel];
    }
    EXPECT_EQ(seen.size(), 4u) << "POTF2', TRSM, GSMM_DIAG and GSMM all checked";
  }
}

}  // namespace
}  // namespace tessera
