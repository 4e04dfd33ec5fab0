// Whole runs of the node runtime on random task graphs, each task checked
// while it runs against the order serial execution gives; a kernel's or the
// generator's exception ends the run and is rethrown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "dag_test_util.hpp"
#include "platform/native/native_platform.hpp"
#include "runtime/node_runtime.hpp"

namespace tessera {
namespace {

using namespace test;
using ::testing::IsEmpty;

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

// A platform whose spawn() fails at its fail_at-th call (1: the generator, 2..: the compute threads), as a process
// or thread limit makes a real one fail (NativePlatform::spawn's OutOfMemory); the rest is a native platform's.
class SpawnFailsAt final : public platform::Platform {
 public:
  // `before_failing` runs just before the failing spawn throws (the test waits there for the started threads).
  SpawnFailsAt(int fail_at, std::function<void()> before_failing)
      : fail_at_(fail_at), before_failing_(std::move(before_failing)) {}
  std::unique_ptr<platform::Mutex> make_mutex() override { return inner_.make_mutex(); }
  std::unique_ptr<platform::Condition> make_condition() override { return inner_.make_condition(); }
  void spawn(platform::ThreadRole role, const std::string& name, std::function<void()> body) override {
    if (++calls_ == fail_at_) {
      before_failing_();
      throw OutOfMemory("cannot start the thread '" + name + "' (test)");
    }
    inner_.spawn(role, name, std::move(body));
  }
  void join_all() override { inner_.join_all(); }
  double now() const override { return inner_.now(); }
  void run_kernel(double modeled_s, FunctionRef<void()> kernel) override { inner_.run_kernel(modeled_s, kernel); }
  kernels::KernelPair core_kernels() override { return inner_.core_kernels(); }
  const char* backend_name() const override { return "native"; }

 private:
  platform::NativePlatform inner_;
  int fail_at_, calls_ = 0;
  std::function<void()> before_failing_;
};

// A thread that cannot start after others have (the generator filling a window of 4, compute threads waiting on
// their queue) ends the run with its error, once the started ones have stopped: they ran on the run's own state,
// which the error unwinds (a crash, or a hang, before). With no failure the same run completes. When the first
// compute thread fails (2), the failing spawn waits until the generator has asked for a fifth slot of the full
// window: it is blocked there, and must be woken.
TEST(NodeRuntime, AThreadThatCannotStartStopsTheOnesStartedAndIsRethrown) {
  for (int fail_at = 1; fail_at <= 5; ++fail_at) {
    std::atomic<int> inserting{0};
    SpawnFailsAt plat(fail_at, [&] {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (fail_at == 2 && inserting.load() < 5 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    RuntimeOptions opt;
    opt.threads = 3;
    opt.window_capacity = 4;
    NodeRuntime rt(plat, opt);
    ThrowingExecutor ex(-1);
    const auto chain = [&inserting](TaskSink& s) {
      for (int n = 0; n < 1000; ++n) {
        inserting.fetch_add(1);
        s.insert(desc(n, {{0, RW}}));
      }
    };
    if (fail_at == 5) {
      EXPECT_EQ(rt.run(1, chain, ex).tasks, 1000u);
      EXPECT_EQ(ex.ran(), 1000);
      continue;
    }
    try {
      rt.run(1, chain, ex);
      ADD_FAILURE() << "spawn " << fail_at << " failed, and the run returned";
    } catch (const OutOfMemory& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(fail_at == 1 ? "'generator'" : "'cpu" + std::to_string(fail_at - 2)))
          << fail_at;
    }
    EXPECT_LT(ex.ran(), 1000) << "a failed run went on to the end (spawn " << fail_at << ")";
  }
}

// NodeRuntime's constructor rejects `opt` with an InputError naming the
// option and its value, `what`.
void expect_rejected(const RuntimeOptions& opt, const std::string& what) {
  platform::NativePlatform plat;
  try {
    NodeRuntime rt(plat, opt);
    ADD_FAILURE() << what << " accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(what));
  }
}

TEST(NodeRuntime, ZeroThreadsIsRejected) {
  RuntimeOptions opt;
  opt.threads = 0;
  expect_rejected(opt, "threads = 0");
}

TEST(NodeRuntime, NegativeGpuKernelDepthIsRejected) {
  RuntimeOptions opt;
  opt.gpu_kernel_depth = -1;
  expect_rejected(opt, "gpu_kernel_depth = -1");
}

// Where a node has fewer cores than threads, its compute threads run some
// nice levels below the rest (NativePlatform::set_compute_nice), so that the
// generator and the communication threads get a shared core when they have
// work: every task runs on a thread that many levels below the one that
// started the run, the generator on one at its level, and without the
// setting nothing changes.
class NiceRecorder final : public Executor {
 public:
  void execute(const TaskDesc&, WorkerContext&) override {
    std::lock_guard lk(m_);
    seen_.push_back(this_thread_nice());
  }
  std::vector<int> seen() const {
    std::lock_guard lk(m_);
    return seen_;
  }
  static int this_thread_nice() {
    errno = 0;
    const int v = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
    EXPECT_EQ(errno, 0);
    return v;
  }

 private:
  mutable std::mutex m_;
  std::vector<int> seen_;
};

TEST(NativePlatform, ComputeThreadsRunTheGivenNiceLevelsBelowTheOthers) {
#if !defined(__linux__)
  GTEST_SKIP() << "a thread's own nice level is Linux's";
#endif
  const int base = NiceRecorder::this_thread_nice();
  for (int levels : {0, 3, 19}) {
    SCOPED_TRACE("levels " + std::to_string(levels));
    platform::NativePlatform plat;
    plat.set_compute_nice(levels);
    EXPECT_EQ(plat.compute_nice(), levels);
    RuntimeOptions opt;
    opt.threads = 2;
    NodeRuntime rt(plat, opt);
    NiceRecorder rec;
    int generator_nice = -100;
    rt.run(
        4,
        [&](TaskSink& s) {
          generator_nice = NiceRecorder::this_thread_nice();
          for (int n = 0; n < 40; ++n) {
            TaskDesc d;
            d.kernel = kNop;
            d.add(static_cast<DataId>(n % 4), AccessMode::ReadWrite);
            s.insert(d);
          }
        },
        rec);
    EXPECT_EQ(generator_nice, base);
    const std::vector<int> seen = rec.seen();
    ASSERT_EQ(seen.size(), 40u);
    for (int v : seen) EXPECT_EQ(v, std::min(19, base + levels));
  }
  EXPECT_EQ(NiceRecorder::this_thread_nice(), base);  // the caller's own level is left alone
  platform::NativePlatform plat;
  EXPECT_THROW(plat.set_compute_nice(20), InputError);
  EXPECT_THROW(plat.set_compute_nice(-1), InputError);
}

// Only the compute threads go down: the GPU managers and the device
// communication thread are the ones the option keeps responsive, so they stay
// at the level of the thread that started them, as the generator does. The
// levels are relative to that thread's own: started from a thread already 2
// levels down, compute threads run 2 + levels down (run in a thread of its
// own, so the test process keeps its level).
TEST(NativePlatform, OnlyComputeThreadsGoDownAndRelativeToTheirStarter) {
#if !defined(__linux__)
  GTEST_SKIP() << "a thread's own nice level is Linux's";
#endif
  const int base = NiceRecorder::this_thread_nice();
  std::thread starter([&] {
    const int raised = std::min(19, base + 2);
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), raised), 0);
    platform::NativePlatform plat;
    plat.set_compute_nice(3);
    std::mutex m;
    std::vector<std::pair<platform::ThreadRole, int>> seen;
    for (const auto role : {platform::ThreadRole::Generator, platform::ThreadRole::Compute,
                            platform::ThreadRole::GpuManager, platform::ThreadRole::DeviceComm})
      plat.spawn(role, "t", [&, role] {
        const int v = NiceRecorder::this_thread_nice();
        std::lock_guard lk(m);
        seen.emplace_back(role, v);
      });
    plat.join_all();
    ASSERT_EQ(seen.size(), 4u);
    for (const auto& [role, v] : seen)
      EXPECT_EQ(v, role == platform::ThreadRole::Compute ? std::min(19, raised + 3) : raised)
          << "role " << static_cast<int>(role);
  });
  starter.join();
  EXPECT_EQ(NiceRecorder::this_thread_nice(), base);
}

// A thread that cannot start (no room for its stack under an address-space
// limit) is an out-of-memory error naming the thread (exit 4, README "Command
// line"), not an internal one. In a child process, whose limit is set just
// above what it has mapped, so the first 8 MiB stack cannot be mapped.
TEST(NativePlatform, AThreadThatCannotStartIsOutOfMemory) {
#if !defined(__linux__)
  GTEST_SKIP() << "reads /proc/self/status";
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not live under an address-space limit";
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 3;  // no exception
    {
      platform::NativePlatform plat;
      std::ifstream status("/proc/self/status");
      std::string line;
      long vm_kib = -1;
      while (std::getline(status, line))
        if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stol(line.substr(7));
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(vm_kib + 2048) * 1024;
      if (vm_kib < 0 || setrlimit(RLIMIT_AS, &lim) != 0) _exit(4);
      try {
        for (int i = 0; i < 8; ++i) plat.spawn(platform::ThreadRole::Compute, "compute" + std::to_string(i), [] {});
      } catch (const OutOfMemory& e) {
        code = std::string(e.what()).find("cannot start the thread 'compute") != std::string::npos ? 0 : 1;
      } catch (...) {
        code = 2;
      }
      plat.join_all();
    }
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: OutOfMemory without the thread's name, 2: another exception, "
                                       "3: every thread started, 4: no VmSize or no limit";
}

// Platform::settle before a timed run: while another thread of the process
// spins (as a BLAS library's idle pool threads do for about 0.1 s after it
// starts), the native platform waits, and returns soon after the thread
// stops, not at its one-second bound. (Such a thread made about half of the
// short two-thread runs on the 2-core VM 1.4x slower.)
TEST(NativePlatform, SettleWaitsForASpinningThreadAndReturnsWhenItStops) {
  using Clock = std::chrono::steady_clock;
  platform::NativePlatform platform;
  platform.settle();  // whatever the test process left running first
  std::atomic<bool> started{false};
  Clock::time_point stopped;  // written by the spinner before join()
  std::thread spinner([&] {
    const auto t0 = Clock::now();
    started = true;
    while (Clock::now() - t0 < std::chrono::milliseconds(200)) {
    }
    stopped = Clock::now();
  });
  while (!started) std::this_thread::yield();
  const double waited = platform.settle();
  const auto returned = Clock::now();
  spinner.join();
  // Whenever this thread got to look (a loaded machine may delay it), it
  // returned only once the spinner had stopped, and not at its bound (it
  // waits kSettleMax_s or more only there): no wall-clock margin, which a
  // starved test thread could lose.
  const double after = std::chrono::duration<double>(returned - stopped).count();
  EXPECT_GE(after, 0.0) << "settle() returned while the other thread still spun";
  EXPECT_LT(waited, platform::NativePlatform::kSettleMax_s) << "settle() waited for its bound, not the thread";
  // Nothing else runs now: the calling thread is not counted (it would wait the whole second).
  EXPECT_LT(platform.settle(), platform::NativePlatform::kSettleMax_s);
}

}  // namespace
}  // namespace tessera
