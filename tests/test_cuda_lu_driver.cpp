// LU with every block column on a CUDA GPU (--d 0), through the driver: the
// panel's buffer G and the column's plan live in the GPU's memory there, so
// the panel's host work must go through the device's kernels (from_host,
// lu_permute_from_host); an emulated GPU, whose memory is host memory, cannot
// catch a host dereference of device memory, this can. Small matrices, every
// pivoting, both precisions, --check against LAPACK's threshold; skips where
// no CUDA device is present.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/check.hpp"
#include "experiments/driver.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "platform/native/native_platform.hpp"

namespace tessera {
namespace {

#if TESSERA_HAVE_CUDA

TEST(CudaLuDriver, EveryColumnOnTheGpuPassesItsCheck) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device to test on";
  for (const std::string pivot : {"partial", "tournament", "none"})
    for (const char precision : {'d', 's'}) {
      SCOPED_TRACE("--pivot " + pivot + " --precision " + precision);
      RunConfig cfg;
      cfg.algo = "lu";
      cfg.pivot = pivot;
      cfg.precision = precision;
      cfg.m = 1200;
      cfg.n = 1000;  // tall: panels of more than one tile row below the diagonal
      cfg.B = 256;
      cfg.threads = 2;
      cfg.gpus = 1;
      cfg.device = DeviceKind::Cuda;
      cfg.d = "0";
      cfg.check = true;
      if (pivot == "none") cfg.matrix = "graded";  // factors without interchanges (test_lu.cpp)
      platform::NativePlatform plat;
      const RunResult r = run_factorization(cfg, plat);
      ASSERT_TRUE(r.residuals.has_value());
      EXPECT_TRUE(r.residuals->passed()) << "backward error " << r.residuals->factor;
      EXPECT_LT(r.residuals->factor, kResidualThreshold);
      EXPECT_EQ(r.config.d_columns, 0);
      double core_busy = 0;
      for (const double b : r.busy_s) core_busy += b;
      if (pivot == "tournament") EXPECT_GT(core_busy, 0.0) << "the candidate selection runs on the cores";
      else EXPECT_EQ(core_busy, 0.0) << "a task of --d 0 ran on a core";
      ASSERT_EQ(r.gpus.size(), 1u);
      EXPECT_GT(r.gpus[0].busy_s, 0.0);
    }
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera
