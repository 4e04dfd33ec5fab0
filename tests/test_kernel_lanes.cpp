// The pure parts of several compute streams per GPU: which stream takes a
// task (platform/kernel_lanes.hpp, shared by the CUDA and the simulated GPU)
// and the share of a simulated GPU a kernel takes beside others
// (platform/kernel_time_model.hpp device_share).
#include <gtest/gtest.h>

#include <vector>

#include "base/error.hpp"
#include "base/kernel_table.hpp"
#include "platform/kernel_lanes.hpp"
#include "platform/kernel_time_model.hpp"

namespace {
using tessera::KernelShape;
using tessera::platform::choose_lane;

TEST(KernelLanes, OneLaneTakesEveryTask) {
  const std::vector<int> busy = {3};
  for (const bool panel : {false, true})
    for (std::uint64_t turn = 0; turn < 4; ++turn) EXPECT_EQ(choose_lane(panel, busy, turn), 0u);
  EXPECT_THROW(choose_lane(false, std::vector<int>{}, 0), std::logic_error);
}

TEST(KernelLanes, PanelsOnTheFirstLaneUnlessATaskIsThere) {
  EXPECT_EQ(choose_lane(true, std::vector<int>{0, 2, 2}, 7), 0u);
  // Lane 0 holds a task: the panel goes beside it, on the less busy other lane.
  EXPECT_EQ(choose_lane(true, std::vector<int>{1, 2, 0}, 0), 2u);
  EXPECT_EQ(choose_lane(true, std::vector<int>{1, 0, 2}, 1), 1u);
}

TEST(KernelLanes, OtherTasksTakeTheLeastBusyOtherLaneInTurn) {
  // Never lane 0, even when it is idle.
  for (std::uint64_t turn = 0; turn < 6; ++turn) {
    const std::size_t lane = choose_lane(false, std::vector<int>{0, 0, 0}, turn);
    EXPECT_EQ(lane, 1 + turn % 2) << "equals in turn, turn " << turn;
  }
  EXPECT_EQ(choose_lane(false, std::vector<int>{0, 1}, 5), 1u);  // two lanes: the one other
  EXPECT_EQ(choose_lane(false, std::vector<int>{0, 2, 1, 2}, 0), 2u);
  EXPECT_EQ(choose_lane(false, std::vector<int>{0, 1, 1, 0}, 0), 3u);
}

// A model whose rates are set by hand: GEMM at 100 flop/s per unit, TRSM at
// `trsm_rate`, POTF2' faster than GEMM; kernels without flops take 1 s.
class RateModel final : public tessera::KernelTimeModel {
 public:
  double trsm_rate = 25;
  bool has_gemm = true;  // false: a calibrated file without GSMM, whose model throws for it
  double seconds(const KernelShape& s) const override {
    const double f = tessera::kernel_flops(s);
    switch (s.kernel) {
      case tessera::kGsmm:
        if (!has_gemm) throw tessera::InputError("the model has no measurement of kernel gsmm");
        return f / 100;
      case tessera::kTrsm: return f / trsm_rate;
      case tessera::kPotf2p: return f / 400;
      default: return f > 0 ? f / 50 : 1.0;
    }
  }
};

TEST(DeviceShare, TheKernelsRateOverGemmsAtItsDimensions) {
  RateModel m;
  const KernelShape trsm{tessera::kTrsm, 'd', 512, 512, 0, 0};
  EXPECT_DOUBLE_EQ(tessera::device_share(m, trsm), 0.25);
  EXPECT_DOUBLE_EQ(tessera::device_share(m, {tessera::kSsrfb, 'd', 256, 256, 256, 32}), 0.5);
  // GEMM itself and a kernel faster than it fill the device.
  EXPECT_DOUBLE_EQ(tessera::device_share(m, {tessera::kGsmm, 'd', 512, 512, 512, 0}), 1.0);
  EXPECT_DOUBLE_EQ(tessera::device_share(m, {tessera::kPotf2p, 'd', 512, 512, 0, 0}), 1.0);
  // No flop count: taken to fill it.
  EXPECT_DOUBLE_EQ(tessera::device_share(m, {tessera::kLuPivots, 'd', 512, 512, 0, 0}), 1.0);
  // Never below the floor.
  m.trsm_rate = 1e-6;
  EXPECT_DOUBLE_EQ(tessera::device_share(m, trsm), tessera::kMinDeviceShare);
  // No GEMM to hold it against: taken to fill the device, not an error.
  m.has_gemm = false;
  EXPECT_DOUBLE_EQ(tessera::device_share(m, trsm), 1.0);
}

}  // namespace
