// 2-D convolution, forward and backward: one table of cases on every CPU SIMD target this
// machine has (their GEMM tiles, panel widths and packing differ) and on CUDA
// (kernels/cuda/internal/backends.h), against the direct sums of kernels/reference/conv.h
// (float64), in f32 and f64: padding, stride, dilation, "same" layers, one output
// position, channel counts across GEMM tiles, with and without a bias. The CUDA half
// skips, saying why, without a GPU.

#include "kernels/conv.h"

#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/conv.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

Window2d WindowOf(const ref::Conv2dShape& s) {
  return {s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw};
}

const ref::Conv2dShape kShapes[] = {
    // n, c, o, h, w, kh, kw, sh, sw, ph, pw, dh, dw
    {1, 1, 1, 5, 5, 3, 3},
    {3, 2, 4, 7, 6, 3, 3, 1, 1, 1, 1},          // "same" padding
    {2, 3, 5, 9, 8, 3, 2, 2, 1, 1, 0},          // strided, non-square kernel
    {2, 2, 3, 10, 11, 3, 3, 2, 3, 2, 1, 2, 1},  // dilation, padding larger than 1
    {17, 1, 2, 6, 6, 5, 5, 1, 1, 2, 2},         // more images than backward parts
    {2, 4, 3, 4, 4, 1, 1},                      // 1x1
    {2, 2, 3, 9, 8, 3, 3, 1, 1, 2, 2, 2, 2},    // "same" with dilation
    {2, 3, 4, 14, 14, 3, 3, 1, 1, 1, 1},        // more positions than a GEMM block is deep
    {1, 2, 2, 2, 2, 5, 5, 1, 1, 2, 2},          // "same", padding as wide as the image
    {2, 8, 20, 10, 10, 3, 3, 1, 1, 1, 1},       // channels over several GEMM tiles each way
    {2, 1, 4, 28, 28, 5, 5, 1, 1, 2, 2},        // MNIST's first layer, "same"
    {3, 4, 6, 9, 11, 3, 2, 2, 1, 1, 0, 1, 2},   // strides, padding, dilation
    {1, 2, 3, 5, 5, 5, 5},                      // one output position
};

template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<double>& want, double tol,
                const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

template <typename B, typename T>
void CheckAgainstReference(const std::string& path, double tol, std::mt19937& rng) {
  for (const ref::Conv2dShape& s : kShapes) {
    SCOPED_TRACE(testing::Message()
                 << DTypeName(kDTypeOf<T>) << " on " << path << ": n=" << s.n << " c=" << s.c
                 << " o=" << s.o << " h=" << s.h << " w=" << s.w << " kh=" << s.kh
                 << " stride=" << s.sh << " pad=" << s.ph << " dilation=" << s.dh);
    const std::vector<T> x = RandomVector<T>(s.n * s.c * s.h * s.w, -1, 1, rng);
    const std::vector<T> w = RandomVector<T>(s.o * s.c * s.kh * s.kw, -1, 1, rng);
    const std::vector<T> b = RandomVector<T>(s.o, -1, 1, rng);
    const std::vector<T> dy = RandomVector<T>(s.n * s.o * s.oh() * s.ow(), -1, 1, rng);
    const std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()),
        bd(b.begin(), b.end()), dyd(dy.begin(), dy.end());
    const DType dtype = kDTypeOf<T>;
    // Outputs start as 7s: every element must be written.
    const typename B::Buffer gx(x), gw(w), gb(b), gdy(dy), gy(std::vector<T>(dy.size(), T(7))),
        gdx(std::vector<T>(x.size(), T(7))), gdw(std::vector<T>(w.size(), T(7))),
        gdb(std::vector<T>(b.size(), T(7)));
    B::Conv2dForward(dtype, s.n, s.c, s.o, WindowOf(s), gx.data(), gw.data(), gb.data(), gy.data());
    ExpectNear(gy.template ToHost<T>(), ref::Conv2d(s, xd, wd, bd), tol, "y");
    B::Conv2dForward(dtype, s.n, s.c, s.o, WindowOf(s), gx.data(), gw.data(), nullptr, gy.data());
    ExpectNear(gy.template ToHost<T>(), ref::Conv2d(s, xd, wd, {}), tol, "y without bias");
    const ref::Conv2dGrads want = ref::Conv2dBackward(s, xd, wd, dyd);
    B::Conv2dBackward(dtype, s.n, s.c, s.o, WindowOf(s), gx.data(), gw.data(), gdy.data(),
                      gdx.data(), gdw.data(), gdb.data());
    ExpectNear(gdx.template ToHost<T>(), want.dx, tol, "dx");
    ExpectNear(gdw.template ToHost<T>(), want.dw, tol, "dw");
    ExpectNear(gdb.template ToHost<T>(), want.db, tol, "db");
  }
}

EMBER_BACKEND_TEST_SUITE(Conv2dTest);

TYPED_TEST(Conv2dTest, ForwardAndBackwardMatchTheDirectSums) {
  std::mt19937 rng(3);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    using T = decltype(type);
    CheckAgainstReference<TypeParam, T>(path, std::is_same_v<T, float> ? 2e-5 : 1e-12, rng);
  });
}

TEST(Conv2dCpuTest, OutputSizeFollowsPyTorch) {
  EXPECT_EQ((Window2d{28, 28, 5, 5}).out_h(), 24);
  EXPECT_EQ((Window2d{28, 28, 3, 3, 2, 2, 1, 1}).out_w(), 14);
  EXPECT_EQ((Window2d{7, 7, 3, 3, 2, 2, 0, 0, 2, 2}).out_h(), 2);  // (7 - 4 - 1) / 2 + 1
}

TEST(Conv2dCpuTest, BackwardDoesNotDependOnTheThreadCount) {
  const ref::Conv2dShape s{37, 3, 8, 12, 12, 3, 3, 1, 1, 1, 1};
  std::mt19937 rng(9);
  const std::vector<float> x = RandomVector<float>(s.n * s.c * s.h * s.w, -1, 1, rng);
  const std::vector<float> w = RandomVector<float>(s.o * s.c * s.kh * s.kw, -1, 1, rng);
  const std::vector<float> dy = RandomVector<float>(s.n * s.o * s.oh() * s.ow(), -1, 1, rng);
  auto run = [&](int threads) {
    cpu::SetNumThreads(threads);
    std::vector<float> dx(x.size()), dw(w.size()), db(s.o);
    cpu::Conv2dBackward(DType::kF32, s.n, s.c, s.o, WindowOf(s), x.data(), w.data(), dy.data(),
                        dx.data(), dw.data(), db.data());
    std::vector<float> all = dx;
    all.insert(all.end(), dw.begin(), dw.end());
    all.insert(all.end(), db.begin(), db.end());
    return all;
  };
  const int threads = cpu::NumThreads();
  const std::vector<float> one = run(1), three = run(3);
  cpu::SetNumThreads(threads);
  EXPECT_EQ(one, three);
}

TEST(Conv2dCpuTest, RefusesIntegerDTypes) {
  int32_t x = 0;
  EXPECT_THROW(cpu::Conv2dForward(DType::kI32, 1, 1, 1, {1, 1, 1, 1}, &x, &x, nullptr, &x), Error);
}

}  // namespace
}  // namespace ember::kernels
