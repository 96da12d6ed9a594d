// Cumulative sums, products and the product's gradient: one table of cases on both
// backends (kernels/cuda/internal/backends.h) and every CPU SIMD target, against
// hand-derived values and kernels/reference/scan.h; the CUDA half skips, saying why,
// without a GPU.

#include "kernels/scan.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/scan.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

using cuda::internal::ForEachPath;
using cuda::internal::ForEachPathAndFloat;

EMBER_BACKEND_TEST_SUITE(ScanTest);

TYPED_TEST(ScanTest, HandDerivedValues) {
  using B = TypeParam;
  ForEachPath<B>([&](const std::string& path) {
    SCOPED_TRACE(path);
    const std::vector<double> x = {1, 2, 3, 4};
    const typename B::Buffer gx(x), out(4 * sizeof(double));
    B::CumulativeSum(DType::kF64, 1, 4, 1, false, gx.data(), out.data());
    EXPECT_EQ(out.template ToHost<double>(), (std::vector<double>{1, 3, 6, 10}));
    B::CumulativeSum(DType::kF64, 1, 4, 1, true, gx.data(), out.data());
    EXPECT_EQ(out.template ToHost<double>(), (std::vector<double>{10, 9, 7, 4}));
    // Along the first of [2, 2] (outer 1, n 2, inner 2): columns scan apart.
    B::CumulativeSum(DType::kF64, 1, 2, 2, false, gx.data(), out.data());
    EXPECT_EQ(out.template ToHost<double>(), (std::vector<double>{1, 2, 4, 6}));
    // A zero: the products after it are 0, and the gradient is exact without division:
    // dx_0 = 1 + x1 + x1 x2 = 1, dx_1 = x0 + x0 x2 = 8, dx_2 = x0 x1 = 0.
    const std::vector<double> z = {2, 0, 3}, ones = {1, 1, 1};
    const typename B::Buffer gz(z), gones(ones), prod(3 * sizeof(double)), dz(3 * sizeof(double));
    B::CumulativeProduct(DType::kF64, 1, 3, 1, gz.data(), prod.data());
    EXPECT_EQ(prod.template ToHost<double>(), (std::vector<double>{2, 0, 0}));
    B::CumulativeProductBackward(DType::kF64, 1, 3, 1, gz.data(), gones.data(), dz.data());
    EXPECT_EQ(dz.template ToHost<double>(), (std::vector<double>{1, 8, 0}));
    // int64, wrapping as int64 arithmetic does.
    const std::vector<int64_t> i = {3, -2, 5, int64_t{1} << 62, 4};
    const typename B::Buffer gi(i), iout(5 * sizeof(int64_t));
    B::CumulativeSum(DType::kI64, 1, 3, 1, false, gi.data(), iout.data());
    EXPECT_EQ(iout.template ToHost<int64_t>()[2], 6);
    B::CumulativeProduct(DType::kI64, 1, 5, 1, gi.data(), iout.data());
    // -30 * 2^62 = -2^67 + 2^63, which is 2^63 modulo 2^64 (int64's minimum); times 4, 0.
    EXPECT_EQ(iout.template ToHost<int64_t>(),
              (std::vector<int64_t>{3, -6, -30, std::numeric_limits<int64_t>::min(), 0}));
  });
}

struct Case {
  int64_t outer, n, inner;
};

// Rows (inner 1, the GPU's block-per-row path, n below, at and above its 256 threads and
// not a multiple of them), columns narrower and wider than a vector and than the CPU's
// 256-column blocks, a scan of one, and empty operands.
const Case kCases[] = {{3, 1, 1}, {2, 7, 1},   {1, 256, 1}, {4, 1000, 1}, {1, 5000, 1},
                       {3, 9, 2}, {2, 33, 17}, {1, 40, 64}, {2, 11, 300}, {5, 1, 7},
                       {0, 4, 3}, {2, 0, 3},   {2, 3, 0}};

TYPED_TEST(ScanTest, MatchesTheReference) {
  using B = TypeParam;
  ForEachPathAndFloat<B>([&](const std::string& path, auto type) {
    using T = decltype(type);
    const double eps = std::numeric_limits<T>::epsilon();
    std::mt19937 rng(7);
    for (const Case& c : kCases) {
      SCOPED_TRACE(path + " " + std::string(DTypeName(DTypeOf<T>::value)) + " outer " +
                   std::to_string(c.outer) + " n " + std::to_string(c.n) + " inner " +
                   std::to_string(c.inner));
      const int64_t count = c.outer * c.n * c.inner;
      const std::vector<T> x = RandomVector<T>(count, -1, 1, rng);
      std::vector<T> abs_x(count);
      for (int64_t i = 0; i < count; ++i) abs_x[i] = std::fabs(x[i]);
      // Products and their gradients over values in [0.5, 1.5] with some exact zeros.
      std::vector<T> p = RandomVector<T>(count, 0.5, 1.5, rng);
      for (int64_t i = 0; i < count; i += 13) p[i] = 0;
      const std::vector<T> dout = RandomVector<T>(count, -1, 1, rng);
      std::vector<T> abs_dout(count);
      for (int64_t i = 0; i < count; ++i) abs_dout[i] = std::fabs(dout[i]);
      const typename B::Buffer gx(x), gp(p), gdout(dout), out(count * sizeof(T));
      for (bool reverse : {false, true}) {
        B::CumulativeSum(DTypeOf<T>::value, c.outer, c.n, c.inner, reverse, gx.data(), out.data());
        const auto want = reference::CumulativeSum(c.outer, c.n, c.inner, reverse, x);
        const auto bound = reference::CumulativeSum(c.outer, c.n, c.inner, reverse, abs_x);
        const std::vector<T> got = out.template ToHost<T>();
        for (int64_t i = 0; i < count; ++i) {
          ASSERT_NEAR(got[i], want[i], 2 * c.n * eps * bound[i] + 1e-300) << reverse << " " << i;
        }
      }
      B::CumulativeProduct(DTypeOf<T>::value, c.outer, c.n, c.inner, gp.data(), out.data());
      const auto want = reference::CumulativeProduct(c.outer, c.n, c.inner, p);
      std::vector<T> got = out.template ToHost<T>();
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_NEAR(got[i], want[i], 2 * c.n * eps * std::fabs(static_cast<double>(want[i]))) << i;
      }
      B::CumulativeProductBackward(DTypeOf<T>::value, c.outer, c.n, c.inner, gp.data(),
                                   gdout.data(), out.data());
      const auto want_dx = reference::CumulativeProductBackward(c.outer, c.n, c.inner, p, dout);
      // Each term of dx_i is bounded by |dout_j| prod |x_l| <= |dout_j| 1.5^j.
      const auto bound = reference::CumulativeProductBackward(c.outer, c.n, c.inner,
                                                              std::vector<T>(count, 1.5), abs_dout);
      got = out.template ToHost<T>();
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_NEAR(got[i], want_dx[i], 4 * c.n * eps * bound[i] + 1e-300) << i;
      }
    }
  });
}

TEST(ScanCpuTest, DoesNotDependOnTheThreadCount) {
  const int64_t outer = 64, n = 300, inner = 70;
  std::mt19937 rng(3);
  const std::vector<float> x = RandomVector<float>(outer * n * inner, -1, 1, rng);
  const std::vector<float> g = RandomVector<float>(outer * n * inner, -1, 1, rng);
  std::vector<float> one(x.size()), three(x.size());
  const int threads = cpu::NumThreads();
  for (int64_t in : {int64_t{1}, inner}) {
    const int64_t out = outer * inner / in;
    cpu::SetNumThreads(1);
    cpu::CumulativeSum(DType::kF32, out, n, in, false, x.data(), one.data());
    cpu::SetNumThreads(3);
    cpu::CumulativeSum(DType::kF32, out, n, in, false, x.data(), three.data());
    EXPECT_EQ(one, three);
    cpu::SetNumThreads(1);
    cpu::CumulativeProductBackward(DType::kF32, out, n, in, x.data(), g.data(), one.data());
    cpu::SetNumThreads(3);
    cpu::CumulativeProductBackward(DType::kF32, out, n, in, x.data(), g.data(), three.data());
    EXPECT_EQ(one, three);
  }
  cpu::SetNumThreads(threads);
  EXPECT_THROW(cpu::CumulativeSum(DType::kI32, 1, 1, 1, false, x.data(), one.data()), Error);
  EXPECT_THROW(cpu::CumulativeProductBackward(DType::kI64, 1, 1, 1, x.data(), g.data(), one.data()),
               Error);
}

}  // namespace
}  // namespace ember::kernels
