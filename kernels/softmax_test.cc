// Softmax, log-softmax and cross entropy, forward and backward: one table of cases on
// every CPU SIMD target this machine has and on CUDA (kernels/cuda/internal/backends.h),
// against the float64 reference (kernels/reference/softmax.h), in f32 and f64. Short
// rows with a large row (overflow without the max shift), a masked (-inf) position and
// an ignored target; then one row, many rows, rows of a CUDA warp and block and past
// them, and the GPT-2 vocabulary. Cross entropy's gradient written in place, over the
// logits, is bit for bit the one written beside them; over rows padded past their
// classes, the padding takes no part. The CUDA half skips, saying why, without a
// GPU.

#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/softmax.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

// |got - want| <= tol (|want| + scale): scale is the size of the terms that were
// summed, since a sum can cancel.
#define EXPECT_CLOSE(got, want, tol, scale, ...) \
  EXPECT_LE(std::fabs((got) - (want)), (tol) * (std::fabs(want) + (scale))) << __VA_ARGS__

// All six kernels over x [rows, n], back on the host.
template <typename T>
struct Results {
  std::vector<T> y, log_y, dsoft, dlog, losses, dlogits;
  std::vector<T> dlogits_in_place;  // cross entropy's gradient written over the logits
};

template <typename B, typename T>
Results<T> Run(int64_t rows, int64_t n, const std::vector<T>& x, const std::vector<T>& dy,
               const std::vector<int64_t>& targets, const std::vector<T>& grad) {
  const int64_t bytes = rows * n * sizeof(T);
  const typename B::Buffer dx(x), ddy(dy), dtargets(targets), dgrad(grad), y(bytes), log_y(bytes),
      dsoft(bytes), dlog(bytes), losses(rows * sizeof(T)), row_max(rows * sizeof(T)),
      sum_exp(rows * sizeof(T)), dlogits(bytes);
  const DType dtype = kDTypeOf<T>;
  B::Softmax(dtype, rows, n, dx.data(), y.data());
  B::LogSoftmax(dtype, rows, n, dx.data(), log_y.data());
  B::SoftmaxBackward(dtype, rows, n, y.data(), ddy.data(), dsoft.data());
  B::LogSoftmaxBackward(dtype, rows, n, log_y.data(), ddy.data(), dlog.data());
  B::CrossEntropyForward(dtype, rows, n, n, dx.data(), dtargets.template as<int64_t>(), -100,
                         losses.data(), row_max.data(), sum_exp.data());
  B::CrossEntropyBackward(dtype, rows, n, n, dx.data(), dtargets.template as<int64_t>(), -100,
                          row_max.data(), sum_exp.data(), dgrad.data(), dlogits.data());
  const typename B::Buffer in_place(x);
  B::CrossEntropyBackward(dtype, rows, n, n, in_place.data(), dtargets.template as<int64_t>(), -100,
                          row_max.data(), sum_exp.data(), dgrad.data(), in_place.data());
  return {y.template ToHost<T>(),       log_y.template ToHost<T>(),  dsoft.template ToHost<T>(),
          dlog.template ToHost<T>(),    losses.template ToHost<T>(), dlogits.template ToHost<T>(),
          in_place.template ToHost<T>()};
}

template <typename T>
std::vector<double> Row(const std::vector<T>& m, int64_t r, int64_t n) {
  return std::vector<double>(m.begin() + r * n, m.begin() + (r + 1) * n);
}

// Four rows of each length: row 0 small values, row 1 large ones (overflow without the
// max shift), row 2 with -inf (a masked position), row 3 mixed; row 3's target ignored.
template <typename B, typename T>
void CheckSpecialRows(const std::string& path, std::mt19937& rng) {
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  for (int64_t n : {1, 2, 7, 8, 9, 17, 100, 1000}) {
    const int64_t rows = 4;
    std::vector<T> x = RandomVector<T>(rows * n, -5, 5, rng);
    for (int64_t j = 0; j < n; ++j) x[n + j] += 1000;
    if (n > 1) x[2 * n + n / 2] = -INFINITY;
    const std::vector<T> dy = RandomVector<T>(rows * n, -1, 1, rng);
    std::vector<int64_t> targets = {0, n - 1, n / 3, -100};
    if (n > 1 && targets[2] == n / 2) targets[2] = 0;  // not the -inf position
    const std::vector<T> grad = {T(0.25), T(-1), T(0.5), T(2)};
    const Results<T> got = Run<B, T>(rows, n, x, dy, targets, grad);
    ASSERT_TRUE(got.dlogits_in_place == got.dlogits) << "in place, n=" << n << " on " << path;
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<double> xr = Row(x, r, n), dyr = Row(dy, r, n);
      const std::vector<double> wy = ref::Softmax(xr), wlog = ref::LogSoftmax(xr);
      const std::vector<double> wdx = ref::SoftmaxBackward(xr, dyr),
                                wdlog = ref::LogSoftmaxBackward(xr, dyr);
      const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + path +
                                ", n=" + std::to_string(n) + ", row " + std::to_string(r);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = r * n + j;
        ASSERT_NEAR(got.y[i], wy[j], tol) << where;
        if (std::isinf(wlog[j])) {
          ASSERT_EQ(got.log_y[i], wlog[j]) << where;
        } else {
          ASSERT_NEAR(got.log_y[i], wlog[j], tol * (1 + std::fabs(wlog[j]))) << where;
        }
        ASSERT_NEAR(got.dsoft[i], wdx[j], tol) << where;
        if (!std::isinf(x[i])) {  // sum_j dy_j carries n roundings
          ASSERT_NEAR(got.dlog[i], wdlog[j], tol * n) << where;
        }
        // d CE / d x_j = (softmax_j - [j == t]) * grad, 0 for the ignored row.
        const double want = targets[r] == -100 ? 0.0 : (wy[j] - (j == targets[r])) * grad[r];
        ASSERT_NEAR(got.dlogits[i], want, tol * 2) << where;
      }
      const double want_loss = targets[r] == -100 ? 0.0 : ref::CrossEntropy(xr, targets[r]);
      ASSERT_NEAR(got.losses[r], want_loss, tol * (1 + std::fabs(want_loss)) * 10) << where;
    }
  }
}

// Rows of up to 1024 (a warp a row for softmax on CUDA) and longer ones (a block a row).
template <typename B, typename T>
void CheckShapes(const std::string& path, std::mt19937& rng) {
  struct RowShape {
    int64_t rows, n;
  };
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (const RowShape& s : std::vector<RowShape>{
           {1, 1}, {1, 1000}, {3, 7}, {70, 256}, {5, 50257}, {300, 33}, {2, 1024}, {2, 1025}}) {
    const std::vector<T> x = RandomVector<T>(s.rows * s.n, -30, 30, rng);
    const std::vector<T> dy = RandomVector<T>(s.rows * s.n, -1, 1, rng);
    std::vector<int64_t> targets(s.rows);
    for (int64_t r = 0; r < s.rows; ++r) targets[r] = r % 4 == 3 ? -100 : rng() % s.n;
    const std::vector<T> grad = RandomVector<T>(s.rows, 0.5, 2, rng);
    const Results<T> got = Run<B, T>(s.rows, s.n, x, dy, targets, grad);
    ASSERT_TRUE(got.dlogits_in_place == got.dlogits)
        << "in place, [" << s.rows << ", " << s.n << "] on " << path;
    double sum_y = 0;
    for (int64_t r = 0; r < s.rows; ++r) {
      const std::vector<double> xr = Row(x, r, s.n), dyr = Row(dy, r, s.n);
      const std::vector<double> want_y = ref::Softmax(xr), want_log = ref::LogSoftmax(xr);
      // The backward references sum the full Jacobian (n^2): rows of the vocabulary's
      // length check the forward and cross entropy only.
      const bool backward = s.n <= 4096;
      const std::vector<double> want_dsoft = backward ? ref::SoftmaxBackward(xr, dyr) : want_y;
      const std::vector<double> want_dlog = backward ? ref::LogSoftmaxBackward(xr, dyr) : want_y;
      const bool ignored = targets[r] == -100;
      const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + path + ", [" +
                                std::to_string(s.rows) + ", " + std::to_string(s.n) + "] row " +
                                std::to_string(r);
      EXPECT_CLOSE(got.losses[r], ignored ? 0.0 : ref::CrossEntropy(xr, targets[r]), tol, 1,
                   where << " loss");
      sum_y = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t i = r * s.n + j;
        sum_y += got.y[i];
        EXPECT_CLOSE(got.y[i], want_y[j], tol, 1e-30, where << " softmax " << j);
        EXPECT_CLOSE(got.log_y[i], want_log[j], tol, 1, where << " log_softmax " << j);
        if (backward) {
          // dx = y (dy - sum dy y): its error scales with y, not with dx.
          EXPECT_CLOSE(got.dsoft[i], want_dsoft[j], tol, 2 * want_y[j],
                       where << " softmax backward " << j);
          EXPECT_CLOSE(got.dlog[i], want_dlog[j], tol, 1, where << " log_softmax backward " << j);
        }
        const double want_dlogits =
            ignored ? 0.0 : (want_y[j] - (j == targets[r] ? 1.0 : 0.0)) * grad[r];
        // The CPU forms the target's p_t - 1 in T, which cancels where p_t is near 1: p_t's
        // own few roundings (exp, the row's sum, the scale) in units of 1, times grad, more.
        const double cancel = std::is_same_v<B, cuda::internal::CpuBackend> && j == targets[r]
                                  ? 16 * std::numeric_limits<T>::epsilon() * std::fabs(grad[r])
                                  : 0;
        EXPECT_LE(std::fabs(got.dlogits[i] - want_dlogits),
                  tol * (std::fabs(want_dlogits) + 1e-6) + cancel)
            << where << " dlogits " << j;
      }
      EXPECT_NEAR(sum_y, 1.0, 1e-4) << where << ": the row sums to 1";
    }
  }
}

// Cross entropy over the first `classes` entries of rows padded to n (GPT-2's 50,257
// tokens in rows of 50,304): padding of large values takes no part in the loss and gets
// zeros, in place too.
template <typename B, typename T>
void CheckPaddedRows(const std::string& path, std::mt19937& rng) {
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (const auto& [classes, n] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {7, 8}, {100, 128}, {50257, 50304}}) {
    const int64_t rows = 3;
    std::vector<T> x = RandomVector<T>(rows * n, -5, 5, rng);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = classes; j < n; ++j) x[r * n + j] = T(1000);
    }
    const std::vector<int64_t> targets = {0, classes - 1, -100};
    const std::vector<T> grad = {T(1), T(0.5), T(2)};
    const typename B::Buffer dx(x), dtargets(targets), dgrad(grad), losses(rows * sizeof(T)),
        row_max(rows * sizeof(T)), sum_exp(rows * sizeof(T)), dlogits(rows * n * sizeof(T)),
        in_place(x);
    const DType dtype = kDTypeOf<T>;
    B::CrossEntropyForward(dtype, rows, n, classes, dx.data(), dtargets.template as<int64_t>(),
                           -100, losses.data(), row_max.data(), sum_exp.data());
    B::CrossEntropyBackward(dtype, rows, n, classes, dx.data(), dtargets.template as<int64_t>(),
                            -100, row_max.data(), sum_exp.data(), dgrad.data(), dlogits.data());
    B::CrossEntropyBackward(dtype, rows, n, classes, in_place.data(),
                            dtargets.template as<int64_t>(), -100, row_max.data(), sum_exp.data(),
                            dgrad.data(), in_place.data());
    const std::vector<T> got_losses = losses.template ToHost<T>(),
                         got = dlogits.template ToHost<T>();
    ASSERT_TRUE(in_place.template ToHost<T>() == got) << path << " in place, n=" << n;
    for (int64_t r = 0; r < rows; ++r) {
      const std::string where = std::string(DTypeName(dtype)) + " on " + path + ", " +
                                std::to_string(classes) + " of " + std::to_string(n) + ", row " +
                                std::to_string(r);
      const std::vector<double> xr(x.begin() + r * n, x.begin() + r * n + classes);
      const bool ignored = targets[r] == -100;
      EXPECT_CLOSE(got_losses[r], ignored ? 0.0 : ref::CrossEntropy(xr, targets[r]), tol, 1, where);
      const std::vector<double> p = ref::Softmax(xr);
      for (int64_t j = 0; j < n; ++j) {
        const double want =
            ignored || j >= classes ? 0.0 : (p[j] - (j == targets[r] ? 1.0 : 0.0)) * grad[r];
        if (j >= classes) {
          ASSERT_EQ(got[r * n + j], T(0)) << where << ", padding " << j;
        } else {
          ASSERT_NEAR(got[r * n + j], want, tol * 2) << where << ", " << j;
        }
      }
    }
  }
}

EMBER_BACKEND_TEST_SUITE(SoftmaxTest);

TYPED_TEST(SoftmaxTest, EverythingMatchesTheReference) {
  std::mt19937 rng(31), padded_rng(7);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    CheckSpecialRows<TypeParam, decltype(type)>(path, rng);
    CheckShapes<TypeParam, decltype(type)>(path, rng);
    CheckPaddedRows<TypeParam, decltype(type)>(path, padded_rng);
  });
}

// A target outside [0, classes) (in the padding, or negative but not ignore_index) reads
// nothing outside its row: its loss and its row of the gradient are NaN, in place too,
// and the other rows are untouched by it.
TYPED_TEST(SoftmaxTest, TargetsOutOfRangeGiveNaN) {
  using B = TypeParam;
  std::mt19937 rng(3);
  cuda::internal::ForEachPathAndFloat<B>([&](const std::string& path, auto type) {
    using T = decltype(type);
    const int64_t rows = 3, n = 8, classes = 5;
    const std::vector<T> x = RandomVector<T>(rows * n, -2, 2, rng);
    const std::vector<int64_t> targets = {classes, -2, 1};
    const std::vector<T> grad = {T(1), T(1), T(1)};
    const typename B::Buffer dx(x), dtargets(targets), dgrad(grad), losses(rows * sizeof(T)),
        row_max(rows * sizeof(T)), sum_exp(rows * sizeof(T)), dlogits(rows * n * sizeof(T)),
        in_place(x);
    const DType dtype = kDTypeOf<T>;
    B::CrossEntropyForward(dtype, rows, n, classes, dx.data(), dtargets.template as<int64_t>(),
                           -100, losses.data(), row_max.data(), sum_exp.data());
    B::CrossEntropyBackward(dtype, rows, n, classes, dx.data(), dtargets.template as<int64_t>(),
                            -100, row_max.data(), sum_exp.data(), dgrad.data(), dlogits.data());
    B::CrossEntropyBackward(dtype, rows, n, classes, in_place.data(),
                            dtargets.template as<int64_t>(), -100, row_max.data(), sum_exp.data(),
                            dgrad.data(), in_place.data());
    const std::vector<T> got_losses = losses.template ToHost<T>(),
                         got = dlogits.template ToHost<T>(),
                         got_in_place = in_place.template ToHost<T>();
    const std::string where = std::string(DTypeName(dtype)) + " on " + path;
    EXPECT_TRUE(std::isnan(got_losses[0])) << where;
    EXPECT_TRUE(std::isnan(got_losses[1])) << where;
    const std::vector<double> last(x.begin() + 2 * n, x.begin() + 2 * n + classes);
    EXPECT_CLOSE(got_losses[2], ref::CrossEntropy(last, 1), 1e-5, 1, where);
    for (int64_t i = 0; i < rows * n; ++i) {
      EXPECT_EQ(std::isnan(got[i]), i < 2 * n) << where << ", " << i;
      EXPECT_EQ(std::isnan(got_in_place[i]), i < 2 * n) << where << " in place, " << i;
    }
  });
}

// Softmax and log-softmax, forward and backward, on bf16 rows: each result the f32
// kernel's on the widened inputs, rounded once to bf16; and the softmax within bf16's
// rounding of the float64 reference.
TYPED_TEST(SoftmaxTest, SoftmaxReadsAndWritesBf16) {
  using B = TypeParam;
  std::mt19937 rng(42);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 7}, {70, 256}, {2, 1024}, {2, 1025}, {5, 50257}}) {
      const std::vector<BFloat16> x = RandomVector<BFloat16>(rows * n, -8, 8, rng),
                                  dy = RandomVector<BFloat16>(rows * n, -1, 1, rng);
      std::vector<float> x32, dy32;
      for (const BFloat16& v : x) x32.push_back(v.ToFloat());
      for (const BFloat16& v : dy) dy32.push_back(v.ToFloat());
      // The four kernels over x and dy of one element type; their outputs as floats.
      auto run = [&](DType dtype, const auto& hx, const auto& hdy) {
        using E = std::decay_t<decltype(hx[0])>;
        const int64_t bytes = rows * n * sizeof(E);
        const typename B::Buffer bx(hx), bdy(hdy), y(bytes), log_y(bytes), dsoft(bytes),
            dlog(bytes);
        B::Softmax(dtype, rows, n, bx.data(), y.data());
        B::LogSoftmax(dtype, rows, n, bx.data(), log_y.data());
        // The backwards from the widened forward outputs, on both sides.
        std::vector<E> hy = y.template ToHost<E>(), hlog = log_y.template ToHost<E>();
        const typename B::Buffer by(hy), blog(hlog);
        B::SoftmaxBackward(dtype, rows, n, by.data(), bdy.data(), dsoft.data());
        B::LogSoftmaxBackward(dtype, rows, n, blog.data(), bdy.data(), dlog.data());
        std::vector<std::vector<E>> out = {hy, hlog, dsoft.template ToHost<E>(),
                                           dlog.template ToHost<E>()};
        return out;
      };
      const auto got = run(DType::kBF16, x, dy);
      // The f32 backwards take the bf16 forward outputs, widened, as theirs.
      std::vector<float> y16, log16;
      for (const BFloat16& v : got[0]) y16.push_back(v.ToFloat());
      for (const BFloat16& v : got[1]) log16.push_back(v.ToFloat());
      const auto forward32 = run(DType::kF32, x32, dy32);
      std::vector<float> dsoft32(rows * n), dlog32(rows * n);
      {
        const typename B::Buffer by(y16), blog(log16), bdy(dy32), ds(rows * n * 4),
            dl(rows * n * 4);
        B::SoftmaxBackward(DType::kF32, rows, n, by.data(), bdy.data(), ds.data());
        B::LogSoftmaxBackward(DType::kF32, rows, n, blog.data(), bdy.data(), dl.data());
        dsoft32 = ds.template ToHost<float>();
        dlog32 = dl.template ToHost<float>();
      }
      const std::vector<const std::vector<float>*> want = {&forward32[0], &forward32[1], &dsoft32,
                                                           &dlog32};
      const char* names[] = {"softmax", "log_softmax", "softmax backward", "log_softmax backward"};
      const std::string where =
          path + ", [" + std::to_string(rows) + ", " + std::to_string(n) + "]";
      for (size_t o = 0; o < 4; ++o) {
        for (int64_t i = 0; i < rows * n; ++i) {
          ASSERT_EQ(got[o][i].bits, BFloat16::FromFloat((*want[o])[i]).bits)
              << where << " " << names[o] << " " << i << ": " << got[o][i].ToFloat() << " from "
              << (*want[o])[i];
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<double> p =
            ref::Softmax(std::vector<double>(x32.begin() + r * n, x32.begin() + (r + 1) * n));
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_LE(std::fabs(got[0][r * n + j].ToFloat() - p[j]),
                    kBf16Roundoff * p[j] + 1e-5 * (p[j] + 1e-30))
              << where << " softmax[" << r << ", " << j << "]";
        }
      }
    }
  });
}

// Cross entropy on bf16 logits: the f32 kernel's arithmetic on the widened logits, so
// the losses (f32) are the f32 kernel's exactly and dlogits are its, rounded once to
// bf16; both against the float64 reference too.
TYPED_TEST(SoftmaxTest, CrossEntropyReadsAndWritesBf16) {
  using B = TypeParam;
  struct RowShape {
    int64_t rows, n;
  };
  std::mt19937 rng(41);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (const RowShape& s :
         std::vector<RowShape>{{1, 1}, {3, 7}, {4, 100}, {70, 256}, {5, 50257}, {2, 1025}}) {
      const int64_t rows = s.rows, n = s.n;
      std::vector<BFloat16> x = RandomVector<BFloat16>(rows * n, -30, 30, rng);
      if (n > 2) x[n / 2] = Convert<BFloat16>(-INFINITY);  // a masked position in row 0
      std::vector<int64_t> targets(rows);
      for (int64_t r = 0; r < rows; ++r) targets[r] = r % 4 == 3 ? -100 : (r + 1) % n;
      if (n > 2 && targets[0] == n / 2) targets[0] = 0;
      const std::vector<float> grad = RandomVector<float>(rows, 0.5, 2, rng);
      std::vector<float> wide;
      for (const BFloat16& v : x) wide.push_back(v.ToFloat());
      auto run = [&](DType dtype, const void* logits, int64_t item) {
        const typename B::Buffer dtargets(targets), dgrad(grad), losses(rows * 4), m(rows * 4),
            sum(rows * 4), dlogits(rows * n * item);
        B::CrossEntropyForward(dtype, rows, n, n, logits, dtargets.template as<int64_t>(), -100,
                               losses.data(), m.data(), sum.data());
        B::CrossEntropyBackward(dtype, rows, n, n, logits, dtargets.template as<int64_t>(), -100,
                                m.data(), sum.data(), dgrad.data(), dlogits.data());
        return std::make_pair(losses.template ToHost<float>(), dlogits.template ToHost<char>());
      };
      const typename B::Buffer dx16(x), dx32(wide);
      const auto [losses, dlogits_bytes] = run(DType::kBF16, dx16.data(), 2);
      const auto [losses32, dlogits32_bytes] = run(DType::kF32, dx32.data(), 4);
      std::vector<BFloat16> dlogits(rows * n);
      std::vector<float> dlogits32(rows * n);
      std::memcpy(dlogits.data(), dlogits_bytes.data(), dlogits_bytes.size());
      std::memcpy(dlogits32.data(), dlogits32_bytes.data(), dlogits32_bytes.size());
      const std::string where =
          path + ", [" + std::to_string(rows) + ", " + std::to_string(n) + "]";
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(losses[r], losses32[r]) << where << " row " << r;
        const std::vector<double> xr(wide.begin() + r * n, wide.begin() + (r + 1) * n);
        const bool ignored = targets[r] == -100;
        ASSERT_NEAR(losses[r], ignored ? 0.0 : ref::CrossEntropy(xr, targets[r]),
                    1e-5 * (1 + std::fabs(losses[r])))
            << where << " row " << r;
        const std::vector<double> p = ref::Softmax(xr);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t i = r * n + j;
          ASSERT_EQ(dlogits[i].bits, BFloat16::FromFloat(dlogits32[i]).bits)
              << where << " dlogits " << i << ": " << dlogits[i].ToFloat() << " from "
              << dlogits32[i];
          const double want = ignored ? 0.0 : (p[j] - (j == targets[r] ? 1.0 : 0.0)) * grad[r];
          ASSERT_LE(std::fabs(dlogits[i].ToFloat() - want),
                    kBf16Roundoff * std::fabs(want) + 1e-5 * (std::fabs(want) + 1e-6) +
                        (j == targets[r] ? 16 * 1.2e-7 * grad[r] : 0))
              << where << " dlogits " << i;
        }
      }
    }
  });
}

// The f32 exp behind the CPU's softmax, over its whole range: in a row [0, x] the
// second output is e / (1 + e) for e = exp(x), which is exactly e once x < -17 (1 + e
// rounds to 1). Within 2 ulp of float64 where exp(x) is a normal float, 0 or a
// subnormal below that.
TEST(SoftmaxCpuTest, ExpIsAccurateOverItsWholeRange) {
  const int64_t count = 100003;
  std::vector<float> x(2 * count, 0.0f), y(2 * count);
  for (int64_t i = 0; i < count; ++i) x[2 * i + 1] = -104.0f * i / (count - 1);
  x[2 * (count - 1) + 1] = -INFINITY;
  ForEachTarget([&](const std::string& target) {
    cpu::Softmax(DType::kF32, count, 2, x.data(), y.data());
    double worst = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double e = std::exp(static_cast<double>(x[2 * i + 1]));
      const double want = e / (1 + e);
      const float got = y[2 * i + 1];
      if (want < std::numeric_limits<float>::min()) {
        ASSERT_LE(got, std::numeric_limits<float>::min()) << target << ", x=" << x[2 * i + 1];
        continue;
      }
      // ulp(want) is 2^-23 * 2^floor(log2 want); two more roundings above x = -17.
      const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
      const double err = std::fabs(got - want) / ulp;
      worst = std::max(worst, err);
      ASSERT_LE(err, x[2 * i + 1] < -17 ? 2.0 : 3.0) << target << ", x=" << x[2 * i + 1];
    }
    EXPECT_EQ(y[2 * count - 1], 0.0f) << target;  // exp(-inf) is exactly 0
    std::cout << target << ": worst " << worst << " ulp\n";
  });
}

TEST(SoftmaxCpuTest, RejectsIntegerDTypes) {
  int32_t i = 0;
  EXPECT_THROW(cpu::Softmax(DType::kI32, 1, 1, &i, &i), Error);
}

}  // namespace
}  // namespace ember::kernels
