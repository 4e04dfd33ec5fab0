// The tile-size tuner's pure steps (experiments/tune.hpp) on hand-made
// curves: the plateau of the dominant kernel's speed, the candidates it gives
// (every s from the plateau on, every column on the GPUs, tall tiles for a
// tall matrix). The whole tuner: test_tune.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "experiments/tune.hpp"
#include "test_helpers.hpp"

namespace tessera::test {
namespace {

TEST(TunePlateau, IsTheSmallestSizeWithinTheFractionOfTheBest) {
  const std::vector<KernelSpeed> curve{{128, 10}, {256, 50}, {384, 96}, {512, 100}, {640, 99}};
  EXPECT_EQ(plateau_size(curve, 0.95), 384);
  EXPECT_EQ(plateau_size(curve, 0.97), 512);
  EXPECT_EQ(plateau_size(curve, 0.5), 256);
  EXPECT_EQ(plateau_size(curve, 0.01), 128);
  // A dip after the plateau does not move it.
  EXPECT_EQ(plateau_size({{128, 90}, {192, 100}, {256, 40}}, 0.95), 192);
  EXPECT_THROW(plateau_size({}, 0.95), InputError);
  EXPECT_THROW(plateau_size({{128, 0}, {256, 0}}, 0.95), InputError);
}

TEST(TuneCandidates, ArePlateauSizesOnwardTimesEveryS) {
  const std::vector<KernelSpeed> curve{{128, 10}, {256, 50}, {384, 96}, {512, 100}, {640, 99}};
  const auto c = tune_candidates(curve, 384, 2, 3, 0, 100000);
  ASSERT_EQ(c.size(), 6u);
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].B, i < 3 ? 384 : 512);
    EXPECT_EQ(c[i].s, static_cast<int>(i % 3) + 1);
    EXPECT_FALSE(c[i].auto_b);  // no GPU: the runtime's default b
  }
  // With GPUs, s >= 2 takes b from the host/GPU balance.
  for (const TuneCandidate& x : tune_candidates(curve, 384, 1, 3, 2, 100000)) EXPECT_EQ(x.auto_b, x.s >= 2);
  // sizes = 0: every size from the plateau on (384, 512, 640).
  EXPECT_EQ(tune_candidates(curve, 384, 0, 1, 0, 100000).size(), 3u);
  EXPECT_EQ(tune_candidates(curve, 256, 0, 2, 0, 100000).size(), 8u);
  // Sizes beyond the matrix are left out; a matrix narrower than the plateau is one tile wide.
  EXPECT_EQ(tune_candidates(curve, 384, 6, 1, 0, 520).size(), 2u);
  const auto narrow = tune_candidates(curve, 384, 6, 2, 0, 300);
  ASSERT_EQ(narrow.size(), 2u);
  EXPECT_EQ(narrow[0].B, 300);
}

// A tall matrix adds tiles a 32nd, 16th and 8th of a thread's rows tall with
// 256-wide columns, above the largest plateau candidate; none for a square or
// merely tall (m < 8n) matrix, none with GPUs, none wider than the matrix.
// Every column on the GPUs: columns of 512, 1024, 2048, ... up to the
// range's end, at least two of them, the last one the rest.
TEST(TuneCandidates, EveryColumnOnTheGpusTakesWidthsOfPowersOfTwo) {
  std::vector<std::tuple<std::int64_t, int, std::int64_t>> got;
  for (const TuneCandidate& x : gpu_column_candidates(4096, 0, 10000, 1)) {
    EXPECT_TRUE(x.gpu_columns);
    EXPECT_FALSE(x.auto_b);
    EXPECT_LT((x.s - 1) * x.b, x.B) << "the last column has a width";
    got.emplace_back(x.B, x.s, x.b);
  }
  const std::vector<std::tuple<std::int64_t, int, std::int64_t>> want{
      {10000, 20, 512}, {10000, 10, 1024}, {10000, 5, 2048}, {10000, 3, 4096}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(gpu_column_candidates(2048, 0, 10000, 1).size(), 3u);  // up to the range's end
  EXPECT_EQ(gpu_column_candidates(4096, 2, 10000, 1).size(), 2u);  // the narrowest two
  EXPECT_EQ(gpu_column_candidates(4096, 0, 4096, 1).size(), 3u);   // 512, 1024, 2048: two columns at least
  EXPECT_TRUE(gpu_column_candidates(4096, 0, 10000, 0).empty());   // no GPU
  EXPECT_TRUE(gpu_column_candidates(4096, 0, 1000, 1).empty());    // not two columns of 512
}

TEST(TuneCandidates, TallMatricesAlsoGetTallTiles) {
  const auto c = tall_candidates(65536, 1024, 2, 0, 640);
  ASSERT_EQ(c.size(), 3u);
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].B, std::int64_t{1024} << i);
    EXPECT_EQ(c[i].s, 4 << i);
    EXPECT_FALSE(c[i].auto_b);
  }
  EXPECT_EQ(tall_candidates(65536, 1024, 2, 0, 1024).size(), 2u);  // only sizes above the plateau candidates
  EXPECT_TRUE(tall_candidates(8192, 8192, 2, 0, 640).empty());
  EXPECT_TRUE(tall_candidates(7 * 1024, 1024, 1, 0, 64).empty());
  EXPECT_TRUE(tall_candidates(65536, 1024, 2, 1, 640).empty());
  EXPECT_TRUE(tall_candidates(65536, 128, 1, 0, 640).empty());  // 256-wide columns do not fit 128 columns
}

// Whether process `pid` has ended (gone, or a zombie nobody has reaped yet).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

// A child run ends with the tuner, however the tuner ends (SIGKILL here): it went on as an orphan, timing on the
// cores it shared with whatever ran next, and left its temporary JSON behind.
TEST(TuneChild, EndsWithTheTuner) {
  TempDir dir;
  const std::string pidfile = dir.path() + "/child.pid";
  const std::string child = dir.write("child.sh", "#!/bin/sh\necho $$ > " + pidfile + ".part && mv " + pidfile +
                                                      ".part " + pidfile + "\nexec sleep 60\n");
  ASSERT_EQ(::chmod(child.c_str(), 0755), 0);
  const pid_t tuner = ::fork();
  ASSERT_GE(tuner, 0);
  if (tuner == 0) {
    run_child(child, {});
    ::_exit(0);
  }
  pid_t pid = 0;
  for (int i = 0; i < 200 && pid == 0; ++i) {
    std::ifstream in(pidfile);
    if (!(in >> pid)) pid = 0;
    if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(pid, 0) << "the child never started";
  ::kill(tuner, SIGKILL);
  ::waitpid(tuner, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ended(pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "child " << pid << " outlived its tuner";
  if (!gone) ::kill(pid, SIGKILL);
}

}  // namespace
}  // namespace tessera::test
