#include "platform/simgrid/simgrid_platform.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <stdexcept>

#include "platform/machine.hpp"
#include "runtime/node_runtime.hpp"

namespace sg4 = simgrid::s4u;

namespace tessera::platform {
namespace {

class SimMutex final : public Mutex {
 public:
  SimMutex() : m_(sg4::Mutex::create()) {}
  void lock() override { m_->lock(); }
  void unlock() override { m_->unlock(); }
  const sg4::MutexPtr& raw() const { return m_; }

 private:
  sg4::MutexPtr m_;
};

class SimCondition final : public Condition {
 public:
  SimCondition() : c_(sg4::ConditionVariable::create()) {}
  void wait(Mutex& m) override { c_->wait(static_cast<SimMutex&>(m).raw()); }
  void notify_one() override { c_->notify_one(); }
  void notify_all() override { c_->notify_all(); }

 private:
  sg4::ConditionVariablePtr c_;
};

// A mutex for actors that makes a simcall only when contended. SimGrid runs
// one actor at a time and switches only inside simcalls, so taking a free
// mutex is setting a flag; an actor finds it taken only when its holder is
// blocked in a simcall inside the critical section (a notify, a wait). Then
// it queues on a semaphore and unlock() hands the mutex over directly
// (locked_ stays true), so no third actor can slip in between. s4u::Mutex
// makes a simcall on every lock and unlock: with five critical sections per
// task that was most of the simulation's cost (bench_sim_speed).
class CoopMutex final : public Mutex {
 public:
  CoopMutex() : handoff_(sg4::Semaphore::create(0)) {}
  void lock() override {
    if (!locked_) {
      locked_ = true;
      return;
    }
    ++waiting_;
    handoff_->acquire();  // returns owning the mutex
  }
  void unlock() override {
    if (waiting_ > 0) {
      --waiting_;
      handoff_->release();
    } else {
      locked_ = false;
    }
  }

 private:
  bool locked_ = false;
  int waiting_ = 0;
  sg4::SemaphorePtr handoff_;
};

// Condition for a CoopMutex: a semaphore with one token per notified waiter.
// A waiter registers before it releases the mutex, and nothing between the
// two can yield, so a notify can not be lost. A token may go to an actor
// that started waiting after the notify; waiters recheck their predicate
// under the mutex, so that is only a spurious wakeup.
class CoopCondition final : public Condition {
 public:
  CoopCondition() : tokens_(sg4::Semaphore::create(0)) {}
  void wait(Mutex& m) override {
    ++waiters_;
    m.unlock();
    tokens_->acquire();
    m.lock();
  }
  void notify_one() override {
    if (waiters_ > 0) {
      --waiters_;
      tokens_->release();
    }
  }
  void notify_all() override {
    for (; waiters_ > 0; --waiters_) tokens_->release();
  }

 private:
  int waiters_ = 0;
  sg4::SemaphorePtr tokens_;
};

}  // namespace

// The platform of a machine with N nodes and G GPUs per node:
//
//                         [switch]                      network.topology = "star"
//               net0  /      |net1    \ net(N-1)        one link per node, each with half of
//                    /       |         \                the node-to-node latency
//              node0       node1  ...  node(N-1)        one host per node, `cores` cores
//           pcie0/ |  \pcie(G-1)
//            gpu0 gpu1 ... gpu(G-1)                     one host per GPU, one PCIe link each
//
// A message from node i to node j crosses net_i then net_j; a copy to a GPU
// crosses its PCIe link. Hosts compute nothing themselves (kernels are
// sleeps of the modeled time), so their speed is nominal.
struct Simulation::Impl {
  explicit Impl(const Machine& m) : engine("tessera") {
    // SimGrid's config-change notices would drown the run's own output.
    xbt_log_control_set("xbt_cfg.thresh:warning");
    if (m.network.calibrated) {
      // Measured link figures: no LV08 corrections (latency x13.01, bandwidth x0.97).
      sg4::Engine::set_config("network/latency-factor:1");
      sg4::Engine::set_config("network/bandwidth-factor:1");
    }
    constexpr double kNominalSpeed = 1e9;
    auto* zone = sg4::create_full_zone(m.name.empty() ? "machine" : m.name);
    std::vector<sg4::Link*> net;
    for (int i = 0; i < m.nodes; ++i) {
      const std::string node = "node" + std::to_string(i);
      sg4::Host* h = zone->create_host(node, kNominalSpeed)->set_core_count(m.node.cores)->seal();
      node_hosts.push_back(h);
      net.push_back(zone->create_link(node + "-net", m.network.link.bandwidth_Bps)
                        ->set_latency(m.network.link.latency_s / 2)
                        ->seal());
      for (int g = 0; g < m.node.gpus.count; ++g) {
        const std::string gpu = node + "-gpu" + std::to_string(g);
        sg4::Host* d = zone->create_host(gpu, kNominalSpeed)->seal();
        sg4::Link* pcie =
            zone->create_link(gpu + "-pcie", m.node.gpus.pcie.bandwidth_Bps)->set_latency(m.node.gpus.pcie.latency_s)->seal();
        zone->add_route(h->get_netpoint(), d->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(pcie)}, true);
      }
    }
    for (int i = 0; i < m.nodes; ++i)
      for (int j = i + 1; j < m.nodes; ++j)
        zone->add_route(node_hosts[i]->get_netpoint(), node_hosts[j]->get_netpoint(), nullptr, nullptr,
                        {sg4::LinkInRoute(net[i]), sg4::LinkInRoute(net[j])}, true);
    zone->seal();
  }

  sg4::Engine engine;
  std::vector<sg4::Host*> node_hosts;
};

Simulation::Simulation(const Machine& machine) {
  if (sg4::Engine::has_instance())
    throw std::logic_error("a SimGrid simulation is already running in this process (SimGrid allows one at a time)");
  impl_ = std::make_unique<Impl>(machine);
}
Simulation::~Simulation() = default;
int Simulation::nodes() const { return static_cast<int>(impl_->node_hosts.size()); }
sg4::Host* Simulation::node_host(int node) const { return impl_->node_hosts.at(node); }
void Simulation::run() { impl_->engine.run(); }
double Simulation::clock() const { return sg4::Engine::get_clock(); }

struct SimGridPlatform::Actors {
  std::vector<sg4::ActorPtr> started;
  // An exception that escaped an actor's body (SimGrid would abort on it):
  // the first one is rethrown by join_all().
  std::exception_ptr error;
};

SimGridPlatform::SimGridPlatform(Simulation& sim, int node, bool sim_data, SimSync sync)
    : sim_(sim), node_(node), sim_data_(sim_data), sync_(sync), actors_(std::make_unique<Actors>()) {
  if (node < 0 || node >= sim.nodes())
    throw std::out_of_range("node " + std::to_string(node) + " of a " + std::to_string(sim.nodes()) + "-node machine");
}

SimGridPlatform::~SimGridPlatform() = default;

std::unique_ptr<Mutex> SimGridPlatform::make_mutex() {
  if (sync_ == SimSync::Cooperative) return std::make_unique<CoopMutex>();
  return std::make_unique<SimMutex>();
}
std::unique_ptr<Condition> SimGridPlatform::make_condition() {
  if (sync_ == SimSync::Cooperative) return std::make_unique<CoopCondition>();
  return std::make_unique<SimCondition>();
}

void SimGridPlatform::spawn(const std::string& name, std::function<void()> body) {
  Actors* a = actors_.get();
  a->started.push_back(sg4::Actor::create(name, sim_.node_host(node_), [a, body = std::move(body)] {
    try {
      body();
    } catch (...) {
      if (!a->error) a->error = std::current_exception();
    }
  }));
}

void SimGridPlatform::join_all() {
  if (sg4::this_actor::is_maestro()) sim_.run();
  else
    for (auto& a : actors_->started) a->join();
  actors_->started.clear();
  if (auto e = std::exchange(actors_->error, nullptr)) std::rethrow_exception(e);
}

double SimGridPlatform::now() const { return sim_.clock(); }

void SimGridPlatform::run_kernel(Executor& e, const TaskDesc& t, WorkerContext& w, double modeled_s) {
  // The real kernel takes no simulated time: only the model's duration counts.
  if (sim_data_) e.execute(t, w);
  if (modeled_s > 0) sg4::this_actor::sleep_for(modeled_s);
}

}  // namespace tessera::platform
