// Convolution on every compiled SIMD target against the direct sums of
// kernels/reference/conv.h (float64): padding, stride, dilation, "same" layers, channel
// counts across GEMM tiles, and independence from the thread count.

#include "kernels/conv.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/conv.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = kernels::reference;

Window2d WindowOf(const ref::Conv2dShape& s) {
  return {s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw};
}

std::vector<double> Random(size_t n, std::mt19937& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = std::uniform_real_distribution<double>(-1, 1)(rng);
  return v;
}

template <typename T>
std::vector<T> Cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<double>& want, double tol,
                const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
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
};

template <typename T>
void CheckAgainstReferenceOn(double tol, const std::string& target) {
  std::mt19937 rng(3);
  for (const ref::Conv2dShape& s : kShapes) {
    SCOPED_TRACE(testing::Message()
                 << target << ": n=" << s.n << " c=" << s.c << " o=" << s.o << " h=" << s.h
                 << " kh=" << s.kh << " stride=" << s.sh << " pad=" << s.ph);
    const std::vector<double> x = Random(s.n * s.c * s.h * s.w, rng);
    const std::vector<double> w = Random(s.o * s.c * s.kh * s.kw, rng);
    const std::vector<double> b = Random(s.o, rng);
    const std::vector<double> dy = Random(s.n * s.o * s.oh() * s.ow(), rng);
    const DType dtype = DTypeOf<T>::value;
    const std::vector<T> xt = Cast<T>(x), wt = Cast<T>(w), bt = Cast<T>(b), dyt = Cast<T>(dy);

    std::vector<T> y(dy.size(), T(7));
    Conv2dForward(dtype, s.n, s.c, s.o, WindowOf(s), xt.data(), wt.data(), bt.data(), y.data());
    ExpectNear(y, ref::Conv2d(s, x, w, b), tol, "y");
    Conv2dForward(dtype, s.n, s.c, s.o, WindowOf(s), xt.data(), wt.data(), nullptr, y.data());
    ExpectNear(y, ref::Conv2d(s, x, w, {}), tol, "y without bias");

    const ref::Conv2dGrads want = ref::Conv2dBackward(s, x, w, dy);
    std::vector<T> dx(x.size(), T(7)), dw(w.size(), T(7)), db(b.size(), T(7));
    Conv2dBackward(dtype, s.n, s.c, s.o, WindowOf(s), xt.data(), wt.data(), dyt.data(), dx.data(),
                   dw.data(), db.data());
    ExpectNear(dx, want.dx, tol, "dx");
    ExpectNear(dw, want.dw, tol, "dw");
    ExpectNear(db, want.db, tol, "db");
  }
}

// On every SIMD target: the GEMM's tile, panel width and packing differ between them.
template <typename T>
void CheckAgainstReference(double tol) {
  ForEachTarget([&](const std::string& target) { CheckAgainstReferenceOn<T>(tol, target); });
}

TEST(Conv2dTest, MatchesTheDirectSumF64) { CheckAgainstReference<double>(1e-12); }
TEST(Conv2dTest, MatchesTheDirectSumF32) { CheckAgainstReference<float>(2e-5); }

TEST(Conv2dTest, OutputSizeFollowsPyTorch) {
  EXPECT_EQ((Window2d{28, 28, 5, 5}).out_h(), 24);
  EXPECT_EQ((Window2d{28, 28, 3, 3, 2, 2, 1, 1}).out_w(), 14);
  EXPECT_EQ((Window2d{7, 7, 3, 3, 2, 2, 0, 0, 2, 2}).out_h(), 2);  // (7 - 4 - 1) / 2 + 1
}

TEST(Conv2dTest, BackwardDoesNotDependOnTheThreadCount) {
  const ref::Conv2dShape s{37, 3, 8, 12, 12, 3, 3, 1, 1, 1, 1};
  std::mt19937 rng(9);
  const std::vector<float> x = Cast<float>(Random(s.n * s.c * s.h * s.w, rng));
  const std::vector<float> w = Cast<float>(Random(s.o * s.c * s.kh * s.kw, rng));
  const std::vector<float> dy = Cast<float>(Random(s.n * s.o * s.oh() * s.ow(), rng));
  auto run = [&](int threads) {
    SetNumThreads(threads);
    std::vector<float> dx(x.size()), dw(w.size()), db(s.o);
    Conv2dBackward(DType::kF32, s.n, s.c, s.o, WindowOf(s), x.data(), w.data(), dy.data(),
                   dx.data(), dw.data(), db.data());
    std::vector<float> all = dx;
    all.insert(all.end(), dw.begin(), dw.end());
    all.insert(all.end(), db.begin(), db.end());
    return all;
  };
  const int threads = NumThreads();
  const std::vector<float> one = run(1), three = run(3);
  SetNumThreads(threads);
  EXPECT_EQ(one, three);
}

TEST(Conv2dTest, RefusesIntegerDTypes) {
  int32_t x = 0;
  EXPECT_THROW(Conv2dForward(DType::kI32, 1, 1, 1, {1, 1, 1, 1}, &x, &x, nullptr, &x), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
