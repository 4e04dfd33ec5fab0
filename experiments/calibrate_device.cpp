#include "experiments/calibrate_device.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "experiments/device_buffers.hpp"
#include "experiments/host_pinning.hpp"
#include "experiments/kernel_call.hpp"
#include "platform/device.hpp"

namespace tessera::kernels {

namespace {

using clock = std::chrono::steady_clock;
using calibration::KernelCall;

double since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

// The inner blocking a QR kernel of shape `s` is called with (0: none), clamped to the tile as the runtime does.
std::int64_t shape_ib(const KernelShape& s, const CalibrationOptions& o) {
  if (kernel_info(s.kernel)->ib == KernelIb::kNone) return 0;
  return s.ib > 0 ? s.ib : kernel_ib(s.kernel, s.n, s.k, o.ib);
}

// DeviceKernelTimer's state for one precision.
template <class T>
class TimerOn final : public DeviceKernelTimer::Impl {
 public:
  TimerOn(platform::Device& dev, const KernelShape& s, const CalibrationOptions& o)
      : dev_(dev), K_(kernels_of<T>(dev)), buffers_(dev), ib_(shape_ib(s, o)), call_(s, ib_, kSets, 1, false) {
    for (int c = 0; c < kSets; ++c) {
      for (int w = 0; w < Call::kOperands; ++w) sets_[c][w] = buffers_.upload(call_.operand(c, w));
      call_.setup_on(K_, sets_[c].data());
    }
    // Cold (o.cold): a copy of o.cold_bytes / 2 inside a scratch buffer between the restore and the call
    // evicts the restored operands from the GPU's cache, as a tile that arrives from the host is not in it.
    if (o.cold) {
      flush_elements_ = static_cast<index_t>(o.cold_bytes / (2 * sizeof(T)));
      std::vector<T> scratch(static_cast<std::size_t>(2 * flush_elements_), T(0));
      flush_ = buffers_.upload(scratch);
    }
    dev_.synchronize();
  }
  std::int64_t ib() const override { return ib_; }
  double call() override {
    const int c = next_++ % kSets;
    call_.prepare_on(K_, sets_[c].data());
    if (flush_) K_.copy(flush_elements_, 1, flush_, flush_elements_, flush_ + flush_elements_, flush_elements_);
    dev_.synchronize();
    const auto t0 = clock::now();
    call_.run_on(K_, sets_[c].data());
    dev_.synchronize();
    return since(t0);
  }

 private:
  using Call = KernelCall<T>;
  static constexpr int kSets = 2;
  platform::Device& dev_;
  TileKernels<T>& K_;
  DeviceBuffers buffers_;
  std::int64_t ib_;
  Call call_;
  std::array<std::array<T*, Call::kOperands>, kSets> sets_{};
  T* flush_ = nullptr;
  index_t flush_elements_ = 0;
  int next_ = 0;
};

// measure_overlap for one precision: P and the GEMMs on operands of their own in device memory.
template <class T>
OverlapMeasurement overlap_on(platform::Device& dev, const KernelShape& panel, const CalibrationOptions& o) {
  using Call = KernelCall<T>;
  OverlapMeasurement m;
  m.panel = panel;
  m.panel.ib = shape_ib(panel, o);
  const KernelShape gemm{kGsmm, panel.precision, panel.m, panel.n, panel.k > 0 ? panel.k : panel.n, 0};
  DeviceBuffers buffers(dev);
  Call p(panel, m.panel.ib, 1, 7, false), g(gemm, 0, 1, 8, false);
  std::array<T*, Call::kOperands> po{}, go{};
  for (int w = 0; w < Call::kOperands; ++w)
    po[w] = buffers.upload(p.operand(0, w)), go[w] = buffers.upload(g.operand(0, w));
  p.setup_on(kernels_of<T>(dev), po.data());
  g.setup_on(kernels_of<T>(dev), go.data());
  dev.synchronize();
  // One task's kernels, on the stream begin_kernels chooses (a panel's: the
  // panels' stream; the GEMMs': another), and its mark.
  const auto queue = [&](bool on_panels, const std::function<void(TileKernels<T>&)>& kernels) {
    dev.begin_kernels(on_panels);
    kernels(kernels_of<T>(dev));
    return dev.end_kernels();
  };
  int calls = 1;
  // From the first launch until every task queued has ended; what P
  // destroys is restored first, on its stream (untimed). The GEMMs are
  // queued first: some panels wait on the host inside the call (POTF2' and
  // LU's PANEL and DIAG read their status back, Cholesky QR panels their
  // check), and GEMMs queued after such a panel would start only once it
  // ended (in a run the update is in flight when a panel blocks the manager).
  const auto timed = [&](bool with_panel, bool with_gemms) {
    if (with_panel) dev.wait_kernels(queue(true, [&](TileKernels<T>& K) { p.prepare_on(K, po.data()); }));
    const auto t0 = clock::now();
    std::vector<std::uint64_t> marks;
    if (with_gemms)
      marks.push_back(queue(false, [&](TileKernels<T>& K) {
        for (int i = 0; i < calls; ++i) g.run_on(K, go.data());
      }));
    if (with_panel) marks.push_back(queue(true, [&](TileKernels<T>& K) { p.run_on(K, po.data()); }));
    for (const std::uint64_t mark : marks) dev.wait_kernels(mark);
    return since(t0);
  };
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return quantile(v, 0.5);
  };
  for (int w = 0; w < 2; ++w) timed(true, false), timed(false, true);  // warm-up
  // Enough GEMMs to take about twice P alone, so that they outlast it beside them.
  std::vector<double> tp, tg, tpg;
  for (int r = 0; r < 3; ++r) tp.push_back(timed(true, false)), tg.push_back(timed(false, true));
  calls = static_cast<int>(std::clamp(std::ceil(2 * median(tp) / median(tg)), 1.0, double(kMaxGemmCalls)));
  tp.clear(), tg.clear();
  const int reps = std::max(5, std::min(o.min_reps, 9));
  for (int r = 0; r < reps; ++r)  // interleaved: a slow spell costs each timing one sample
    tp.push_back(timed(true, false)), tg.push_back(timed(false, true)), tpg.push_back(timed(true, true));
  m.gemm_calls = calls;
  m.panel_s = median(tp), m.gemms_s = median(tg), m.together_s = median(tpg);
  return overlap_from_times(m);
}

}  // namespace

OverlapMeasurement measure_overlap(platform::Device& dev, const KernelShape& panel, const CalibrationOptions& o) {
  if (dev.kernel_streams() < 2)
    throw InputError("--stream-overlap: " + dev.name() + " has " + std::to_string(dev.kernel_streams()) +
                     " compute stream; measuring what a kernel leaves to another stream needs two");
  if (!runs_on_device(panel.kernel) || !panel_kernel(panel.kernel))
    throw std::logic_error(std::string("measure_overlap: ") + kernel_name(panel.kernel) +
                           " is no panel kernel of a GPU");
  return panel.precision == 's' ? overlap_on<float>(dev, panel, o) : overlap_on<double>(dev, panel, o);
}

void measure_overlaps(platform::Device& dev, const std::vector<KernelShape>& shapes, const CalibrationOptions& o,
                      DeviceCalibration& c) {
  std::vector<KernelShape> device_shapes;
  for (const KernelShape& s : shapes)
    if (runs_on_device(s.kernel)) device_shapes.push_back(s);
  const std::vector<KernelShape> panels = overlap_panels(device_shapes);
  if (panels.empty()) {
    c.overlap_error = "no panel kernel of at most 4096 among the calibrated shapes";
    return;
  }
  for (const KernelShape& s : panels) {
    try {
      c.overlaps.push_back(measure_overlap(dev, s, o));
    } catch (const InputError&) {
      throw;  // a device without two streams: the command's mistake
    } catch (const std::exception& e) {
      c.overlap_error = fmt::format("{} {} m={} n={}: {}", kernel_name(s.kernel), s.precision, s.m, s.n, e.what());
      return;  // (the device may hold a task it never ended)
    }
    const OverlapMeasurement& m = c.overlaps.back();
    if (o.progress)
      o.progress(
          fmt::format("overlap: {} {} m={} n={} beside {} GEMMs: alone {:.3f} ms, GEMMs {:.3f} ms, together "
                      "{:.3f} ms; share {:.3f}, used {:.3f}, overlap {:.2f}",
                      kernel_name(s.kernel), s.precision, s.m, s.n, m.gemm_calls, m.panel_s * 1e3, m.gemms_s * 1e3,
                      m.together_s * 1e3, m.share, m.used, m.overlap));
  }
}

// The calibrated kernels KernelCall can call on a device: one list of them (kernel_call.hpp has_device_call).
bool runs_on_device(std::uint16_t kernel) {
  const KernelInfo* info = kernel_info(kernel);
  return info && info->calibrated && calibration::has_device_call(kernel);
}

DeviceKernelTimer::DeviceKernelTimer(platform::Device& dev, const KernelShape& shape, const CalibrationOptions& o) {
  if (!runs_on_device(shape.kernel))
    throw InputError(std::string("--kernels ") + kernel_key(shape.kernel) + ": runs on CPU cores only, not on a GPU");
  if (shape.precision == 's') impl_ = std::make_unique<TimerOn<float>>(dev, shape, o);
  else impl_ = std::make_unique<TimerOn<double>>(dev, shape, o);
}
DeviceKernelTimer::~DeviceKernelTimer() = default;
double DeviceKernelTimer::call() { return impl_->call(); }
std::int64_t DeviceKernelTimer::ib() const { return impl_->ib(); }

KernelMeasurement measure_device_kernel(platform::Device& dev, const KernelShape& shape, const CalibrationOptions& o) {
  DeviceKernelTimer timer(dev, shape, o);
  for (int c = 0; c < 4; ++c) timer.call();  // warm-up: library handles, workspaces, clocks
  KernelMeasurement r = sample_calls(shape, 1, o, [&](int) { return timer.call(); });
  r.shape.ib = timer.ib();
  return r;
}

LinkMeasurement measure_link(platform::Device& dev, bool to_device, const std::vector<std::size_t>& bytes,
                             double min_time_s) {
  if (bytes.empty()) throw std::logic_error("measure_link: no copy sizes");
  const auto kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t most = (*std::max_element(bytes.begin(), bytes.end()) + kPage - 1) / kPage * kPage;
  std::unique_ptr<std::byte, decltype(&std::free)> host(static_cast<std::byte*>(std::aligned_alloc(kPage, most)),
                                                        &std::free);
  if (!host) throw std::bad_alloc();
  std::fill_n(host.get(), most, std::byte{1});  // touched: no page faults inside a timed copy
  const driver::HostPinning pinning(dev, {platform::HostRange{host.get(), most}});
  LinkMeasurement r;
  r.pinned = pinning.bytes() > 0;
  std::byte* buffer = dev.allocate(most);
  try {
    for (const std::size_t b : bytes) {
      const platform::HostRange range{host.get(), b};
      const int stream = to_device ? 0 : 1;
      for (int i = 0; i < 2; ++i) dev.copy(stream, buffer, &range, 1, to_device);  // warm-up
      // At least 5 copies, then until min_time_s of them (at most 1000): the median.
      CalibrationOptions o;
      o.min_reps = 5;
      o.max_reps = 1000;
      o.min_time_s = o.max_time_s = min_time_s;
      const KernelMeasurement m = sample_calls(KernelShape{}, 1, o, [&](int) {
        const auto t0 = clock::now();
        dev.copy(stream, buffer, &range, 1, to_device);
        return since(t0);
      });
      r.points.emplace_back(b, m.median_s);
    }
  } catch (...) {
    try {
      dev.release(buffer, most);
    } catch (...) {  // the copy's error is the one to report
    }
    throw;
  }
  dev.release(buffer, most);
  fit_link(r, to_device);
  return r;
}

void fit_link(LinkMeasurement& l, bool to_device) {
  // Bandwidth: least-squares slope over the copies of at least 1 MiB.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [b, t] : l.points)
    if (b >= (std::size_t{1} << 20)) {
      const auto x = static_cast<double>(b);
      n += 1, sx += x, sy += t, sxx += x * x, sxy += x * t;
    }
  const double det = n * sxx - sx * sx;
  const double slope = n >= 2 && det > 0 ? (n * sxy - sx * sy) / det : 0;
  if (slope <= 0)
    throw std::runtime_error(fmt::format("link {}: copy times do not grow with size; no bandwidth fits",
                                         to_device ? "to the device" : "from the device"));
  l.bandwidth_Bps = 1 / slope;
  const auto& [b0, t0] = l.points.front();
  l.latency_s = std::max(0.0, t0 - static_cast<double>(b0) * slope);
}

DeviceCalibration calibrate_device(platform::Device& dev, const CalibrationOptions& o,
                                   const std::vector<std::size_t>& link_bytes) {
  DeviceCalibration c;
  c.device = dev.name();
  c.capacity = dev.capacity();

  std::vector<KernelShape> shapes;
  for (const KernelShape& s : calibration_shapes(o))
    if (runs_on_device(s.kernel)) shapes.push_back(s);
  const int passes = std::max(1, o.passes);
  std::size_t done = 0;
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const KernelShape& s = shapes[i];
      const KernelMeasurement m = measure_device_kernel(dev, s, o);
      keep_fastest_pass(c.kernels, i, pass, m);
      if (o.progress)
        o.progress(fmt::format("[{}/{}] {} {:<9} {} m={} n={} k={}: median {:.1f} us, IQR {:.1f} us, {} calls", ++done,
                               shapes.size() * static_cast<std::size_t>(passes), c.device, kernel_name(s.kernel),
                               s.precision, s.m, s.n, s.k, m.median_s * 1e6, m.spread_s * 1e6, m.reps));
    }
  c.to_device = measure_link(dev, true, link_bytes, o.min_time_s);
  c.from_device = measure_link(dev, false, link_bytes, o.min_time_s);
  c.pinned_host = c.to_device.pinned && c.from_device.pinned;
  if (o.progress)
    o.progress(fmt::format("link: to the device {:.2f} GB/s + {:.1f} us, from it {:.2f} GB/s + {:.1f} us",
                           c.to_device.bandwidth_Bps / 1e9, c.to_device.latency_s * 1e6,
                           c.from_device.bandwidth_Bps / 1e9, c.from_device.latency_s * 1e6));
  return c;
}

std::string device_machine_file(const std::string& base, const std::string& origin, const DeviceCalibration& c,
                                const CalibrationOptions& o, int gpus, const std::string& name,
                                const std::string& command, double seconds) {
  using ordered = nlohmann::ordered_json;
  ordered f;
  try {
    f = ordered::parse(base);
  } catch (const ordered::parse_error& e) {
    throw InputError(origin + ": malformed JSON (byte " + std::to_string(e.byte) + "): " + e.what());
  } catch (const ordered::exception& e) {  // e.g. a number beyond double's range (1e999)
    throw InputError(origin + ": not a valid machine file: " + e.what());
  }
  if (!f.is_object() || !f.contains("node") || !f["node"].is_object())
    throw InputError(origin + ": not a machine file (no \"node\" object)");
  const std::string host = host_name(), date = utc_now();
  const auto sig = [](double x) { return std::stod(fmt::format("{:.5g}", x)); };
  const auto link_text = [](const LinkMeasurement& l) {
    std::string pts;
    for (const auto& [b, t] : l.points) pts += fmt::format("{}{} B {:.4g} s", pts.empty() ? "" : ", ", b, t);
    return fmt::format("{:.4g} GB/s + {:.3g} us ({})", l.bandwidth_Bps / 1e9, l.latency_s * 1e6, pts);
  };
  // The machine file has one host<->GPU link, the same both ways: the slower direction's fit.
  const bool in_slower = c.to_device.bandwidth_Bps <= c.from_device.bandwidth_Bps;
  const LinkMeasurement& slow = in_slower ? c.to_device : c.from_device;
  const std::string measured = fmt::format(
      "tessera calibrate on {}, {}, {}: median Device::copy times of one contiguous {} host range; to the device {}; "
      "from it {}. The file's one link per GPU takes the slower direction ({})",
      host, c.device, date, c.pinned_host ? "page-locked" : "pageable", link_text(c.to_device),
      link_text(c.from_device), in_slower ? "to the device" : "from it");
  ordered g;
  g["count"] = gpus;
  g["memory_bytes"] = {{"value", static_cast<double>(c.capacity)},
                       {"source", fmt::format("Device::capacity() of {} (free memory at start less the "
                                              "libraries' reserve), {}",
                                              c.device, date)}};
  g["pcie"] = {{"bandwidth_Bps", {{"value", sig(slow.bandwidth_Bps)}, {"source", measured}}},
               {"latency_s", {{"value", sig(slow.latency_s)}, {"source", measured}}}};
  g["model"] = "gpu";
  if (c.stream_reserve > 0)
    g["stream_reserve_bytes"] = {
        {"value", static_cast<double>(c.stream_reserve)},
        {"source", fmt::format("the memory {} keeps for its libraries per compute stream beyond the first "
                               "(--gpu-streams; kernels/cuda/cuda_api.hpp): memory_bytes was measured with one",
                               c.device)}};
  if (!c.host_waits.empty()) {
    g["host_waits"] = ordered::array();
    for (const std::uint16_t k : c.host_waits) g["host_waits"].push_back(kernel_key(k));
  }
  std::optional<double> overlap;
  try {
    if (!c.overlaps.empty()) overlap = median_overlap(c.overlaps);
  } catch (const std::runtime_error&) {  // none defined: the file keeps the default
  }
  if (overlap) {
    std::string pairs;
    for (const OverlapMeasurement& m : c.overlaps)
      pairs += fmt::format("{}{} {} {}x{}: {:.2f}", pairs.empty() ? "" : ", ", kernel_name(m.panel.kernel),
                           m.panel.precision, m.panel.m, m.panel.n, m.overlap);
    g["stream_overlap"] = {
        {"value", sig(*overlap)},
        {"source", fmt::format("tessera calibrate --stream-overlap on {}, {}, {}: the median over the panel kernels "
                               "timed alone, beside GEMMs on a second compute stream and the GEMMs alone "
                               "(calibration.gpu.stream_overlap; experiments/calibrate_overlap.hpp): {}",
                               host, c.device, date, pairs)}};
  }
  f["node"]["gpus"] = g;
  ordered model;
  model["type"] = "calibrated";
  model["source"] = fmt::format(
      "tessera calibrate --device on {}, {}, {}: median and interquartile range of per-call host wall times of each "
      "kernel through the device's TileKernels, each call followed by Device::synchronize() (launch and "
      "synchronization included)",
      host, c.device, date);
  model["measurements"] = ordered::array();
  for (const KernelMeasurement& m : c.kernels) {
    model["measurements"].push_back(ordered::parse(measurement_json(m)));
  }
  f["kernel_models"]["gpu"] = model;
  f["name"] = name;
  if (f.contains("description") && f["description"].is_string())
    f["description"] =
        f["description"].get<std::string>() + fmt::format("; {} x {} added by `{}`", gpus, c.device, command);
  ordered cal;
  cal["command"] = command;
  cal["date"] = date;
  cal["host"] = host;
  cal["device"] = c.device;
  cal["seconds"] = std::round(seconds * 10) / 10;
  cal["method"] =
      std::string(
          "per shape: operands in 2 copies in device memory, inputs a kernel destroys restored from device "
          "copies before each call (untimed, synchronized), ") +
      (o.cold ? fmt::format("then {} MiB copied inside a scratch buffer so that the GPU's cache holds none of them "
                            "(cold operands; untimed), ",
                            o.cold_bytes >> 21)
              : std::string("so the restored inputs may still be in the GPU's cache, ")) +
      "warm-up calls, then per call the kernel and Device::synchronize() timed by "
      "steady_clock until min_reps calls and min_time_s; median_s = median, spread_s = interquartile range";
  cal["cold_operands"] = o.cold;
  cal["passes"] = std::max(1, o.passes);
  cal["min_reps"] = o.min_reps;
  cal["min_time_s"] = o.min_time_s;
  cal["qr_ib"] = o.ib;
  if (!c.qr_panel.empty()) cal["qr_panel"] = c.qr_panel;
  if (c.cholqr_gram > 0) cal["cholqr_gram"] = c.cholqr_gram;
  if (!o.more_ib.empty()) cal["qr_more_ib"] = o.more_ib;
  cal["sizes"] = o.sizes;
  if (!c.overlap_error.empty()) cal["stream_overlap_error"] = c.overlap_error;
  if (!c.overlaps.empty()) {
    cal["stream_overlap"] = ordered::array();
    for (const OverlapMeasurement& m : c.overlaps)
      cal["stream_overlap"].push_back({{"kernel", kernel_key(m.panel.kernel)},
                                       {"precision", std::string(1, m.panel.precision)},
                                       {"m", m.panel.m},
                                       {"n", m.panel.n},
                                       {"k", m.panel.k},
                                       {"ib", m.panel.ib},
                                       {"gemm_calls", m.gemm_calls},
                                       {"panel_s", m.panel_s},
                                       {"gemms_s", m.gemms_s},
                                       {"together_s", m.together_s},
                                       {"share", m.share},
                                       {"used", m.used},
                                       {"overlap", std::isnan(m.overlap) ? ordered() : ordered(m.overlap)}});
  }
  cal["for_n"] = o.for_n;
  cal["for_b"] = o.for_b;
  cal["for_s"] = o.for_s;
  cal["for_narrow"] = o.for_narrow;
  f["calibration"]["gpu"] = cal;
  // The GPU model is new: in-run times merged into the base's are gone with it.
  if (f["calibration"].contains("gpu_in_run")) f["calibration"].erase("gpu_in_run");
  return machine_file_text(f.dump());
}

}  // namespace tessera::kernels
