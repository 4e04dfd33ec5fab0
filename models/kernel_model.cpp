#include "models/kernel_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_fields.hpp"
#include "base/kernel_table.hpp"

namespace tessera::models {

namespace {
int precision_index(char p) { return p == 's' ? 1 : 0; }
}  // namespace

EfficiencyCurve::EfficiencyCurve(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {}

double EfficiencyCurve::at(double size) const {
  if (points_.empty()) return 1.0;
  if (size <= points_.front().first) return points_.front().second;
  if (size >= points_.back().first) return points_.back().second;
  const auto hi =
      std::lower_bound(points_.begin(), points_.end(), size, [](const auto& p, double s) { return p.first < s; });
  const auto lo = hi - 1;
  const double f = (size - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

PeakEfficiencyModel::PeakEfficiencyModel(PerPrecision default_peak, std::map<std::uint16_t, PerPrecision> peak_gflops,
                                         std::array<EfficiencyCurve, 2> efficiency)
    : default_peak_(default_peak), peak_(std::move(peak_gflops)), efficiency_(std::move(efficiency)) {}

double PeakEfficiencyModel::tile_size(const KernelShape& s) {
  double prod = 1;
  int dims = 0;
  for (const std::int64_t d : {s.m, s.n, s.k})
    if (d > 0) prod *= static_cast<double>(d), ++dims;
  return dims ? std::pow(prod, 1.0 / dims) : 0.0;
}

double PeakEfficiencyModel::seconds(const KernelShape& s) const {
  const double flops = kernel_flops(s);
  // A kernel without a flop formula (LU's row moves) takes 0 s: row moves are not modeled yet.
  if (flops <= 0) return 0;
  const int p = precision_index(s.precision);
  // A kernel without its own peak takes its rate proxy's (TTQRT: TSQRT's), then the default.
  auto it = peak_.find(s.kernel);
  if (it == peak_.end()) it = peak_.find(kernel_rate_proxy(s.kernel));
  const double peak = (it == peak_.end() ? default_peak_ : it->second)[p] * 1e9;
  return flops / (peak * efficiency_[p].at(tile_size(s)));
}

double CalibratedModel::first_call_s(std::uint16_t kernel, char precision) const {
  const auto it = first_call_.find({kernel, precision});
  return it == first_call_.end() ? 0.0 : it->second;
}

namespace {
// A dimension's log for shape interpolation; an absent one (k = 0) counts as 1.
double log_dim(std::int64_t x) { return std::log(static_cast<double>(std::max<std::int64_t>(x, 1))); }
}  // namespace

const char* to_string(Interpolation i) { return i == Interpolation::Shape ? "shape" : "flops"; }

CalibratedModel::CalibratedModel(std::string name, std::vector<Entry> entries,
                                 std::map<std::pair<std::uint16_t, char>, double> first_call, double start,
                                 Interpolation interpolation, double task)
    : name_(std::move(name)), entries_(std::move(entries)), first_call_(std::move(first_call)), start_s_(start),
      task_s_(task), interpolation_(interpolation) {
  // An entry clamped by its tile (ib = the tile's limit) is the same call at
  // any blocking at least that large: it belongs to every level.
  const auto clamped = [](const Entry& e) {
    return e.ib == 0 || e.ib >= kernel_ib(e.kernel, e.n, e.k, std::numeric_limits<std::int64_t>::max());
  };
  std::map<std::pair<std::uint16_t, char>, std::set<std::int64_t>> levels;
  for (const Entry& e : entries_)
    if (!clamped(e)) levels[{e.kernel, e.precision}].insert(e.ib);
  for (const auto& [key, ibs] : levels)
    if (ibs.size() > 1) levels_[key].assign(ibs.begin(), ibs.end());
  // A shape measured twice (a file edited by hand, two files joined) takes the mean of its times, as the flops curve
  // below does, whatever their order.
  std::map<decltype(exact_)::key_type, std::pair<double, int>> sums;
  for (const Entry& e : entries_) {
    const auto lv = levels_.find({e.kernel, e.precision});
    const bool by_ib = lv != levels_.end();
    auto& [sum, count] = sums[std::make_tuple(e.kernel, e.precision, e.m, e.n, e.k, by_ib ? e.ib : 0)];
    sum += e.median_s;
    ++count;
    KernelShape s{e.kernel, e.precision, e.m, e.n, e.k};
    const double f = kernel_flops(s);
    if (f <= 0 || e.median_s <= 0) continue;
    const Point pt{f, f / e.median_s, log_dim(e.m), log_dim(e.n), log_dim(e.k)};
    if (!by_ib) by_flops_[{e.kernel, e.precision, 0}].push_back(pt);
    else
      for (const std::int64_t l : lv->second)
        if (clamped(e) || e.ib == l) by_flops_[{e.kernel, e.precision, l}].push_back(pt);
  }
  for (const auto& [key, sum_count] : sums) exact_.emplace(key, sum_count.first / sum_count.second);
  for (auto& [key, pts] : by_flops_) {
    // Ordered by value alone (flops, then rate), so that neither the file's order nor the sort's treatment of ties
    // reaches a prediction.
    std::sort(pts.begin(), pts.end(),
              [](const Point& a, const Point& b) { return std::tie(a.flops, a.rate) < std::tie(b.flops, b.rate); });
    // The curve in flops: shapes of equal flop count (SSRFB's m x n x k and n x m x k) are one point, timed at the
    // mean of their times; otherwise a call next to them would take whichever of them the order put at the edge.
    std::vector<FlopsPoint>& curve = curve_[key];
    for (std::size_t i = 0; i < pts.size();) {
      std::size_t j = i;
      double time = 0;
      for (; j < pts.size() && pts[j].flops == pts[i].flops; ++j) time += pts[j].flops / pts[j].rate;
      curve.push_back({pts[i].flops, pts[i].flops / (time / static_cast<double>(j - i))});
      i = j;
    }
  }
}

std::int64_t CalibratedModel::level(const KernelShape& s) const {
  const auto lv = levels_.find({s.kernel, s.precision});
  if (lv == levels_.end()) return 0;
  const double want = log_dim(s.ib);
  std::int64_t best = lv->second.front();
  for (const std::int64_t l : lv->second)  // ascending: a tie keeps the smaller
    if (std::abs(log_dim(l) - want) < std::abs(log_dim(best) - want)) best = l;
  return best;
}

double CalibratedModel::seconds(const KernelShape& s) const {
  const std::int64_t lv = level(s);
  // The exact shape at the chosen level, or where the call's ib was clamped by its tile, at that ib.
  const bool call_clamped = s.ib >= kernel_ib(s.kernel, s.n, s.k, std::numeric_limits<std::int64_t>::max());
  const std::int64_t key_ib = lv == 0 ? 0 : call_clamped ? s.ib : lv;
  if (const auto hit = exact_.find(std::make_tuple(s.kernel, s.precision, s.m, s.n, s.k, key_ib)); hit != exact_.end())
    return hit->second;
  // A kernel without a flop formula (LU's row moves: GATHER, SCATTER, PIVOTS,
  // SWAP, EXCHANGE) takes 0 s unless measured exactly: row moves are not
  // modeled yet (PeakEfficiencyModel gives them 0 s too).
  if (const KernelInfo* r = kernel_info(s.kernel); !r || !r->flops) return 0;
  const auto it = by_flops_.find({s.kernel, s.precision, lv});
  if (it == by_flops_.end() && kernel_rate_proxy(s.kernel) != s.kernel) {
    // Not measured: the rate its proxy is measured at in the same shape (TTQRT runs at TSQRT's rate).
    KernelShape p = s;
    p.kernel = kernel_rate_proxy(s.kernel);
    const double f = kernel_flops(s), fp = kernel_flops(p);
    return fp > 0 ? seconds(p) * f / fp : 0;
  }
  if (it == by_flops_.end())
    throw InputError("kernel model '" + name_ + "' has no measurement of kernel " + kernel_key(s.kernel) +
                     " in precision '" + std::string(1, s.precision) + "' (needed for m=" + std::to_string(s.m) +
                     " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) + ")");
  const double f = kernel_flops(s);
  if (f <= 0) return 0;
  if (interpolation_ == Interpolation::Shape) return f / shape_rate(it->second, s);
  const std::vector<FlopsPoint>& pts = curve_.at(it->first);
  if (f <= pts.front().flops) return f / pts.front().rate;
  if (f >= pts.back().flops) return f / pts.back().rate;
  const auto hi =
      std::lower_bound(pts.begin(), pts.end(), f, [](const FlopsPoint& p, double x) { return p.flops < x; });
  const auto lo = hi - 1;
  const double rate = lo->rate + (f - lo->flops) / (hi->flops - lo->flops) * (hi->rate - lo->rate);
  return f / rate;
}

double CalibratedModel::shape_rate(const std::vector<Point>& pts, const KernelShape& s) {
  // The measured shapes of this kernel and precision, nearest first in log dimensions.
  constexpr std::size_t kNearest = 4;
  const double lm = log_dim(s.m), ln = log_dim(s.n), lk = log_dim(s.k);
  std::vector<std::pair<double, double>> near;  // (squared distance, rate)
  near.reserve(pts.size());
  for (const Point& p : pts) {
    const double dm = lm - p.log_m, dn = ln - p.log_n, dk = lk - p.log_k;
    near.emplace_back(dm * dm + dn * dn + dk * dk, p.rate);
  }
  const std::size_t k = std::min(kNearest, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
  double w_sum = 0, rate = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double w = 1.0 / std::max(near[i].first, 1e-12);
    w_sum += w;
    rate += w * near[i].second;
  }
  return rate / w_sum;
}

std::vector<LeftOut> leave_one_out(const std::vector<CalibratedModel::Entry>& entries, Interpolation interpolation) {
  std::vector<LeftOut> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const CalibratedModel::Entry& e = entries[i];
    const KernelShape s{e.kernel, e.precision, e.m, e.n, e.k};
    if (kernel_flops(s) <= 0) continue;
    std::vector<CalibratedModel::Entry> others;
    for (std::size_t j = 0; j < entries.size(); ++j)
      if (j != i && entries[j].kernel == e.kernel && entries[j].precision == e.precision) others.push_back(entries[j]);
    if (others.empty()) continue;
    const CalibratedModel m("leave-one-out", std::move(others), {}, 0, interpolation);
    out.push_back({e, m.seconds(s)});
  }
  return out;
}

namespace {

// What a kernel model may say (JsonFields::within): a rate from 1 MFlop/s to 1 EFlop/s, a time up to a day.
constexpr double kMinGflops = 1e-3, kMaxGflops = 1e9, kMaxKernelS = 86400;

PeakEfficiencyModel::PerPrecision per_precision(const JsonFields& f, const std::string& key) {
  const JsonFields p = f.object(key);
  return {p.within("d", kMinGflops, kMaxGflops), p.within("s", kMinGflops, kMaxGflops)};
}

EfficiencyCurve curve(const JsonFields& f, const std::string& key) {
  const auto& arr = f.require(key);
  if (!arr.is_array() || arr.empty()) f.fail(key, arr, "must be a non-empty array of [tile size, efficiency] pairs");
  std::vector<std::pair<double, double>> pts;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& p = arr[i];
    const std::string at = key + "[" + std::to_string(i) + "]";
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
      f.fail(at, p, "must be a [tile size, efficiency] pair");
    const double size = p[0].get<double>(), eff = p[1].get<double>();
    if (!(size > 0)) f.fail(at, p, "tile size must be > 0");
    if (!(eff > 0 && eff <= 1)) f.fail(at, p, "efficiency must be in (0, 1]");
    if (!pts.empty() && size <= pts.back().first) f.fail(at, p, "tile sizes must increase");
    pts.emplace_back(size, eff);
  }
  return EfficiencyCurve(std::move(pts));
}

std::shared_ptr<const KernelTimeModel> peak_efficiency(const JsonFields& f) {
  const JsonFields peaks = f.object("peak_gflops");
  const auto dflt = per_precision(peaks, "default");
  std::map<std::uint16_t, PeakEfficiencyModel::PerPrecision> by_kernel;
  for (const auto& [key, value] : peaks.json().items()) {
    if (key == "default" || key == "source") continue;
    const auto id = kernel_from_key(key);
    if (!id) peaks.fail(key, value, "unknown kernel '" + key + "' (known: " + kernel_keys_text() + ")");
    by_kernel[*id] = per_precision(peaks, key);
  }
  std::array<EfficiencyCurve, 2> eff;
  if (f.has("efficiency")) {
    const JsonFields e = f.object("efficiency");
    eff = {curve(e, "d"), curve(e, "s")};
  }
  return std::make_shared<PeakEfficiencyModel>(dflt, std::move(by_kernel), std::move(eff));
}

std::shared_ptr<const KernelTimeModel> calibrated(const JsonFields& f, const std::string& name) {
  const auto& arr = f.require("measurements");
  if (!arr.is_array() || arr.empty()) f.fail("measurements", arr, "must be a non-empty array");
  std::vector<CalibratedModel::Entry> entries;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const JsonFields e(arr[i], f.file(), f.field("measurements[" + std::to_string(i) + "]"));
    CalibratedModel::Entry x;
    const std::string kernel = e.string("kernel");
    const auto id = kernel_from_key(kernel);
    if (!id) e.fail("kernel", e.require("kernel"), "unknown kernel (known: " + kernel_keys_text() + ")");
    x.kernel = *id;
    const std::string p = e.string("precision");
    if (p != "d" && p != "s") e.fail("precision", e.require("precision"), "must be \"d\" or \"s\"");
    x.precision = p[0];
    x.m = e.integer("m", 1);
    x.n = e.integer("n", 1);
    x.k = e.has("k") ? e.integer("k", 0) : 0;
    x.median_s = e.within("median_s", 0, kMaxKernelS, true);
    x.spread_s = e.has("spread_s") ? e.within("spread_s", 0, kMaxKernelS) : 0.0;
    x.ib = e.has("ib") ? e.integer("ib", 1) : 0;
    x.in_run = e.has("in_run_calls");
    entries.push_back(x);
  }
  // Optional start-up costs: "first_call_s": {"trsm": {"d": x, "s": y}, ...}, "start_s": x.
  std::map<std::pair<std::uint16_t, char>, double> first_call;
  if (f.has("first_call_s")) {
    const JsonFields fc = f.object("first_call_s");
    for (const auto& [key, value] : fc.json().items()) {
      if (key == "source") continue;
      const auto id = kernel_from_key(key);
      if (!id) fc.fail(key, value, "unknown kernel '" + key + "' (known: " + kernel_keys_text() + ")");
      const JsonFields per = fc.object(key);
      for (const char* p : {"d", "s"})
        if (per.has(p)) first_call[{*id, p[0]}] = per.within(p, 0, kMaxKernelS);
    }
  }
  const double start = f.has("start_s") ? f.within("start_s", 0, kMaxKernelS) : 0.0;
  // Optional per-task cost of the runtime (KernelTimeModel::task_s), written by calibrate --in-run.
  const double task = f.has("task_s") ? f.within("task_s", 0, kMaxKernelS) : 0.0;
  Interpolation interpolation = Interpolation::Flops;
  if (f.has("interpolation")) {
    const std::string how = f.string("interpolation");
    if (how == "shape") interpolation = Interpolation::Shape;
    else if (how != "flops") f.fail("interpolation", f.require("interpolation"), "must be \"flops\" or \"shape\"");
  }
  return std::make_shared<CalibratedModel>(name, std::move(entries), std::move(first_call), start, interpolation, task);
}

}  // namespace

std::shared_ptr<const KernelTimeModel> model_from_json(const nlohmann::json& j, const std::string& name,
                                                       const std::string& file, const std::string& path) {
  const JsonFields f(j, file, path);
  const std::string type = f.string("type");
  if (type == "peak-efficiency") return peak_efficiency(f);
  if (type == "calibrated") return calibrated(f, name);
  f.fail("type", f.require("type"), "unknown kernel model type (known: peak-efficiency, calibrated)");
}

}  // namespace tessera::models
