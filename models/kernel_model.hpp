#pragma once
// Kernel timing models: the modeled duration of one kernel call from its
// kernel, precision and shape (base/task.hpp KernelShape). A simulated
// run sleeps for it; a prediction is only as good as the model.
//
//   PeakEfficiencyModel  a device's measured maximum GFlop/s per kernel and an
//                        efficiency curve vs. tile size, for machines nobody
//                        can calibrate (Keeneland: the papers' figures)
//   CalibratedModel      a table of measured (kernel, precision, m, n, k) ->
//                        median seconds and spread, interpolated in between
//                        (QR's kernels also by their inner blocking ib, where
//                        the table measured more than one)
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/kernel_table.hpp"
#include "base/task.hpp"
#include "platform/kernel_time_model.hpp"

namespace tessera::models {

// Flop counts and machine-file keys come from the kernel table
// (base/kernel_table.hpp); these names keep working in models::.
using tessera::kernel_flops;
using tessera::kernel_from_key;
using tessera::kernel_key;

// Efficiency (0..1] as a piecewise-linear function of a size, constant
// beyond the first and last points.
class EfficiencyCurve {
 public:
  EfficiencyCurve() = default;
  explicit EfficiencyCurve(std::vector<std::pair<double, double>> points);  // sorted by size
  double at(double size) const;

 private:
  std::vector<std::pair<double, double>> points_;
};

class PeakEfficiencyModel final : public KernelTimeModel {
 public:
  // Index 0: double precision, 1: single.
  using PerPrecision = std::array<double, 2>;
  // `peak_gflops` per kernel id; kernels not listed use `default_peak`.
  PeakEfficiencyModel(PerPrecision default_peak, std::map<std::uint16_t, PerPrecision> peak_gflops,
                      std::array<EfficiencyCurve, 2> efficiency);
  // seconds = flops / (peak(kernel, precision) * efficiency(tile size)), where
  // the tile size is the geometric mean of the call's non-zero m, n, k.
  double seconds(const KernelShape& s) const override;
  static double tile_size(const KernelShape& s);

 private:
  PerPrecision default_peak_;
  std::map<std::uint16_t, PerPrecision> peak_;
  std::array<EfficiencyCurve, 2> efficiency_;
};

// How a calibrated model times a shape it has not measured (of a kernel
// and precision it has):
//   Flops  the rate (flop/s) interpolated linearly in flops between the two
//          measured shapes that bracket the call's flop count, the nearest
//          one's rate beyond them
//   Shape  the rates of the 4 measured shapes nearest in (log m, log n,
//          log k), weighted by 1/distance^2: a narrow tile takes the rate of
//          narrow tiles, not of a square one of equal flops
enum class Interpolation { Flops, Shape };
const char* to_string(Interpolation i);

class CalibratedModel final : public KernelTimeModel {
 public:
  struct Entry {
    std::uint16_t kernel = 0;
    char precision = 'd';
    std::int64_t m = 0, n = 0, k = 0;
    double median_s = 0;
    double spread_s = 0;  // e.g. interquartile range of the measurements
    // QR's inner blocking the call ran with (0: none, or not recorded). A
    // tile narrower than the blocking asked for clamps it to the tile's width
    // (base/kernel_table.hpp kernel_ib), so an entry whose ib is its tile's
    // limit serves every larger blocking.
    std::int64_t ib = 0;
    // Timed inside real factorizations (tessera calibrate --in-run: the
    // entry has in_run_calls), not alone: its spread is a run's.
    bool in_run = false;
  };
  // `name` shows in error messages. `first_call` and `start` are the
  // start-up costs of KernelTimeModel::first_call_s and start_s, `task` its
  // per-task cost task_s.
  CalibratedModel(std::string name, std::vector<Entry> entries,
                  std::map<std::pair<std::uint16_t, char>, double> first_call = {}, double start = 0,
                  Interpolation interpolation = Interpolation::Flops, double task = 0);
  double first_call_s(std::uint16_t kernel, char precision) const override;
  double start_s() const override { return start_s_; }
  double task_s() const override { return task_s_; }
  // Where the table measured a kernel at several inner blockings (levels:
  // the ib values of entries that were not clamped by their tile), a call
  // takes the level nearest its own ib (in log; a tie: the smaller), that
  // level's entries and the clamped ones; with one level or none, ib plays no
  // part. Then: a measured shape gives its median exactly. Otherwise the measured shapes
  // of the kernel and precision are ordered by flop count and the rate
  // (flop/s) is interpolated linearly in flops between the two that bracket
  // the call, beyond them the nearest one's rate is kept; shapes of equal flop
  // count are one point there, timed at the mean of their times. A kernel without a
  // flop formula (LU's row moves) takes 0 s unless measured exactly. Throws
  // InputError for another kernel or precision the table has no measurement of.
  double seconds(const KernelShape& s) const override;
  const std::vector<Entry>& entries() const { return entries_; }
  Interpolation interpolation() const { return interpolation_; }

 private:
  // A measurement with a flop count: its rate, and its log dimensions for shape interpolation.
  struct Point {
    double flops, rate;
    double log_m, log_n, log_k;
  };
  std::string name_;
  std::vector<Entry> entries_;
  // Per (kernel, precision, level): level 0 where the kernel has fewer than two levels.
  using Table = std::tuple<std::uint16_t, char, std::int64_t>;
  std::map<Table, std::vector<Point>> by_flops_;
  // The same measurements as one rate per flop count, ascending (equal flop counts merged), for Interpolation::Flops.
  struct FlopsPoint {
    double flops, rate;
  };
  std::map<Table, std::vector<FlopsPoint>> curve_;
  // Measured shapes (kernel, precision, m, n, k, ib: 0 where the kernel has
  // fewer than two levels) -> median, for the exact lookup.
  std::map<std::tuple<std::uint16_t, char, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, double> exact_;
  // The inner blockings measured per (kernel, precision), where two or more.
  std::map<std::pair<std::uint16_t, char>, std::vector<std::int64_t>> levels_;
  // The level a call of shape s is timed at (0: ib plays no part).
  std::int64_t level(const KernelShape& s) const;
  std::map<std::pair<std::uint16_t, char>, double> first_call_;
  double start_s_ = 0;
  double task_s_ = 0;
  Interpolation interpolation_ = Interpolation::Flops;
  static double shape_rate(const std::vector<Point>& pts, const KernelShape& s);
};

// How well a calibrated table predicts itself: each measurement (with a
// flop count) left out in turn and timed by the model of the others.
struct LeftOut {
  CalibratedModel::Entry entry;
  double predicted_s = 0;
};
std::vector<LeftOut> leave_one_out(const std::vector<CalibratedModel::Entry>& entries, Interpolation interpolation);

// Builds a model from a machine file's "kernel_models" entry `name`; `file`
// and `path` (the entry's dotted path) name it in error messages (InputError).
std::shared_ptr<const KernelTimeModel> model_from_json(const nlohmann::json& j, const std::string& name,
                                                       const std::string& file, const std::string& path);

}  // namespace tessera::models
