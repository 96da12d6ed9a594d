#ifndef EMBER_KERNELS_CPU_INTERNAL_WINDOW_H_
#define EMBER_KERNELS_CPU_INTERNAL_WINDOW_H_

// Window geometry shared by the convolution and pooling kernels.

#include <algorithm>
#include <cstdint>

namespace ember::kernels::cpu::internal {

// The indices k in [0, count) with 0 <= origin + k * step < size, as [begin, end):
// the taps of a window that fall inside the input (origin negative in the padding), or
// the output columns whose tap reads inside the row.
struct IndexRange {
  int64_t begin, end;
};
inline IndexRange InsideRange(int64_t origin, int64_t count, int64_t step, int64_t size) {
  const int64_t begin = std::min(count, origin >= 0 ? 0 : (-origin + step - 1) / step);
  const int64_t end = std::min(count, origin >= size ? 0 : (size - origin + step - 1) / step);
  return {begin, std::max(begin, end)};
}

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_WINDOW_H_
