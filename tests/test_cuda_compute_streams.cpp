// Cholesky and QR through the driver on a CUDA GPU with several compute
// streams (--gpu-streams), TRSM through inverted diagonal blocks
// (--gpu-trsm-inverse) and QR's panels by Cholesky QR (--gpu-qr-panel
// cholqr): written on 2026-11-27 without a GPU, so this is their first check
// on one. With 3 streams the manager queues 3 tasks at
// once, each on a stream of its own with its own library handles and
// workspace; a task that read a tile before its writer's stream had passed
// it, or two tasks sharing a workspace, would change the factors. --check
// against the threshold of algorithms/check.hpp; skips where no CUDA
// device is present. Each run warms its GPU first (--gpu-warmup), on every
// stream, which these runs are the first to do on a GPU.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/check.hpp"
#include "experiments/driver.hpp"
#include "kernels/cuda/cuda_api.hpp"
#include "platform/native/native_platform.hpp"
#include "test_helpers.hpp"

namespace tessera {
namespace {

#if TESSERA_HAVE_CUDA

TEST(CudaComputeStreams, CholeskyAndQrPassTheirCheck) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device to test on";
  for (const std::string algo : {"cholesky", "qr", "qr-cholqr"})
    for (const char precision : {'d', 's'})
      for (const int streams : {1, 3}) {
        SCOPED_TRACE("--algo " + algo + " --precision " + precision + " --gpu-streams " + std::to_string(streams));
        RunConfig cfg;
        cfg.algo = algo == "qr-cholqr" ? "qr" : algo;
        if (algo == "qr-cholqr") cfg.gpu_qr_panel = QrPanel::CholQr;  // QR's panels by Cholesky QR
        cfg.precision = precision;
        cfg.n = 1500;
        cfg.B = 256;
        cfg.threads = 2;
        cfg.gpus = 1;
        cfg.device = DeviceKind::Cuda;
        cfg.gpu_streams = streams;
        if (algo == "cholesky") cfg.gpu_trsm_inverse = 96;  // 256 = 2 x 96 + 64: a short last block
        cfg.matrix = test::checked_matrix(algo, precision);
        cfg.check = true;
        platform::NativePlatform plat;
        const RunResult r = run_factorization(cfg, plat);
        ASSERT_TRUE(r.residuals.has_value());
        EXPECT_TRUE(r.residuals->passed()) << "backward error " << r.residuals->factor;
        EXPECT_LT(r.residuals->factor, kResidualThreshold);
        ASSERT_EQ(r.gpus.size(), 1u);
        EXPECT_GT(r.gpus[0].busy_s, 0.0);
        // The GPU was warmed first (--gpu-warmup auto is on for CUDA GPUs): every shape on every stream a task
        // of it may take, none skipped (experiments/gpu_warmup.hpp).
        ASSERT_TRUE(r.gpu_warmup.has_value());
        EXPECT_GE(r.gpu_warmup->calls, 4);
        EXPECT_TRUE(r.gpu_warmup->skipped.empty()) << r.gpu_warmup->skipped.front();
        // In double a random matrix's panels all pass sCholQR3's check (in single, a
        // diagonal tile's last square panel can be past its reach: a fallback is right there).
        if (precision == 'd') EXPECT_EQ(r.gpus[0].kernel_fallbacks, 0u) << "a random matrix's panels";
      }
}

#endif  // TESSERA_HAVE_CUDA

}  // namespace
}  // namespace tessera
