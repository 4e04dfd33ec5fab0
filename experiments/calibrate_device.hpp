#pragma once
// GPU calibration (`tessera calibrate --device cuda|emulated`, issue 15
// point 7): times the tile kernels a GPU runs for the runtime, through the
// device's own TileKernels on operands in its memory, and its host link both
// ways; adds the GPU (count, memory, link, a "calibrated" kernel model) to a
// machine file of the node's cores (one `tessera calibrate` wrote), so that a
// simulated run of the node can be set against a real one.
//
// Kernel method, per shape: the operands in two copies in device memory, what
// a call destroys restored from a pristine device copy before it (untimed,
// synchronized), then per call: the kernel and Device::synchronize(), timed
// by the host's steady clock. So a time is what a task of the runtime's
// device manager pays (000 §5.4: one kernel, then the stream synchronized),
// launch and synchronization included. Median = the model's time, spread =
// interquartile range, as the cores' calibration (experiments/calibrate.hpp).
//
// Link method, per direction and copy size: Device::copy of one contiguous
// host range (page-locked first when the device pins host memory, as the
// runtime's tiles are: experiments/host_pinning.hpp), median of repeated
// copies. The bandwidth is the least-squares slope of time over bytes for the
// copies of at least 1 MiB; the latency is the smallest copy's time less its
// bytes at that bandwidth (at least 0).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/calibrate.hpp"
#include "experiments/calibrate_overlap.hpp"

namespace tessera::platform {
class Device;
}

namespace tessera::kernels {

// Whether the runtime may run `kernel` on a GPU: every calibrated kernel but
// the LU tournament's candidate selection (LEAF, MERGE), which runs on CPU
// cores only (kernels/tile_kernels_api.hpp). LU's PANEL, DIAG and TRSM_L run
// on a GPU when it holds every block column (--d 0).
bool runs_on_device(std::uint16_t kernel);

struct LinkMeasurement {
  double bandwidth_Bps = 0, latency_s = 0;
  bool pinned = false;  // the host buffer was page-locked (else pageable: the device does not pin, or could not)
  std::vector<std::pair<std::size_t, double>> points;  // (bytes, median seconds per copy)
};

struct DeviceCalibration {
  std::string device;        // Device::name()
  std::size_t capacity = 0;  // bytes the runtime may allocate on it
  bool pinned_host = false;  // the link was measured from page-locked host memory, both ways
  std::vector<KernelMeasurement> kernels;
  LinkMeasurement to_device, from_device;
  std::vector<OverlapMeasurement> overlaps;  // measure_overlaps', when asked for (--stream-overlap)
  std::string overlap_error;                 // why measure_overlaps stopped early, if it did
  // The kernels whose call waits on the host on this device (a CUDA GPU's:
  // kernels/cuda/host_waits.hpp), written as node.gpus.host_waits.
  std::vector<std::uint16_t> host_waits;
  // Memory the device keeps per compute stream beyond the first (a CUDA
  // GPU's library reserve), written as node.gpus.stream_reserve_bytes.
  std::size_t stream_reserve = 0;
  // A CUDA GPU's QR panels (--gpu-qr-panel: "householder", "cholqr"), as
  // calibration.gpu.qr_panel; empty for a device that has one kind.
  std::string qr_panel;
  // Cholesky QR panels' Gram matrices from blocks of this many rows
  // (--gpu-cholqr-gram; 0: SYRK), as calibration.gpu.cholqr_gram where > 0.
  int cholqr_gram = 0;
};

// One shape's operands in `dev`'s memory (two copies, used in turn), ready to time one call after another:
// call() restores what the previous call on that copy destroyed (and with o.cold evicts the GPU's cache),
// synchronizes, then times the kernel and a synchronize. Throws InputError for a kernel that runs on CPU
// cores only.
class DeviceKernelTimer {
 public:
  DeviceKernelTimer(platform::Device& dev, const KernelShape& shape, const CalibrationOptions& o);
  ~DeviceKernelTimer();
  DeviceKernelTimer(const DeviceKernelTimer&) = delete;
  DeviceKernelTimer& operator=(const DeviceKernelTimer&) = delete;
  double call();            // seconds of one call
  std::int64_t ib() const;  // the inner blocking QR kernels are called with (0: none)

  struct Impl {
    virtual ~Impl() = default;
    virtual double call() = 0;
    virtual std::int64_t ib() const = 0;
  };

 private:
  std::unique_ptr<Impl> impl_;
};

// One shape, timed on `dev` as described above (shape.precision chooses kernels_d or kernels_s).
KernelMeasurement measure_device_kernel(platform::Device& dev, const KernelShape& shape, const CalibrationOptions& o);

// How much of the GPU `panel` leaves to GEMMs on another compute stream
// (calibrate_overlap.hpp says how), on operands in `dev`'s memory, each
// timing the median of o.min_reps clamped to 5..9 samples. Throws
// InputError when `dev` has fewer than two compute streams
// (Device::kernel_streams). After any other exception the device may hold a
// task it never ended: use a fresh one.
OverlapMeasurement measure_overlap(platform::Device& dev, const KernelShape& panel, const CalibrationOptions& o);

// measure_overlap for each of overlap_panels(shapes) into c.overlaps; on the
// first failure it records why in c.overlap_error and stops (the kernels and
// the link measured before stay). A device built for this alone, with two
// compute streams (a CUDA GPU's second stream takes library memory, which
// would lower the capacity the ordinary calibration records).
void measure_overlaps(platform::Device& dev, const std::vector<KernelShape>& shapes, const CalibrationOptions& o,
                      DeviceCalibration& c);

// l.bandwidth_Bps and l.latency_s fitted to l.points (see above): the least-squares line of time over
// bytes, with an intercept, over the copies of at least 1 MiB; the latency the first point's time less its
// bytes at that bandwidth (at least 0). Throws std::runtime_error, naming the direction, when no positive
// slope fits (fewer than two such copies, or times that do not grow with size).
void fit_link(LinkMeasurement& l, bool to_device);

// The link one way, at copy sizes `bytes` (ascending; at least two of >= 1 MiB for a bandwidth).
LinkMeasurement measure_link(platform::Device& dev, bool to_device, const std::vector<std::size_t>& bytes,
                             double min_time_s);

// Every shape of calibration_shapes(o) the device runs (runs_on_device), then the link both ways at
// `link_bytes`; o.progress is told of each.
DeviceCalibration calibrate_device(platform::Device& dev, const CalibrationOptions& o,
                                   const std::vector<std::size_t>& link_bytes);

// The machine file `base` (its text; `origin` names it in messages) with `gpus` GPUs like the calibrated
// one per node: node.gpus (memory = the device's capacity, pcie = the slower direction's fit, the other
// recorded in its source), the kernel model "gpu", and calibration.gpu saying how and when.
std::string device_machine_file(const std::string& base, const std::string& origin, const DeviceCalibration& c,
                                const CalibrationOptions& o, int gpus, const std::string& name,
                                const std::string& command, double seconds);

}  // namespace tessera::kernels
