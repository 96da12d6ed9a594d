#include "kernels/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

namespace ember::kernels::cpu {
namespace {

// Whether a ranks before b: larger first, NaN largest, lower index on ties.
template <typename T>
bool Before(const T* row, int64_t a, int64_t b) {
  const bool nan_a = std::isnan(row[a]), nan_b = std::isnan(row[b]);
  if (nan_a != nan_b) return nan_a;
  if (!nan_a && row[a] != row[b]) return row[a] > row[b];
  return a < b;
}

}  // namespace

void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices) {
  EMBER_CHECK(k >= 1 && k <= n, "topk: k = ", k, " is out of range for rows of ", n);
  DispatchFloat("topk", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(rows, n, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(n);
      for (int64_t r = b; r < e; ++r) {
        const T* row = static_cast<const T*>(x) + r * n;
        std::iota(order.begin(), order.end(), 0);
        // O(n log k): only the first k need to be in order.
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [row](int64_t a, int64_t c) { return Before(row, a, c); });
        for (int64_t i = 0; i < k; ++i) {
          indices[r * k + i] = order[i];
          static_cast<T*>(values)[r * k + i] = row[order[i]];
        }
      }
    });
  });
}

void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out) {
  DispatchFloat("multinomial", dtype, [&](auto type) {
    using T = decltype(type);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = static_cast<const T*>(probs) + r * n;
      double total = 0;
      for (int64_t j = 0; j < n; ++j) total += row[j];
      out[r] = -1;
      if (!(total > 0)) continue;
      const double target = uniform[r] * total;
      double running = 0;
      for (int64_t j = 0; j < n; ++j) {
        running += row[j];
        if (row[j] > 0) out[r] = j;  // the last positive entry catches rounding at the top
        if (row[j] > 0 && running > target) break;
      }
    }
  });
}

}  // namespace ember::kernels::cpu
