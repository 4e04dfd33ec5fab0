#pragma once
// SimGrid backend (SimGrid 3.32 S4U): the threads of a node are actors on the
// node's simulated host, mutexes and conditions are S4U ones, the clock is the
// simulated clock, and a kernel is a sleep of its modeled duration.
//
// This header includes no SimGrid header, so the command line and the tests
// compile against it whether or not SimGrid was found; without SimGrid the
// constructors throw NotCompiled (simgrid_stub.cpp).
//
// One simulation per process at a time. SimGrid 3.32 holds one s4u::Engine
// per process; a second Simulation while one exists throws std::logic_error.
// A new Simulation after an earlier one was destroyed does run, but SimGrid's
// clock goes on from where the earlier one stopped, so its makespans can
// differ from a fresh process in the last bits. Whatever must be
// bit-reproducible (the tests, sweeps) runs each simulation in a fresh
// process: the command line does by construction, the tests fork a child
// per simulation (tests/sim/sim_test_util.hpp).
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/device.hpp"
#include "platform/network.hpp"
#include "platform/platform.hpp"

namespace simgrid::s4u {
class Host;
}

namespace tessera::platform {

class Machine;

// A failure injected into a simulated run (--fail): one of the platform's
// hosts or links (named as simgrid_platform.cpp draws them) turned off at a
// simulated time.
struct SimFailure {
  enum class Kind { Node, Link };
  Kind kind = Kind::Node;
  std::string name;  // a node's host ("node2") or a link ("node2-net", "node0-gpu1-pcie": GPUs count from 1)
  double at_s = 0;   // simulated seconds since the simulation started
  std::string spec;  // --fail's value as given, for messages
};

// One simulated run: the s4u::Engine and the SimGrid platform it simulates.
class Simulation {
 public:
  // The platform of `machine`: one host per node and per GPU, its links and
  // routes (see simgrid_platform.cpp for the drawing). `nodes` > 0 and
  // `gpus` >= 0 build only a run's first nodes and GPUs (a machine file may
  // describe thousands of nodes, and a full zone has a route per pair of
  // them); 0 and -1: the machine's.
  explicit Simulation(const Machine& machine, int nodes = 0, int gpus = -1);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  int nodes() const;
  simgrid::s4u::Host* node_host(int node) const;
  // GPU g (1-based) of a node; throws std::out_of_range past the machine's GPUs.
  simgrid::s4u::Host* gpu_host(int node, int g) const;
  // Runs the simulation until every actor has ended.
  void run();
  // Simulated seconds since the simulation started.
  double clock() const;

  // Turns f's host or link off at f.at_s, from an actor on a host of its own
  // that sleeps until then (a daemon: a run that ends first ends it, and the
  // failure never happens). `nodes` and `gpus` are the run's nodes and GPUs
  // per node: f may name node K (K < nodes), node K's network link
  // "nodeK-net" (with more than one node) or the PCIe link of its GPU G
  // "nodeK-gpuG-pcie" (1 <= G <= gpus); anything else throws InputError naming
  // --fail and its value. Call before run(), once.
  //
  // What a failure does: a node's ends the run at once, as mpirun ends a job
  // one of whose processes dies (the node's actors, killed by SimGrid, would
  // never send what the others wait for); it prints one line naming the node,
  // the time and the nodes that stop, and exits with status 5. A link's fails
  // every transfer that crosses it from then on (SimGrid's
  // NetworkFailureException): the node whose message or GPU copy is lost ends
  // the run with status 5 and a line naming the link and both times, as an
  // MPI error ends a real run; a link that nothing crosses afterwards costs
  // nothing and the run completes.
  void schedule_failure(const SimFailure& f, int nodes, int gpus);
  // When the scheduled failure happened (nullopt: none was scheduled, or the
  // simulation ended before it).
  std::optional<double> failure_time() const;
  // "simulated failure (--fail SPEC): link L was turned off at T s": what a
  // transfer lost to the failure reports.
  std::string failure_cause() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How a simulated node's mutexes and conditions are made: Cooperative ones
// make a simcall only when contended (the default, and much faster); S4U
// ones are s4u::Mutex / s4u::ConditionVariable, a simcall per operation.
// Both are deterministic; they may order contended waiters differently.
enum class SimSync { Cooperative, S4U };

// The threads of one simulated node.
//
// spawn() may be called from inside the simulation (an actor) or from
// outside it (before it runs); join_all() from an actor joins the actors this
// platform started, from outside it runs the simulation until every actor has
// ended. So a single-node run can call NodeRuntime::run() directly from
// main(); a multi-node run starts one actor per node that does.
class SimGridPlatform final : public Platform {
 public:
  // `sim_data`: also run the real kernels on real data (--sim-data).
  SimGridPlatform(Simulation& sim, int node, bool sim_data, SimSync sync = SimSync::Cooperative);
  ~SimGridPlatform() override;
  std::unique_ptr<Mutex> make_mutex() override;
  std::unique_ptr<Condition> make_condition() override;
  void spawn(ThreadRole role, const std::string& name, std::function<void()> body) override;
  void join_all() override;
  double now() const override;
  void run_kernel(double modeled_s, FunctionRef<void()> kernel) override;
  kernels::KernelPair core_kernels() override;
  const char* backend_name() const override { return "sim"; }
  bool sim_data() const { return sim_data_; }

 private:
  struct Actors;
  Simulation& sim_;
  int node_;
  bool sim_data_;
  SimSync sync_;
  std::unique_ptr<Actors> actors_;
};

// The network of the first `nodes` nodes of a simulation: each node's
// communication thread is an actor on its host that receives every message
// sent to the node's mailbox; messages cross the modeled links (net_i, then
// net_j: see simgrid_platform.cpp). A mailbox has its communication actor as
// permanent receiver, so a transfer starts when it is posted, as an eager MPI
// send does, and no mailbox accumulates unmatched puts. Sends are detached
// puts posted by the thread that finished the data (the native backend queues
// them to its communication thread instead; the thread's own CPU time is not
// modeled either way). allreduce_sum meets at an s4u barrier.
class SimCluster {
 public:
  SimCluster(Simulation& sim, int nodes);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;
  int nodes() const;
  NodeNetwork& node(int i);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GPU g (1-based) of a simulated node: memory of `memory_bytes` (host
// memory when `data`, else only accounted), copies that cross the GPU's PCIe
// link of the machine file as SimGrid transfers (so the in- and out-streams
// of a GPU share its link as the network model says), CPU kernels on real
// data with --sim-data; the kernel's time is the GPU's kernel model.
// `o.streams` compute streams (sim_gpu.cpp): with more than one, the kernels
// of tasks on different streams run side by side and share the GPU.
struct SimGpuOptions {
  int streams = 1;
  // A kernel of share s (device_share) takes 1 - overlap (1 - s) of the GPU
  // beside others (GpuSpec::stream_overlap).
  double overlap = 1;
  // Kernels whose call returns only once they ended (GpuSpec::host_waits):
  // the manager that queued one waits for it.
  std::vector<std::uint16_t> host_waits;
};
std::unique_ptr<Device> make_sim_gpu(Simulation& sim, int node, int g, std::size_t memory_bytes, bool data,
                                     const SimGpuOptions& o = {});

// Runs body(k) for k = 0 .. nodes-1 as one actor per node ("node-main" on the
// node's host) and runs the simulation until every actor has ended. The
// first exception a body throws is rethrown. With the nodes' `cluster`, a
// body that throws before its node's set-up collective
// (NodeNetwork::agree_set_up) takes part in it with its error's exit status,
// so that the other nodes end (RemoteFailure) instead of waiting for it.
void run_on_nodes(Simulation& sim, int nodes, const std::function<void(int)>& body, SimCluster* cluster = nullptr);

}  // namespace tessera::platform
