// Kernel models: flop counts, peak x efficiency, calibrated interpolation.
#include <gtest/gtest.h>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
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

}  // namespace
