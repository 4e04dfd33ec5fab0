#include "experiments/gpu_warmup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/device_buffers.hpp"
#include "experiments/kernel_call.hpp"
#include "platform/device.hpp"

namespace tessera::driver {

namespace {

// Counts the kernel shapes of the GPU tasks inserted, and notes the kernels
// among them the warm-up cannot call.
class ShapeCounter final : public TaskSink {
 public:
  ShapeCounter(const std::function<KernelShape(const TaskDesc&)>& shape,
               const std::function<bool(const TaskDesc&)>& on_gpu)
      : shape_(shape), on_gpu_(on_gpu) {}
  void insert(const TaskDesc& t) override {
    if (!on_gpu_(t)) return;
    if (!kernels::calibration::has_device_call(t.kernel)) {
      cold_.insert(t.kernel);
      return;
    }
    const KernelShape s = shape_(t);
    ++count_[{s.kernel, s.precision, s.ib, s.m, s.n, s.k}];
  }
  using Key = std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  const std::map<Key, std::uint64_t>& counts() const { return count_; }
  const std::set<std::uint16_t>& cold() const { return cold_; }

 private:
  const std::function<KernelShape(const TaskDesc&)>& shape_;
  const std::function<bool(const TaskDesc&)>& on_gpu_;
  std::map<Key, std::uint64_t> count_;
  std::set<std::uint16_t> cold_;
};

KernelShape shape_of(const ShapeCounter::Key& key) {
  const auto& [kernel, precision, ib, m, n, k] = key;
  return KernelShape{kernel, precision, m, n, k, ib};
}

std::string describe(const KernelShape& s) {
  std::string d = fmt::format("{} {} {}x{}", kernel_name(s.kernel), s.precision, s.m, s.n);
  if (s.k > 0) d += fmt::format(" k {}", s.k);
  if (s.ib > 0) d += fmt::format(" ib {}", s.ib);
  return d;
}

// One device, one shape: a call on each compute stream a task of the
// kernel may take (gpu_warmup.hpp). Returns the calls made.
template <class T>
int warm_shape(platform::Device& dev, const KernelShape& s) {
  using Call = kernels::calibration::KernelCall<T>;
  const std::int64_t ib = kernel_info(s.kernel)->ib == KernelIb::kNone ? 0 : kernel_ib(s.kernel, s.n, s.k, s.ib);
  kernels::DeviceBuffers buffers(dev);
  Call call(s, ib, 1, 11, false);
  std::array<T*, Call::kOperands> ops{};
  for (int w = 0; w < Call::kOperands; ++w) ops[w] = buffers.upload(call.operand(0, w));
  const bool panel = panel_kernel(s.kernel);
  const int streams = dev.kernel_streams();
  // One stream: every task on it. Several: a panel on the first and, beside
  // another panel, on the others; the rest on the others, in turn.
  const int calls = streams == 1 ? 1 : (panel ? 1 : 0) + streams - 1;
  for (int c = 0; c < calls; ++c) {
    dev.begin_kernels(panel && c == 0);
    kernels::TileKernels<T>& K = kernels::kernels_of<T>(dev);
    if (c == 0) call.setup_on(K, ops.data());  // LARFB's, SSRFB's and TTMQR's V and T, made on the device
    call.prepare_on(K, ops.data());
    call.run_on(K, ops.data());
    dev.wait_kernels(dev.end_kernels());
  }
  return calls;
}

}  // namespace

WarmupPlan plan_warmup(const std::function<void(TaskSink&)>& generate,
                       const std::function<KernelShape(const TaskDesc&)>& shape,
                       const std::function<bool(const TaskDesc&)>& on_gpu) {
  ShapeCounter counter(shape, on_gpu);
  generate(counter);
  // Per (kernel, precision, ib): the most frequent shape (the largest among
  // equals) and the largest by flops, then by output size.
  struct Pick {
    ShapeCounter::Key frequent, largest;
    std::uint64_t count = 0;
  };
  std::map<std::tuple<std::uint16_t, char, std::int64_t>, Pick> picks;
  const auto size = [](const ShapeCounter::Key& k) {
    const KernelShape s = shape_of(k);
    return std::pair{kernel_flops(s), static_cast<double>(s.m) * static_cast<double>(s.n)};
  };
  for (const auto& [key, count] : counter.counts()) {
    const auto& [kernel, precision, ib, m, n, k] = key;
    auto [it, fresh] = picks.try_emplace({kernel, precision, ib}, Pick{key, key, count});
    if (fresh) continue;
    Pick& p = it->second;
    if (count > p.count || (count == p.count && size(key) > size(p.frequent))) p.frequent = key, p.count = count;
    if (size(key) > size(p.largest)) p.largest = key;
  }
  // Kernel-table order (a factorization's first calls), then precision and ib.
  std::vector<std::pair<std::size_t, KernelShape>> ordered;
  const auto table = kernel_table();
  const auto rank = [&](std::uint16_t kernel) {
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].id == kernel) return i;
    return table.size();
  };
  for (const auto& [group, p] : picks) {
    ordered.emplace_back(rank(std::get<0>(group)), shape_of(p.frequent));
    if (p.largest != p.frequent) ordered.emplace_back(rank(std::get<0>(group)), shape_of(p.largest));
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  WarmupPlan plan;
  for (const auto& [r, s] : ordered) plan.shapes.push_back(s);
  for (const std::uint16_t k : counter.cold()) plan.cold.emplace_back(kernel_name(k));
  return plan;
}

GpuWarmup warm_up_gpus(const std::vector<platform::Device*>& devices, const WarmupPlan& plan) {
  using clock = std::chrono::steady_clock;
  GpuWarmup w;
  w.cold = plan.cold;
  for (const KernelShape& s : plan.shapes) w.shapes.push_back(describe(s));
  const auto t0 = clock::now();
  for (platform::Device* dev : devices) {
    for (const KernelShape& s : plan.shapes) {
      try {
        w.calls += s.precision == 's' ? warm_shape<float>(*dev, s) : warm_shape<double>(*dev, s);
      } catch (const DeviceOutOfMemory& e) {
        // The operands of one call do not fit beside what the device holds:
        // the run itself may still (its tiles arrive one at a time).
        w.skipped.push_back(dev->name() + ": " + describe(s) + ": " + e.what());
      }
    }
    dev->free_kept();
  }
  w.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return w;
}

}  // namespace tessera::driver
