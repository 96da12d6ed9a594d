// 2-D max pooling, forward and backward: one table of cases on every CPU SIMD target this
// machine has and on CUDA (kernels/cuda/internal/backends.h), against the direct maxima
// of kernels/reference/pool.h (float64), in f32 and f64: 2x2/2 windows (the CPU's vector
// row path) at odd and CNN sizes, other windows inside the plane, padded and dilated
// windows; the argmax exactly, with PyTorch's tie and NaN rules (the first maximum, the
// last NaN); bad indices in the backward. The CUDA half skips, saying why, without a GPU.

#include "kernels/pool.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/pool.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

EMBER_BACKEND_TEST_SUITE(MaxPool2dTest);

template <typename B, typename T>
void CheckAgainstReference(const std::string& path, std::mt19937& rng) {
  // planes as n * c. 2x2 windows with stride 2 take the CPU's PoolPairs: the CNN's sizes
  // (rows shorter than a vector), odd sizes, planes whose last rows go window by window.
  // Other windows inside the plane take PoolInside: overlapping 3x3 windows with stride
  // (1, 2), a plane with fewer outputs than a vector. Padded or dilated windows take the
  // rest.
  for (const ref::Conv2dShape& s :
       {ref::Conv2dShape{2, 3, 0, 8, 8, 2, 2, 2, 2}, ref::Conv2dShape{2, 3, 0, 28, 28, 2, 2, 2, 2},
        ref::Conv2dShape{1, 2, 0, 14, 14, 2, 2, 2, 2}, ref::Conv2dShape{2, 2, 0, 9, 41, 2, 2, 2, 2},
        ref::Conv2dShape{2, 1, 0, 5, 5, 3, 3, 2, 2}, ref::Conv2dShape{1, 2, 0, 11, 13, 3, 3, 1, 2},
        ref::Conv2dShape{3, 1, 0, 5, 4, 2, 2, 2, 2},
        ref::Conv2dShape{1, 2, 0, 9, 7, 3, 3, 2, 2, 1, 1},
        ref::Conv2dShape{1, 1, 0, 10, 10, 3, 2, 1, 2, 1, 1, 2, 1},
        ref::Conv2dShape{5, 1, 0, 7, 9, 3, 3, 2, 2, 1, 1},
        ref::Conv2dShape{5, 1, 0, 6, 6, 3, 2, 1, 2, 1, 0, 2, 1}}) {
    SCOPED_TRACE(testing::Message()
                 << DTypeName(kDTypeOf<T>) << " on " << path << ": planes " << s.n * s.c << " of "
                 << s.h << "x" << s.w << ", kernel " << s.kh << "x" << s.kw << ", stride " << s.sh
                 << "x" << s.sw << ", pad " << s.ph << "x" << s.pw);
    const int64_t planes = s.n * s.c, outs = s.oh() * s.ow();
    const Window2d window{s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw};
    // Values from a few levels, so that windows hold ties.
    std::vector<T> x(planes * s.h * s.w);
    for (T& v : x) v = static_cast<T>(std::uniform_int_distribution<int>(-2, 2)(rng));
    std::vector<int64_t> want_argmax;
    const std::vector<double> want = ref::MaxPool2d(s, {x.begin(), x.end()}, &want_argmax);
    const std::vector<T> dy = RandomVector<T>(planes * outs, -1, 1, rng);
    // dx: each output's dy sent back to its argmax, summed in output order.
    std::vector<T> want_dx(x.size(), T(0));
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t k = 0; k < outs; ++k)
        want_dx[p * s.h * s.w + want_argmax[p * outs + k]] += dy[p * outs + k];
    }
    const typename B::Buffer gx(x), gdy(dy), gy(planes * outs * sizeof(T)),
        gargmax(planes * outs * sizeof(int64_t)), gdx(std::vector<T>(x.size(), T(7)));
    B::MaxPool2dForward(kDTypeOf<T>, planes, window, gx.data(), gy.data(),
                        gargmax.template as<int64_t>());
    EXPECT_EQ(gy.template ToHost<T>(), std::vector<T>(want.begin(), want.end()));
    EXPECT_EQ(gargmax.template ToHost<int64_t>(), want_argmax);
    EXPECT_TRUE(B::MaxPool2dBackward(kDTypeOf<T>, planes, window, gargmax.template as<int64_t>(),
                                     gdy.data(), gdx.data()));
    // The CPU sums overlapping windows' gradients in output order, CUDA's atomic adds in
    // any order: within one rounding of each there.
    const std::vector<T> got_dx = gdx.template ToHost<T>();
    const double tol = std::is_same_v<B, cuda::internal::CpuBackend> ? 0 : 1e-6;
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got_dx[i], want_dx[i], tol) << "dx " << i;
  }
}

TYPED_TEST(MaxPool2dTest, MatchesTheReferenceAndScattersGradientsToTheMaxima) {
  std::mt19937 rng(4);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    CheckAgainstReference<TypeParam, decltype(type)>(path, rng);
  });
}

// Indices outside the plane (a caller's bad input) are skipped, not scattered outside
// dx, and reported; the valid ones still land.
TYPED_TEST(MaxPool2dTest, BackwardSkipsAndReportsIndicesOutsideThePlane) {
  using B = TypeParam;
  const Window2d window{2, 2, 2, 2, 2, 2};  // planes of 2x2, one output each
  for (const int64_t bad : {int64_t{-1}, int64_t{4}}) {
    const typename B::Buffer argmax(std::vector<int64_t>{3, bad, 0}),
        dy(std::vector<float>{1, 2, 3}),
        dx(std::vector<float>(3 * 4 + 1, 9));  // one guard entry past the three planes
    EXPECT_FALSE(B::MaxPool2dBackward(DType::kF32, 3, window, argmax.template as<int64_t>(),
                                      dy.data(), dx.data()));
    EXPECT_EQ(dx.template ToHost<float>(),
              (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 9}))
        << bad;
  }
}

TYPED_TEST(MaxPool2dTest, TiesTakeTheFirstAndNaNWinsAsInPyTorch) {
  using B = TypeParam;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    // A 2x4 block, 2x2 windows: [1 1 | nan 5], [1 0 | 7 nan] -> (1 at 0), (nan at 7), the
    // last NaN. Side by side 1 and 16 times (the second takes the CPU's vector path).
    const std::vector<float> block = {1, 1, nan, 5, 1, 0, 7, nan};
    for (const int64_t copies : {1, 16}) {
      SCOPED_TRACE(testing::Message() << path << ", " << copies << " copies");
      std::vector<float> x(8 * copies);
      for (int64_t c = 0; c < copies; ++c) {
        for (int64_t k = 0; k < 8; ++k) x[(k / 4) * 4 * copies + c * 4 + k % 4] = block[k];
      }
      const typename B::Buffer gx(x), gy(2 * copies * sizeof(float)),
          gargmax(2 * copies * sizeof(int64_t));
      B::MaxPool2dForward(DType::kF32, 1, {2, 4 * copies, 2, 2, 2, 2}, gx.data(), gy.data(),
                          gargmax.template as<int64_t>());
      const std::vector<float> y = gy.template ToHost<float>();
      const std::vector<int64_t> argmax = gargmax.template ToHost<int64_t>();
      for (int64_t c = 0; c < copies; ++c) {
        EXPECT_EQ(y[2 * c], 1);
        EXPECT_EQ(argmax[2 * c], 4 * c);
        EXPECT_TRUE(std::isnan(y[2 * c + 1]));
        EXPECT_EQ(argmax[2 * c + 1], 4 * copies + 4 * c + 3);
      }
    }
    // Windows {1, N, N, 2} and {3, 4, 9, 8} of a [2, 4] plane: the last NaN, then 9.
    const typename B::Buffer gx(std::vector<float>{1, nan, 3, 4, nan, 2, 9, 8}),
        gy(2 * sizeof(float)), gargmax(2 * sizeof(int64_t));
    B::MaxPool2dForward(DType::kF32, 1, {2, 4, 2, 2, 2, 2}, gx.data(), gy.data(),
                        gargmax.template as<int64_t>());
    EXPECT_EQ(gargmax.template ToHost<int64_t>(), (std::vector<int64_t>{4, 6})) << path;
    EXPECT_TRUE(std::isnan(gy.template ToHost<float>()[0])) << path;
    EXPECT_EQ(gy.template ToHost<float>()[1], 9) << path;
    // A window of -inf points at its first input, never at padding: a 2x2 input padded
    // by 1, 2x2 windows with stride 2, each window holding one input.
    const std::vector<float> minus = {-inf, -inf, -inf, -inf};
    const typename B::Buffer gminus(minus), y4(4 * sizeof(float)), argmax4(4 * sizeof(int64_t));
    B::MaxPool2dForward(DType::kF32, 1, {2, 2, 2, 2, 2, 2, 1, 1}, gminus.data(), y4.data(),
                        argmax4.template as<int64_t>());
    EXPECT_EQ(argmax4.template ToHost<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3})) << path;
    EXPECT_EQ(y4.template ToHost<float>(), minus) << path;
  });
}

}  // namespace
}  // namespace ember::kernels
