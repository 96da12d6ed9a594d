// Max pooling on every compiled SIMD target against the direct maxima of
// kernels/reference/pool.h (float64): 2x2/2 windows (the vector row path) at odd and
// CNN sizes, other windows inside the plane, padded and dilated windows, PyTorch's tie
// and NaN rules, and bad indices in the backward pass.

#include "kernels/pool.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/pool.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = kernels::reference;

template <typename T>
std::vector<T> Cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void CheckPoolAgainstReference() {
  std::mt19937 rng(4);
  // planes as n * c. 2x2 windows with stride 2 take PoolPairs: the CNN's sizes (rows
  // shorter than a vector), odd sizes, planes whose last rows go window by window. Other
  // windows inside the plane take PoolInside: overlapping 3x3 windows with stride (1, 2),
  // a plane with fewer outputs than a vector. Padded or dilated windows take the rest.
  for (const ref::Conv2dShape& s :
       {ref::Conv2dShape{2, 3, 0, 8, 8, 2, 2, 2, 2}, ref::Conv2dShape{2, 3, 0, 28, 28, 2, 2, 2, 2},
        ref::Conv2dShape{1, 2, 0, 14, 14, 2, 2, 2, 2}, ref::Conv2dShape{2, 2, 0, 9, 41, 2, 2, 2, 2},
        ref::Conv2dShape{2, 1, 0, 5, 5, 3, 3, 2, 2}, ref::Conv2dShape{1, 2, 0, 11, 13, 3, 3, 1, 2},
        ref::Conv2dShape{3, 1, 0, 5, 4, 2, 2, 2, 2},
        ref::Conv2dShape{1, 2, 0, 9, 7, 3, 3, 2, 2, 1, 1},
        ref::Conv2dShape{1, 1, 0, 10, 10, 3, 2, 1, 2, 1, 1, 2, 1}}) {
    SCOPED_TRACE(testing::Message()
                 << "planes " << s.n * s.c << " of " << s.h << "x" << s.w << ", kernel " << s.kh
                 << "x" << s.kw << ", stride " << s.sh << "x" << s.sw);
    const int64_t planes = s.n * s.c, outs = s.oh() * s.ow();
    const Window2d window{s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw};
    // Values from a few levels, so that windows hold ties.
    std::vector<double> x(planes * s.h * s.w);
    for (double& v : x) v = std::uniform_int_distribution<int>(-2, 2)(rng);
    std::vector<int64_t> want_argmax;
    const std::vector<double> want = ref::MaxPool2d(s, x, &want_argmax);
    const std::vector<T> xt = Cast<T>(x);
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(target);
      std::vector<T> y(planes * outs);
      std::vector<int64_t> argmax(planes * outs);
      MaxPool2dForward(DTypeOf<T>::value, planes, window, xt.data(), y.data(), argmax.data());
      EXPECT_EQ(y, Cast<T>(want));
      EXPECT_EQ(argmax, want_argmax);
    });

    std::vector<int64_t> argmax(want_argmax);
    const std::vector<T> dy = RandomVector<T>(planes * outs, -1, 1, rng);
    std::vector<T> dx(x.size(), T(7)), expected(x.size(), T(0));  // dx is overwritten
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t k = 0; k < outs; ++k)
        expected[p * s.h * s.w + want_argmax[p * outs + k]] += dy[p * outs + k];
    }
    EXPECT_TRUE(
        MaxPool2dBackward(DTypeOf<T>::value, planes, window, argmax.data(), dy.data(), dx.data()));
    EXPECT_EQ(dx, expected);
  }
}

TEST(MaxPool2dTest, MatchesTheReferenceAndScattersGradientsToTheMaximaF64) {
  CheckPoolAgainstReference<double>();
}
TEST(MaxPool2dTest, MatchesTheReferenceAndScattersGradientsToTheMaximaF32) {
  CheckPoolAgainstReference<float>();
}

// Indices outside the plane (a caller's bad input) are skipped, not scattered outside
// dx, and reported; the valid ones still land.
TEST(MaxPool2dTest, BackwardSkipsAndReportsIndicesOutsideThePlane) {
  const Window2d window{2, 2, 2, 2, 2, 2};  // planes of 2x2, one output each
  for (const int64_t bad : {int64_t{-1}, int64_t{4}}) {
    std::vector<int64_t> argmax = {3, bad, 0};
    const std::vector<float> dy = {1, 2, 3};
    std::vector<float> dx(3 * 4 + 1, 9);  // one guard entry past the three planes
    EXPECT_FALSE(MaxPool2dBackward(DType::kF32, 3, window, argmax.data(), dy.data(), dx.data()));
    EXPECT_EQ(dx, (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 9})) << bad;
  }
}

TEST(MaxPool2dTest, TiesTakeTheFirstAndNaNWinsAsInPyTorch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // A 2x4 block, 2x2 windows: [1 1 | nan 5], [1 0 | 7 nan] -> (1 at 0), (nan at 7), the
  // last NaN. Side by side 1 and 16 times (the second takes the vector path).
  const std::vector<float> block = {1, 1, nan, 5, 1, 0, 7, nan};
  for (const int64_t copies : {1, 16}) {
    std::vector<float> x(8 * copies);
    for (int64_t c = 0; c < copies; ++c) {
      for (int64_t k = 0; k < 8; ++k) x[(k / 4) * 4 * copies + c * 4 + k % 4] = block[k];
    }
    ForEachTarget([&](const std::string& target) {
      SCOPED_TRACE(testing::Message() << target << ", " << copies << " copies");
      std::vector<float> y(2 * copies);
      std::vector<int64_t> argmax(2 * copies);
      MaxPool2dForward(DType::kF32, 1, {2, 4 * copies, 2, 2, 2, 2}, x.data(), y.data(),
                       argmax.data());
      for (int64_t c = 0; c < copies; ++c) {
        EXPECT_EQ(y[2 * c], 1);
        EXPECT_EQ(argmax[2 * c], 4 * c);
        EXPECT_TRUE(std::isnan(y[2 * c + 1]));
        EXPECT_EQ(argmax[2 * c + 1], 4 * copies + 4 * c + 3);
      }
    });
  }
  // A window of -inf points at its first input, never at padding.
  // 2x2 input padded by 1, 2x2 windows with stride 2: each window holds one input.
  const std::vector<float> minus = {-inf, -inf, -inf, -inf};
  std::vector<float> y4(4);
  std::vector<int64_t> argmax4(4);
  MaxPool2dForward(DType::kF32, 1, {2, 2, 2, 2, 2, 2, 1, 1}, minus.data(), y4.data(),
                   argmax4.data());
  EXPECT_EQ(argmax4, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(y4, minus);
}

}  // namespace
}  // namespace ember::kernels::cpu
