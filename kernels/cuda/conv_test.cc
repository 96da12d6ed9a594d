// kernels/cuda conv.cu and pool.cu against kernels/cpu (itself tested against the
// float64 reference) on windows with stride, padding and dilation, in f64 where the
// two must agree to rounding; max pooling exactly, NaN and ties included. Skips,
// saying why, without a GPU.

#include "kernels/cpu/conv.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/testing.h"
#include "kernels/cpu/pool.h"
#include "kernels/cuda/internal/testing.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::DeviceBuffer;

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-12 * (std::fabs(want[i]) + 1)) << what << " at " << i;
  }
}

TEST(CudaConvTest, ForwardAndBackwardMatchTheCpu) {
  EMBER_SKIP_WITHOUT_CUDA();
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
    const int64_t xs = k.n * k.c * w.height * w.width, ws = k.o * k.c * w.kernel_h * w.kernel_w;
    const int64_t ys = k.n * k.o * w.out_h() * w.out_w();
    const std::vector<double> x = cpu::internal::RandomVector<double>(xs, -1, 1, rng);
    const std::vector<double> weight = cpu::internal::RandomVector<double>(ws, -1, 1, rng);
    const std::vector<double> b = cpu::internal::RandomVector<double>(k.o, -1, 1, rng);
    const std::vector<double> dy = cpu::internal::RandomVector<double>(ys, -1, 1, rng);
    std::vector<double> y(ys), dx(xs), dw(ws), db(k.o);
    cpu::Conv2dForward(DType::kF64, k.n, k.c, k.o, w, x.data(), weight.data(),
                       k.bias ? b.data() : nullptr, y.data());
    cpu::Conv2dBackward(DType::kF64, k.n, k.c, k.o, w, x.data(), weight.data(), dy.data(),
                        dx.data(), dw.data(), db.data());
    const DeviceBuffer gx(x), gw(weight), gb(b), gdy(dy), gy(ys * 8), gdx(xs * 8), gdw(ws * 8),
        gdb(k.o * 8);
    Conv2dForward(DType::kF64, k.n, k.c, k.o, w, gx.data(), gw.data(), k.bias ? gb.data() : nullptr,
                  gy.data());
    Conv2dBackward(DType::kF64, k.n, k.c, k.o, w, gx.data(), gw.data(), gdy.data(), gdx.data(),
                   gdw.data(), gdb.data());
    ExpectNear(gy.ToHost<double>(), y, "y");
    ExpectNear(gdx.ToHost<double>(), dx, "dx");
    ExpectNear(gdw.ToHost<double>(), dw, "dw");
    ExpectNear(gdb.ToHost<double>(), db, "db");
  }
}

TEST(CudaPoolTest, MaxPoolingMatchesTheCpuExactly) {
  EMBER_SKIP_WITHOUT_CUDA();
  const std::vector<Window2d> windows = {
      {28, 28, 2, 2, 2, 2}, {7, 9, 3, 3, 2, 2, 1, 1}, {6, 6, 3, 2, 1, 2, 1, 0, 2, 1}};
  std::mt19937 rng(4);
  for (const Window2d& w : windows) {
    const int64_t planes = 5, inputs = planes * w.height * w.width;
    const int64_t outputs = planes * w.out_h() * w.out_w();
    std::vector<float> x = cpu::internal::RandomVector<float>(inputs, -2, 2, rng);
    for (int64_t i = 0; i < inputs; i += 7) x[i] = std::round(x[i]);  // ties
    x[3] = NAN;
    x[5] = NAN;
    const std::vector<float> dy = cpu::internal::RandomVector<float>(outputs, -1, 1, rng);
    std::vector<float> y(outputs), dx(inputs);
    std::vector<int64_t> argmax(outputs);
    cpu::MaxPool2dForward(DType::kF32, planes, w, x.data(), y.data(), argmax.data());
    ASSERT_TRUE(
        cpu::MaxPool2dBackward(DType::kF32, planes, w, argmax.data(), dy.data(), dx.data()));
    const DeviceBuffer gx(x), gdy(dy), gy(outputs * 4), gargmax(outputs * 8), gdx(inputs * 4);
    MaxPool2dForward(DType::kF32, planes, w, gx.data(), gy.data(), gargmax.as<int64_t>());
    EXPECT_TRUE(
        MaxPool2dBackward(DType::kF32, planes, w, gargmax.as<int64_t>(), gdy.data(), gdx.data()));
    EXPECT_EQ(gargmax.ToHost<int64_t>(), argmax);
    const std::vector<float> got_y = gy.ToHost<float>();
    for (int64_t i = 0; i < outputs; ++i) {
      EXPECT_TRUE(got_y[i] == y[i] || (std::isnan(got_y[i]) && std::isnan(y[i]))) << i;
    }
    EXPECT_EQ(gdx.ToHost<float>(), dx);
    // An argmax outside its plane is reported and skipped, never written through.
    std::vector<int64_t> bad = argmax;
    bad[0] = -1;
    const DeviceBuffer gbad(bad);
    EXPECT_FALSE(
        MaxPool2dBackward(DType::kF32, planes, w, gbad.as<int64_t>(), gdy.data(), gdx.data()));
  }
}

}  // namespace
}  // namespace ember::kernels::cuda
