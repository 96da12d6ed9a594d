// Softmax, log-softmax and cross entropy (see softmax.h): Highway SIMD row loops,
// compiled once per target.

#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/internal/exp-inl.h"
#include "kernels/cpu/internal/map-inl.h"
#include "kernels/cpu/internal/softmax-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using internal::HWY_NAMESPACE::Accumulate;
using internal::HWY_NAMESPACE::ExpNonPositive;
using internal::HWY_NAMESPACE::LoadWide;
using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::RowMax;
using internal::HWY_NAMESPACE::SumExp;

// Sum over the row of f(d, x_j) (padded lanes excluded) in Compute<T>, two
// accumulators.
template <typename T, class F>
internal::Compute<T> RowSum(const T* x, int64_t n, const F& f) {
  using C = internal::Compute<T>;
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto s0 = hn::Zero(d), s1 = s0;
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    s0 = hn::Add(s0, f(d, LoadWide(d, x + i)));
    s1 = hn::Add(s1, f(d, LoadWide(d, x + i + lanes)));
  }
  for (; i + lanes <= n; i += lanes) s0 = hn::Add(s0, f(d, LoadWide(d, x + i)));
  C sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  if (i < n) {  // the tail: through a padded vector, keeping only the valid lanes
    T padded[HWY_MAX_BYTES / sizeof(C)] = {};
    HWY_ALIGN C values[HWY_MAX_BYTES / sizeof(C)];
    std::copy(x + i, x + n, padded);
    hn::Store(f(d, LoadWide(d, padded)), d, values);
    for (int64_t j = 0; j < n - i; ++j) sum += values[j];
  }
  return sum;
}

// y = exp(x - m) / sum. f32 and f64 keep the exponentials in y and scale them; bf16
// computes them again from x, so that each y is rounded once.
template <typename T, typename C = internal::Compute<T>>
void SoftmaxRows(int64_t rows, int64_t n, const T* x, T* y) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const C m = RowMax(x, n);
    if (std::isinf(m) && m < 0) {  // every entry -inf: no distribution; NaN as PyTorch
      std::fill(y, y + n, Convert<T>(std::numeric_limits<C>::quiet_NaN()));
      continue;
    }
    if constexpr (std::is_same_v<T, C>) {
      const C inverse = C(1) / SumExp(x, n, m, y);
      Map(
          n, y, [inverse](auto d, auto v) { return hn::Mul(v, hn::Set(d, inverse)); }, y);
    } else {
      const C inverse = C(1) / SumExp(x, n, m, static_cast<T*>(nullptr));
      Map(
          n, y,
          [m, inverse](auto d, auto v) {
            return hn::Mul(ExpNonPositive(d, hn::Sub(v, hn::Set(d, m))), hn::Set(d, inverse));
          },
          x);
    }
  }
}

// y = (x - m) - log(sum).
template <typename T, typename C = internal::Compute<T>>
void LogSoftmaxRows(int64_t rows, int64_t n, const T* x, T* y) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const C m = RowMax(x, n);
    const C log_sum = std::log(SumExp(x, n, m, static_cast<T*>(nullptr)));
    Map(
        n, y,
        [m, log_sum](auto d, auto v) {
          return hn::Sub(hn::Sub(v, hn::Set(d, m)), hn::Set(d, log_sum));
        },
        x);
  }
}

template <typename T, typename C = internal::Compute<T>>
void SoftmaxBackwardRows(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t r = 0; r < rows; ++r, y += n, dy += n, dx += n) {
    const C dot = Accumulate(
        n, dy, y, [](auto, auto g, auto yv) { return hn::Mul(g, yv); },
        [](C g, C yv) { return g * yv; });  // sum_j dy_j y_j
    Map(
        n, dx, [dot](auto d, auto yv, auto g) { return hn::Mul(yv, hn::Sub(g, hn::Set(d, dot))); },
        y, dy);
  }
}

template <typename T, typename C = internal::Compute<T>>
void LogSoftmaxBackwardRows(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t r = 0; r < rows; ++r, y += n, dy += n, dx += n) {
    const C sum = RowSum(dy, n, [](auto, auto v) { return v; });
    Map(
        n, dx,
        [sum](auto d, auto yv, auto g) {
          return hn::NegMulAdd(hn::Exp(d, yv), hn::Set(d, sum), g);
        },
        y, dy);
  }
}

// loss = lse - x_t = (m - x_t) + log(sum): the large terms cancel exactly first. Logits
// of type T; the row statistics in C = Compute<T>.
template <typename T, typename C = internal::Compute<T>>
void CrossEntropyForwardRows(int64_t rows, int64_t n, int64_t classes, const T* x,
                             const int64_t* targets, int64_t ignore_index, C* losses, C* row_max,
                             C* sum_exp) {
  for (int64_t r = 0; r < rows; ++r, x += n) {
    row_max[r] = RowMax(x, classes);
    sum_exp[r] = SumExp(x, classes, row_max[r], static_cast<T*>(nullptr));
    const int64_t t = targets[r];
    losses[r] = t == ignore_index       ? C(0)
                : t < 0 || t >= classes ? std::numeric_limits<C>::quiet_NaN()
                                        : (row_max[r] - Convert<C>(x[t])) + std::log(sum_exp[r]);
  }
}

// dx = exp(x - m) * (grad / sum) - grad [j == t], computed in C and stored as T once
// (the target's entry too: its p_t scale is the same lane function's, before rounding).
// dx may be x: the target's logit is read before the row is written. The padding
// (j >= classes) gets zeros.
template <typename T, typename C = internal::Compute<T>>
void CrossEntropyBackwardRows(int64_t rows, int64_t n, int64_t classes, const T* x,
                              const int64_t* targets, int64_t ignore_index, const C* row_max,
                              const C* sum_exp, const C* grad, T* dx) {
  const hn::ScalableTag<C> d;
  for (int64_t r = 0; r < rows; ++r, x += n, dx += n) {
    if (targets[r] == ignore_index) {
      std::fill(dx, dx + n, Convert<T>(0.0));
      continue;
    }
    if (targets[r] < 0 || targets[r] >= classes) {
      std::fill(dx, dx + n, Convert<T>(std::numeric_limits<C>::quiet_NaN()));
      continue;
    }
    const C m = row_max[r], scale = grad[r] / sum_exp[r], x_target = Convert<C>(x[targets[r]]);
    auto term = [m, scale](auto d, auto v) {
      return hn::Mul(ExpNonPositive(d, hn::Sub(v, hn::Set(d, m))), hn::Set(d, scale));
    };
    Map(classes, dx, term, x);
    std::fill(dx + classes, dx + n, Convert<T>(0.0));
    const C target = hn::GetLane(term(d, hn::Set(d, x_target)));
    dx[targets[r]] = Convert<T>(target - grad[r]);
  }
}

// The entry points (see softmax.h): rows split across the pool, each row passed over
// two or three times.
void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  DispatchFloatOrBf16("softmax", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      SoftmaxRows(e - b, n, At<T>(x, b * n), At<T>(y, b * n));
    });
  });
}

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  DispatchFloatOrBf16("log_softmax", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      LogSoftmaxRows(e - b, n, At<T>(x, b * n), At<T>(y, b * n));
    });
  });
}

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  DispatchFloatOrBf16("softmax_backward", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      SoftmaxBackwardRows(e - b, n, At<T>(y, b * n), At<T>(dy, b * n), At<T>(dx, b * n));
    });
  });
}

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  DispatchFloatOrBf16("log_softmax_backward", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      LogSoftmaxBackwardRows(e - b, n, At<T>(y, b * n), At<T>(dy, b * n), At<T>(dx, b * n));
    });
  });
}

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  DispatchFloatOrBf16("cross_entropy", dtype, [&](auto type) {
    using T = decltype(type);
    using C = internal::Compute<T>;
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      CrossEntropyForwardRows(e - b, n, classes, At<T>(logits, b * n), targets + b, ignore_index,
                              At<C>(losses, b), At<C>(row_max, b), At<C>(sum_exp, b));
    });
  });
}

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  DispatchFloatOrBf16("cross_entropy_backward", dtype, [&](auto type) {
    using T = decltype(type);
    using C = internal::Compute<T>;
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      CrossEntropyBackwardRows(e - b, n, classes, At<T>(logits, b * n), targets + b, ignore_index,
                               At<C>(row_max, b), At<C>(sum_exp, b), At<C>(grad, b),
                               At<T>(dlogits, b * n));
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(Softmax);
HWY_EXPORT(LogSoftmax);
HWY_EXPORT(SoftmaxBackward);
HWY_EXPORT(LogSoftmaxBackward);
HWY_EXPORT(CrossEntropyForward);
HWY_EXPORT(CrossEntropyBackward);

void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  HWY_DYNAMIC_DISPATCH(Softmax)(dtype, rows, n, x, y);
}

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  HWY_DYNAMIC_DISPATCH(LogSoftmax)(dtype, rows, n, x, y);
}

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  HWY_DYNAMIC_DISPATCH(SoftmaxBackward)(dtype, rows, n, y, dy, dx);
}

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  HWY_DYNAMIC_DISPATCH(LogSoftmaxBackward)(dtype, rows, n, y, dy, dx);
}

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  HWY_DYNAMIC_DISPATCH(CrossEntropyForward)
  (dtype, rows, n, classes, logits, targets, ignore_index, losses, row_max, sum_exp);
}

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  HWY_DYNAMIC_DISPATCH(CrossEntropyBackward)
  (dtype, rows, n, classes, logits, targets, ignore_index, row_max, sum_exp, grad, dlogits);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
