#ifndef EMBER_KERNELS_STRIDED_H_
#define EMBER_KERNELS_STRIDED_H_

// Merging the dimensions of strided operands, which both backends do before a strided
// kernel runs (on the host: the CPU loops over the result, the GPU gets it by value).

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/shape.h"

namespace ember::kernels {

// A loop nest over N operands of one shape, each with its own strides (in elements;
// 0 where an operand is broadcast). Dimensions of size 1 are dropped, and
// neighbouring dimensions merged where every operand steps through them as one
// (stride[d] == stride[d + 1] * size[d + 1]), so contiguous operands become a single
// row. The innermost dimension is last; there is always at least one.
template <size_t N>
struct StridedLoop {
  Shape shape;
  std::array<Strides, N> strides;

  int64_t row_length() const { return shape.back(); }
  // Number of rows: the product of all sizes but the last.
  int64_t rows() const {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    return rows;
  }
};

template <size_t N>
StridedLoop<N> Coalesce(IntSpan shape, const std::array<IntSpan, N>& strides) {
  StridedLoop<N> loop;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = !loop.shape.empty();
    for (size_t k = 0; k < N && mergeable; ++k) {
      mergeable = loop.strides[k].back() == strides[k][d] * shape[d];
    }
    if (mergeable) {
      loop.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) loop.strides[k].back() = strides[k][d];
    } else {
      loop.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) loop.strides[k].push_back(strides[k][d]);
    }
  }
  if (loop.shape.empty()) {  // a scalar, or all sizes 1: one element
    loop.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) loop.strides[k].push_back(1);
  }
  return loop;
}

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_STRIDED_H_
