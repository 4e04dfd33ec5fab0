// Simulated time on hand-made machines whose makespans are computable by hand.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "experiments/driver.hpp"
#include "experiments/preflight.hpp"
#include "models/machine.hpp"
#include "platform/simgrid/simgrid_platform.hpp"
#include "sim_test_util.hpp"

namespace {
using namespace tessera;
using test::exact;
using test::pow2_machine;
using test::run_in_child;

// Simulated makespan of a phantom Cholesky of n (tiles of 64) on `threads` cores.
double simulated_cholesky(int cores, int threads, index_t n, bool sim_data = false,
                          platform::SimSync sync = platform::SimSync::Cooperative, const std::string& task_s = "") {
  const std::string out = run_in_child([&] {
    const auto machine = platform::Machine::parse(pow2_machine(1, cores, 1e9, 0, task_s), "hand-made.json");
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, sim_data, sync);
    RunConfig c;
    c.n = n;
    c.B = 64;
    c.threads = threads;
    c.model = &machine.core_model();
    c.phantom = !sim_data;
    const RunResult r = run_factorization(c, node0);
    return exact(r.time_s);
  });
  return std::strtod(out.c_str(), nullptr);
}

// A model whose time is not finite (a machine file's bounds keep a file's from it) stops the run with an InputError
// naming it, rather than sleeping an actor until SimGrid's clock is infinite (a segfault).
class EndlessModel final : public KernelTimeModel {
 public:
  double seconds(const KernelShape&) const override { return HUGE_VAL; }
};

TEST(SimTime, AKernelTimeThatIsNotFiniteIsNamed) {
  const std::string out = run_in_child([] {
    const auto machine = platform::Machine::parse(pow2_machine(1, 1, 1e9, 0, ""), "hand-made.json");
    platform::Simulation sim(machine);
    platform::SimGridPlatform node0(sim, 0, false);
    const EndlessModel endless;
    RunConfig c;
    c.n = 128;
    c.B = 64;
    c.model = &endless;
    c.phantom = true;
    try {
      run_factorization(c, node0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  EXPECT_NE(out.find("a kernel's modeled time, inf s at 0 s of simulated time, is not finite"), std::string::npos)
      << out;
}

// 2x2 tiles: POTF2'(0) -> TRSM(1,0) -> GSMM_DIAG(1,1) -> POTF2'(1), a chain.
TEST(SimTime, OneCoreChainIsTheSumOfItsTasks) { EXPECT_EQ(simulated_cholesky(1, 1, 128), 0.5 + 0.25 + 0.125 + 0.5); }

// One core never idles (the generator takes no simulated time), so the
// makespan of 3x3 tiles is the sum of its 10 tasks:
// 3 POTF2' + 3 TRSM + 3 GSMM_DIAG + 1 GSMM.
TEST(SimTime, OneCoreRunsEveryTaskBackToBack) {
  EXPECT_EQ(simulated_cholesky(1, 1, 192), 3 * 0.5 + 3 * 0.25 + 3 * 0.125 + 1 * 0.0625);
}

// The runtime's per-task cost (task_s, 1/32 s here): a compute thread pays it
// after each task, the last one's included (a native run, too, ends only
// once the thread of its last task has released it and found the queue
// done), so one core's 10 tasks of 3x3 tiles take their sum plus ten of it;
// a value the file writes as {"value": x, "source": ...} reads the same.
TEST(SimTime, OneCorePaysTheRuntimesCostBetweenTasks) {
  const double tasks = 3 * 0.5 + 3 * 0.25 + 3 * 0.125 + 1 * 0.0625;
  EXPECT_EQ(simulated_cholesky(1, 1, 192, false, platform::SimSync::Cooperative, "0.03125"), tasks + 10 * 0.03125);
  EXPECT_EQ(simulated_cholesky(1, 1, 192, false, platform::SimSync::Cooperative,
                               R"({"value": 0.03125, "source": "by hand"})"),
            tasks + 10 * 0.03125);
}

// A chain gains nothing from a second core.
TEST(SimTime, SecondCoreDoesNotShortenAChain) { EXPECT_EQ(simulated_cholesky(2, 2, 128), 1.375); }

// 3x3 tiles on two cores, by hand:
//   [0, .5]      POTF2'(0)
//   [.5, .75]    TRSM(1,0) | TRSM(2,0)
//   [.75, .875]  GSMM_DIAG(1,1) | GSMM(2,1) [.75, .8125] then GSMM_DIAG(2,2) [.8125, .875]
//   [.875, 1.375] POTF2'(1)
//   [1.375, 1.625] TRSM(2,1); [1.625, 1.75] GSMM_DIAG(2,2); [1.75, 2.25] POTF2'(2)
TEST(SimTime, TwoCoresThreeByThreeTilesByHand) { EXPECT_EQ(simulated_cholesky(2, 2, 192), 2.25); }

// Real kernels on real data take no simulated time: same makespan.
TEST(SimTime, SimDataDoesNotChangeSimulatedTime) { EXPECT_EQ(simulated_cholesky(2, 2, 192, true), 2.25); }

// S4U mutexes and conditions instead of the cooperative ones: same schedule.
TEST(SimTime, S4uSyncGivesTheSameSchedule) {
  EXPECT_EQ(simulated_cholesky(2, 2, 192, false, platform::SimSync::S4U), 2.25);
  EXPECT_EQ(simulated_cholesky(1, 1, 192, false, platform::SimSync::S4U), 2.6875);
}

// A node keeps kSendsInFlight (16) messages in flight and queues the rest,
// as the MPI communication thread does (platform/network.hpp): on two nodes
// with a 1 s latency and a link too fast for 1 KiB to take long, node 0 posts
// one message more than that at once; all but the last arrive after one
// latency, the last, which waits for one of them to end, after two. (A
// simulated node once started every message at once.)
TEST(SimTime, MessagesInFlightAtOnceAndTheRestQueued) {
  constexpr int kMessages = platform::kSendsInFlight + 1;
  const std::string out = run_in_child([&] {
    const auto machine = platform::Machine::parse(pow2_machine(2, 1, 1e15, 1), "hand-made.json");
    platform::Simulation sim(machine);
    platform::SimCluster cluster(sim, 2);
    platform::SimGridPlatform node0(sim, 0, false), node1(sim, 1, false);
    std::vector<double> arrivals;
    platform::run_on_nodes(sim, 2, [&](int k) {
      platform::NodeNetwork& net = cluster.node(k);
      if (k == 0) {
        net.start([](int, platform::Message&&) {});
        for (int i = 0; i < kMessages; ++i)
          net.send(1, platform::Message::phantom(static_cast<std::uint64_t>(i), 1024));
        net.stop();
        return;
      }
      const auto mutex = node1.make_mutex();
      const auto arrived = node1.make_condition();
      net.start([&](int, platform::Message&&) {
        platform::Lock lk(*mutex);
        arrivals.push_back(node1.now());
        arrived->notify_one();
      });
      {
        platform::Lock lk(*mutex);
        while (arrivals.size() < kMessages) arrived->wait(*mutex);
      }
      net.stop();
    });
    std::string times;
    for (const double t : arrivals) times += exact(t) + " ";
    return times;
  });
  std::vector<double> t;
  for (const char* p = out.c_str(); *p;) {
    char* end = nullptr;
    const double x = std::strtod(p, &end);  // exact() writes hexadecimal floats
    if (end == p) break;
    t.push_back(x);
    p = end;
  }
  ASSERT_EQ(t.size(), static_cast<std::size_t>(kMessages)) << out;
  std::sort(t.begin(), t.end());
  // Within 1% of the latencies: SimGrid's TCP window bound (gamma / 2 latency,
  // 2 MB/s here) makes each 1 KiB transfer take 0.5 ms.
  EXPECT_NEAR(t[0], 1.0, 0.01) << out;
  EXPECT_NEAR(t[kMessages - 2], 1.0, 0.01) << out;
  EXPECT_NEAR(t[kMessages - 1], 2.0, 0.01) << out;
}

// A node whose set-up fails alone (its memory, its file) ends the others at their first collective, the set-up
// agreement (NodeNetwork::agree_set_up), instead of leaving them waiting there for ever (SimGrid's "deadlock
// detected", and no result): run_on_nodes with the cluster lets the failed node take part with its error's status.
// The failed node's own error is what the run throws; node 0, before it, learns which node failed and its status;
// node 2, after it, joins the agreement without running its body (it would build what node 1 refused first).
TEST(SimCluster, ANodeWhoseSetUpFailsEndsTheOthersAtTheAgreement) {
  const std::string out = run_in_child([&] {
    const auto machine = platform::Machine::parse(pow2_machine(3, 1, 1e9, 0), "hand-made.json");
    platform::Simulation sim(machine);
    platform::SimCluster cluster(sim, 3);
    std::vector<std::string> learned(3);
    std::string thrown;
    try {
      platform::run_on_nodes(
          sim, 3,
          [&](int k) {
            if (k == 1) throw InputError("node 1's own input is unreadable");
            const auto [failed, status] = cluster.node(k).agree_set_up(0);
            learned[k] = std::to_string(failed) + ":" + std::to_string(status);
          },
          &cluster);
    } catch (const InputError& e) {
      thrown = e.what();
    }
    return thrown + "|" + learned[0] + "|" + learned[2];
  });
  EXPECT_EQ(out, "node 1's own input is unreadable|1:2|");
}

// The preflight counts a simulated actor's stack as SimGrid's default stack and one guard page
// (experiments/preflight.hpp): what the engine this project starts is configured with.
TEST(SimCluster, ActorStacksAreWhatThePreflightCounts) {
  const std::string out = run_in_child([&] {
    const auto machine = platform::Machine::parse(pow2_machine(1, 1, 1e9, 0), "hand-made.json");
    platform::Simulation sim(machine);
    return std::to_string(simgrid::config::get_value<int>("contexts/stack-size")) + " " +
           std::to_string(simgrid::config::get_value<int>("contexts/guard-size"));
  });
  EXPECT_EQ(out, std::to_string((preflight::kSimActorStackBytes - 4096) / 1024) + " 1");
}

// An EXPECT that fails in run_in_child's child, on the body's thread or on
// another, fails the test that called it, with the child's message: the
// child's own gtest record dies with it, which once let every assertion in a
// simulation pass unseen.
void expect_fails_in_child(bool on_a_thread) {
  try {
    run_in_child([on_a_thread] {
      const auto planted = [] { EXPECT_EQ(1 + 1, 3) << "planted in the child"; };
      if (on_a_thread) {
        std::thread(planted).join();
      } else {
        planted();
      }
      return std::string("result");
    });
  } catch (const std::runtime_error&) {  // expected: the child's result is not to be trusted
  }
}
TEST(SimTestUtil, AnAssertionFailingInTheChildFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(expect_fails_in_child(false), "planted in the child");
  EXPECT_NONFATAL_FAILURE(expect_fails_in_child(true), "planted in the child");
}

}  // namespace
