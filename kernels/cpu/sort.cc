// Sorting rows (see sort.h): a stable sort of each row's indices, the rows split among
// the pool's threads. No SIMD code: comparisons branch on the data.

#include "kernels/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

namespace ember::kernels::cpu {
namespace {

// Whether a belongs strictly before b ascending: NaN above every number.
template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

}  // namespace

void SortRows(DType dtype, int64_t rows, int64_t n, bool descending, const void* x, void* values,
              int64_t* indices) {
  auto sort = [&](auto type) {
    using T = decltype(type);
    // About n log2 n comparisons a row, each a few units of work.
    ParallelForWork(
        rows, 4 * n * (1 + static_cast<int64_t>(std::log2(n + 1))), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const T* row = At<T>(x, r * n);
            int64_t* order = indices + r * n;
            std::iota(order, order + n, int64_t{0});
            if (descending) {
              std::stable_sort(order, order + n,
                               [row](int64_t a, int64_t c) { return Less(row[c], row[a]); });
            } else {
              std::stable_sort(order, order + n,
                               [row](int64_t a, int64_t c) { return Less(row[a], row[c]); });
            }
            T* out = At<T>(values, r * n);
            for (int64_t i = 0; i < n; ++i) out[i] = row[order[i]];
          }
        });
  };
  if (dtype == DType::kI64) return sort(int64_t());
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, "sort: dtype ", DTypeName(dtype),
              " is not supported (f32, f64 or i64)");
  if (dtype == DType::kF32) return sort(float());
  sort(double());
}

}  // namespace ember::kernels::cpu
