// A simulated node's GPU (make_sim_gpu, simgrid_platform.hpp): its memory
// and copies as HostMemoryDevice's over the machine's PCIe link, and, with
// several compute streams, its kernels as SimGrid executions that share the
// GPU's throughput.
//
// One stream (the default): the manager thread runs one task at a time and
// lets the kernel model's time pass itself (NodeRuntime's serve), as it has
// always done. Several (`--gpu-streams S`): the manager queues up to S tasks
// (Device::kernel_depth), each on the lane platform/kernel_lanes.hpp chooses,
// as on a CUDA GPU; a lane runs its tasks one after the other, and the tasks
// of different lanes run side by side as executions on the GPU's host, each
// at most its share of the host's speed (device_share,
// platform/kernel_time_model.hpp; of what a kernel leaves, the machine
// file's stream_overlap is usable by others), all of them max-min fair within it,
// stream 0's with a far greater weight (the panels' stream's priority)
// (SimGrid's CPU model; Casanova, Giersch, Legrand, Quinson and Suter,
// "Versatile, scalable, and accurate simulation of distributed applications
// and platforms", JPDC 74(10), 2014, §4). A task alone takes the model's
// time whatever its share. A kernel the machine file lists in
// node.gpus.host_waits (a CUDA GPU's POTF2', LU's PANEL and DIAG, which read
// their status back, and Cholesky QR panels) holds the manager until it
// ends, as its call does on the real GPU (kernels/cuda/host_waits.hpp says
// where the real call waits for less).
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "platform/kernel_lanes.hpp"
#include "platform/native/host_memory_device.hpp"
#include "platform/simgrid/simgrid_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace tessera::platform {
namespace {

class SimGpu final : public HostMemoryDevice {
 public:
  // The sharing weight of stream 0's kernels against the others' 1.
  static constexpr double kFirstStreamWeight = 1e6;
  SimGpu(Simulation& sim, sg4::Host* host, sg4::Host* gpu, int g, std::size_t memory, bool data, const SimGpuOptions& o)
      : HostMemoryDevice(g, memory, data), sim_(sim), host_(host), gpu_(gpu),
        lanes_(static_cast<std::size_t>(std::max(o.streams, 1))), overlap_(o.overlap), host_waits_(o.host_waits) {
    if (o.streams < 1)
      throw std::invalid_argument(name() + ": " + std::to_string(o.streams) + " compute streams (at least 1)");
    if (!(o.overlap >= 0 && o.overlap <= 1))
      throw std::invalid_argument(fmt::format("{}: stream overlap {:g} (between 0 and 1)", name(), o.overlap));
  }
  std::string name() const override {
    return "GPU " + std::to_string(index()) + " of " + host_->get_name() + " (simulated)";
  }

  // One stream: one task at a time, its time let pass by the manager (the
  // base class's kernel interface). Several: one task per stream queued.
  int kernel_depth() const override { return static_cast<int>(lanes_.size()); }
  int kernel_streams() const override { return static_cast<int>(lanes_.size()); }
  void begin_kernels(bool panel) override;
  void model_kernels(std::uint16_t kernel, double seconds, double share) override;
  std::uint64_t end_kernels() override;
  void wait_kernels(std::uint64_t mark) override;
  bool kernels_ended(std::uint64_t mark) override { return find(mark, "kernels asked")->second.ended; }
  std::optional<std::uint64_t> wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) override;
  void synchronize() override;
  double kernel_span_s() const override { return kernel_span_s_; }

 protected:
  void transfer(int, std::size_t bytes, bool to_device, double) override {
    try {
      if (to_device) sg4::Comm::sendto(host_, gpu_, bytes);
      else sg4::Comm::sendto(gpu_, host_, bytes);
    } catch (const simgrid::NetworkFailureException&) {
      // Its PCIe link was turned off (--fail): the copy is lost.
      throw SimulatedFailure(fmt::format("{}; a copy {} {} was lost at {:g} s", sim_.failure_cause(),
                                         to_device ? "to" : "from", name(), sg4::Engine::get_clock()));
    }
  }
  // The GPU's copy engine: one actor per stream, started with its first
  // copy, runs the stream's copies one after the other in launch order. (An
  // actor per copy cost a stack's mmap and munmap each: two thirds of a
  // 16-node simulation's time went to them.) A daemon: it ends with the
  // simulation's last node actor.
  void launch(int stream, std::function<void()> job) override {
    Engine& e = engines_[stream];
    start(e, stream == 0 ? "gpu-h2d" : "gpu-d2h");
    e.jobs.push_back(std::move(job));
    e.ready->release();
  }

 private:
  // An actor that runs its jobs one after the other in the order given: a
  // copy stream's copies, a compute stream's tasks.
  struct Engine {
    sg4::ActorPtr actor;
    sg4::SemaphorePtr ready;  // one token per queued job
    std::deque<std::function<void()>> jobs;
  };
  void start(Engine& e, const std::string& name) {
    if (e.actor) return;
    e.ready = sg4::Semaphore::create(0);
    e.actor = sg4::Actor::create(name, host_, [&e] {
      sg4::Actor::self()->daemonize();
      for (;;) {
        e.ready->acquire();
        std::function<void()> next = std::move(e.jobs.front());
        e.jobs.pop_front();
        next();
      }
    });
  }
  // A queued task's kernels: on which lane, whether they ended and how long they ran.
  struct Outstanding {
    std::size_t lane = 0;
    bool ended = false;
    double span_s = 0;
  };
  std::map<std::uint64_t, Outstanding>::iterator find(std::uint64_t mark, const char* what) {
    const auto it = outstanding_.find(mark);
    if (it == outstanding_.end())
      throw std::logic_error(name() + ": " + what + " for mark " + std::to_string(mark) + ", which is not outstanding");
    return it;
  }
  // Runs a task's kernels on the GPU's host: `seconds` alone, at most `share`
  // of its speed; `first`: with the priority of the panels' stream.
  void run(std::uint64_t mark, double seconds, double share, bool first);
  // Waits (the manager thread) until `done` holds, or until `timeout_s` has passed: whether it holds.
  bool wait_until(const std::function<bool()>& done, double timeout_s);

  Simulation& sim_;
  sg4::Host* host_;
  sg4::Host* gpu_;
  Engine engines_[2];
  std::vector<Engine> lanes_;              // sized once: its actors hold references to its elements
  double overlap_;                         // GpuSpec::stream_overlap
  std::vector<std::uint16_t> host_waits_;  // GpuSpec::host_waits
  std::map<std::uint64_t, Outstanding> outstanding_;
  // The task being queued (between begin_kernels and end_kernels).
  bool open_ = false;
  std::size_t open_lane_ = 0;
  double open_seconds_ = 0, open_share_ = 1;
  bool open_waits_ = false;  // its kernel's call returns only once it ended (host_waits_)
  std::uint64_t next_mark_ = 0;
  double kernel_span_s_ = 0;
  // Signalled when a task's kernels end; made with the GPU's first queued
  // task (creating them yields: a GPU with one stream makes none, and its
  // simulation runs as before streams existed). SimGrid runs one actor at a
  // time and switches only where one blocks: the lanes' actors and the
  // manager never interleave inside a step, so the mutex only serves the waits.
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr ended_;
};

void SimGpu::begin_kernels(bool panel) {
  if (lanes_.size() == 1 || open_) return;  // (open: a task that failed queues again)
  std::vector<int> busy(lanes_.size(), 0);
  for (const auto& [mark, o] : outstanding_) ++busy[o.lane];
  open_lane_ = choose_lane(panel, busy, next_mark_);
  open_seconds_ = 0, open_share_ = 1;
  open_waits_ = false;
  open_ = true;
}

void SimGpu::model_kernels(std::uint16_t kernel, double seconds, double share) {
  if (!(seconds >= 0) || !(share > 0 && share <= 1))
    throw std::logic_error(fmt::format("{}: kernels modeled at {:g} s and a share of {:g}", name(), seconds, share));
  // (Called once per task; a second call adds its time, its share weighted by time.)
  if (open_seconds_ + seconds > 0)
    open_share_ = (open_share_ * open_seconds_ + share * seconds) / (open_seconds_ + seconds);
  open_seconds_ += seconds;
  open_waits_ = open_waits_ || std::find(host_waits_.begin(), host_waits_.end(), kernel) != host_waits_.end();
}

std::uint64_t SimGpu::end_kernels() {
  if (lanes_.size() == 1) throw std::logic_error(name() + ": end_kernels on a GPU with one stream (kernel depth 1)");
  if (outstanding_.size() >= lanes_.size()) {
    open_ = false;  // (the task is not queued: the next begin_kernels starts afresh)
    throw std::logic_error(name() + ": more than " + std::to_string(lanes_.size()) + " tasks' kernels queued at once");
  }
  if (!open_) begin_kernels(false);  // nothing since the last mark: an empty task
  open_ = false;
  // What the kernels leave of the GPU, less what the other streams cannot use.
  const double share = 1 - overlap_ * (1 - open_share_);
  const std::uint64_t mark = next_mark_++;
  outstanding_.emplace(mark, Outstanding{open_lane_});
  if (!mutex_) mutex_ = sg4::Mutex::create(), ended_ = sg4::ConditionVariable::create();
  Engine& lane = lanes_[open_lane_];
  start(lane, "gpu-stream" + std::to_string(open_lane_));
  // Stream 0 of several has the GPU's greatest priority, as a CUDA GPU's
  // panels' stream: its blocks start ahead of the others' pending ones.
  const bool first = open_lane_ == 0 && lanes_.size() > 1;
  lane.jobs.push_back([this, mark, seconds = open_seconds_, share, first] { run(mark, seconds, share, first); });
  lane.ready->release();
  // A kernel whose call waits on the host: the manager gets the mark only
  // once it ended (it stays outstanding until the manager waits for it).
  if (open_waits_) wait_until([&] { return outstanding_.at(mark).ended; }, std::numeric_limits<double>::infinity());
  return mark;
}

void SimGpu::run(std::uint64_t mark, double seconds, double share, bool first) {
  const double t0 = sg4::Engine::get_clock();
  if (seconds > 0) {
    const double speed = gpu_->get_speed();
    sg4::Exec::init()
        ->set_name("kernels")
        ->set_host(gpu_)
        ->set_flops_amount(seconds * share * speed)
        ->set_bound(share * speed)
        // A sharing weight that gives the panels' stream all it can use
        // (its bound) before the others share the rest.
        ->set_priority(first ? kFirstStreamWeight : 1.0)
        ->start()
        ->wait();
  }
  Outstanding& o = outstanding_.at(mark);
  o.ended = true;
  o.span_s = sg4::Engine::get_clock() - t0;
  ended_->notify_all();
}

bool SimGpu::wait_until(const std::function<bool()>& done, double timeout_s) {
  if (done()) return true;  // (nothing queued yet: no mutex either)
  const double deadline = sg4::Engine::get_clock() + timeout_s;
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  while (!done()) {
    if (!std::isfinite(timeout_s)) {
      ended_->wait(lock);
      continue;
    }
    const double left = deadline - sg4::Engine::get_clock();
    if (left <= 0) return false;
    ended_->wait_for(lock, left);
  }
  return true;
}

void SimGpu::wait_kernels(std::uint64_t mark) {
  const auto it = find(mark, "kernels waited");
  wait_until([&] { return it->second.ended; }, std::numeric_limits<double>::infinity());
  kernel_span_s_ += it->second.span_s;
  outstanding_.erase(it);
}

std::optional<std::uint64_t> SimGpu::wait_any_kernels(const std::vector<std::uint64_t>& marks, double timeout_s) {
  if (marks.empty()) throw std::logic_error(name() + ": wait_any_kernels of no marks");
  std::vector<const Outstanding*> waited;
  for (const std::uint64_t m : marks) waited.push_back(&find(m, "kernels waited")->second);
  std::optional<std::uint64_t> ended;
  wait_until(
      [&] {
        for (std::size_t i = 0; i < marks.size() && !ended; ++i)
          if (waited[i]->ended) ended = marks[i];
        return ended.has_value();
      },
      timeout_s);
  return ended;
}

void SimGpu::synchronize() {
  if (lanes_.size() == 1) return;
  if (open_) {
    wait_kernels(end_kernels());
    return;
  }
  wait_until(
      [&] {
        for (const auto& [mark, o] : outstanding_)
          if (!o.ended) return false;
        return true;
      },
      std::numeric_limits<double>::infinity());
}

}  // namespace

std::unique_ptr<Device> make_sim_gpu(Simulation& sim, int node, int g, std::size_t memory_bytes, bool data,
                                     const SimGpuOptions& o) {
  return std::make_unique<SimGpu>(sim, sim.node_host(node), sim.gpu_host(node, g), g, memory_bytes, data, o);
}

}  // namespace tessera::platform
