#include "kernels/embedding.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/internal/dispatch.h"

namespace ember::kernels::cpu {

void EmbeddingForward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const void* weight,
                      const int64_t* ids, void* out) {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ParallelForWork(n, dim, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T* row = At<T>(out, i * dim);
        if (ids[i] < 0 || ids[i] >= vocab) {
          std::fill(row, row + dim, Convert<T>(std::numeric_limits<double>::quiet_NaN()));
        } else {
          std::memcpy(row, At<T>(weight, ids[i] * dim), dim * sizeof(T));
        }
      }
    });
  });
}

void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const int64_t* ids,
                       const void* dout, void* dweight) {
  DispatchFloat("embedding_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const T* g = At<T>(dout);
    T* dw = At<T>(dweight);
    // Threads take blocks of 16 columns (no two write one cache line); the inner loop
    // over a block is contiguous and vectorises.
    constexpr int64_t kBlock = 16;
    ParallelForWork((dim + kBlock - 1) / kBlock, kBlock * n, [&](int64_t first, int64_t last) {
      const int64_t b = first * kBlock, e = std::min(dim, last * kBlock);
      for (int64_t i = 0; i < n; ++i) {
        if (ids[i] < 0 || ids[i] >= vocab) continue;
        T* row = dw + ids[i] * dim;
        const T* grad = g + i * dim;
        for (int64_t j = b; j < e; ++j) row[j] += grad[j];
      }
    });
  });
}

}  // namespace ember::kernels::cpu
