// Simulation speed: a phantom-kernel Cholesky of >= 1,000,000 tasks on one
// simulated node, reporting simulated tasks per wall-clock second.
//
//   bench_sim_speed [machine.json] [threads] [tile columns] [coop|s4u]
//
// Defaults: platform/machines/local-example.json, 2 simulated cores, 184
// tile columns of 64 (1,055,240 tasks). One simulation per process (SimGrid).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "experiments/driver.hpp"
#include "models/machine.hpp"
#include "platform/simgrid/simgrid_platform.hpp"

int main(int argc, char** argv) {
  using namespace tessera;
  const std::string file = argc > 1 ? argv[1] : TESSERA_SOURCE_DIR "/platform/machines/local-example.json";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const int q = argc > 3 ? std::atoi(argv[3]) : 184;
  const bool s4u = argc > 4 && std::string(argv[4]) == "s4u";
  try {
    const auto machine = platform::Machine::load(file);
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, /*sim_data=*/false,
                                    s4u ? platform::SimSync::S4U : platform::SimSync::Cooperative);
    RunConfig c;
    c.n = 64 * static_cast<index_t>(q);
    c.B = 64;
    c.threads = threads;
    c.model = &machine.core_model();
    c.phantom = true;
    const auto t0 = std::chrono::steady_clock::now();
    const RunResult r = run_factorization(c, node0);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "phantom cholesky n=%lld B=64 tiles=%dx%d threads=%d sync=%s: %llu tasks, simulated %.6g s, wall %.3f s, "
        "%.0f simulated tasks per wall second\n",
        static_cast<long long>(c.n), q, q, threads, s4u ? "s4u" : "coop", static_cast<unsigned long long>(r.tasks),
        r.time_s, wall, static_cast<double>(r.tasks) / wall);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sim_speed: %s\n", e.what());
    return 2;
  }
  return 0;
}
