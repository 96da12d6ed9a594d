// Reductions (see reduce.h): SIMD sums and extrema in Highway, compiled once per
// target; ArgMax and Var are plain loops.

#include "kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Loads elements [i, n) of x (fewer than a vector) padded with `fill`.
template <class D, typename T = hn::TFromD<D>>
auto LoadTail(D d, const T* x, int64_t i, int64_t n, T fill) {
  HWY_ALIGN T padded[HWY_MAX_BYTES / sizeof(T)];
  std::fill(padded, padded + hn::Lanes(d), fill);
  std::memcpy(padded, x + i, static_cast<size_t>(n - i) * sizeof(T));
  return hn::Load(d, padded);
}

// Sum of n <= kSumBlock contiguous elements (of their squares with kSquares): four
// vector accumulators, then lanes.
template <bool kSquares, typename T>
T SumBlock(const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto add = [](auto v, auto sum) {
    return kSquares ? hn::MulAdd(v, v, sum) : hn::Add(sum, v);
  };
  auto s0 = hn::Zero(d), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    s0 = add(hn::LoadU(d, x + i), s0);
    s1 = add(hn::LoadU(d, x + i + lanes), s1);
    s2 = add(hn::LoadU(d, x + i + 2 * lanes), s2);
    s3 = add(hn::LoadU(d, x + i + 3 * lanes), s3);
  }
  for (; i + lanes <= n; i += lanes) s0 = add(hn::LoadU(d, x + i), s0);
  if (i < n) s1 = add(LoadTail(d, x, i, n, T(0)), s1);
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
}

// Pairwise: split at a block boundary near the middle, so the tree depends on n only.
template <typename T>
T PairwiseSum(const T* x, int64_t n) {
  if (n <= kSumBlock) return SumBlock<false>(x, n);
  const int64_t half = (n / kSumBlock + 1) / 2 * kSumBlock;
  return PairwiseSum(x, half) + PairwiseSum(x + half, n - half);
}

// Blocks of kSumBlock squared in the input's type, the block sums added in double.
template <typename T>
double SumSquaresRange(int64_t n, const T* x) {
  double sum = 0;
  for (int64_t i = 0; i < n; i += kSumBlock)
    sum += SumBlock<true>(x + i, std::min(kSumBlock, n - i));
  return sum;
}

template <typename T, bool kMax>
T Extremum(const T* x, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const T identity =
      kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  auto best = hn::Set(d, identity);
  auto nan = hn::Zero(d);  // a NaN lane marks a NaN seen (x + x keeps NaN, else finite)
  auto step = [&](auto v) {
    best = kMax ? hn::Max(best, v) : hn::Min(best, v);
    nan = hn::IfThenElse(hn::IsNaN(v), v, nan);
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) step(hn::LoadU(d, x + i));
  if (i < n) step(LoadTail(d, x, i, n, identity));
  if (!hn::AllFalse(d, hn::IsNaN(nan))) return std::numeric_limits<T>::quiet_NaN();
  return hn::GetLane(kMax ? hn::MaxOfLanes(d, best) : hn::MinOfLanes(d, best));
}

// out[c] = sum of rows [lo, hi) of column c, pairwise over the rows; scratch holds
// one row per level of the tree.
template <typename T>
void SumColumnRange(const T* x, int64_t ld, int64_t lo, int64_t hi, int64_t cols, T* out,
                    T* scratch) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (hi - lo <= 16) {
    std::memcpy(out, x + lo * ld, static_cast<size_t>(cols) * sizeof(T));
    for (int64_t i = lo + 1; i < hi; ++i) {
      const T* row = x + i * ld;
      int64_t c = 0;
      for (; c + lanes <= cols; c += lanes) {
        hn::StoreU(hn::Add(hn::LoadU(d, out + c), hn::LoadU(d, row + c)), d, out + c);
      }
      for (; c < cols; ++c) out[c] += row[c];
    }
    return;
  }
  const int64_t mid = lo + (hi - lo) / 2;
  SumColumnRange(x, ld, lo, mid, cols, out, scratch + cols);
  SumColumnRange(x, ld, mid, hi, cols, scratch, scratch + cols);
  int64_t c = 0;
  for (; c + lanes <= cols; c += lanes) {
    hn::StoreU(hn::Add(hn::LoadU(d, out + c), hn::LoadU(d, scratch + c)), d, out + c);
  }
  for (; c < cols; ++c) out[c] += scratch[c];
}

// out[c] = sum of all n rows of column c, for cols columns.
template <typename T>
void SumColumnsPairwise(int64_t n, int64_t cols, const T* x, int64_t ld, T* out) {
  if (n == 0) {
    std::fill(out, out + cols, T(0));
    return;
  }
  int64_t levels = 1;  // of the pairwise tree over rows, each needing a scratch row
  for (int64_t m = n; m > 16; m = (m + 1) / 2) ++levels;
  std::vector<T> scratch(static_cast<size_t>(cols * levels));
  SumColumnRange(x, ld, 0, n, cols, out, scratch.data());
}

// The entry points (see reduce.h).

// Splits rows across the pool (each row read once); each chunk calls
// reduce_rows(rows, x, out) with T the compute type.
template <typename ReduceRows>
void SplitRows(const char* op, DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld,
               void* out, const ReduceRows& reduce_rows) {
  DispatchFloat(op, dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, n, [&](int64_t b, int64_t e) {
      reduce_rows(e - b, At<T>(x, b * ld), At<T>(out, b));
    });
  });
}

void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  SplitRows("sum", dtype, rows, n, x, ld, out, [&](int64_t count, const auto* in, auto* result) {
    for (int64_t r = 0; r < count; ++r) result[r] = PairwiseSum(in + r * ld, n);
  });
}

void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  EMBER_CHECK(n >= 1 || rows == 0, "max: cannot reduce an empty row");
  SplitRows("max", dtype, rows, n, x, ld, out, [&](int64_t count, const auto* in, auto* result) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    for (int64_t r = 0; r < count; ++r) result[r] = Extremum<T, true>(in + r * ld, n);
  });
}

void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  EMBER_CHECK(n >= 1 || rows == 0, "min: cannot reduce an empty row");
  SplitRows("min", dtype, rows, n, x, ld, out, [&](int64_t count, const auto* in, auto* result) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    for (int64_t r = 0; r < count; ++r) result[r] = Extremum<T, false>(in + r * ld, n);
  });
}

// Threads take blocks of 64 columns; each sums its columns over all n rows.
void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out) {
  DispatchFloat("sum", dtype, [&](auto type) {
    using T = decltype(type);
    constexpr int64_t kBlock = 64;
    ParallelForWork((cols + kBlock - 1) / kBlock, kBlock * n, [&](int64_t first, int64_t last) {
      const int64_t b = first * kBlock, e = std::min(cols, last * kBlock);
      SumColumnsPairwise(n, e - b, At<T>(x, b), ld, At<T>(out, b));
    });
  });
}

// Fixed chunks (whole blocks), their sums added in chunk order.
void SumSquares(DType dtype, int64_t n, const void* x, double* out) {
  *out = DispatchFloat("sum_squares", dtype, [&](auto type) {
    using T = decltype(type);
    constexpr int64_t kChunk = 256 * kSumBlock;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<double> partial(static_cast<size_t>(chunks));
    ParallelForWork(chunks, kChunk, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const int64_t begin = c * kChunk;
        partial[static_cast<size_t>(c)] =
            SumSquaresRange(std::min(kChunk, n - begin), At<T>(x, begin));
      }
    });
    double sum = 0;
    for (const double p : partial) sum += p;
    return sum;
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(SumRows);
HWY_EXPORT(MaxRows);
HWY_EXPORT(MinRows);
HWY_EXPORT(SumColumns);
HWY_EXPORT(SumSquares);

void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  HWY_DYNAMIC_DISPATCH(SumRows)(dtype, rows, n, x, ld, out);
}
void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  HWY_DYNAMIC_DISPATCH(MaxRows)(dtype, rows, n, x, ld, out);
}
void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  HWY_DYNAMIC_DISPATCH(MinRows)(dtype, rows, n, x, ld, out);
}
void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out) {
  HWY_DYNAMIC_DISPATCH(SumColumns)(dtype, n, cols, x, ld, out);
}
void SumSquares(DType dtype, int64_t n, const void* x, double* out) {
  HWY_DYNAMIC_DISPATCH(SumSquares)(dtype, n, x, out);
}

// The reductions without SIMD code: plain loops, rows split across the pool.

void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out) {
  EMBER_CHECK(n >= 1 || rows == 0, "argmax: cannot reduce an empty row");
  DispatchFloat("argmax", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, n, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = At<T>(x, r * ld);
        int64_t best = 0;
        for (int64_t i = 1; i < n && !std::isnan(row[best]); ++i) {
          if (row[i] > row[best] || std::isnan(row[i])) best = i;
        }
        out[r] = best;
      }
    });
  });
}

void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out) {
  DispatchFloat("var", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, 2 * n, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = At<T>(x, r * ld);
        double mean = 0, squares = 0;
        for (int64_t i = 0; i < n; ++i) mean += row[i];
        mean /= n;
        for (int64_t i = 0; i < n; ++i) squares += (row[i] - mean) * (row[i] - mean);
        // n - correction <= 0 gives inf or NaN, as in PyTorch.
        At<T>(out)[r] = static_cast<T>(squares / static_cast<double>(n - correction));
      }
    });
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
