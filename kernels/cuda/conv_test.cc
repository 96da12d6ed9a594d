// Convolution and max pooling on both backends against the float64 references in
// kernels/reference (conv.h, pool.h), on windows with stride, padding and dilation;
// pooling's argmax exactly, NaN and ties included (the last NaN of a window wins, else
// the first maximum). The CUDA half skips, saying why, without a GPU.

#include "kernels/reference/conv.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/pool.h"
#include "kernels/testing.h"

namespace ember::kernels::cuda {
namespace {

namespace ref = ::ember::kernels::reference;

EMBER_BACKEND_TEST_SUITE(ConvTest);

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-12 * (std::fabs(want[i]) + 1)) << what << " at " << i;
  }
}

ref::Conv2dShape ShapeOf(int64_t n, int64_t c, int64_t o, const Window2d& w) {
  return {n,          c,          o,       w.height, w.width,      w.kernel_h,  w.kernel_w,
          w.stride_h, w.stride_w, w.pad_h, w.pad_w,  w.dilation_h, w.dilation_w};
}

TYPED_TEST(ConvTest, ForwardAndBackwardMatchTheReference) {
  using B = TypeParam;
  struct Case {
    int64_t n, c, o;
    Window2d window;
    bool bias;
  };
  const std::vector<Case> cases = {
      {2, 1, 4, {28, 28, 5, 5, 1, 1, 2, 2}, true},        // MNIST's first layer, "same"
      {3, 4, 6, {9, 11, 3, 2, 2, 1, 1, 0, 1, 2}, false},  // strides, padding, dilation
      {1, 2, 3, {5, 5, 5, 5}, true},                      // one output position
  };
  std::mt19937 rng(8);
  for (const Case& k : cases) {
    const Window2d& w = k.window;
    const ref::Conv2dShape s = ShapeOf(k.n, k.c, k.o, w);
    const int64_t xs = k.n * k.c * w.height * w.width, ws = k.o * k.c * w.kernel_h * w.kernel_w;
    const int64_t ys = k.n * k.o * w.out_h() * w.out_w();
    const std::vector<double> x = RandomVector<double>(xs, -1, 1, rng);
    const std::vector<double> weight = RandomVector<double>(ws, -1, 1, rng);
    const std::vector<double> b = RandomVector<double>(k.o, -1, 1, rng);
    const std::vector<double> dy = RandomVector<double>(ys, -1, 1, rng);
    const typename B::Buffer gx(x), gw(weight), gb(b), gdy(dy), gy(ys * 8), gdx(xs * 8),
        gdw(ws * 8), gdb(k.o * 8);
    B::Conv2dForward(DType::kF64, k.n, k.c, k.o, w, gx.data(), gw.data(),
                     k.bias ? gb.data() : nullptr, gy.data());
    B::Conv2dBackward(DType::kF64, k.n, k.c, k.o, w, gx.data(), gw.data(), gdy.data(), gdx.data(),
                      gdw.data(), gdb.data());
    const ref::Conv2dGrads grads = ref::Conv2dBackward(s, x, weight, dy);
    ExpectNear(gy.template ToHost<double>(),
               ref::Conv2d(s, x, weight, k.bias ? b : std::vector<double>{}), "y");
    ExpectNear(gdx.template ToHost<double>(), grads.dx, "dx");
    ExpectNear(gdw.template ToHost<double>(), grads.dw, "dw");
    ExpectNear(gdb.template ToHost<double>(), grads.db, "db");
  }
}

TYPED_TEST(ConvTest, MaxPoolingMatchesTheReference) {
  using B = TypeParam;
  const std::vector<Window2d> windows = {
      {28, 28, 2, 2, 2, 2}, {7, 9, 3, 3, 2, 2, 1, 1}, {6, 6, 3, 2, 1, 2, 1, 0, 2, 1}};
  std::mt19937 rng(4);
  for (const Window2d& w : windows) {
    const int64_t planes = 5, inputs = planes * w.height * w.width;
    const int64_t outputs = planes * w.out_h() * w.out_w();
    std::vector<float> x = RandomVector<float>(inputs, -2, 2, rng);
    for (int64_t i = 0; i < inputs; i += 7) x[i] = std::round(x[i]);  // ties
    const std::vector<float> dy = RandomVector<float>(outputs, -1, 1, rng);
    const ref::Conv2dShape s = ShapeOf(planes, 1, 1, w);
    std::vector<int64_t> want_argmax;
    const std::vector<double> want_y =
        ref::MaxPool2d(s, std::vector<double>(x.begin(), x.end()), &want_argmax);
    // dx: each output's dy sent back to its argmax.
    std::vector<double> want_dx(inputs, 0.0);
    for (int64_t k = 0; k < outputs; ++k) {
      want_dx[k / (w.out_h() * w.out_w()) * w.height * w.width + want_argmax[k]] += dy[k];
    }
    const typename B::Buffer gx(x), gdy(dy), gy(outputs * 4), gargmax(outputs * 8), gdx(inputs * 4);
    B::MaxPool2dForward(DType::kF32, planes, w, gx.data(), gy.data(),
                        gargmax.template as<int64_t>());
    EXPECT_TRUE(B::MaxPool2dBackward(DType::kF32, planes, w, gargmax.template as<int64_t>(),
                                     gdy.data(), gdx.data()));
    EXPECT_EQ(gargmax.template ToHost<int64_t>(), want_argmax);
    const std::vector<float> got_y = gy.template ToHost<float>(),
                             got_dx = gdx.template ToHost<float>();
    for (int64_t i = 0; i < outputs; ++i) EXPECT_EQ(got_y[i], static_cast<float>(want_y[i])) << i;
    for (int64_t i = 0; i < inputs; ++i) EXPECT_NEAR(got_dx[i], want_dx[i], 1e-6) << i;
    // An argmax outside its plane is reported and skipped, never written through.
    std::vector<int64_t> bad = want_argmax;
    bad[0] = -1;
    const typename B::Buffer gbad(bad);
    EXPECT_FALSE(B::MaxPool2dBackward(DType::kF32, planes, w, gbad.template as<int64_t>(),
                                      gdy.data(), gdx.data()));
  }
}

// The last NaN of a window wins (as PyTorch), where the float64 reference, without
// NaN, is silent.
TYPED_TEST(ConvTest, MaxPoolingTakesTheLastNaN) {
  using B = TypeParam;
  const Window2d w{2, 4, 2, 2, 2, 2};
  const std::vector<float> x = {1,   NAN, 3, 4,
                                NAN, 2,   9, 8};  // [2, 4]: windows {1,N,N,2}, {3,4,9,8}
  const typename B::Buffer gx(x), gy(2 * 4), gargmax(2 * 8);
  B::MaxPool2dForward(DType::kF32, 1, w, gx.data(), gy.data(), gargmax.template as<int64_t>());
  EXPECT_EQ(gargmax.template ToHost<int64_t>(), (std::vector<int64_t>{4, 6}));
  const std::vector<float> y = gy.template ToHost<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 9);
}

}  // namespace
}  // namespace ember::kernels::cuda
