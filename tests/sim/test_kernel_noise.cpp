// Kernel-time variability (models/kernel_noise.hpp): the draws are standard
// normals that depend only on their inputs, the decorator multiplies by the
// lognormal factors it documents and nothing else, "auto" reads the
// calibration's spreads by the documented rule, and a simulated run with
// variation stays reproducible bit for bit, changes with the seed, keeps its
// factors correct on real data and refuses bad values with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "base/task.hpp"
#include "models/kernel_model.hpp"
#include "models/kernel_noise.hpp"
#include "sim_cli_util.hpp"

namespace tessera::test {
namespace {

using models::KernelNoise;
using models::NoisyModel;

// Every call takes 2 s: the factors are then the times over 2.
class FlatModel final : public KernelTimeModel {
 public:
  double seconds(const KernelShape&) const override { return 2.0; }
};

const KernelShape kGemm{kGsmm, 'd', 256, 256, 256, 0};

TEST(KernelNoise, StandardNormalsAreReproducibleAndStandard) {
  EXPECT_EQ(models::standard_normal(7, 1, 2), models::standard_normal(7, 1, 2));
  EXPECT_NE(models::standard_normal(7, 1, 2), models::standard_normal(8, 1, 2));
  EXPECT_NE(models::standard_normal(7, 1, 2), models::standard_normal(7, 2, 2));
  const int n = 40000;
  double sum = 0, sum2 = 0;
  int inside = 0;
  for (int i = 0; i < n; ++i) {
    const double z = models::standard_normal(3, static_cast<std::uint64_t>(i), 5);
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    sum2 += z * z;
    inside += std::abs(z) < 1.959964;
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Standard errors: 0.005 for the mean, 0.007 for the variance, 0.001 for the fraction.
  EXPECT_NEAR(mean, 0.0, 0.025);
  EXPECT_NEAR(var, 1.0, 0.035);
  EXPECT_NEAR(double(inside) / n, 0.95, 0.006);
}

TEST(KernelNoise, WithoutVariationTheModelIsUnchanged) {
  const FlatModel flat;
  const NoisyModel m(flat, KernelNoise{}, 3, 0);
  for (std::uint64_t key = 0; key < 100; ++key) EXPECT_EQ(m.seconds_for(kGemm, 0.5, key), 2.0);
  EXPECT_EQ(m.node_factor(), 1.0);
}

TEST(KernelNoise, TaskFactorsAreLognormalAroundTheMedianAndFollowTheTask) {
  const FlatModel flat;
  KernelNoise noise;
  noise.sigma = 0.1;
  const NoisyModel m(flat, noise, 0, 0);
  std::vector<double> logs;
  for (std::uint64_t key = 0; key < 20000; ++key) logs.push_back(std::log(m.seconds_for(kGemm, 0, key) / 2.0));
  std::nth_element(logs.begin(), logs.begin() + logs.size() / 2, logs.end());
  EXPECT_NEAR(logs[logs.size() / 2], 0.0, 0.004);  // the model's time is the median
  double sum = 0, sum2 = 0;
  for (double x : logs) sum += x, sum2 += x * x;
  EXPECT_NEAR(std::sqrt(sum2 / logs.size() - (sum / logs.size()) * (sum / logs.size())), 0.1, 0.003);
  // The same task the same time, whenever it runs; the model's own time untouched.
  EXPECT_EQ(m.seconds_for(kGemm, 0, 42), m.seconds_for(kGemm, 9.0, 42));
  EXPECT_EQ(m.seconds(kGemm), 2.0);
  // Other nodes, the GPUs and other seeds draw apart.
  const NoisyModel other_node(flat, noise, 1, 0), gpu(flat, noise, 0, 1);
  KernelNoise reseeded = noise;
  reseeded.seed = 2;
  const NoisyModel other_seed(flat, reseeded, 0, 0);
  EXPECT_NE(m.seconds_for(kGemm, 0, 42), other_node.seconds_for(kGemm, 0, 42));
  EXPECT_NE(m.seconds_for(kGemm, 0, 42), gpu.seconds_for(kGemm, 0, 42));
  EXPECT_NE(m.seconds_for(kGemm, 0, 42), other_seed.seconds_for(kGemm, 0, 42));
}

TEST(KernelNoise, ANodesFactorIsOnePerNode) {
  const FlatModel flat;
  KernelNoise noise;
  noise.node_sigma = 0.2;
  std::vector<double> factors;
  for (int node = 0; node < 8; ++node) {
    const NoisyModel host(flat, noise, node, 0), gpu(flat, noise, node, 1);
    EXPECT_NE(host.node_factor(), 1.0);
    EXPECT_EQ(host.node_factor(), gpu.node_factor()) << "the node's host and GPUs share its factor";
    for (std::uint64_t key = 0; key < 20; ++key) EXPECT_EQ(host.seconds_for(kGemm, 0, key), 2.0 * host.node_factor());
    factors.push_back(host.node_factor());
  }
  std::sort(factors.begin(), factors.end());
  EXPECT_LT(factors.front(), factors.back());
}

TEST(KernelNoise, AutoTakesTheCalibrationsSpreadsInRunOnesFirst) {
  // Median 1 and interquartile range I: sigma = ln((1 + I/2) / (1 - I/2)) / 1.349.
  auto entry = [](std::uint16_t k, std::int64_t n, double iqr, bool in_run) {
    models::CalibratedModel::Entry e;
    e.kernel = k, e.precision = 'd', e.m = e.n = n, e.k = k == kGsmm ? n : 0;
    e.median_s = 1.0, e.spread_s = iqr, e.in_run = in_run;
    return e;
  };
  const double wide = 2 * std::tanh(0.1 * 0.6744897501960817);  // sigma 0.1 exactly
  const double narrow = 2 * std::tanh(0.02 * 0.6744897501960817);
  const models::CalibratedModel cal(
      "test", {entry(kGsmm, 100, narrow, false), entry(kGsmm, 200, wide, true), entry(kGsmm, 300, narrow, false),
               entry(kTrsm, 100, narrow, false), entry(kTrsm, 200, narrow, false), entry(kTrsm, 300, wide, false)});
  const auto sigmas = models::measured_sigmas(cal, "test");
  EXPECT_NEAR(sigmas.at({kGsmm, 'd'}), 0.1, 1e-12);   // the in-run entry, though alone-timed ones are more
  EXPECT_NEAR(sigmas.at({kTrsm, 'd'}), 0.02, 1e-12);  // no in-run entry: the median of all
  KernelNoise noise;
  noise.sigma_from_model = true;
  EXPECT_THROW(NoisyModel(cal, noise, 0, 0), std::logic_error);  // the sigmas must be taken first
  models::take_measured_sigmas(noise, cal, nullptr);
  EXPECT_EQ(noise.core_sigmas, sigmas);
  EXPECT_TRUE(noise.gpu_sigmas.empty());
  const NoisyModel m(cal, noise, 0, 0);
  EXPECT_NEAR(m.sigma(kGsmm, 'd'), 0.1, 1e-12);
  EXPECT_EQ(m.sigma(kPotf2p, 'd'), 0.0);  // never measured: no variation
  const FlatModel flat;
  EXPECT_THROW(models::measured_sigmas(flat, "--kernel-noise auto"), InputError);
  // A calibration without spreads would add no variation while saying auto: refused.
  const models::CalibratedModel bare("bare", {entry(kGsmm, 100, 0.0, true), entry(kTrsm, 100, 0.0, false)});
  EXPECT_THROW(models::measured_sigmas(bare, "--kernel-noise auto"), InputError);
}

std::vector<std::string> keeneland(std::vector<std::string> extra) {
  std::vector<std::string> a = {
      "run",    "--backend", "sim", "--machine", TESSERA_SOURCE_DIR "/platform/machines/keeneland.json",
      "--algo", "cholesky",  "--n", "4608",      "--B",
      "576",    "--grid",    "2x2", "--gpus",    "2"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(KernelNoiseRuns, ReproducibleForASeedDifferentForAnotherNoneAtZero) {
  const double plain = run_ok(keeneland({})).at("time_s").get<double>();
  const nlohmann::json a = run_ok(keeneland({"--kernel-noise", "0.1", "--node-noise", "0.05"}));
  const nlohmann::json b = run_ok(keeneland({"--kernel-noise", "0.1", "--node-noise", "0.05"}));
  const nlohmann::json c = run_ok(keeneland({"--kernel-noise", "0.1", "--node-noise", "0.05", "--noise-seed", "2"}));
  EXPECT_EQ(a.at("time_s").get<double>(), b.at("time_s").get<double>());
  EXPECT_NE(a.at("time_s").get<double>(), c.at("time_s").get<double>());
  EXPECT_NE(a.at("time_s").get<double>(), plain);
  EXPECT_EQ(a.at("kernel_noise").at("sigma").get<double>(), 0.1);
  EXPECT_EQ(a.at("kernel_noise").at("node_sigma").get<double>(), 0.05);
  EXPECT_EQ(c.at("kernel_noise").at("seed").get<int>(), 2);
  // Zero variation is the model itself, bit for bit.
  EXPECT_EQ(run_ok(keeneland({"--kernel-noise", "0", "--node-noise", "0"})).at("time_s").get<double>(), plain);
  EXPECT_FALSE(run_ok(keeneland({})).contains("kernel_noise"));
}

// Each task's duration ("dur") or start ("ts") in a run's trace, by the task's
// identity (kernel, k, i, j).
std::map<std::tuple<std::string, int, int, int>, double> task_durations(const std::string& trace,
                                                                        const char* field = "dur") {
  std::map<std::tuple<std::string, int, int, int>, double> out;
  const nlohmann::json t = nlohmann::json::parse(read_text(trace));
  for (const auto& e : t.at("traceEvents"))
    if (e.value("cat", "") == "task" && e.value("ph", "") == "X") {
      const auto& a = e.at("args");
      out[{e.at("name").get<std::string>(), a.at("k").get<int>(), a.at("i").get<int>(), a.at("j").get<int>()}] =
          e.at(field).get<double>();
    }
  return out;
}

std::map<std::tuple<std::string, int, int, int>, double> traced(std::vector<std::string> args, const TempDir& dir,
                                                                const std::string& name) {
  args.insert(args.end(), {"--trace", dir.path() + "/" + name + ".json"});
  run_ok(args);
  return task_durations(dir.path() + "/" + name + ".json");
}

// Every task draws its own factor, on the cores and on the GPU alike (the
// GPUs' model is wrapped as the cores' is; with --s 2 --b auto the narrow
// columns' 204 tasks run on the cores, the 240 others on the GPU), and the
// same task draws the same factor whatever order the ready queue runs tasks in
// (fifo does run them in another order: some start at other times).
TEST(KernelNoiseRuns, EveryTaskDrawsItsOwnFactorWhateverTheOrder) {
  TempDir dir;
  const std::vector<std::string> one = {
      "run",    "--backend", "sim",       "--machine", TESSERA_SOURCE_DIR "/platform/machines/keeneland.json",
      "--algo", "cholesky",  "--n",       "4608",      "--B",
      "576",    "--s",       "2",         "--b",       "auto",
      "--gpus", "1",         "--threads", "3"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = one;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const auto plain = traced(one, dir, "plain");
  const auto noisy = traced(with({"--kernel-noise", "0.2"}), dir, "noisy");
  const auto fifo = traced(with({"--kernel-noise", "0.2", "--policy", "fifo"}), dir, "fifo");
  ASSERT_EQ(plain.size(), noisy.size());
  ASSERT_GT(plain.size(), 50u);
  int changed = 0;
  for (const auto& [task, dur] : plain) {
    ASSERT_TRUE(noisy.count(task) && fifo.count(task));
    changed += std::abs(noisy.at(task) - dur) > 1e-3 * dur;
    // (The trace writes times in ns: a duration is rounded twice.)
    EXPECT_NEAR(fifo.at(task), noisy.at(task), 2.5e-3) << std::get<0>(task);
  }
  // A draw within 0.005 of Z = 0 leaves a task within 0.1% of its time: a few may.
  EXPECT_GE(changed, static_cast<int>(0.97 * plain.size())) << "tasks whose time the variation left alone";
  const auto noisy_starts = task_durations(dir.path() + "/noisy.json", "ts");
  const auto fifo_starts = task_durations(dir.path() + "/fifo.json", "ts");
  ASSERT_EQ(fifo_starts.size(), noisy_starts.size());
  int moved = 0;
  for (const auto& [task, ts] : noisy_starts) moved += std::abs(fifo_starts.at(task) - ts) > 1e-3;
  EXPECT_GT(moved, 0) << "--policy fifo started every task when priority did";
}

// --node-noise: each node of a cluster its own factor, the same for all its tasks.
TEST(KernelNoiseRuns, EachNodeOfAClusterHasItsOwnFactor) {
  TempDir dir;
  std::vector<std::string> two = {
      "run",    "--backend", "sim", "--machine", TESSERA_SOURCE_DIR "/platform/machines/keeneland.json",
      "--algo", "cholesky",  "--n", "4608",      "--B",
      "576",    "--grid",    "2x1"};
  const auto plain0 = traced(two, dir, "plain");
  const auto plain1 = task_durations(dir.path() + "/plain.node1.json");
  two.insert(two.end(), {"--node-noise", "0.2"});
  const auto noisy0 = traced(two, dir, "noisy");
  const auto noisy1 = task_durations(dir.path() + "/noisy.node1.json");
  auto factor = [](const auto& plain, const auto& noisy) {
    double f = 0;
    for (const auto& [task, dur] : plain) {
      const double r = noisy.at(task) / dur;
      if (f == 0) f = r;
      EXPECT_NEAR(r, f, 2.5e-3 / dur) << "one factor for every task of a node";
    }
    return f;
  };
  const double f0 = factor(plain0, noisy0), f1 = factor(plain1, noisy1);
  EXPECT_NE(f0, 1.0);
  EXPECT_NE(f1, 1.0);
  EXPECT_GT(std::abs(f0 - f1), 1e-6) << "both nodes drew the same factor";
}

// auto on a calibrated file: the run's JSON lists the sigmas it drew with
// (taken before the run, while the machine file's models exist).
TEST(KernelNoiseRuns, AutoListsTheSigmasItDrewWith) {
  const std::vector<std::string> args = {
      "run",    "--backend",      "sim", "--machine", TESSERA_SOURCE_DIR "/platform/machines/local.json",
      "--algo", "cholesky",       "--n", "2000",      "--threads",
      "2",      "--kernel-noise", "auto"};
  const nlohmann::json a = run_ok(args), b = run_ok(args);
  const nlohmann::json& sigmas = a.at("kernel_noise").at("sigmas");
  ASSERT_TRUE(sigmas.contains("gsmm/d")) << sigmas;
  EXPECT_GT(sigmas.at("gsmm/d").get<double>(), 0.0);
  EXPECT_LT(sigmas.at("gsmm/d").get<double>(), 0.5);
  EXPECT_EQ(a.at("kernel_noise").at("sigma"), "auto");
  EXPECT_EQ(a.at("time_s").get<double>(), b.at("time_s").get<double>());
}

// The decorator "multiplies by the lognormal factors it documents and nothing
// else": a calibrated file's first-call costs (local.json: POTF2' 1.385 ms,
// TRSM 2.578 ms, GSMM_DIAG 0.389 ms, GSMM 0.063 ms in double), which the
// cold-start wrapper asks of the noisy model, pass through it, so a sigma of
// 1e-12 leaves the run's time that of the run without noise, to 1e-9 (the
// factors' own 1e-12 and rounding). Losing them would take about 4 ms off
// these 36 ms. (Until ColdStartState gave the first call's end 1 ns of
// slack, a GSMM starting on the lane where the first GSMM had just ended paid
// its 63 us again or not by rounding: 0.0622585 s without noise, 0.0621952
// with --node-noise 1e-12, at 1 thread.)
TEST(KernelNoiseRuns, FirstCallCostsPassThroughTheNoise) {
  const std::vector<std::string> local = {
      "run",    "--backend", "sim", "--machine", TESSERA_SOURCE_DIR "/platform/machines/local.json",
      "--algo", "cholesky",  "--n", "2000"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = local;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  for (const char* threads : {"1", "2"}) {
    const double plain = run_ok(with({"--threads", threads})).at("time_s").get<double>();
    ASSERT_GT(plain, 0.0);
    for (const auto& noise :
         std::vector<std::vector<std::string>>{{"--kernel-noise", "1e-12"},
                                               {"--node-noise", "1e-12"},
                                               {"--kernel-noise", "1e-12", "--node-noise", "1e-12"}}) {
      std::vector<std::string> extra = noise;
      extra.insert(extra.end(), {"--threads", threads});
      EXPECT_NEAR(run_ok(with(extra)).at("time_s").get<double>(), plain, 1e-9 * plain) << noise[0] << ", " << threads;
    }
  }
}

TEST(KernelNoiseRuns, FactorsStayCorrectOnRealData) {
  const nlohmann::json r = run_ok(
      {"run", "--backend", "sim", "--machine", TESSERA_SOURCE_DIR "/platform/machines/keeneland.json", "--algo", "qr",
       "--n", "300", "--B", "48", "--grid", "2x1", "--gpus", "1", "--sim-data", "--check", "--kernel-noise", "0.3"});
  EXPECT_EQ(r.at("check_passed"), true);
}

TEST(KernelNoiseRuns, BadValuesExitTwoNamingThem) {
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {keeneland({"--kernel-noise", "-0.1"}), "--kernel-noise '-0.1'"},
           {keeneland({"--kernel-noise", "inf"}), "--kernel-noise 'inf'"},
           {keeneland({"--node-noise", "big"}), "--node-noise 'big'"},
           {keeneland({"--noise-seed", "-1"}), "--noise-seed '-1'"},
           {keeneland({"--noise-seed", " -1"}), "--noise-seed ' -1'"},
           {keeneland({"--noise-seed", "+5"}), "--noise-seed '+5'"},
           {keeneland({"--noise-seed", "99999999999999999999"}), "--noise-seed '99999999999999999999'"},
           {keeneland({"--kernel-noise", "2.5"}), "--kernel-noise '2.5'"},
           {keeneland({"--node-noise", ""}), "--node-noise ''"},
           {keeneland({"--kernel-noise", ""}), "--kernel-noise ''"},
           {keeneland({"--kernel-noise", "auto"}), "no measured spreads"},
           {{"run", "--algo", "cholesky", "--n", "64", "--kernel-noise", "0.1"}, "add --backend sim"}}) {
    const Outcome o = run_tessera(args);
    EXPECT_TRUE(o.exited) << o;
    EXPECT_EQ(o.status, 2) << o;
    EXPECT_EQ(o.out, "") << o;
    EXPECT_NE(o.err.find(says), std::string::npos) << o;
  }
}

}  // namespace
}  // namespace tessera::test
