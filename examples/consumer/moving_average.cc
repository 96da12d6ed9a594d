#include "moving_average.h"

ember::Tensor MovingAverage(const ember::Tensor& series, int64_t width) {
  EMBER_CHECK(series.dim() == 1 && width >= 1 && width <= series.size(0),
              "moving_average: need a 1-d series and 1 <= width <= its length");
  const int64_t n = series.size(0) - width + 1;
  // windows[i][j] = series[i + j]: a [n, width] view with strides [s, s].
  const ember::Tensor windows(series.storage(), series.offset_elements(), {n, width},
                              {series.stride(0), series.stride(0)}, series.dtype());
  ember::Tensor out = ember::Empty({n}, ember::DType::kF64);
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < width; ++j) sum += windows.at({i, j});
    out.data<double>()[i] = sum / width;
  }
  return out;
}
