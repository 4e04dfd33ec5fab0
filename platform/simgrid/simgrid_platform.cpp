#include "platform/simgrid/simgrid_platform.hpp"

#include "base/error.hpp"

#include <fmt/format.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <stdexcept>

#include "kernels/cpu/cpu_tile_kernels.hpp"
#include "models/machine.hpp"

namespace sg4 = simgrid::s4u;

namespace tessera::platform {
namespace {

// SimGrid's default precision/timing, which this project does not change.
constexpr double kTimingPrecision = 1e-9;

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
//           pcie1/ |  \pcieG
//            gpu1 gpu2 ... gpuG                         one host per GPU, one PCIe link each
//
// A message from node i to node j crosses net_i then net_j; a copy to a GPU
// crosses its PCIe link. Hosts compute nothing themselves (kernels are
// sleeps of the modeled time), so their speed is nominal. One more host,
// "fault-injector", linked to nothing, runs the actor that injects a --fail
// failure (so that it never turns off its own host).
// The engine's command line. SimGrid's config-change notices would drown the
// run's own output, and the first (below) comes as the engine starts.
// AddressSanitizer cannot follow SimGrid's swapped actor stacks (an exception
// caught in an actor reports false stack errors), so under it (./setup.sh
// asan) each actor runs on a thread of its own; the factory is chosen as the
// engine starts, hence an argument.
struct EngineArgs {
#if defined(__SANITIZE_ADDRESS__)
  char* argv[4] = {const_cast<char*>("tessera"), const_cast<char*>("--log=xbt_cfg.thresh:warning"),
                   const_cast<char*>("--cfg=contexts/factory:thread"), nullptr};
  int argc = 3;
#else
  char* argv[3] = {const_cast<char*>("tessera"), const_cast<char*>("--log=xbt_cfg.thresh:warning"), nullptr};
  int argc = 2;
#endif
};

struct Simulation::Impl {
  Impl(const Machine& m, int nodes, int gpus) : engine(&args.argc, args.argv) {
    if (m.network.calibrated) {
      // Measured link figures: no LV08 corrections (latency x13.01, bandwidth x0.97).
      sg4::Engine::set_config("network/latency-factor:1");
      sg4::Engine::set_config("network/bandwidth-factor:1");
    }
    constexpr double kNominalSpeed = 1e9;
    gpus_per_node = gpus;
    auto* zone = sg4::create_full_zone(m.name.empty() ? "machine" : m.name);
    std::vector<sg4::Link*> net;
    for (int i = 0; i < nodes; ++i) {
      const std::string node = "node" + std::to_string(i);
      sg4::Host* h = zone->create_host(node, kNominalSpeed)->set_core_count(m.node.cores)->seal();
      node_hosts.push_back(h);
      net.push_back(zone->create_link(node + "-net", m.network.link.bandwidth_Bps)
                        ->set_latency(m.network.link.latency_s / 2)
                        ->seal());
      links[net.back()->get_name()] = net.back();
      for (int g = 0; g < gpus; ++g) {
        const std::string gpu = node + "-gpu" + std::to_string(g + 1);  // GPU g + 1, as the runtime counts
        sg4::Host* d = zone->create_host(gpu, kNominalSpeed)->seal();
        sg4::Link* pcie = zone->create_link(gpu + "-pcie", m.node.gpus.pcie.bandwidth_Bps)
                              ->set_latency(m.node.gpus.pcie.latency_s)
                              ->seal();
        links[pcie->get_name()] = pcie;
        zone->add_route(h->get_netpoint(), d->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(pcie)}, true);
        gpu_hosts.push_back(d);
      }
    }
    for (int i = 0; i < nodes; ++i)
      for (int j = i + 1; j < nodes; ++j)
        zone->add_route(node_hosts[i]->get_netpoint(), node_hosts[j]->get_netpoint(), nullptr, nullptr,
                        {sg4::LinkInRoute(net[i]), sg4::LinkInRoute(net[j])}, true);
    injector = zone->create_host("fault-injector", kNominalSpeed)->seal();
    zone->seal();
  }

  EngineArgs args;  // (before the engine, which reads them as it starts)
  sg4::Engine engine;
  std::vector<sg4::Host*> node_hosts;
  std::vector<sg4::Host*> gpu_hosts;  // node i's GPU g (1-based): gpu_hosts[i * gpus + g - 1]
  int gpus_per_node = 0;
  std::map<std::string, sg4::Link*> links;  // every link, by name
  sg4::Host* injector = nullptr;
  std::optional<SimFailure> failure;  // the one scheduled (--fail)
  std::optional<double> failed_at;    // when it happened
  int run_nodes = 0;                  // the run's nodes, for the message of a node's failure
};

Simulation::Simulation(const Machine& machine, int nodes, int gpus) {
  if (nodes < 0 || nodes > machine.nodes || gpus < -1 || gpus > machine.node.gpus.count)
    throw std::out_of_range(fmt::format("a platform of {} nodes with {} GPUs each from a {}-node machine with {}",
                                        nodes, gpus, machine.nodes, machine.node.gpus.count));
  if (sg4::Engine::has_instance())
    throw std::logic_error("a SimGrid simulation is already running in this process (SimGrid allows one at a time)");
  // SimGrid's engine takes SIGINT to print every actor's state and exit 1, the status of a failed --check: Ctrl-C
  // ends a simulation as it ends any other run (status 130), or not at all where the process ignores it (nohup).
  struct sigaction interrupt {};
  sigaction(SIGINT, nullptr, &interrupt);
  impl_ =
      std::make_unique<Impl>(machine, nodes == 0 ? machine.nodes : nodes, gpus == -1 ? machine.node.gpus.count : gpus);
  sigaction(SIGINT, &interrupt, nullptr);
}
Simulation::~Simulation() = default;
int Simulation::nodes() const { return static_cast<int>(impl_->node_hosts.size()); }
sg4::Host* Simulation::node_host(int node) const { return impl_->node_hosts.at(node); }
sg4::Host* Simulation::gpu_host(int node, int g) const {
  if (g < 1 || g > impl_->gpus_per_node)
    throw std::out_of_range("GPU " + std::to_string(g) + " of a node with " + std::to_string(impl_->gpus_per_node) +
                            " GPUs");
  return impl_->gpu_hosts.at(static_cast<std::size_t>(node) * impl_->gpus_per_node + g - 1);
}
void Simulation::run() { impl_->engine.run(); }
double Simulation::clock() const { return sg4::Engine::get_clock(); }

namespace {

// "node0, node1 and node3"
std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace

void Simulation::schedule_failure(const SimFailure& f, int nodes, int gpus) {
  Impl& s = *impl_;
  if (s.failure) throw std::logic_error("Simulation::schedule_failure: a failure is scheduled already");
  if (nodes < 1 || nodes > this->nodes() || gpus < 0 || gpus > s.gpus_per_node)
    throw std::out_of_range(fmt::format("a run of {} nodes with {} GPUs each on a {}-node machine with {}", nodes, gpus,
                                        this->nodes(), s.gpus_per_node));
  const std::string last = "node" + std::to_string(nodes - 1);
  bool known = false;
  if (f.kind == SimFailure::Kind::Node) {
    for (int k = 0; k < nodes && !known; ++k) known = f.name == "node" + std::to_string(k);
    if (!known)
      throw InputError(fmt::format("--fail {}: {} is not a node of this run (its nodes: node0{})", f.spec, f.name,
                                   nodes == 1 ? "" : " to " + last));
  } else {
    std::vector<std::string> kinds;
    for (int k = 0; k < nodes && !known; ++k) {
      const std::string node = "node" + std::to_string(k);
      known = nodes > 1 && f.name == node + "-net";
      for (int g = 1; g <= gpus && !known; ++g) known = f.name == node + "-gpu" + std::to_string(g) + "-pcie";
    }
    if (nodes > 1) kinds.push_back(nodes == 2 ? "node0-net, node1-net" : "node0-net to " + last + "-net");
    if (gpus > 0) kinds.push_back(fmt::format("nodeK-gpuG-pcie for K = 0..{} and G = 1..{}", nodes - 1, gpus));
    if (!known)
      throw InputError(fmt::format(
          "--fail {}: this run has no link {} ({})", f.spec, f.name,
          kinds.empty() ? "a run on one node without GPUs crosses none" : "its links: " + name_list(kinds)));
  }
  if (!(f.at_s >= 0)) throw InputError(fmt::format("--fail {}: the time must be >= 0 s", f.spec));
  s.failure = f;
  s.run_nodes = nodes;
  sg4::Actor::create("fault-injector", s.injector, [&s] {
    sg4::Actor::self()->daemonize();
    sg4::this_actor::sleep_until(s.failure->at_s);
    s.failed_at = sg4::Engine::get_clock();
    if (s.failure->kind == SimFailure::Kind::Link) {
      // Transfers crossing it fail from now on (see the network and SimGpu).
      s.links.at(s.failure->name)->turn_off();
      return;
    }
    // In maestro, so that no actor SimGrid kills on the host runs again (it
    // would unwind through the runtime's handlers) before the run ends here.
    simgrid::kernel::actor::simcall_answered([&s] {
      sg4::Host::by_name(s.failure->name)->turn_off();
      std::vector<std::string> others;
      for (int k = 0; k < s.run_nodes; ++k)
        if ("node" + std::to_string(k) != s.failure->name) others.push_back("node" + std::to_string(k));
      const std::string stop = others.empty() ? "the run stops" : name_list(others) + " stop";
      std::fprintf(stderr,
                   "tessera: error: simulated failure (--fail %s): %s was turned off at %s s of simulated "
                   "time; %s\n",
                   s.failure->spec.c_str(), s.failure->name.c_str(), fmt::format("{:g}", *s.failed_at).c_str(),
                   stop.c_str());
      std::fflush(nullptr);
      std::_Exit(5);
    });
  });
}

std::optional<double> Simulation::failure_time() const { return impl_->failed_at; }

std::string Simulation::failure_cause() const {
  const Impl& s = *impl_;
  if (!s.failure || !s.failed_at) return "a transfer failed in the simulation though no failure was injected";
  return fmt::format("simulated failure (--fail {}): {} {} was turned off at {:g} s of simulated time", s.failure->spec,
                     s.failure->kind == SimFailure::Kind::Link ? "link" : "host", s.failure->name, *s.failed_at);
}

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

void SimGridPlatform::spawn(ThreadRole /*role*/, const std::string& name, std::function<void()> body) {
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

kernels::KernelPair SimGridPlatform::core_kernels() { return kernels::cpu_kernel_pair(); }

void SimGridPlatform::run_kernel(double modeled_s, FunctionRef<void()> kernel) {
  // The real kernel takes no simulated time: only the model's duration counts.
  if (sim_data_) kernel();
  // SimGrid times nothing shorter than its timing precision (precision/timing,
  // 1e-9 s by default): a shorter sleep is rounded up to it, which SimGrid
  // logs on every such call; rounding here does the same silently.
  // (A machine file's bounds keep a model's times finite; a clock that would still overflow stops the run, named.)
  if (!std::isfinite(modeled_s) || !std::isfinite(sim_.clock() + modeled_s))
    throw InputError(
        fmt::format("a kernel's modeled time, {:g} s at {:g} s of simulated time, is not finite: the "
                    "machine file's rates or times are out of range",
                    modeled_s, sim_.clock()));
  if (modeled_s > 0) sg4::this_actor::sleep_for(std::max(modeled_s, kTimingPrecision));
}

namespace {

struct Envelope {
  int source;
  Message m;
  double sent;  // simulated time of the send
};

}  // namespace

struct SimCluster::Impl {
  class Endpoint;
  Simulation& sim;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  // allreduce_sum: actors run one at a time, so the sum needs no lock.
  sg4::BarrierPtr barrier;
  std::vector<double> sum;
  int arrived = 0, unread = 0;
  Impl(Simulation& s, int nodes);
};

class SimCluster::Impl::Endpoint final : public NodeNetwork {
 public:
  Endpoint(SimCluster::Impl& c, int self)
      : cluster_(c), self_(self), mbox_(sg4::Mailbox::by_name("tessera-node" + std::to_string(self))) {}
  int node() const override { return self_; }
  int nodes() const override { return static_cast<int>(cluster_.endpoints.size()); }

  void start(DeliverFn deliver) override {
    deliver_ = std::move(deliver);
    actor_ = sg4::Actor::create("comm", cluster_.sim.node_host(self_), [this] {
      for (;;) {
        std::unique_ptr<Envelope> e;
        try {
          e.reset(mbox_->get<Envelope>());
        } catch (const simgrid::NetworkFailureException&) {
          // Its sender learns of the loss at the same simulated time (a few
          // scheduling rounds later) and names both ends: let it speak first.
          sg4::this_actor::sleep_for(kTimingPrecision);
          lost(fmt::format("a message to node {}", self_));
        }
        e->m.set_transit_s(sg4::Engine::get_clock() - e->sent);
        deliver_(e->source, std::move(e->m));
      }
    });
    mbox_->set_receiver(actor_);
  }

  // Messages leave in the order they were sent, at most kSendsInFlight at
  // once, as the MPI communication thread posts them (platform/network.hpp):
  // each sender actor puts one message and waits for its transfer.
  void send(int dest, Message&& m) override {
    if (senders_.empty()) start_senders();
    const auto size = static_cast<std::uint64_t>(m.wire_bytes());
    outbox_.push_back({dest, new Envelope{self_, std::move(m), sg4::Engine::get_clock()}, size});
    queued_->release();
  }

  // Every message this node expects has arrived: the actor waits in get() on
  // an empty mailbox, and no other message will come. The node's own
  // messages leave first.
  void stop() override {
    while (!outbox_.empty() || sending_ > 0) {
      drain_waiting_ = true;
      drained_->acquire();
    }
    drain_waiting_ = false;
    for (sg4::ActorPtr& a : senders_) a->kill();
    senders_.clear();
    if (!actor_) return;
    mbox_->set_receiver(nullptr);
    actor_->kill();
    actor_ = nullptr;
  }

  void start_senders() {
    queued_ = sg4::Semaphore::create(0);
    drained_ = sg4::Semaphore::create(0);
    for (int k = 0; k < kSendsInFlight; ++k)
      senders_.push_back(sg4::Actor::create("send", cluster_.sim.node_host(self_), [this] {
        for (;;) {
          queued_->acquire();
          Outgoing o = outbox_.front();
          outbox_.pop_front();
          ++sending_;
          try {
            cluster_.endpoints.at(o.dest)->mbox_->put(o.envelope, o.bytes);
          } catch (const simgrid::NetworkFailureException&) {
            lost(fmt::format("a message from node {} to node {}", self_, o.dest));
          }
          --sending_;
          if (drain_waiting_ && outbox_.empty() && sending_ == 0) drained_->release();
        }
      }));
  }

  // A transfer crossed a link that --fail turned off: the node cannot keep
  // its part of the protocol, so it ends the run (status 5).
  [[noreturn]] void lost(const std::string& what) {
    abort(5, fmt::format("node {}: {}; {} was lost at {:g} s", self_, cluster_.sim.failure_cause(), what,
                         sg4::Engine::get_clock()));
  }

  void allreduce_sum(std::vector<double>& v) override {
    auto& c = cluster_;
    if (c.arrived++ == 0) c.sum.assign(v.size(), 0.0);
    if (c.sum.size() != v.size()) throw std::logic_error("allreduce_sum: lengths differ between nodes");
    for (std::size_t i = 0; i < v.size(); ++i) c.sum[i] += v[i];
    c.barrier->wait();
    v = c.sum;
    // The last reader resets before anyone can pass the second barrier and
    // start the next round.
    if (++c.unread == nodes()) c.arrived = 0, c.unread = 0;
    c.barrier->wait();
  }

 private:
  SimCluster::Impl& cluster_;
  int self_;
  sg4::Mailbox* mbox_;
  DeliverFn deliver_;
  sg4::ActorPtr actor_;
  // Outgoing messages not yet put, and the actors that put them.
  struct Outgoing {
    int dest;
    Envelope* envelope;
    std::uint64_t bytes;
  };
  std::deque<Outgoing> outbox_;
  std::vector<sg4::ActorPtr> senders_;
  sg4::SemaphorePtr queued_, drained_;
  int sending_ = 0;
  bool drain_waiting_ = false;
};

SimCluster::Impl::Impl(Simulation& s, int nodes) : sim(s), barrier(sg4::Barrier::create(nodes)) {
  for (int i = 0; i < nodes; ++i) endpoints.push_back(std::make_unique<Endpoint>(*this, i));
}

SimCluster::SimCluster(Simulation& sim, int nodes) {
  if (nodes < 1 || nodes > sim.nodes())
    throw std::out_of_range(std::to_string(nodes) + " nodes on a " + std::to_string(sim.nodes()) + "-node machine");
  impl_ = std::make_unique<Impl>(sim, nodes);
}
SimCluster::~SimCluster() = default;
int SimCluster::nodes() const { return static_cast<int>(impl_->endpoints.size()); }
NodeNetwork& SimCluster::node(int i) { return *impl_->endpoints.at(i); }

void run_on_nodes(Simulation& sim, int nodes, const std::function<void(int)>& body, SimCluster* cluster) {
  // The failed node's own error (a kernel's, say) names the cause; the others
  // end with a RemoteFailure pointing at it, which is rethrown only when no
  // node's own error is known.
  std::exception_ptr cause, remote;
  for (int k = 0; k < nodes; ++k)
    sg4::Actor::create("node-main", sim.node_host(k), [&, k] {
      try {
        // A node after one whose set-up failed (which waits at the agreement: the nodes run in order until each
        // blocks) joins the agreement at once, instead of first building what the failed node refused (node 0 checks
        // the whole process's memory; the others would allocate theirs before learning).
        if (cluster && cause && cluster->node(k).set_up_pending()) {
          if (const auto [failed, status] = cluster->node(k).agree_set_up(0); failed >= 0)
            throw RemoteFailure(failed, status);
        }
        body(k);
      } catch (const RemoteFailure&) {
        if (!remote) remote = std::current_exception();
      } catch (...) {
        if (!cause) cause = std::current_exception();
        if (cluster) cluster->node(k).agree_failed_set_up(exit_status_of(std::current_exception()));
      }
    });
  sim.run();
  if (cause) std::rethrow_exception(cause);
  if (remote) std::rethrow_exception(remote);
}

}  // namespace tessera::platform
