// Softmax, log-softmax and cross entropy (see softmax.h): Highway SIMD row loops,
// compiled once per target.

#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "kernels/cpu/internal/check.h"
#include "kernels/cpu/thread_pool.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/internal/exp-inl.h"
#include "kernels/cpu/internal/map-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using internal::HWY_NAMESPACE::Accumulate;
using internal::HWY_NAMESPACE::ExpNonPositive;
using internal::HWY_NAMESPACE::Map;

// Sum over the row of f(d, x_j) (padded lanes excluded), four accumulators.
template <typename T, class F>
T RowSum(const T* x, int64_t n, const F& f) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto s0 = hn::Zero(d), s1 = s0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    s0 = hn::Add(s0, f(d, hn::LoadU(d, x + i)));
    s1 = hn::Add(s1, f(d, hn::LoadU(d, x + i + lanes)));
  }
  for (; i + lanes <= n; i += lanes) s0 = hn::Add(s0, f(d, hn::LoadU(d, x + i)));
  T sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  if (i < n) {  // the tail: through a padded vector, keeping only the valid lanes
    HWY_ALIGN T padded[HWY_MAX_BYTES / sizeof(T)] = {};
    HWY_ALIGN T values[HWY_MAX_BYTES / sizeof(T)];
    std::copy(x + i, x + n, padded);
    hn::Store(f(d, hn::Load(d, padded)), d, values);
    for (int64_t j = 0; j < n - i; ++j) sum += values[j];
  }
  return sum;
}

template <typename T>
T RowMax(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Four running maxima: one would wait on the latency of each Max in turn.
  auto b0 = hn::Set(d, m), b1 = b0, b2 = b0, b3 = b0;
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    b0 = hn::Max(b0, hn::LoadU(d, x + i));
    b1 = hn::Max(b1, hn::LoadU(d, x + i + lanes));
    b2 = hn::Max(b2, hn::LoadU(d, x + i + 2 * lanes));
    b3 = hn::Max(b3, hn::LoadU(d, x + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) b0 = hn::Max(b0, hn::LoadU(d, x + i));
  m = hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(b0, b1), hn::Max(b2, b3))));
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// sum_j exp(x_j - m) for the row maximum m; with `store`, exp(x_j - m) is also
// written to store[j]. Subtracting m is exact for the values that matter (those
// within a factor 2 of m), which keeps the result accurate even for large logits.
template <typename T>
T SumExp(const T* x, int64_t n, T m, T* store) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto shift = hn::Set(d, m);
  auto s0 = hn::Zero(d), s1 = s0;
  int64_t i = 0;
  // Two independent exp chains per iteration keep both FMA ports busy.
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto e0 = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), shift));
    const auto e1 = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i + lanes), shift));
    if (store) {
      hn::StoreU(e0, d, store + i);
      hn::StoreU(e1, d, store + i + lanes);
    }
    s0 = hn::Add(s0, e0);
    s1 = hn::Add(s1, e1);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), shift));
    if (store) hn::StoreU(e, d, store + i);
    s0 = hn::Add(s0, e);
  }
  T sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  if (i < n) {  // the tail through a padded vector; padding is -inf, so exp gives 0
    HWY_ALIGN T padded[HWY_MAX_BYTES / sizeof(T)];
    HWY_ALIGN T values[HWY_MAX_BYTES / sizeof(T)];
    std::fill(padded, padded + lanes, -std::numeric_limits<T>::infinity());
    std::copy(x + i, x + n, padded);
    hn::Store(ExpNonPositive(d, hn::Sub(hn::Load(d, padded), shift)), d, values);
    for (int64_t j = 0; j < n - i; ++j) {
      sum += values[j];
      if (store) store[i + j] = values[j];
    }
  }
  return sum;
}

// y = exp(x - m) / sum.
template <typename T>
void SoftmaxImpl(int64_t rows, int64_t n, const T* x, T* y) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const T m = RowMax(x, n);
    if (std::isinf(m) && m < 0) {  // every entry -inf: no distribution; NaN as PyTorch
      std::fill(y, y + n, std::numeric_limits<T>::quiet_NaN());
      continue;
    }
    const T inverse = T(1) / SumExp(x, n, m, y);
    Map(
        n, y, [inverse](auto d, auto v) { return hn::Mul(v, hn::Set(d, inverse)); }, y);
  }
}

// y = (x - m) - log(sum).
template <typename T>
void LogSoftmaxImpl(int64_t rows, int64_t n, const T* x, T* y) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const T m = RowMax(x, n);
    const T log_sum = std::log(SumExp(x, n, m, static_cast<T*>(nullptr)));
    Map(
        n, y,
        [m, log_sum](auto d, auto v) {
          return hn::Sub(hn::Sub(v, hn::Set(d, m)), hn::Set(d, log_sum));
        },
        x);
  }
}

template <typename T>
void SoftmaxBackwardImpl(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t r = 0; r < rows; ++r, y += n, dy += n, dx += n) {
    const T dot = Accumulate(
        n, dy, y, [](auto, auto g, auto yv) { return hn::Mul(g, yv); },
        [](T g, T yv) { return g * yv; });  // sum_j dy_j y_j
    Map(
        n, dx, [dot](auto d, auto yv, auto g) { return hn::Mul(yv, hn::Sub(g, hn::Set(d, dot))); },
        y, dy);
  }
}

template <typename T>
void LogSoftmaxBackwardImpl(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t r = 0; r < rows; ++r, y += n, dy += n, dx += n) {
    const T sum = RowSum(dy, n, [](auto, auto v) { return v; });
    Map(
        n, dx,
        [sum](auto d, auto yv, auto g) {
          return hn::NegMulAdd(hn::Exp(d, yv), hn::Set(d, sum), g);
        },
        y, dy);
  }
}

// loss = lse - x_t = (m - x_t) + log(sum): the large terms cancel exactly first.
template <typename T>
void CrossEntropyForwardImpl(int64_t rows, int64_t n, const T* x, const int64_t* targets,
                             int64_t ignore_index, T* losses, T* row_max, T* sum_exp) {
  for (int64_t r = 0; r < rows; ++r, x += n) {
    row_max[r] = RowMax(x, n);
    sum_exp[r] = SumExp(x, n, row_max[r], static_cast<T*>(nullptr));
    losses[r] =
        targets[r] == ignore_index ? T(0) : (row_max[r] - x[targets[r]]) + std::log(sum_exp[r]);
  }
}

// dx = exp(x - m) * (grad / sum) - grad [j == t].
template <typename T>
void CrossEntropyBackwardImpl(int64_t rows, int64_t n, const T* x, const int64_t* targets,
                              int64_t ignore_index, const T* row_max, const T* sum_exp,
                              const T* grad, T* dx) {
  for (int64_t r = 0; r < rows; ++r, x += n, dx += n) {
    if (targets[r] == ignore_index) {
      std::fill(dx, dx + n, T(0));
      continue;
    }
    const T m = row_max[r], scale = grad[r] / sum_exp[r];
    Map(
        n, dx,
        [m, scale](auto d, auto v) {
          return hn::Mul(ExpNonPositive(d, hn::Sub(v, hn::Set(d, m))), hn::Set(d, scale));
        },
        x);
    dx[targets[r]] -= grad[r];
  }
}

void SoftmaxF32(int64_t rows, int64_t n, const float* x, float* y) { SoftmaxImpl(rows, n, x, y); }
void SoftmaxF64(int64_t rows, int64_t n, const double* x, double* y) { SoftmaxImpl(rows, n, x, y); }
void LogSoftmaxF32(int64_t rows, int64_t n, const float* x, float* y) {
  LogSoftmaxImpl(rows, n, x, y);
}
void LogSoftmaxF64(int64_t rows, int64_t n, const double* x, double* y) {
  LogSoftmaxImpl(rows, n, x, y);
}
void SoftmaxBackwardF32(int64_t rows, int64_t n, const float* y, const float* dy, float* dx) {
  SoftmaxBackwardImpl(rows, n, y, dy, dx);
}
void SoftmaxBackwardF64(int64_t rows, int64_t n, const double* y, const double* dy, double* dx) {
  SoftmaxBackwardImpl(rows, n, y, dy, dx);
}
void LogSoftmaxBackwardF32(int64_t rows, int64_t n, const float* y, const float* dy, float* dx) {
  LogSoftmaxBackwardImpl(rows, n, y, dy, dx);
}
void LogSoftmaxBackwardF64(int64_t rows, int64_t n, const double* y, const double* dy, double* dx) {
  LogSoftmaxBackwardImpl(rows, n, y, dy, dx);
}
void CrossEntropyForwardF32(int64_t rows, int64_t n, const float* x, const int64_t* t,
                            int64_t ignore, float* losses, float* row_max, float* sum_exp) {
  CrossEntropyForwardImpl(rows, n, x, t, ignore, losses, row_max, sum_exp);
}
void CrossEntropyForwardF64(int64_t rows, int64_t n, const double* x, const int64_t* t,
                            int64_t ignore, double* losses, double* row_max, double* sum_exp) {
  CrossEntropyForwardImpl(rows, n, x, t, ignore, losses, row_max, sum_exp);
}
void CrossEntropyBackwardF32(int64_t rows, int64_t n, const float* x, const int64_t* t,
                             int64_t ignore, const float* row_max, const float* sum_exp,
                             const float* grad, float* dx) {
  CrossEntropyBackwardImpl(rows, n, x, t, ignore, row_max, sum_exp, grad, dx);
}
void CrossEntropyBackwardF64(int64_t rows, int64_t n, const double* x, const int64_t* t,
                             int64_t ignore, const double* row_max, const double* sum_exp,
                             const double* grad, double* dx) {
  CrossEntropyBackwardImpl(rows, n, x, t, ignore, row_max, sum_exp, grad, dx);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {
namespace {

constexpr int64_t kGrain = 16384;  // elements per thread, at least

// Splits rows across the pool and calls f32 or f64 with row offsets applied: `fn`
// gets (begin, end, float tag) and does the pointer arithmetic itself.
template <typename Fn>
void SplitRows(const char* op, DType dtype, int64_t rows, int64_t n, const Fn& fn) {
  internal::CheckFloatDType(op, dtype);
  ParallelFor(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)),
              [&](int64_t b, int64_t e) {
                if (dtype == DType::kF32) {
                  fn(b, e, float());
                } else {
                  fn(b, e, double());
                }
              });
}

template <typename T>
const T* At(const void* p, int64_t offset) {
  return static_cast<const T*>(p) + offset;
}
template <typename T>
T* At(void* p, int64_t offset) {
  return static_cast<T*>(p) + offset;
}

}  // namespace

// Calls the f32 or the f64 export of Name, as T is float or double.
#define EMBER_CALL_TYPED(Name, T, ...)              \
  do {                                              \
    if constexpr (std::is_same_v<T, float>) {       \
      HWY_DYNAMIC_DISPATCH(Name##F32)(__VA_ARGS__); \
    } else {                                        \
      HWY_DYNAMIC_DISPATCH(Name##F64)(__VA_ARGS__); \
    }                                               \
  } while (0)

HWY_EXPORT(SoftmaxF32);
HWY_EXPORT(SoftmaxF64);
HWY_EXPORT(LogSoftmaxF32);
HWY_EXPORT(LogSoftmaxF64);
HWY_EXPORT(SoftmaxBackwardF32);
HWY_EXPORT(SoftmaxBackwardF64);
HWY_EXPORT(LogSoftmaxBackwardF32);
HWY_EXPORT(LogSoftmaxBackwardF64);
HWY_EXPORT(CrossEntropyForwardF32);
HWY_EXPORT(CrossEntropyForwardF64);
HWY_EXPORT(CrossEntropyBackwardF32);
HWY_EXPORT(CrossEntropyBackwardF64);

void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  SplitRows("softmax", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(Softmax, T, e - b, n, At<T>(x, b * n), At<T>(y, b * n));
  });
}

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  SplitRows("log_softmax", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(LogSoftmax, T, e - b, n, At<T>(x, b * n), At<T>(y, b * n));
  });
}

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  SplitRows("softmax_backward", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(SoftmaxBackward, T, e - b, n, At<T>(y, b * n), At<T>(dy, b * n),
                     At<T>(dx, b * n));
  });
}

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  SplitRows("log_softmax_backward", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(LogSoftmaxBackward, T, e - b, n, At<T>(y, b * n), At<T>(dy, b * n),
                     At<T>(dx, b * n));
  });
}

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  SplitRows("cross_entropy", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(CrossEntropyForward, T, e - b, n, At<T>(logits, b * n), targets + b,
                     ignore_index, At<T>(losses, b), At<T>(row_max, b), At<T>(sum_exp, b));
  });
}

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  SplitRows("cross_entropy_backward", dtype, rows, n, [&](int64_t b, int64_t e, auto tag) {
    using T = decltype(tag);
    EMBER_CALL_TYPED(CrossEntropyBackward, T, e - b, n, At<T>(logits, b * n), targets + b,
                     ignore_index, At<T>(row_max, b), At<T>(sum_exp, b), At<T>(grad, b),
                     At<T>(dlogits, b * n));
  });
}

#undef EMBER_CALL_TYPED

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
