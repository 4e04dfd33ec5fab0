// The same input through the native and the simulated backend.
#include <gtest/gtest.h>

#include <cstring>

#include "algorithms/cholesky.hpp"
#include "algorithms/qr.hpp"
#include "base/matrix_gen.hpp"
#include "experiments/driver.hpp"
#include "models/machine.hpp"
#include "platform/native/native_platform.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "sim_test_util.hpp"

namespace {
using namespace tessera;
using test::exact;
using test::run_in_child;

const std::string kLocal = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/local-example.json";
const std::string kKeeneland = std::string(TESSERA_SOURCE_DIR) + "/platform/machines/keeneland.json";

// Factors a generated SPD matrix (n, tiles of B) with `threads` workers on
// `p` and returns the tiles' bytes.
std::string cholesky_factor(platform::Platform& p, const KernelTimeModel* model, index_t n, index_t B, int threads) {
  const TileLayout L(n, n, B, 1, 0);
  TileMatrix<double> a(L);
  generate(a, MatrixKind::Spd, 7);
  RuntimeOptions o;
  o.threads = threads;
  o.model = model;
  NodeRuntime rt(p, o);
  CholeskyExecutor<double> ex(a);
  rt.run(
      cholesky_data_count(L), [&](TaskSink& s) { cholesky_tasks(L, s); }, ex);
  const std::vector<double> dense = a.to_dense();
  return std::string(reinterpret_cast<const char*>(dense.data()), dense.size() * sizeof(double));
}

// Tile kernels are deterministic and every tile's updates happen in serial
// order on both backends, so the factors agree bit for bit.
TEST(CrossBackend, CholeskySimIsEquivalentToNative) {
  constexpr index_t n = 700, B = 128;
  platform::NativePlatform native;
  const std::string expected = cholesky_factor(native, nullptr, n, B, 2);
  const std::string simulated = run_in_child([&] {
    const auto machine = platform::Machine::load(kLocal);
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, /*sim_data=*/true);
    return cholesky_factor(node0, &machine.core_model(), n, B, 2);
  });
  ASSERT_EQ(simulated.size(), expected.size());
  EXPECT_TRUE(std::memcmp(simulated.data(), expected.data(), expected.size()) == 0)
      << "simulated factor differs from the native one";
}

// The command-line path: --backend sim --sim-data --check passes the residual test.
RunResult simulated_run(const std::string& machine_file, RunConfig c, bool sim_data) {
  const std::string out = run_in_child([&] {
    const auto machine = platform::Machine::load(machine_file);
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, sim_data);
    c.model = &machine.core_model();
    c.phantom = !sim_data;
    const RunResult r = run_factorization(c, node0);
    return exact(r.time_s) + " " +
           (r.residuals ? exact(r.residuals->factor) + " " + exact(r.residuals->value("orth")) : "- -");
  });
  RunResult r;
  char t[64], f[64], o[64];
  std::sscanf(out.c_str(), "%63s %63s %63s", t, f, o);
  r.time_s = std::strtod(t, nullptr);
  if (f[0] != '-')
    r.residuals = Residuals{std::strtod(f, nullptr), {{"orth", "orthogonality", std::strtod(o, nullptr)}}};
  return r;
}

TEST(CrossBackend, SimulatedCholeskyPassesCheck) {
  RunConfig c;
  c.n = 600;
  c.B = 128;
  c.threads = 2;
  c.check = true;
  const RunResult r = simulated_run(kLocal, c, true);
  ASSERT_TRUE(r.residuals);
  EXPECT_TRUE(r.residuals->passed()) << r.residuals->factor;
  EXPECT_GT(r.time_s, 0);
}

TEST(CrossBackend, SimulatedQrPassesCheck) {
  RunConfig c;
  c.algo = "qr";
  c.m = 500;
  c.n = 400;
  c.B = 96;
  c.threads = 3;
  c.check = true;
  const RunResult r = simulated_run(kKeeneland, c, true);
  ASSERT_TRUE(r.residuals);
  EXPECT_TRUE(r.residuals->passed()) << r.residuals->factor << " " << r.residuals->value("orth");
}

// Same inputs, two processes: bit-identical makespans, with a random ready order too.
TEST(SimDeterminism, TwoRunsGiveTheSameMakespan) {
  for (const auto policy : {ReadyPolicy::Priority, ReadyPolicy::Random}) {
    RunConfig c;
    c.algo = "qr";
    c.n = 3000;
    c.B = 160;
    c.threads = 7;
    c.policy = policy;
    const double a = simulated_run(kKeeneland, c, false).time_s;
    const double b = simulated_run(kKeeneland, c, false).time_s;
    EXPECT_GT(a, 0);
    EXPECT_EQ(exact(a), exact(b));
  }
  RunConfig c;
  c.n = 4000;
  c.threads = 2;
  EXPECT_EQ(exact(simulated_run(kLocal, c, false).time_s), exact(simulated_run(kLocal, c, false).time_s));
}

}  // namespace
