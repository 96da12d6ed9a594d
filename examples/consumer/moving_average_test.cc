#include "moving_average.h"

#include <vector>

#include "gtest/gtest.h"
#include "tensor/creation.h"

TEST(MovingAverageTest, AveragesWindows) {
  const ember::Tensor series = ember::FromList({1.0, 2.0, 6.0, 3.0});
  EXPECT_EQ(MovingAverage(series, 2).ToVector<double>(), (std::vector<double>{1.5, 4.0, 4.5}));
  // Every other element of a longer series: the windows follow the view's stride.
  const ember::Tensor strided = ember::Arange(0.0, 8.0, 1.0).Slice(0, 0, ember::Tensor::kEnd, 2);
  EXPECT_EQ(MovingAverage(strided, 3).ToVector<double>(), (std::vector<double>{2.0, 4.0}));
  EXPECT_THROW(MovingAverage(series, 5), ember::Error);
}
