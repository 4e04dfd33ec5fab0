#pragma once
// Kernel-time variability for simulated runs: a decorator of a kernel time
// model that multiplies each task's modeled time by a random factor, drawn
// from the task's identity so that a run is reproducible bit for bit and the
// same task gets the same factor whatever order the tasks run in.
//
// Two kinds, after the SMPI studies of HPL at scale (Cornebize, Legrand and
// Heinrich, "Fast and faithful performance prediction of MPI applications:
// the HPL case study", IEEE Cluster 2019; Cornebize and Legrand, "Simulation-
// based optimization and sensibility analysis of MPI applications: variability
// matters", JPDC 2022), which found a deterministic kernel model too
// optimistic and both kinds needed:
//   temporal  each call's time x exp(sigma_k Z), Z standard normal drawn from
//             (seed, node, device, task): a lognormal whose median is the
//             model's time (the calibration's per-shape medians), sigma_k per
//             kernel and precision;
//   spatial   every call of a node x exp(sigma_node Z_node), one Z per node
//             (and per seed): nodes of one machine that are not equally fast.
// sigma_k is either one number for every kernel or, from a calibrated model
// ("auto"), the spread the calibration measured: for an entry of median M and
// interquartile range I, a lognormal's ln(Q3/Q1) / (2 x 0.6745) with Q1, Q3
// taken as M -+ I/2; the median over the kernel's entries timed inside real
// runs (calibrate --in-run), or over all of them where it has none.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "platform/kernel_time_model.hpp"

namespace tessera::models {

struct KernelNoise {
  double sigma = 0;               // temporal: every kernel's, unless sigma_from_model
  bool sigma_from_model = false;  // temporal: per kernel from a calibrated model's spreads ("auto")
  double node_sigma = 0;          // spatial
  std::uint64_t seed = 1;
  // sigma_from_model: the sigmas per (kernel, precision) of the cores' and
  // the GPUs' models, taken once before a run (take_measured_sigmas), which
  // its nodes' models draw with and its report lists.
  std::map<std::pair<std::uint16_t, char>, double> core_sigmas, gpu_sigmas;
  bool active() const { return sigma > 0 || sigma_from_model || node_sigma > 0; }
};

// A standard normal drawn from three integers (a counter-based generator:
// mix64 of them, two uniforms in (0, 1), Box-Muller), so that no state is
// kept and no order matters.
double standard_normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b);

// Per (kernel, precision) the lognormal sigma of a calibrated model's
// measured spreads (the rule above); throws InputError naming `what` if
// `model` is not a calibrated one or records no spread.
std::map<std::pair<std::uint16_t, char>, double> measured_sigmas(const KernelTimeModel& model, const std::string& what);
// With noise.sigma_from_model: noise's core_sigmas from the cores' model and
// gpu_sigmas from the GPUs' (null: none), by measured_sigmas. Otherwise nothing.
void take_measured_sigmas(KernelNoise& noise, const KernelTimeModel& core, const KernelTimeModel* gpu);

class NoisyModel final : public KernelTimeModel {
 public:
  // `node`: the run's node; `device`: 0 for the host's cores, 1 for its GPUs
  // (their tasks draw apart). With noise.sigma_from_model the sigmas are
  // noise's core_sigmas or gpu_sigmas (take_measured_sigmas first; empty is
  // a logic_error); a kernel without one gets 0.
  NoisyModel(const KernelTimeModel& inner, const KernelNoise& noise, int node, int device);
  // The model's own (median) time: what share and tuning computations read.
  double seconds(const KernelShape& s) const override { return inner_.seconds(s); }
  double seconds_at(const KernelShape& s, double now) const override { return inner_.seconds_at(s, now); }
  // The task's time: the inner model's, times the node's and the task's factors.
  double seconds_for(const KernelShape& s, double now, std::uint64_t task) const override;
  double first_call_s(std::uint16_t kernel, char precision) const override {
    return inner_.first_call_s(kernel, precision);
  }
  double start_s() const override { return inner_.start_s(); }
  double task_s() const override { return inner_.task_s(); }
  double node_factor() const { return node_factor_; }
  double sigma(std::uint16_t kernel, char precision) const;

 private:
  // The sigmas of this device's model under sigma_from_model.
  const std::map<std::pair<std::uint16_t, char>, double>& sigmas() const {
    return device_ == 0 ? noise_.core_sigmas : noise_.gpu_sigmas;
  }
  const KernelTimeModel& inner_;
  KernelNoise noise_;
  int device_;
  std::uint64_t stream_;  // (seed, node, device) mixed
  double node_factor_ = 1;
};

}  // namespace tessera::models
