#include <gtest/gtest.h>

#include "experiments/driver.hpp"
#include "platform/native/native_platform.hpp"

TEST(Smoke, CholeskyChecks) {
  tessera::platform::NativePlatform p;
  tessera::RunConfig c;
  c.n = 200; c.B = 64; c.threads = 2; c.check = true;
  auto r = tessera::run_factorization(c, p);
  EXPECT_TRUE(r.residuals->passed()) << r.residuals->factor;
}
