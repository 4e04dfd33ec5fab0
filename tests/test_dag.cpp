// Task graphs the serial algorithms generate (hand-checked), and the task
// window's APPEND / FIRE rules (000 §5.1-5.2) on hand-built task sequences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/node_runtime.hpp"
#include "runtime/ready_queue.hpp"
#include "runtime/task_window.hpp"

namespace tessera {
namespace {

constexpr auto R = AccessMode::Read;
constexpr auto W = AccessMode::Write;
constexpr auto RW = AccessMode::ReadWrite;

class Recorder final : public TaskSink {
 public:
  void insert(const TaskDesc& t) override { tasks.push_back(t); }
  std::vector<TaskDesc> tasks;
};

using AccessList = std::vector<std::pair<DataId, AccessMode>>;

struct Expected {
  KernelId kernel;
  int k, i, j;
  AccessList access;
};

AccessList sorted_accesses(const TaskDesc& d) {
  AccessList out;
  for (int a = 0; a < d.n_access; ++a) out.emplace_back(d.access[a].data, d.access[a].mode);
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const AccessList& acc) {
  std::string s;
  for (auto [d, m] : acc) s += " d" + std::to_string(d) + (m == R ? ":R" : m == W ? ":W" : ":RW");
  return s;
}

void expect_sequence(const std::vector<TaskDesc>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t n = 0; n < want.size(); ++n) {
    SCOPED_TRACE("task " + std::to_string(n) + " expected " + kernel_name(want[n].kernel) + "(" +
                 std::to_string(want[n].k) + "," + std::to_string(want[n].i) + "," + std::to_string(want[n].j) + ")");
    EXPECT_EQ(got[n].kernel, want[n].kernel) << "got " << kernel_name(got[n].kernel);
    EXPECT_EQ(got[n].arg[0], want[n].k);
    EXPECT_EQ(got[n].arg[1], want[n].i);
    EXPECT_EQ(got[n].arg[2], want[n].j);
    AccessList w = want[n].access;
    std::sort(w.begin(), w.end());
    const AccessList g = sorted_accesses(got[n]);
    EXPECT_EQ(g, w) << "got" << describe(g) << " want" << describe(w);
  }
}

// ---------------------------------------------------------------------------
// Cholesky
// ---------------------------------------------------------------------------

TEST(CholeskyDag, ThreeByThreeTilesHandChecked) {
  // N = 3, B = 1: 3×3 tiles of one element; datum of tile (i,j) = i + 3j.
  const TileLayout L(3, 3, 1, 1, 0);
  ASSERT_EQ(cholesky_data_count(L), 9u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 3 * j); };
  Recorder rec;
  cholesky_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kPotf2p, 0, 0, 0, {{d(0, 0), RW}}},
                                 {kTrsm, 0, 1, 0, {{d(0, 0), R}, {d(1, 0), RW}}},
                                 {kTrsm, 0, 2, 0, {{d(0, 0), R}, {d(2, 0), RW}}},
                                 {kGsmmDiag, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}}},
                                 {kGsmm, 0, 2, 1, {{d(2, 0), R}, {d(1, 0), R}, {d(2, 1), RW}}},
                                 {kGsmmDiag, 0, 2, 2, {{d(2, 0), R}, {d(2, 2), RW}}},
                                 {kPotf2p, 1, 1, 1, {{d(1, 1), RW}}},
                                 {kTrsm, 1, 2, 1, {{d(1, 1), R}, {d(2, 1), RW}}},
                                 {kGsmmDiag, 1, 2, 2, {{d(2, 1), R}, {d(2, 2), RW}}},
                                 {kPotf2p, 2, 2, 2, {{d(2, 2), RW}}},
                             });
}

TEST(CholeskyDag, TwoLevelHandChecked) {
  // N = 8, B = 4, s = 2, b = 1: tile columns 0 (w 1) 1 (w 3) | 2 (w 1) 3 (w 3);
  // two tile rows; datum of tile (i,j) = i + 2j.
  const TileLayout L(8, 8, 4, 2, 1);
  ASSERT_EQ(L.tile_rows(), 2);
  ASSERT_EQ(L.tile_cols(), 4);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 2 * j); };
  Recorder rec;
  cholesky_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 // k = 0 (tile row 0)
                                 {kPotf2p, 0, 0, 0, {{d(0, 0), RW}}},
                                 {kGsmmDiag, 0, 0, 1, {{d(0, 0), R}, {d(0, 1), RW}}},
                                 {kTrsm, 0, 1, 0, {{d(0, 0), R}, {d(1, 0), RW}}},
                                 {kGsmm, 0, 1, 1, {{d(1, 0), R}, {d(0, 0), R}, {d(1, 1), RW}}},
                                 {kGsmmDiag, 0, 1, 2, {{d(1, 0), R}, {d(1, 2), RW}}},
                                 {kGsmmDiag, 0, 1, 3, {{d(1, 0), R}, {d(1, 3), RW}}},
                                 // k = 1 (tile row 0, local offset 1)
                                 {kPotf2p, 1, 0, 1, {{d(0, 1), RW}}},
                                 {kTrsm, 1, 1, 1, {{d(0, 1), R}, {d(1, 1), RW}}},
                                 {kGsmmDiag, 1, 1, 2, {{d(1, 1), R}, {d(1, 2), RW}}},
                                 {kGsmmDiag, 1, 1, 3, {{d(1, 1), R}, {d(1, 3), RW}}},
                                 // k = 2 (tile row 1)
                                 {kPotf2p, 2, 1, 2, {{d(1, 2), RW}}},
                                 {kGsmmDiag, 2, 1, 3, {{d(1, 2), R}, {d(1, 3), RW}}},
                                 // k = 3
                                 {kPotf2p, 3, 1, 3, {{d(1, 3), RW}}},
                             });
}

// Task counts per kernel, computed independently from the definition of
// Alg. 1: for column k (tile row t), one POTF2', one GSMM per later column of
// the same top-level block, one TRSM per tile row below, and one update per
// lower tile (i,j), i > t, j > k.
std::map<int, int> cholesky_counts(const TileLayout& L) {
  std::map<int, int> c;
  for (int k = 0; k < L.tile_cols(); ++k) {
    const int t = L.col_top(k);
    ++c[kPotf2p];
    for (int j = k + 1; j < L.tile_cols(); ++j)
      if (L.col_top(j) == t) ++c[kGsmmDiag];
    for (int i = t + 1; i < L.tile_rows(); ++i) {
      ++c[kTrsm];
      for (int j = k + 1; j < L.tile_cols(); ++j) {
        if (L.col_top(j) > i) continue;  // upper part
        ++c[L.col_top(j) == i ? kGsmmDiag : kGsmm];
      }
    }
  }
  return c;
}

std::map<int, int> count_kernels(const std::vector<TaskDesc>& ts) {
  std::map<int, int> c;
  for (const auto& t : ts) ++c[t.kernel];
  return c;
}

TEST(CholeskyDag, CountsWithTwoLevelTiles) {
  // N = 100, B = 16, s = 2, b = 4: 7 tile rows, 13 tile columns.
  const TileLayout L(100, 100, 16, 2, 4);
  ASSERT_EQ(L.tile_rows(), 7);
  ASSERT_EQ(L.tile_cols(), 13);
  Recorder rec;
  cholesky_tasks(L, rec);
  const auto got = count_kernels(rec.tasks);
  EXPECT_EQ(got, cholesky_counts(L));
  // Closed forms for this shape: 13 POTF2'; TRSMs: each of the two columns of
  // top-level block t has 6 - t tile rows below (last block: one column).
  EXPECT_EQ(got.at(kPotf2p), 13);
  EXPECT_EQ(got.at(kTrsm), 2 * (6 + 5 + 4 + 3 + 2 + 1));
  EXPECT_EQ(rec.tasks.size(), 13u + 42u + static_cast<std::size_t>(got.at(kGsmm) + got.at(kGsmmDiag)));
}

TEST(CholeskyDag, EveryTaskTouchesOnlyLowerTilesAndValidData) {
  for (const TileLayout& L : {TileLayout(100, 100, 16, 3, 4), TileLayout(37, 37, 8, 2, 3), TileLayout(5, 5, 8, 1, 0)}) {
    Recorder rec;
    cholesky_tasks(L, rec);
    EXPECT_EQ(count_kernels(rec.tasks), cholesky_counts(L));
    for (const auto& t : rec.tasks) {
      int writes_n = 0;
      for (int a = 0; a < t.n_access; ++a) {
        const DataId dd = t.access[a].data;
        ASSERT_LT(dd, cholesky_data_count(L));
        const int i = static_cast<int>(dd % L.tile_rows()), j = static_cast<int>(dd / L.tile_rows());
        EXPECT_LE(L.col_top(j), i) << kernel_name(t.kernel) << " touches upper tile (" << i << "," << j << ")";
        if (writes(t.access[a].mode)) {
          ++writes_n;
          // The written tile is the task's output tile (i, j) = (arg1, arg2).
          EXPECT_EQ(i, t.arg[1]);
          EXPECT_EQ(j, t.arg[2]);
        }
      }
      EXPECT_EQ(writes_n, 1) << kernel_name(t.kernel);
    }
  }
}

// ---------------------------------------------------------------------------
// QR
// ---------------------------------------------------------------------------

TEST(QrDag, TwoByTwoTilesHandChecked) {
  // m = n = 2, B = 1: 2×2 tiles; tile (i,j) = i + 2j; panel copy of column k = 4 + k.
  const TileLayout L(2, 2, 1, 1, 0);
  ASSERT_EQ(qr_data_count(L), 6u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 2 * j); };
  auto panel = [](int k) { return static_cast<DataId>(4 + k); };
  Recorder rec;
  qr_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kGeqrt, 0, 0, 0, {{d(0, 0), RW}, {panel(0), W}}},
                                 {kLarfb, 0, 0, 1, {{panel(0), R}, {d(0, 1), RW}}},
                                 {kTsqrt, 0, 1, 0, {{d(1, 0), RW}, {d(0, 0), RW}}},
                                 {kSsrfb, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}, {d(0, 1), RW}}},
                                 {kGeqrt, 1, 1, 1, {{d(1, 1), RW}, {panel(1), W}}},
                             });
}

TEST(QrDag, TallThreeByTwoTilesHandChecked) {
  // m = 3, n = 2, B = 1: tile (i,j) = i + 3j; panels 6, 7.
  const TileLayout L(3, 2, 1, 1, 0);
  ASSERT_EQ(qr_data_count(L), 8u);
  auto d = [](int i, int j) { return static_cast<DataId>(i + 3 * j); };
  Recorder rec;
  qr_tasks(L, rec);
  expect_sequence(rec.tasks, {
                                 {kGeqrt, 0, 0, 0, {{d(0, 0), RW}, {6, W}}},
                                 {kLarfb, 0, 0, 1, {{6, R}, {d(0, 1), RW}}},
                                 {kTsqrt, 0, 1, 0, {{d(1, 0), RW}, {d(0, 0), RW}}},
                                 {kTsqrt, 0, 2, 0, {{d(2, 0), RW}, {d(0, 0), RW}}},
                                 {kSsrfb, 0, 1, 1, {{d(1, 0), R}, {d(1, 1), RW}, {d(0, 1), RW}}},
                                 {kSsrfb, 0, 2, 1, {{d(2, 0), R}, {d(2, 1), RW}, {d(0, 1), RW}}},
                                 {kGeqrt, 1, 1, 1, {{d(1, 1), RW}, {7, W}}},
                                 {kTsqrt, 1, 2, 1, {{d(2, 1), RW}, {d(1, 1), RW}}},
                             });
}

TEST(QrDag, CountsWithTwoLevelTilesAndFormQ) {
  // m = 50, n = 40, B = 16, s = 2, b = 4: p = 4, q = 6 (blocks 16, 16, 8).
  const TileLayout L(50, 40, 16, 2, 4);
  ASSERT_EQ(L.tile_rows(), 4);
  ASSERT_EQ(L.tile_cols(), 6);
  std::map<int, int> want;
  std::map<int, int> want_q;
  for (int k = 0; k < 6; ++k) {
    const int t = L.col_top(k), below = 4 - t - 1, right = 6 - k - 1;
    want[kGeqrt] += 1;
    want[kLarfb] += right;
    want[kTsqrt] += below;
    want[kSsrfb] += below * right;
    want_q[kLarfbQ] += right + 1;
    want_q[kSsrfbQ] += below * (right + 1);
  }
  Recorder rec;
  qr_tasks(L, rec);
  EXPECT_EQ(count_kernels(rec.tasks), want);
  // 6 GEQRT, LARFB 5+4+3+2+1, TSQRT 3+3+2+2+1+1 = 12.
  EXPECT_EQ(want[kGeqrt], 6);
  EXPECT_EQ(want[kLarfb], 15);
  EXPECT_EQ(want[kTsqrt], 12);
  for (const auto& t : rec.tasks)
    for (int a = 0; a < t.n_access; ++a) ASSERT_LT(t.access[a].data, qr_data_count(L));
  Recorder recq;
  qr_form_q_tasks(L, recq);
  EXPECT_EQ(count_kernels(recq.tasks), want_q);
  // Forming Q applies the reflectors of the last column first.
  ASSERT_FALSE(recq.tasks.empty());
  EXPECT_EQ(recq.tasks.front().arg[0], 5);
  EXPECT_EQ(recq.tasks.back().arg[0], 0);
}

TEST(QrDag, WideMatrixIsRejected) {
  const TileLayout L(10, 20, 4, 1, 0);
  Recorder rec;
  try {
    qr_tasks(L, rec);
    ADD_FAILURE() << "qr_tasks accepted m < n";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("m = 10"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("n = 20"));
  }
  EXPECT_TRUE(rec.tasks.empty());
}

// ---------------------------------------------------------------------------
// Task window: APPEND readiness and FIRE order
// ---------------------------------------------------------------------------

TaskDesc desc(int tag, std::initializer_list<std::pair<DataId, AccessMode>> acc) {
  TaskDesc d;
  d.kernel = kNop;
  d.arg[0] = tag;
  for (auto [id, m] : acc) d.add(id, m);
  return d;
}

// The task a window holds for the given serial position (tests only: the
// window hands out non-ready tasks only through FIRE).
Task* find_task(const TaskWindow& w, DataId d, int tag) {
  for (const Task* t : w.list_of(d))
    if (t->desc.arg[0] == tag) return const_cast<Task*>(t);
  return nullptr;
}

std::vector<int> tags(const std::vector<Task*>& ts) {
  std::vector<int> out;
  for (const Task* t : ts) out.push_back(t->desc.arg[0]);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> list_tags(const TaskWindow& w, DataId d) {
  std::vector<int> out;
  for (const Task* t : w.list_of(d)) out.push_back(t->desc.arg[0]);
  return out;
}

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(TaskWindow, AppendReadiness) {
  platform::NativePlatform plat;
  TaskWindow w(4, 16, plat);
  EXPECT_EQ(w.capacity(), 16u);
  EXPECT_EQ(w.n_data(), 4u);
  // Writer on an untouched datum: ready.
  Task* w0 = w.append(desc(0, {{0, W}}));
  ASSERT_NE(w0, nullptr);
  // Readers after a writer: not ready.
  EXPECT_EQ(w.append(desc(1, {{0, R}})), nullptr);
  EXPECT_EQ(w.append(desc(2, {{0, R}})), nullptr);
  // Writer after a writer and readers: not ready.
  EXPECT_EQ(w.append(desc(3, {{0, RW}})), nullptr);
  // Readers of an untouched datum: ready, however many.
  Task* r4 = w.append(desc(4, {{1, R}}));
  Task* r5 = w.append(desc(5, {{1, R}}));
  EXPECT_NE(r4, nullptr);
  EXPECT_NE(r5, nullptr);
  // Writer after (unfinished) readers only: not ready (WAR is ordered).
  EXPECT_EQ(w.append(desc(6, {{1, W}})), nullptr);
  // A reader after that writer: not ready either, though readers precede it.
  EXPECT_EQ(w.append(desc(7, {{1, R}})), nullptr);
  EXPECT_EQ(w.appended(), 8u);
  EXPECT_EQ(w.in_flight(), 8u);
  EXPECT_THAT(list_tags(w, 0), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(list_tags(w, 1), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(list_tags(w, 2), IsEmpty());
  // Serial positions follow append order.
  EXPECT_EQ(w0->seq, 0u);
  EXPECT_EQ(r4->seq, 4u);
  EXPECT_EQ(find_task(w, 1, 7)->seq, 7u);
}

TEST(TaskWindow, FireReleasesReadersUpToTheNextWriter) {
  platform::NativePlatform plat;
  TaskWindow w(2, 16, plat);
  std::vector<Task*> ready;
  // d0: W0 R1 R2 W3 R4 R5 W6
  Task* w0 = w.append(desc(0, {{0, RW}}));
  ASSERT_NE(w0, nullptr);
  for (int tag : {1, 2}) ASSERT_EQ(w.append(desc(tag, {{0, R}})), nullptr);
  ASSERT_EQ(w.append(desc(3, {{0, W}})), nullptr);
  for (int tag : {4, 5}) ASSERT_EQ(w.append(desc(tag, {{0, R}})), nullptr);
  ASSERT_EQ(w.append(desc(6, {{0, RW}})), nullptr);
  Task* r1 = find_task(w, 0, 1);
  Task* r2 = find_task(w, 0, 2);
  Task* w3 = find_task(w, 0, 3);
  Task* r4 = find_task(w, 0, 4);
  Task* r5 = find_task(w, 0, 5);
  Task* w6 = find_task(w, 0, 6);

  w.fire(w0, ready);  // releases both readers, not the writer behind them
  EXPECT_EQ(tags(ready), (std::vector<int>{1, 2}));
  ready.clear();
  w.fire(r2, ready);  // readers finish in any order; r1 still holds W3 back
  EXPECT_THAT(ready, IsEmpty());
  EXPECT_THAT(list_tags(w, 0), ElementsAre(1, 3, 4, 5, 6));
  w.fire(r1, ready);  // the last reader ahead of W3 releases it
  EXPECT_EQ(tags(ready), (std::vector<int>{3}));
  ready.clear();
  w.fire(w3, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{4, 5}));
  ready.clear();
  w.fire(r4, ready);
  EXPECT_THAT(ready, IsEmpty());
  w.fire(r5, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{6}));
  ready.clear();
  w.fire(w6, ready);
  EXPECT_THAT(ready, IsEmpty());
  EXPECT_THAT(list_tags(w, 0), IsEmpty());
  EXPECT_EQ(w.in_flight(), 0u);
}

TEST(TaskWindow, WriterAfterWriterIsReleasedByItsCompletion) {
  platform::NativePlatform plat;
  TaskWindow w(1, 8, plat);
  std::vector<Task*> ready;
  Task* a = w.append(desc(0, {{0, W}}));
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(w.append(desc(1, {{0, RW}})), nullptr);
  ASSERT_EQ(w.append(desc(2, {{0, W}})), nullptr);
  w.fire(a, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{1}));  // only the next writer
  Task* b = ready.front();
  ready.clear();
  w.fire(b, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{2}));
}

TEST(TaskWindow, TaskWithTwoAccessesNeedsBoth) {
  platform::NativePlatform plat;
  TaskWindow w(4, 16, plat);
  std::vector<Task*> ready;
  Task* a = w.append(desc(0, {{0, RW}}));
  Task* b = w.append(desc(1, {{1, W}}));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // x reads d0 and writes d1: waits for a (RAW) and b (WAW).
  ASSERT_EQ(w.append(desc(2, {{0, R}, {1, RW}})), nullptr);
  // y reads d0 and d2 (untouched): waits for a only.
  ASSERT_EQ(w.append(desc(3, {{0, R}, {2, R}})), nullptr);
  // z writes d3 and reads d2 (only readers so far): ready.
  EXPECT_NE(w.append(desc(4, {{3, W}, {2, R}})), nullptr);
  w.fire(a, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{3}));  // x still waits for b
  ready.clear();
  w.fire(b, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{2}));
}

TEST(TaskWindow, DuplicateAccessesAreMerged) {
  platform::NativePlatform plat;
  TaskWindow w(2, 4, plat);
  std::vector<Task*> ready;
  TaskDesc d = desc(0, {{0, R}, {0, W}, {1, R}});
  ASSERT_EQ(d.n_access, 2);
  EXPECT_EQ(d.access[0].mode, RW);
  // A task that reads and writes the same datum must not wait for itself.
  Task* t = w.append(d);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(w.append(desc(1, {{0, R}})), nullptr);
  w.fire(t, ready);
  EXPECT_EQ(tags(ready), (std::vector<int>{1}));
}

TEST(TaskWindow, ZeroCapacityIsRejected) {
  platform::NativePlatform plat;
  EXPECT_THROW(TaskWindow(1, 0, plat), InputError);
}

// A platform whose condition variables report every wait, so a test can see
// that a thread is blocked without sleeping.
class ObservedPlatform final : public platform::Platform {
 public:
  explicit ObservedPlatform(std::function<void()> on_wait) : on_wait_(std::move(on_wait)) {}
  std::unique_ptr<platform::Mutex> make_mutex() override { return inner_.make_mutex(); }
  std::unique_ptr<platform::Condition> make_condition() override {
    return std::make_unique<Cond>(inner_.make_condition(), on_wait_);
  }
  void spawn(const std::string& name, std::function<void()> body) override { inner_.spawn(name, std::move(body)); }
  void join_all() override { inner_.join_all(); }
  double now() const override { return inner_.now(); }
  void run_kernel(double modeled_s, FunctionRef<void()> kernel) override { inner_.run_kernel(modeled_s, kernel); }
  kernels::KernelPair core_kernels() override { return inner_.core_kernels(); }
  const char* backend_name() const override { return "observed"; }

 private:
  class Cond final : public platform::Condition {
   public:
    Cond(std::unique_ptr<platform::Condition> c, std::function<void()> f) : c_(std::move(c)), f_(std::move(f)) {}
    void wait(platform::Mutex& m) override {
      f_();
      c_->wait(m);
    }
    void notify_one() override { c_->notify_one(); }
    void notify_all() override { c_->notify_all(); }

   private:
    std::unique_ptr<platform::Condition> c_;
    std::function<void()> f_;
  };
  platform::NativePlatform inner_;
  std::function<void()> on_wait_;
};

// Ordered record of events from several threads.
class EventLog {
 public:
  void add(const std::string& e) {
    std::lock_guard<std::mutex> lk(m_);
    events_.push_back(e);
    cv_.notify_all();
  }
  // Waits until one of `es` is logged (true) or a generous guard expires
  // (false): the guard only keeps a broken window from hanging the test.
  bool wait_for(std::initializer_list<std::string> es) {
    std::unique_lock<std::mutex> lk(m_);
    return cv_.wait_for(lk, std::chrono::seconds(60), [&] {
      for (const auto& e : es)
        if (std::find(events_.begin(), events_.end(), e) != events_.end()) return true;
      return false;
    });
  }
  // Events in order, each kept at its first occurrence (a spurious wake-up
  // makes a waiter log its wait again).
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lk(m_);
    std::vector<std::string> out;
    for (const auto& e : events_)
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    return out;
  }
  bool has(const std::string& e) const {
    std::lock_guard<std::mutex> lk(m_);
    return std::find(events_.begin(), events_.end(), e) != events_.end();
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
};

TEST(TaskWindow, AppendBlocksWhileFullUntilFireFreesASlot) {
  EventLog log;
  ObservedPlatform plat([&] { log.add("generator waits"); });
  TaskWindow w(1, 2, plat);
  Task* a = w.append(desc(0, {{0, W}}));
  ASSERT_NE(a, nullptr);
  Task* b = w.append(desc(1, {{0, R}}));  // fills the window
  ASSERT_EQ(b, nullptr);
  EXPECT_EQ(w.in_flight(), 2u);
  Task* c = nullptr;
  std::thread gen([&] {
    log.add("append starts");
    c = w.append(desc(2, {{0, R}}));
    log.add("append returns");
  });
  const bool blocked = log.wait_for({"generator waits", "append returns"}) && log.has("generator waits");
  if (!blocked || log.has("append returns")) {
    // Unblock before failing so the thread can be joined.
    std::vector<Task*> ready;
    w.fire(a, ready);
    gen.join();
    FAIL() << "append into a full window did not block";
  }
  std::vector<Task*> ready;
  log.add("fire a");
  w.fire(a, ready);
  ASSERT_TRUE(log.wait_for({"append returns"}));
  gen.join();
  EXPECT_EQ(log.events(), (std::vector<std::string>{"append starts", "generator waits", "fire a", "append returns"}));
  // a released b; c came after a finished but b (a reader) does not hold a reader back.
  EXPECT_EQ(tags(ready), (std::vector<int>{1}));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->desc.arg[0], 2);
  EXPECT_EQ(w.in_flight(), 2u);
}

TEST(TaskWindow, AppendDoesNotBlockWhileThereIsRoom) {
  EventLog log;
  ObservedPlatform plat([&] { log.add("generator waits"); });
  TaskWindow w(3, 3, plat);
  std::vector<Task*> ready;
  Task* a = w.append(desc(0, {{0, W}}));
  w.append(desc(1, {{1, W}}));
  w.fire(a, ready);  // frees a slot
  w.append(desc(2, {{2, W}}));
  w.append(desc(3, {{0, W}}));
  EXPECT_FALSE(log.has("generator waits"));
  EXPECT_EQ(w.in_flight(), 3u);
}

// ---------------------------------------------------------------------------
// Ready queue policies
// ---------------------------------------------------------------------------

// Tasks with the given priorities, serial positions 0, 1, 2, ...
std::vector<Task> tasks_with_priorities(const std::vector<int>& prios) {
  std::vector<Task> ts(prios.size());
  for (std::size_t n = 0; n < prios.size(); ++n) {
    ts[n].desc.arg[0] = static_cast<int>(n);
    ts[n].desc.priority = prios[n];
    ts[n].seq = n;
  }
  return ts;
}

std::vector<int> drain(ReadyQueue& q, std::size_t count) {
  std::vector<int> out;
  for (std::size_t n = 0; n < count; ++n) out.push_back(q.pop()->desc.arg[0]);
  return out;
}

TEST(ReadyQueue, PriorityPopsHighestFirstThenSerialOrder) {
  platform::NativePlatform plat;
  ReadyQueue q(plat, ReadyPolicy::Priority);
  auto ts = tasks_with_priorities({3, 1, 3, 2, 7, 1});
  // Push out of serial order: ties must still come out by serial position.
  for (int n : {5, 2, 1, 0, 3}) q.push(&ts[n]);
  EXPECT_EQ(drain(q, 2), (std::vector<int>{0, 2}));
  q.push(&ts[4]);
  EXPECT_EQ(drain(q, 4), (std::vector<int>{4, 3, 1, 5}));
}

TEST(ReadyQueue, FifoPopsInPushOrder) {
  platform::NativePlatform plat;
  ReadyQueue q(plat, ReadyPolicy::Fifo);
  auto ts = tasks_with_priorities({0, 9, 1, 8, 2});
  q.push(std::vector<Task*>{&ts[3], &ts[1]});
  q.push(&ts[4]);
  EXPECT_EQ(drain(q, 2), (std::vector<int>{3, 1}));
  q.push(&ts[0]);
  q.push(&ts[2]);
  EXPECT_EQ(drain(q, 3), (std::vector<int>{4, 0, 2}));
}

TEST(ReadyQueue, RandomIsASeededPermutation) {
  platform::NativePlatform plat;
  auto ts = tasks_with_priorities(std::vector<int>(30, 0));
  auto order = [&](std::uint64_t seed) {
    ReadyQueue q(plat, ReadyPolicy::Random, seed);
    for (auto& t : ts) q.push(&t);
    return drain(q, ts.size());
  };
  std::vector<int> identity(30);
  for (int n = 0; n < 30; ++n) identity[n] = n;
  std::set<std::vector<int>> seen;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto o = order(seed);
    auto sorted = o;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity) << "not a permutation";
    EXPECT_EQ(order(seed), o) << "same seed, different order";
    seen.insert(o);
  }
  // 30! orders: four seeds giving one order, or push order (FIFO) or its
  // reverse (LIFO), would mean the policy is not random.
  EXPECT_EQ(seen.size(), 4u);
  std::vector<int> reversed(identity.rbegin(), identity.rend());
  EXPECT_EQ(seen.count(identity), 0u);
  EXPECT_EQ(seen.count(reversed), 0u);
}

TEST(ReadyQueue, CloseWakesABlockedPopAndDrainsFirst) {
  platform::NativePlatform plat;
  ReadyQueue q(plat, ReadyPolicy::Fifo);
  auto ts = tasks_with_priorities({0, 0});
  EventLog log;
  Task* got = &ts[0];
  std::thread worker([&] {
    log.add("pop");
    got = q.pop();
    log.add("popped");
  });
  ASSERT_TRUE(log.wait_for({"pop"}));
  log.add("close");
  q.close();
  worker.join();
  EXPECT_EQ(got, nullptr);
  EXPECT_EQ(log.events(), (std::vector<std::string>{"pop", "close", "popped"}));
  // Tasks pushed before close are still handed out, then nullptr.
  ReadyQueue q2(plat, ReadyPolicy::Priority);
  q2.push(&ts[1]);
  q2.close();
  EXPECT_EQ(q2.pop(), &ts[1]);
  EXPECT_EQ(q2.pop(), nullptr);
}

// ---------------------------------------------------------------------------
// NodeRuntime: whole runs on random task graphs
// ---------------------------------------------------------------------------

// Checks, while tasks run, that every task sees each datum exactly as serial
// execution would: readers see the version left by the writer before them,
// writers wait for every earlier reader, and no access overlaps a conflicting one.
class OrderChecker final : public Executor {
 public:
  OrderChecker(const std::vector<TaskDesc>& tasks, std::size_t n_data) : data_(n_data), expect_(tasks.size()) {
    std::vector<int> version(n_data, 0), readers(n_data, 0);
    for (std::size_t n = 0; n < tasks.size(); ++n)
      for (int a = 0; a < tasks[n].n_access; ++a) {
        const DataId d = tasks[n].access[a].data;
        expect_[n].push_back({version[d], readers[d]});
        if (writes(tasks[n].access[a].mode)) {
          ++version[d];
          readers[d] = 0;
        } else {
          ++readers[d];
        }
      }
  }
  void execute(const TaskDesc& t, WorkerContext&) override {
    const int n = t.arg[0];
    for (int a = 0; a < t.n_access; ++a) {
      Datum& d = data_[t.access[a].data];
      std::lock_guard<std::mutex> lk(d.m);
      const auto [version, readers_before] = expect_[n][a];
      if (d.version != version)
        fail(n, "sees version " + std::to_string(d.version) + ", expected " + std::to_string(version));
      if (writes(t.access[a].mode)) {
        if (d.readers_done != readers_before)
          fail(n,
               "writes after " + std::to_string(d.readers_done) + " of " + std::to_string(readers_before) + " readers");
        if (d.active_readers || d.active_writer) fail(n, "writes during another access");
        d.active_writer = true;
      } else {
        if (d.active_writer) fail(n, "reads during a write");
        ++d.active_readers;
      }
    }
    std::this_thread::yield();  // widen the window in which overlaps would show
    for (int a = 0; a < t.n_access; ++a) {
      Datum& d = data_[t.access[a].data];
      std::lock_guard<std::mutex> lk(d.m);
      if (writes(t.access[a].mode)) {
        d.active_writer = false;
        ++d.version;
        d.readers_done = 0;
      } else {
        --d.active_readers;
        ++d.readers_done;
      }
    }
    executed_.fetch_add(1);
  }
  std::vector<std::string> failures() const {
    std::lock_guard<std::mutex> lk(fail_m_);
    return failures_;
  }
  int executed() const { return executed_.load(); }

 private:
  struct Datum {
    std::mutex m;
    int version = 0, readers_done = 0, active_readers = 0;
    bool active_writer = false;
  };
  void fail(int n, const std::string& what) {
    std::lock_guard<std::mutex> lk(fail_m_);
    if (failures_.size() < 20) failures_.push_back("task " + std::to_string(n) + " " + what);
  }
  std::vector<Datum> data_;
  std::vector<std::vector<std::pair<int, int>>> expect_;
  mutable std::mutex fail_m_;
  std::vector<std::string> failures_;
  std::atomic<int> executed_{0};
};

std::vector<TaskDesc> random_tasks(int count, int n_data, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<TaskDesc> out;
  for (int n = 0; n < count; ++n) {
    TaskDesc d;
    d.kernel = kNop;
    d.arg[0] = n;
    const int k = 1 + static_cast<int>(rng() % kMaxAccesses);
    for (int a = 0; a < k; ++a) {
      const auto m = static_cast<AccessMode>(1 + rng() % 3);
      // Reads dominate, as in the factorizations.
      d.add(static_cast<DataId>(rng() % n_data), rng() % 3 == 0 ? m : AccessMode::Read);
    }
    out.push_back(d);
  }
  return out;
}

#ifdef TESSERA_TSAN
constexpr int kRandomTasks = 1500;
#else
constexpr int kRandomTasks = 6000;
#endif

TEST(NodeRuntime, RandomGraphsRunInADependencyRespectingOrder) {
  struct Case {
    int n_data, threads;
    std::size_t capacity;
    ReadyPolicy policy;
    std::uint64_t seed;
  };
  const Case cases[] = {
      {8, 3, 4, ReadyPolicy::Random, 1},   {8, 3, 1, ReadyPolicy::Random, 2},    {32, 2, 64, ReadyPolicy::Random, 3},
      {5, 3, 16384, ReadyPolicy::Fifo, 4}, {16, 3, 7, ReadyPolicy::Priority, 5}, {3, 1, 2, ReadyPolicy::Random, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("n_data " + std::to_string(c.n_data) + " threads " + std::to_string(c.threads) + " capacity " +
                 std::to_string(c.capacity) + " seed " + std::to_string(c.seed));
    const auto tasks = random_tasks(kRandomTasks, c.n_data, c.seed);
    OrderChecker checker(tasks, c.n_data);
    platform::NativePlatform plat;
    RuntimeOptions opt;
    opt.threads = c.threads;
    opt.window_capacity = c.capacity;
    opt.policy = c.policy;
    opt.seed = c.seed;
    NodeRuntime rt(plat, opt);
    const RunStats st = rt.run(
        c.n_data,
        [&](TaskSink& s) {
          for (const auto& t : tasks) s.insert(t);
        },
        checker);
    EXPECT_EQ(st.tasks, tasks.size());
    EXPECT_EQ(checker.executed(), kRandomTasks);
    EXPECT_EQ(st.busy_s.size(), static_cast<std::size_t>(c.threads));
    EXPECT_THAT(checker.failures(), IsEmpty());
  }
}

TEST(NodeRuntime, EmptyGeneratorFinishes) {
  platform::NativePlatform plat;
  RuntimeOptions opt;
  opt.threads = 3;
  NodeRuntime rt(plat, opt);
  OrderChecker checker({}, 1);
  const RunStats st = rt.run(
      1, [](TaskSink&) {}, checker);
  EXPECT_EQ(st.tasks, 0u);
}

class ThrowingExecutor final : public Executor {
 public:
  explicit ThrowingExecutor(int bad) : bad_(bad) {}
  void execute(const TaskDesc& t, WorkerContext&) override {
    ran_.fetch_add(1);
    if (t.arg[0] == bad_) throw std::runtime_error("kernel failed on task " + std::to_string(bad_));
  }
  int ran() const { return ran_.load(); }

 private:
  int bad_;
  std::atomic<int> ran_{0};
};

TEST(NodeRuntime, KernelExceptionCancelsTheRunAndIsRethrown) {
  // A chain of writers on one datum: nothing after the failing task may run.
  for (std::size_t capacity : {std::size_t{2}, std::size_t{16384}}) {
    platform::NativePlatform plat;
    RuntimeOptions opt;
    opt.threads = 3;
    opt.window_capacity = capacity;
    NodeRuntime rt(plat, opt);
    ThrowingExecutor ex(40);
    try {
      rt.run(
          1,
          [](TaskSink& s) {
            for (int n = 0; n < 1000; ++n) s.insert(desc(n, {{0, RW}}));
          },
          ex);
      ADD_FAILURE() << "the kernel's exception was not rethrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "kernel failed on task 40");
    }
    EXPECT_EQ(ex.ran(), 41) << "tasks ran after the failure (capacity " << capacity << ")";
  }
}

TEST(NodeRuntime, GeneratorExceptionIsRethrown) {
  platform::NativePlatform plat;
  RuntimeOptions opt;
  opt.threads = 2;
  opt.window_capacity = 4;
  NodeRuntime rt(plat, opt);
  ThrowingExecutor ex(-1);
  EXPECT_THROW(rt.run(
                   1,
                   [](TaskSink& s) {
                     for (int n = 0; n < 50; ++n) s.insert(desc(n, {{0, RW}}));
                     throw InputError("generator failed");
                   },
                   ex),
               InputError);
}

TEST(NodeRuntime, ZeroThreadsIsRejected) {
  platform::NativePlatform plat;
  RuntimeOptions opt;
  opt.threads = 0;
  try {
    NodeRuntime rt(plat, opt);
    ADD_FAILURE() << "threads = 0 accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("threads = 0"));
  }
}

}  // namespace
}  // namespace tessera
