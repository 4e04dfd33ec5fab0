// Built instead of simgrid_platform.cpp when SimGrid was not found: choosing
// the simulated backend fails with NotCompiled.
#include "base/error.hpp"
#include "models/machine.hpp"
#include "platform/simgrid/simgrid_platform.hpp"

namespace tessera::platform {

struct Simulation::Impl {};
Simulation::Simulation(const Machine&, int, int) { throw NotCompiled("SimGrid"); }
Simulation::~Simulation() = default;
int Simulation::nodes() const { return 0; }
simgrid::s4u::Host* Simulation::node_host(int) const { return nullptr; }
simgrid::s4u::Host* Simulation::gpu_host(int, int) const { return nullptr; }
std::unique_ptr<Device> make_sim_gpu(Simulation&, int, int, std::size_t, bool, const SimGpuOptions&) {
  throw NotCompiled("SimGrid");
}
void Simulation::run() {}
double Simulation::clock() const { return 0; }
void Simulation::schedule_failure(const SimFailure&, int, int) { throw NotCompiled("SimGrid"); }
std::optional<double> Simulation::failure_time() const { return std::nullopt; }
std::string Simulation::failure_cause() const { return {}; }

struct SimGridPlatform::Actors {};
SimGridPlatform::SimGridPlatform(Simulation& sim, int node, bool sim_data, SimSync sync)
    : sim_(sim), node_(node), sim_data_(sim_data), sync_(sync) {
  throw NotCompiled("SimGrid");
}
SimGridPlatform::~SimGridPlatform() = default;
std::unique_ptr<Mutex> SimGridPlatform::make_mutex() { throw NotCompiled("SimGrid"); }
std::unique_ptr<Condition> SimGridPlatform::make_condition() { throw NotCompiled("SimGrid"); }
void SimGridPlatform::spawn(ThreadRole, const std::string&, std::function<void()>) { throw NotCompiled("SimGrid"); }
void SimGridPlatform::join_all() {}
double SimGridPlatform::now() const { return 0; }
kernels::KernelPair SimGridPlatform::core_kernels() { throw NotCompiled("SimGrid"); }
void SimGridPlatform::run_kernel(double, FunctionRef<void()>) { throw NotCompiled("SimGrid"); }

struct SimCluster::Impl {};
SimCluster::SimCluster(Simulation&, int) { throw NotCompiled("SimGrid"); }
SimCluster::~SimCluster() = default;
int SimCluster::nodes() const { return 0; }
NodeNetwork& SimCluster::node(int) { throw NotCompiled("SimGrid"); }
void run_on_nodes(Simulation&, int, const std::function<void(int)>&, SimCluster*) { throw NotCompiled("SimGrid"); }

}  // namespace tessera::platform
