#ifndef EMBER_KERNELS_CPU_INTERNAL_STRIDED_H_
#define EMBER_KERNELS_CPU_INTERNAL_STRIDED_H_

#include <array>
#include <cstdint>

#include "core/shape.h"
#include "kernels/cpu/internal/dispatch.h"
#include "kernels/strided.h"

namespace ember::kernels::cpu::internal {

// The CPU's loops over a StridedLoop (kernels/strided.h): row by row, split across the
// thread pool.

// Calls fn(offsets, n, inner_strides) for each row in [row_begin, row_end): offsets[k]
// is operand k's offset (in elements) of the row's first element, n the row length
// and inner_strides[k] operand k's stride along the row.
template <size_t N, typename Fn>
void ForEachRow(const StridedLoop<N>& loop, int64_t row_begin, int64_t row_end, Fn&& fn) {
  const size_t outer = loop.shape.size() - 1;
  Shape index(outer);
  int64_t r = row_begin;
  for (size_t d = outer; d-- > 0;) {  // unravel row_begin
    index[d] = r % loop.shape[d];
    r /= loop.shape[d];
  }
  std::array<int64_t, N> offsets, inner;
  for (size_t k = 0; k < N; ++k) {
    offsets[k] = FlatIndex(index, IntSpan(loop.strides[k].data(), outer));
    inner[k] = loop.strides[k][outer];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    fn(offsets, loop.shape[outer], inner);
    for (size_t d = outer; d-- > 0;) {  // odometer step, keeping the offsets current
      if (++index[d] < loop.shape[d]) {
        for (size_t k = 0; k < N; ++k) offsets[k] += loop.strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offsets[k] -= (loop.shape[d] - 1) * loop.strides[k][d];
      index[d] = 0;
    }
  }
}

// Runs row(offsets, n, steps) over every row of `loop`, split across the pool (one
// unit of work per element): by rows, or within the one row when everything merged
// into one. offsets[k] is operand k's offset (in elements) of the row's first element,
// steps[k] its stride along the row.
template <size_t N, typename RowBody>
void ParallelForLoop(const StridedLoop<N>& loop, const RowBody& row) {
  const int64_t length = loop.row_length(), rows = loop.rows();
  if (rows == 1) {
    std::array<int64_t, N> step;
    for (size_t k = 0; k < N; ++k) step[k] = loop.strides[k][0];
    ParallelForWork(length, 1, [&](int64_t begin, int64_t end) {
      std::array<int64_t, N> offset;
      for (size_t k = 0; k < N; ++k) offset[k] = begin * step[k];
      row(offset, end - begin, step);
    });
    return;
  }
  ParallelForWork(rows, length, [&](int64_t begin, int64_t end) {
    ForEachRow(loop, begin, end,
               [&](const auto& offset, int64_t n, const auto& step) { row(offset, n, step); });
  });
}

// ParallelForLoop over every element of `shape` for N inputs with the given strides
// and a contiguous output (operand N, inner stride 1).
template <size_t N, typename RowBody>
void ParallelForRows(IntSpan shape, const std::array<IntSpan, N>& strides, const RowBody& row) {
  if (NumElements(shape) == 0) return;
  const Strides out_strides = ContiguousStrides(shape);
  std::array<IntSpan, N + 1> all;
  for (size_t k = 0; k < N; ++k) all[k] = strides[k];
  all[N] = out_strides;
  ParallelForLoop(Coalesce<N + 1>(shape, all), row);
}

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_STRIDED_H_
