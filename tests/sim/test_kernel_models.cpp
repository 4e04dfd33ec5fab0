// Kernel models: flop counts, peak x efficiency, calibrated interpolation.
#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "models/cold_start.hpp"
#include "models/kernel_model.hpp"

namespace {
using namespace tessera;
using namespace tessera::models;

TEST(KernelModels, FlopCounts) {
  EXPECT_EQ(kernel_flops({kGsmm, 'd', 10, 20, 30}), 2.0 * 10 * 20 * 30);
  EXPECT_EQ(kernel_flops({kSsrfb, 'd', 10, 20, 30}), 4.0 * 10 * 20 * 30);
  EXPECT_EQ(kernel_flops({kTrsm, 'd', 10, 20}), 10.0 * 20 * 20);
  EXPECT_EQ(kernel_flops({kPotf2p, 'd', 30, 30}), 30.0 * 30 * 30 / 3);
  EXPECT_EQ(kernel_flops({kGsmmDiag, 'd', 30, 30, 30}), 30.0 * 30 * 30);
}

TEST(KernelModels, PeakEfficiency) {
  PeakEfficiencyModel m({10, 20}, {{kSsrfb, {5, 10}}}, {EfficiencyCurve({{100, 0.5}, {200, 1.0}}), EfficiencyCurve()});
  // 2 * 200^3 flops at 10 GFlop/s x 1.0
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 'd', 200, 200, 200}), 2.0 * 8e6 / 10e9);
  // 150: halfway, efficiency 0.75
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 'd', 150, 150, 150}), 2.0 * 150 * 150 * 150 / (10e9 * 0.75));
  // below the curve: its first point
  EXPECT_DOUBLE_EQ(m.seconds({kSsrfb, 'd', 50, 50, 50}), 4.0 * 50 * 50 * 50 / (5e9 * 0.5));
  // single precision: no curve, full peak
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 's', 100, 100, 100}), 2e6 / 20e9);
}

TEST(KernelModels, CalibratedExactAndInterpolated) {
  CalibratedModel m("t", {{kGsmm, 'd', 100, 100, 100, 2e-4, 0}, {kGsmm, 'd', 200, 200, 200, 1e-3, 0}});
  EXPECT_EQ(m.seconds({kGsmm, 'd', 100, 100, 100}), 2e-4);
  EXPECT_EQ(m.seconds({kGsmm, 'd', 200, 200, 200}), 1e-3);
  // rates 10 and 16 GFlop/s; halfway in flops (9e6) -> 13 GFlop/s
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 'd', 100, 100, 450}), 9e6 / 13e9);
  // beyond the table: the nearest measurement's rate
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 'd', 400, 400, 400}), 2.0 * 64e6 / 16e9);
  EXPECT_DOUBLE_EQ(m.seconds({kGsmm, 'd', 10, 10, 10}), 2e3 / 10e9);
}

// Two shapes of one flop count (SSRFB's 4mnk: 128x320x320 and 320x128x320, measured at different times in
// local.json) are one point of the flops curve, timed at the mean of their times: a call beside them takes the same
// time whichever the file lists first (it took the time of the one the sort left at the curve's edge).
TEST(KernelModels, EqualFlopShapesAreOnePointWhateverTheirOrder) {
  using E = CalibratedModel::Entry;
  const E small{kSsrfb, 'd', 64, 64, 64, 4.0 * 64 * 64 * 64 / 4e9, 0};
  const E wide{kSsrfb, 'd', 128, 320, 320, 4.0 * 128 * 320 * 320 / 10e9, 0};  // 10 GFlop/s
  const E tall{kSsrfb, 'd', 320, 128, 320, 4.0 * 128 * 320 * 320 / 20e9, 0};  // 20 GFlop/s
  const E big{kSsrfb, 'd', 512, 512, 512, 4.0 * 512 * 512 * 512 / 30e9, 0};
  const CalibratedModel a("a", {small, wide, tall, big}), b("b", {big, tall, wide, small});
  const double f_tie = 4.0 * 128 * 320 * 320;
  const double mean_rate = f_tie / ((wide.median_s + tall.median_s) / 2);  // 13.3 GFlop/s
  for (const KernelShape& call : {KernelShape{kSsrfb, 'd', 200, 200, 200}, KernelShape{kSsrfb, 'd', 160, 320, 320},
                                  KernelShape{kSsrfb, 'd', 256, 160, 320}}) {
    EXPECT_EQ(a.seconds(call), b.seconds(call)) << call.m << "x" << call.n << "x" << call.k;
    const double f = kernel_flops(call);
    const bool above = f > f_tie;
    const double lo_f = above ? f_tie : 4.0 * 64 * 64 * 64, hi_f = above ? 4.0 * 512 * 512 * 512 : f_tie;
    const double lo_r = above ? mean_rate : 4e9, hi_r = above ? 30e9 : mean_rate;
    EXPECT_DOUBLE_EQ(a.seconds(call), f / (lo_r + (f - lo_f) / (hi_f - lo_f) * (hi_r - lo_r)));
  }
  // Measured shapes stay exact.
  EXPECT_EQ(a.seconds({kSsrfb, 'd', 128, 320, 320}), wide.median_s);
  EXPECT_EQ(b.seconds({kSsrfb, 'd', 320, 128, 320}), tall.median_s);
  // One shape measured twice takes the mean of its times, in either order (the first listed won before).
  E again = wide;
  again.median_s = 3 * wide.median_s;
  const CalibratedModel c("c", {small, wide, again, big}), d("d", {again, big, small, wide});
  EXPECT_DOUBLE_EQ(c.seconds({kSsrfb, 'd', 128, 320, 320}), 2 * wide.median_s);
  EXPECT_EQ(c.seconds({kSsrfb, 'd', 128, 320, 320}), d.seconds({kSsrfb, 'd', 128, 320, 320}));
}

TEST(KernelModels, CalibratedFailsClearlyWithoutData) {
  CalibratedModel m("vm", {{kGsmm, 'd', 100, 100, 100, 2e-4, 0}});
  try {
    m.seconds({kGeqrt, 'd', 100, 100});
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'vm'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("geqrt"), std::string::npos) << msg;
  }
  EXPECT_THROW(m.seconds({kGsmm, 's', 100, 100, 100}), InputError);
}

// Shape interpolation: a narrow call takes the rate of the narrow
// measurement nearest it in log dimensions, where flops interpolation takes
// the rate of the squares bracketing its flop count.
TEST(KernelModels, ShapeInterpolationFollowsTheNearestShape) {
  // GSMM 2mnk flops: squares of 64 and 512 at 10 and 40 GFlop/s; a 512x64x512 panel at 5 GFlop/s.
  const std::vector<CalibratedModel::Entry> e{{kGsmm, 'd', 64, 64, 64, 2.0 * 64 * 64 * 64 / 10e9, 0},
                                              {kGsmm, 'd', 512, 512, 512, 2.0 * 512 * 512 * 512 / 40e9, 0},
                                              {kGsmm, 'd', 512, 64, 512, 2.0 * 512 * 64 * 512 / 5e9, 0}};
  const CalibratedModel shape("t", e, {}, 0, Interpolation::Shape), flops("t", e);
  EXPECT_EQ(shape.interpolation(), Interpolation::Shape);
  const KernelShape narrow{kGsmm, 'd', 512, 60, 512};
  const double f = kernel_flops(narrow);
  // Nearest (distance log(64/60)) dominates the weights: within 2% of 5 GFlop/s.
  EXPECT_NEAR(f / shape.seconds(narrow), 5e9, 0.02 * 5e9);
  // Flops: 31.5 MFlop lies between the 64-square (0.5 MFlop) and the panel (33.5 MFlop), a rate above 5.
  EXPECT_GT(f / flops.seconds(narrow), 5.2e9);
  // A measured shape is exact either way.
  EXPECT_EQ(shape.seconds({kGsmm, 'd', 512, 512, 512}), e[1].median_s);
}

// Between measured shapes the rate is their blend, weighted by inverse
// squared distance in log dimensions: a call as far from a 64-square as from
// a 256x64x64 panel takes the mean of their rates, not the one listed first.
TEST(KernelModels, ShapeInterpolationBlendsEquallyNearShapes) {
  const std::vector<CalibratedModel::Entry> e{{kGsmm, 'd', 64, 64, 64, 2.0 * 64 * 64 * 64 / 10e9, 0},
                                              {kGsmm, 'd', 256, 64, 64, 2.0 * 256 * 64 * 64 / 30e9, 0}};
  const CalibratedModel shape("t", e, {}, 0, Interpolation::Shape);
  const KernelShape between{kGsmm, 'd', 128, 64, 64};
  EXPECT_NEAR(kernel_flops(between) / shape.seconds(between), 20e9, 1e-6 * 20e9);
  // Three quarters of the way in log m: weights about 1 to 9, about 28 GFlop/s.
  const KernelShape near_panel{kGsmm, 'd', 181, 64, 64};
  const double r = kernel_flops(near_panel) / shape.seconds(near_panel);
  EXPECT_GT(r, 25e9);
  EXPECT_LT(r, 30e9);
}

// A GPU's QR kernels depend on the inner blocking (on the lent H100 a
// Householder panel costs per column, so TSQRT at ib = 128 took 0.9x its time
// at 32 in a whole run): a table measured at several ib times a call at the
// nearest one, a table measured at one ignores ib as before.
TEST(KernelModels, QrKernelsTakeTheNearestMeasuredInnerBlocking) {
  using E = CalibratedModel::Entry;
  // TSQRT (2mn^2 flops) at ib 32 twice as slow as at ib 128; a 16-wide tile clamped to ib 16 under both.
  const std::vector<E> e{{kTsqrt, 'd', 4096, 4096, 0, 1.0, 0, 32}, {kTsqrt, 'd', 4096, 4096, 0, 0.5, 0, 128},
                         {kTsqrt, 'd', 2048, 2048, 0, 0.2, 0, 32}, {kTsqrt, 'd', 2048, 2048, 0, 0.1, 0, 128},
                         {kTsqrt, 'd', 16, 16, 0, 1e-5, 0, 16},    {kGsmm, 'd', 64, 64, 64, 1e-4, 0}};
  for (const auto how : {Interpolation::Flops, Interpolation::Shape}) {
    const CalibratedModel m("t", e, {}, 0, how);
    const auto tsqrt = [&](std::int64_t n, std::int64_t ib) { return m.seconds({kTsqrt, 'd', n, n, 0, ib}); };
    EXPECT_EQ(tsqrt(4096, 128), 0.5);
    EXPECT_EQ(tsqrt(4096, 32), 1.0);
    EXPECT_EQ(tsqrt(4096, 64), 1.0);   // halfway in log: the smaller
    EXPECT_EQ(tsqrt(4096, 96), 0.5);   // nearer 128
    EXPECT_EQ(tsqrt(4096, 512), 0.5);  // beyond: the largest
    // Between the measured sizes each level interpolates its own points: twice the time at 32
    // (under shape interpolation the clamped tile, in both levels, weighs in by 1e-5).
    EXPECT_NEAR(tsqrt(3000, 32) / tsqrt(3000, 128), 2.0, 1e-4);
    // The clamped tile is the same call at any level.
    EXPECT_EQ(tsqrt(16, 16), 1e-5);
    // A kernel without ib is untouched.
    EXPECT_EQ(m.seconds({kGsmm, 'd', 64, 64, 64}), 1e-4);
  }
  // One level: ib plays no part (machine files measured at the runtime's default only).
  const CalibratedModel one("t", {e[0], e[2], e[4]});
  EXPECT_EQ(one.seconds({kTsqrt, 'd', 4096, 4096, 0, 128}), 1.0);
  EXPECT_EQ(one.seconds({kTsqrt, 'd', 4096, 4096, 0, 32}), 1.0);
}

TEST(KernelModels, LeaveOneOutPredictsEachFromTheOthers) {
  // Rates 10, 20, 30 GFlop/s at flops 2e6, 4e6, 6e6 (n x n x 1000 GSMM with n^2 = 1000, 2000, 3000):
  // linear in flops, so the middle one left out is predicted exactly by flops interpolation.
  std::vector<CalibratedModel::Entry> e;
  for (const double r : {10e9, 20e9, 30e9}) {
    const std::int64_t m = static_cast<std::int64_t>(r / 10e9) * 1000;
    e.push_back({kGsmm, 'd', m, 1, 1000, 2.0 * m * 1000 / r, 0});
  }
  e.push_back({kTrsm, 'd', 64, 64, 0, 1e-5, 0});  // alone in its kernel: nothing to predict it from
  const auto out = leave_one_out(e, Interpolation::Flops);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(out[1].predicted_s, e[1].median_s, 1e-12 * e[1].median_s);
  // The ends take their neighbour's rate.
  EXPECT_NEAR(out[0].predicted_s, 2.0 * 1000 * 1000 / 20e9, 1e-15);
}

// LU's row moves have no flop formula and are not calibrated: every model
// gives them 0 s (not modeled yet), a calibrated one without a measurement too.
TEST(KernelModels, RowMovesTakeNoModeledTime) {
  const CalibratedModel cal("vm", {{kLuGemm, 'd', 100, 100, 100, 2e-4, 0}});
  const PeakEfficiencyModel peak({10, 20}, {}, {});
  for (const std::uint16_t k : {kLuGather, kLuScatter, kLuPivots, kLuSwap, kLuExchange}) {
    EXPECT_EQ(cal.seconds({k, 'd', 100, 100}), 0) << kernel_name(k);
    EXPECT_EQ(cal.seconds({k, 's', 100, 100}), 0) << kernel_name(k);
    EXPECT_EQ(peak.seconds({k, 'd', 100, 100}), 0) << kernel_name(k);
  }
  EXPECT_EQ(cal.seconds({kLuGemm, 'd', 100, 100, 100}), 2e-4);
  EXPECT_THROW(cal.seconds({kLuPanel, 'd', 100, 100}), InputError);
}

// Start-up costs per domain (models/cold_start.hpp): the host and each GPU
// initialize on their own, so a GPU's first task pays its start_s although
// the host has started, GPU 1's first TRSM pays although the host's has
// ended, GPU 2's although GPU 1's has; a warmed GPU pays no start_s and its
// warmed kernels no first call, a kernel its warm-up cannot call still does.
TEST(KernelModels, ColdStartsArePerHostAndPerGpu) {
  const CalibratedModel host("host", {{kTrsm, 'd', 64, 64, 0, 1.0, 0}, {kGsmm, 'd', 64, 64, 64, 1.0, 0}},
                             {{{kTrsm, 'd'}, 10.0}}, 100.0);
  const CalibratedModel gpu("gpu", {{kTrsm, 'd', 64, 64, 0, 1.0, 0}, {kGsmm, 'd', 64, 64, 64, 1.0, 0}},
                            {{{kTrsm, 'd'}, 20.0}, {{kGsmm, 'd'}, 40.0}}, 50.0);
  const auto state = std::make_shared<ColdStartState>();
  const ColdStartModel h(host, state, 0), g1(gpu, state, 1), g2(gpu, state, 2), warm(gpu, state, 3, {kTrsm});
  const KernelShape trsm{kTrsm, 'd', 64, 64, 0, 0}, gsmm{kGsmm, 'd', 64, 64, 64, 0};
  EXPECT_EQ(g1.seconds_at(gsmm, 0), 1 + 50 + 40) << "GPU 1 starts first";
  EXPECT_EQ(h.seconds_at(trsm, 100), 1 + 100 + 10) << "the host starts on its own";
  EXPECT_EQ(h.seconds_at(trsm, 300), 1) << "the host's TRSM is warm";
  EXPECT_EQ(g1.seconds_at(trsm, 300), 1 + 20) << "GPU 1 loads its own";
  EXPECT_EQ(g1.seconds_at(trsm, 305), 1 + 20) << "started before GPU 1's first one ended: it waits too";
  EXPECT_EQ(g1.seconds_at(trsm, 400), 1);
  EXPECT_EQ(g2.seconds_at(trsm, 400), 1 + 50 + 20) << "GPU 2 starts and loads its own";
  EXPECT_EQ(g2.seconds_at(trsm, 500), 1);
  EXPECT_EQ(warm.seconds_at(trsm, 400), 1) << "warmed before the clock: no start, no first call";
  EXPECT_EQ(warm.seconds_at(gsmm, 400), 1 + 40) << "not among the warmed kernels";
  EXPECT_EQ(g1.seconds(trsm), 1) << "seconds() has no start-up costs";
  // The next call of the lane where the first one ran starts when it ends, at
  // its start plus its duration as the simulator adds them, which may round
  // below the end's own sum: it does not wait (GPU 1's first TRSM, from 300
  // for 21 s, ends at 321; a start 1e-12 s earlier is the same instant).
  EXPECT_EQ(g1.seconds_at(trsm, 321 - 1e-12), 1) << "started as the first one ended";
  EXPECT_EQ(g1.seconds_at(trsm, 321 - 1e-6), 1 + 20) << "a microsecond before it ended: it waits";
}

}  // namespace
