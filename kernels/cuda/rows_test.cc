// The row-wise families (reduce, softmax and cross entropy, causal attention; LayerNorm
// and the embedding have their tables in kernels/) on both backends against the
// float64 reference in kernels/reference, on shapes with one row, many rows, rows
// shorter and longer than a CUDA block, in f32 and f64. The CUDA half skips, saying
// why, without a GPU.

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"
#include "kernels/reference/attention.h"
#include "kernels/reference/reduce.h"
#include "kernels/reference/softmax.h"
#include "kernels/testing.h"

namespace ember::kernels::cuda {
namespace {

namespace ref = ::ember::kernels::reference;

struct RowShape {
  int64_t rows, n;
};
// Rows of up to 1024 (a warp a row for softmax) and longer ones (a block a row).
const std::vector<RowShape> kShapes = {{1, 1},     {1, 1000}, {3, 7},    {70, 256},
                                       {5, 50257}, {300, 33}, {2, 1024}, {2, 1025}};

template <typename T>
double Tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-13;
}

// |got - want| <= tol (|want| + scale): scale is the size of the terms that were
// summed, since a sum can cancel.
#define EXPECT_CLOSE(got, want, tol, scale, ...) \
  EXPECT_LE(std::fabs((got) - (want)), (tol) * (std::fabs(want) + (scale))) << __VA_ARGS__

template <typename B, typename T>
void CheckReductions() {
  std::mt19937 rng(4);
  for (const RowShape& s : kShapes) {
    const int64_t ld = s.n + 3;  // rows apart by more than their length
    std::vector<T> x = RandomVector<T>(s.rows * ld, -10, 10, rng);
    const typename B::Buffer dx(x), sum(s.rows * sizeof(T)), max(s.rows * sizeof(T)),
        min(s.rows * sizeof(T)), var(s.rows * sizeof(T)), argmax(s.rows * sizeof(int64_t));
    B::SumRows(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, sum.data());
    B::MaxRows(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, max.data());
    B::MinRows(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, min.data());
    B::VarRows(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, 1, var.data());
    B::ArgMaxRows(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, argmax.template as<int64_t>());
    const std::vector<T> got_sum = sum.template ToHost<T>(), got_max = max.template ToHost<T>(),
                         got_min = min.template ToHost<T>(), got_var = var.template ToHost<T>();
    const std::vector<int64_t> got_argmax = argmax.template ToHost<int64_t>();
    for (int64_t r = 0; r < s.rows; ++r) {
      const T* row = x.data() + r * ld;
      const double abs_sum = static_cast<double>(ref::AbsSum(row, s.n));
      EXPECT_CLOSE(got_sum[r], static_cast<double>(ref::Sum(row, s.n)), Tolerance<T>(), abs_sum,
                   "sum row " << r << " of [" << s.rows << ", " << s.n << "]");
      EXPECT_EQ(got_max[r], ref::Max(row, s.n)) << "max row " << r;
      EXPECT_EQ(got_min[r], ref::Min(row, s.n)) << "min row " << r;
      EXPECT_EQ(got_argmax[r], ref::ArgMax(row, s.n)) << "argmax row " << r;
      if (s.n > 1) {
        EXPECT_CLOSE(got_var[r], static_cast<double>(ref::Var(row, s.n, 1)), Tolerance<T>(), 0,
                     "var row " << r);
      }
    }
    // Down the columns, and the whole sum of squares.
    const typename B::Buffer columns(s.n * sizeof(T));
    B::SumColumns(kDTypeOf<T>, s.rows, s.n, dx.data(), ld, columns.data());
    const std::vector<T> got_columns = columns.template ToHost<T>();
    for (int64_t j = 0; j < s.n; ++j) {
      double want = 0, scale = 0;
      for (int64_t r = 0; r < s.rows; ++r) {
        want += x[r * ld + j];
        scale += std::fabs(x[r * ld + j]);
      }
      EXPECT_CLOSE(got_columns[j], want, Tolerance<T>(), scale, "column " << j);
    }
    // (The CPU squares in the input's type: f32's rounding.)
    const double squares = B::SumSquares(kDTypeOf<T>, s.rows * ld, dx.data());
    EXPECT_CLOSE(squares, static_cast<double>(ref::SumSquares(x.data(), s.rows * ld)),
                 Tolerance<T>(), 0, "sum of squares");
  }
}

EMBER_BACKEND_TEST_SUITE(RowsTest);

TYPED_TEST(RowsTest, ReductionsOverRowsColumnsAndSquaresMatchTheReference) {
  CheckReductions<TypeParam, float>();
  CheckReductions<TypeParam, double>();
}

TYPED_TEST(RowsTest, NaNWinsMaxAndArgMaxAsInPyTorch) {
  using B = TypeParam;
  const std::vector<float> x = {1, 5, NAN, 5, NAN, 2};
  const typename B::Buffer dx(x), max(sizeof(float)), argmax(sizeof(int64_t));
  B::MaxRows(DType::kF32, 1, 6, dx.data(), 6, max.data());
  B::ArgMaxRows(DType::kF32, 1, 6, dx.data(), 6, argmax.template as<int64_t>());
  EXPECT_TRUE(std::isnan(max.template ToHost<float>()[0]));
  EXPECT_EQ(argmax.template ToHost<int64_t>()[0], 2);
}

template <typename B, typename T>
void CheckSoftmaxFamily() {
  std::mt19937 rng(9);
  for (const RowShape& s : kShapes) {
    const std::vector<T> x = RandomVector<T>(s.rows * s.n, -30, 30, rng);
    const std::vector<T> dy = RandomVector<T>(s.rows * s.n, -1, 1, rng);
    std::vector<int64_t> targets(s.rows);
    for (int64_t r = 0; r < s.rows; ++r) targets[r] = r % 4 == 3 ? -100 : rng() % s.n;
    const std::vector<T> grad = RandomVector<T>(s.rows, 0.5, 2, rng);
    const int64_t bytes = s.rows * s.n * sizeof(T);
    const typename B::Buffer dx(x), ddy(dy), dtargets(targets), dgrad(grad), y(bytes), log_y(bytes),
        dsoft(bytes), dlog(bytes), losses(s.rows * sizeof(T)), row_max(s.rows * sizeof(T)),
        sum_exp(s.rows * sizeof(T)), dlogits(bytes);
    const DType dtype = kDTypeOf<T>;
    B::Softmax(dtype, s.rows, s.n, dx.data(), y.data());
    B::LogSoftmax(dtype, s.rows, s.n, dx.data(), log_y.data());
    B::SoftmaxBackward(dtype, s.rows, s.n, y.data(), ddy.data(), dsoft.data());
    B::LogSoftmaxBackward(dtype, s.rows, s.n, log_y.data(), ddy.data(), dlog.data());
    B::CrossEntropyForward(dtype, s.rows, s.n, dx.data(), dtargets.template as<int64_t>(), -100,
                           losses.data(), row_max.data(), sum_exp.data());
    B::CrossEntropyBackward(dtype, s.rows, s.n, dx.data(), dtargets.template as<int64_t>(), -100,
                            row_max.data(), sum_exp.data(), dgrad.data(), dlogits.data());
    const std::vector<T> got_y = y.template ToHost<T>(), got_log = log_y.template ToHost<T>(),
                         got_dsoft = dsoft.template ToHost<T>(),
                         got_dlog = dlog.template ToHost<T>(),
                         got_loss = losses.template ToHost<T>(),
                         got_dlogits = dlogits.template ToHost<T>();
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    for (int64_t r = 0; r < s.rows; ++r) {
      const std::vector<double> xr(x.begin() + r * s.n, x.begin() + (r + 1) * s.n);
      const std::vector<double> dyr(dy.begin() + r * s.n, dy.begin() + (r + 1) * s.n);
      const std::vector<double> want_y = ref::Softmax(xr), want_log = ref::LogSoftmax(xr);
      // The backward references sum the full Jacobian (n^2): rows of the vocabulary's
      // length check the forward and cross entropy only.
      const bool backward = s.n <= 4096;
      const std::vector<double> want_dsoft = backward ? ref::SoftmaxBackward(xr, dyr) : want_y;
      const std::vector<double> want_dlog = backward ? ref::LogSoftmaxBackward(xr, dyr) : want_y;
      const bool ignored = targets[r] == -100;
      EXPECT_CLOSE(got_loss[r], ignored ? 0.0 : ref::CrossEntropy(xr, targets[r]), tol, 1,
                   "loss row " << r);
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t i = r * s.n + j;
        EXPECT_CLOSE(got_y[i], want_y[j], tol, 1e-30, "softmax " << r << "," << j);
        EXPECT_CLOSE(got_log[i], want_log[j], tol, 1, "log_softmax " << r << "," << j);
        if (backward) {
          // dx = y (dy - sum dy y): its error scales with y, not with dx.
          EXPECT_CLOSE(got_dsoft[i], want_dsoft[j], tol, 2 * want_y[j],
                       "softmax backward " << r << "," << j);
          EXPECT_CLOSE(got_dlog[i], want_dlog[j], tol, 1, "log_softmax backward " << r << "," << j);
        }
        const double want_dlogits =
            ignored ? 0.0 : (want_y[j] - (j == targets[r] ? 1.0 : 0.0)) * grad[r];
        EXPECT_CLOSE(got_dlogits[i], want_dlogits, tol, 1e-6, "dlogits " << r << "," << j);
      }
    }
  }
}

TYPED_TEST(RowsTest, TheSoftmaxFamilyMatchesTheReference) {
  CheckSoftmaxFamily<TypeParam, float>();
  CheckSoftmaxFamily<TypeParam, double>();
}

// Causal attention: one query, a cache of earlier keys (tq < tk), rows past a CUDA
// block and past the CPU's blocks of 48 query rows, a width that is no vector's. With
// `tf32` (CUDA only), f32 heads of d = 64 under SetAllowTf32, whose forward and backward
// run on tensor cores: within TF32's rounding (inputs to 10-bit mantissas; 1e-2 is far
// below what a wrong tile or mask gives) and measurably off f32's result.
template <typename B, typename T>
void CheckCausalAttention(bool tf32 = false) {
  struct Shape {
    int64_t batch, tq, tk, d;
  };
  std::mt19937 rng(12);
  // d = 32 and 64 fill the CUDA kernels' head width: their tiles are copied as 16-byte
  // vectors (cp.async), the others element by element.
  const std::vector<Shape> shapes =
      tf32 ? std::vector<Shape>{{2, 200, 330, 64},
                                {1, 129, 129, 64},
                                {3, 1, 300, 64},
                                {1, 64, 64, 64}}
           : std::vector<Shape>{{2, 1, 1, 4},     {3, 1, 300, 16},   {2, 60, 70, 33},
                                {4, 300, 300, 8}, {2, 200, 330, 64}, {1, 129, 129, 32}};
  double y_error = 0, dq_error = 0;  // the largest |y - y_ref| / (1 + |y_ref|), and dq's
  for (const Shape& s : shapes) {
    const std::vector<T> q = RandomVector<T>(s.batch * s.tq * s.d, -1, 1, rng),
                         k = RandomVector<T>(s.batch * s.tk * s.d, -1, 1, rng),
                         v = RandomVector<T>(s.batch * s.tk * s.d, -1, 1, rng),
                         dy = RandomVector<T>(s.batch * s.tq * s.d, -1, 1, rng);
    const int64_t q_bytes = q.size() * sizeof(T), k_bytes = k.size() * sizeof(T);
    const typename B::Buffer dq_in(q), dk_in(k), dv_in(v), ddy(dy), y(q_bytes),
        lse(s.batch * s.tq * sizeof(T)), dq(q_bytes), dk(k_bytes), dv(k_bytes);
    SetAllowTf32(tf32);
    B::CausalAttentionForward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, dq_in.data(), dk_in.data(),
                              dv_in.data(), y.data(), lse.data());
    B::CausalAttentionBackward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, dq_in.data(), dk_in.data(),
                               dv_in.data(), y.data(), lse.data(), ddy.data(), dq.data(), dk.data(),
                               dv.data());
    SetAllowTf32(false);
    const std::vector<T> got_y = y.template ToHost<T>(), got_lse = lse.template ToHost<T>(),
                         got_dq = dq.template ToHost<T>(), got_dk = dk.template ToHost<T>(),
                         got_dv = dv.template ToHost<T>();
    const double tol = tf32 ? 1e-2 : std::is_same_v<T, float> ? 2e-5 : 1e-12;
    for (int64_t b = 0; b < s.batch; ++b) {
      auto head = [&](const std::vector<T>& x, int64_t t) {
        return std::vector<double>(x.begin() + b * t * s.d, x.begin() + (b + 1) * t * s.d);
      };
      const ref::AttentionOutput want = ref::CausalAttention(
          ref::AttentionHead{s.tq, s.tk, s.d, head(q, s.tq), head(k, s.tk), head(v, s.tk)},
          head(dy, s.tq));
      auto check = [&](const char* name, const std::vector<T>& got, int64_t offset,
                       const std::vector<double>& expected) {
        for (size_t i = 0; i < expected.size(); ++i) {
          ASSERT_NEAR(got[offset + i], expected[i], tol * (1 + std::fabs(expected[i])))
              << name << "[" << i << "] of head " << b << ", tq=" << s.tq << " tk=" << s.tk
              << " d=" << s.d;
        }
      };
      check("y", got_y, b * s.tq * s.d, want.y);
      for (size_t i = 0; i < want.y.size(); ++i) {
        y_error = std::max(
            y_error, std::fabs(got_y[b * s.tq * s.d + i] - want.y[i]) / (1 + std::fabs(want.y[i])));
        dq_error = std::max(dq_error, std::fabs(got_dq[b * s.tq * s.d + i] - want.dq[i]) /
                                          (1 + std::fabs(want.dq[i])));
      }
      check("lse", got_lse, b * s.tq, want.lse);
      check("dq", got_dq, b * s.tq * s.d, want.dq);
      check("dk", got_dk, b * s.tk * s.d, want.dk);
      check("dv", got_dv, b * s.tk * s.d, want.dv);
    }
  }
  if (tf32) {
    EXPECT_GT(y_error, 1e-5) << "TF32 allowed, but the forward's products are f32's";
    EXPECT_GT(dq_error, 1e-5) << "TF32 allowed, but the backward's products are f32's";
  }
}

TYPED_TEST(RowsTest, CausalAttentionForwardAndBackwardMatchTheReference) {
  CheckCausalAttention<TypeParam, float>();
  CheckCausalAttention<TypeParam, double>();
}

TEST(RowsTf32Test, CausalAttentionOnTensorCoresIsWithinTf32sRounding) {
  using B = internal::CudaBackend;
  if (const std::string why = B::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  CheckCausalAttention<B, float>(/*tf32=*/true);
}

}  // namespace
}  // namespace ember::kernels::cuda
