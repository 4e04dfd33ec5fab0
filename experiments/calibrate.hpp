#pragma once
// Kernel calibration (`tessera calibrate`): times every tile kernel the
// runtime uses, on one core as the runtime runs it (OpenBLAS single-threaded),
// over the tile shapes the runtime uses, and keeps the median and spread of
// the per-call times. The result is a "calibrated" kernel model
// (models/kernel_model.hpp CalibratedModel) inside a machine file.
//
// Method, per shape: the kernel's operands are allocated in a few copies
// (rotated call by call so a call does not find the previous call's operands
// in L1/L2, as the runtime's tasks mostly do not); operands a kernel would
// drive towards denormals or non-SPD input (POTF2', TRSM, GEQRT, TSQRT; LU's
// PANEL, DIAG, TRSM_L, TRSM_U) are restored from a pristine copy before each
// call, outside the timed region (experiments/kernel_call.hpp);
// a few untimed warm-up calls; then per-call steady-clock times until both a
// minimum count and a minimum total time are reached. Median = the model's
// time; spread = interquartile range.
//
// Concurrency: with `concurrency` c > 1 the timed thread runs while c-1 other
// threads run the same kernel on their own operands without pause, so the
// figures include the memory-bandwidth and clock sharing a c-thread run sees.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/task.hpp"

namespace tessera::kernels {

struct CalibrationOptions {
  std::vector<char> precisions = {'d', 's'};
  // Kernel ids (base/kernel_table.hpp); default: calibrated_kernels(), those the factorizations run.
  std::vector<std::uint16_t> kernels;
  // Square tile sizes B measured for every kernel (m = n = k = B).
  std::vector<std::int64_t> sizes = {64, 128, 192, 256, 320, 384, 512};
  // Also measure every distinct shape that the registered factorizations run
  // (LU with its default, partial pivoting) for these matrix orders with the default tiles (base/tile_layout.cpp
  // default_tiles), for each thread count 1..max(concurrency): the remainder
  // tiles' shapes then need no interpolation.
  std::vector<std::int64_t> for_n = {2048, 4096, 8192};
  // ... and, for each of those N, with these s (tile columns per top-level
  // tile, b = B/(2s): the narrow and remainder columns' shapes).
  std::vector<int> for_s = {1};
  // ... with these top-level tile sizes B instead of the default tiles' (a
  // GPU's runs choose larger tiles than default_tiles gives cores); empty: the default.
  std::vector<std::int64_t> for_b;
  // ... with narrow columns of these widths (where s > 1) instead of B/(2s):
  // --dist gpu-columns runs tiles of s equal columns (b = B/s).
  std::vector<std::int64_t> for_narrow;
  std::vector<int> concurrency = {1};
  std::int64_t ib = 32;  // QR inner blocking (the runtime's default)
  // QR's kernels also at these inner blockings: every QR shape once per
  // blocking (a run's --ib then takes the nearest one measured: CalibratedModel).
  std::vector<std::int64_t> more_ib;
  bool startup = true;  // also measure StartupCosts (calibrate() then does so first)
  // Cold operands: the copies span `cold_bytes` (far more than the last-level
  // cache) and what a call overwrites is put back right after it, not right
  // before the next call on that copy, so every call finds its operands in
  // memory, as a runtime's task mostly does (its tiles were written by
  // other tasks, on other cores, long before). Otherwise the copies span
  // 32 MiB and the restored operands are warm.
  bool cold = false;
  // Warm operands, but what a call destroys and is restored before it is
  // flushed from the caches after the restore (KernelCall::flush_restored):
  // TRSM's, POTF2''s, GEQRT's and TSQRT's tile then arrives from memory, as
  // in a run, where another task wrote it, while the operands a run's tasks
  // share (a panel's tiles, read by every update of a step) stay warm.
  bool flush_restored = false;
  // Passes over every shape; each shape keeps its fastest pass's median (a
  // shared machine's interference only slows kernels: a later pass repairs a
  // shape measured while a neighbour ran).
  int passes = 1;
  std::size_t cold_bytes = std::size_t{128} << 20;
  int min_reps = 9;
  int max_reps = 200;
  double min_time_s = 0.08;  // per shape, timed calls only
  double max_time_s = 1.0;   // per shape: stop adding calls beyond it once min_reps are done
  // Called after each shape with a line of text (progress on a terminal).
  std::function<void(const std::string&)> progress;
};

struct KernelMeasurement {
  KernelShape shape;
  int concurrency = 1;
  double median_s = 0, spread_s = 0, min_s = 0;
  int reps = 0;
  int blas_threads = 1;  // the BLAS's threads per call while measured (measure_kernel sets 1)
};

// Start-up costs a fresh process pays (KernelTimeModel::first_call_s and
// start_s), each the median over fresh child processes (fork): the first call
// of each kernel in each precision minus a warm call, at the runtime's
// default tile size; and the time a run of one empty task takes with c threads.
// Must run before this process calls any BLAS routine, or the children
// inherit a warm library.
struct StartupCosts {
  std::map<std::pair<std::uint16_t, char>, double> first_call_s;
  std::map<int, double> start_s;  // by thread count
};
StartupCosts measure_startup(const CalibrationOptions& o, int samples = 5);

// The id of a calibrated kernel's machine-file key (`tessera calibrate
// --kernels`); throws InputError naming the keys it accepts otherwise.
std::uint16_t calibration_kernel_from_key(const std::string& key);

// The distinct shapes `o` asks for, in a fixed order (kernel, precision, m, n, k).
std::vector<KernelShape> calibration_shapes(const CalibrationOptions& o);

struct Calibration {
  std::vector<KernelMeasurement> kernels;
  StartupCosts startup;  // empty unless o.startup
};
// Measures the start-up costs (if o.startup), then each shape at each concurrency level.
Calibration calibrate(const CalibrationOptions& o);

// Pass `pass` (0, 1, ...) of a calibration measured `m` for its i-th shape:
// the first pass appends it to `kept` (shape i's place), a later one keeps
// whichever of the two has the smaller median (interference on a shared
// machine only slows a kernel, so the fastest pass is the least disturbed).
void keep_fastest_pass(std::vector<KernelMeasurement>& kept, std::size_t i, int pass, const KernelMeasurement& m);

// Calls timed(i) for i = 0, 1, ... (each returns the seconds of one call)
// until o.max_reps calls, or o.min_reps and o.min_time_s (or o.max_time_s)
// of timed calls; their median, interquartile range and minimum.
KernelMeasurement sample_calls(const KernelShape& shape, int concurrency, const CalibrationOptions& o,
                               const std::function<double(int)>& timed);
// One measurement as a machine file's calibrated model lists it (JSON text).
std::string measurement_json(const KernelMeasurement& m);
// Whether a calibration of `kernels` (empty: every kernel the table
// calibrates) measures kernel k.
bool calibration_wants(const std::vector<std::uint16_t>& kernels, std::uint16_t k);
// The q-quantile of sorted (not empty), linear between order statistics.
double quantile(const std::vector<double>& sorted, double q);
// The median of v's finite values, at least 0 (0 when none): of times, or of
// a time's excess over another.
double median_of(std::vector<double> v);
// x to five significant digits, as machine files record times: more than
// the measurements' own precision.
double five_digits(double x);

// Times one call's worth of `shape` like calibrate() does (for tests and tools), with one
// BLAS thread per call (the setting before it is restored after).
KernelMeasurement measure_kernel(const KernelShape& shape, int concurrency, const CalibrationOptions& o);

}  // namespace tessera::kernels

namespace tessera::kernels {

// A machine file for this machine (platform/machines/README.md): one node,
// `cores` cores, one "calibrated" kernel model per concurrency level
// ("core-x1", "core-x2", ...) and node.cores.model_by_threads choosing among
// them by --threads. `command` and `seconds` are recorded in it.
std::string calibration_machine_file(const Calibration& c, const CalibrationOptions& o, const std::string& name,
                                     int cores, const std::string& command, double seconds);

// A machine file's JSON text as the calibrations write it: indented, with
// each "calibrated" kernel model's measurements one per line (the file stays
// readable and diffable).
std::string machine_file_text(const std::string& json);
// This host's name, and the time now in UTC (ISO 8601), as the calibrations record them.
std::string host_name();
std::string utc_now();

}  // namespace tessera::kernels
