#include "kernels/cpu/embedding.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "kernels/cpu/internal/check.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::kernels::cpu {
namespace {
constexpr int64_t kGrain = 16384;  // elements per thread, at least
}  // namespace

void EmbeddingForward(DType dtype, int64_t n, int64_t dim, const void* weight, const int64_t* ids,
                      void* out) {
  const int64_t row_bytes = dim * ItemSize(dtype);
  ParallelFor(n, std::max<int64_t>(1, kGrain / std::max<int64_t>(dim, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                  std::memcpy(static_cast<char*>(out) + i * row_bytes,
                              static_cast<const char*>(weight) + ids[i] * row_bytes, row_bytes);
                }
              });
}

void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, const int64_t* ids, const void* dout,
                       void* dweight) {
  internal::CheckFloatDType("embedding_backward", dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* g = static_cast<const T*>(dout);
      T* dw = static_cast<T*>(dweight);
      // The inner loop over a column range is contiguous and vectorises.
      ParallelFor(dim, std::max<int64_t>(16, kGrain / std::max<int64_t>(n, 1)),
                  [&](int64_t b, int64_t e) {
                    for (int64_t i = 0; i < n; ++i) {
                      T* row = dw + ids[i] * dim;
                      const T* grad = g + i * dim;
                      for (int64_t j = b; j < e; ++j) row[j] += grad[j];
                    }
                  });
    }
  });
}

}  // namespace ember::kernels::cpu
