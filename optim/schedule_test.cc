#include "optim/schedule.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ember::optim {
namespace {

TEST(ScheduleTest, EachScheduleAtHandComputedSteps) {
  EXPECT_EQ(ConstantLr(0.3)(1000), 0.3);
  EXPECT_DOUBLE_EQ(ExponentialLr(1.0, 0.5)(3), 0.125);
  const LrSchedule linear = LinearLr(1.0, 0.0, 4);
  EXPECT_DOUBLE_EQ(linear(0), 1.0);
  EXPECT_DOUBLE_EQ(linear(1), 0.75);
  EXPECT_DOUBLE_EQ(linear(4), 0.0);
  EXPECT_DOUBLE_EQ(linear(9), 0.0);
  // Warmup over 10 steps to 1.0, cosine to 0.1 at step 110.
  const LrSchedule cosine = WarmupCosineLr(1.0, 0.1, 10, 110);
  EXPECT_DOUBLE_EQ(cosine(0), 0.1);
  EXPECT_DOUBLE_EQ(cosine(9), 1.0);
  EXPECT_DOUBLE_EQ(cosine(10), 1.0);
  EXPECT_NEAR(cosine(60), 0.55, 1e-15);  // halfway: the mean of peak and floor
  EXPECT_NEAR(cosine(35), 0.1 + 0.45 * (1 + std::cos(M_PI / 4)), 1e-15);
  EXPECT_DOUBLE_EQ(cosine(110), 0.1);
  EXPECT_DOUBLE_EQ(cosine(500), 0.1);
}

TEST(ScheduleTest, BadArgumentsThrow) {
  EXPECT_ANY_THROW(ConstantLr(-1));
  EXPECT_ANY_THROW(ExponentialLr(1, 0));
  EXPECT_ANY_THROW(LinearLr(1, 0, 0));
  EXPECT_ANY_THROW(WarmupCosineLr(0.1, 1.0, 10, 100));
  EXPECT_ANY_THROW(WarmupCosineLr(1.0, 0.1, 100, 100));
}

}  // namespace
}  // namespace ember::optim
