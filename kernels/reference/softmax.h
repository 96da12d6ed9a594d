#ifndef EMBER_KERNELS_REFERENCE_SOFTMAX_H_
#define EMBER_KERNELS_REFERENCE_SOFTMAX_H_

// float64 references for kernels/softmax.h, one row at a time, from the
// definitions (the max shift is only for range; it cancels mathematically).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ember::kernels::reference {

inline double LogSumExp(const std::vector<double>& x) {
  const double m = *std::max_element(x.begin(), x.end());
  if (std::isinf(m)) return m;
  double sum = 0;
  for (double v : x) sum += std::exp(v - m);
  return m + std::log(sum);
}

inline std::vector<double> Softmax(const std::vector<double>& x) {
  const double lse = LogSumExp(x);
  std::vector<double> y;
  for (double v : x) y.push_back(std::exp(v - lse));
  return y;
}

inline std::vector<double> LogSoftmax(const std::vector<double>& x) {
  const double lse = LogSumExp(x);
  std::vector<double> y;
  for (double v : x) y.push_back(v - lse);
  return y;
}

// The Jacobian-vector products, written as sums over the full Jacobian:
// d softmax_i / d x_j = y_i ([i == j] - y_j); d log_softmax_i / d x_j = [i == j] - y_j.
inline std::vector<double> SoftmaxBackward(const std::vector<double>& x,
                                           const std::vector<double>& dy) {
  const std::vector<double> y = Softmax(x);
  std::vector<double> dx(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j) {
    for (size_t i = 0; i < x.size(); ++i) dx[j] += dy[i] * y[i] * ((i == j) - y[j]);
  }
  return dx;
}

inline std::vector<double> LogSoftmaxBackward(const std::vector<double>& x,
                                              const std::vector<double>& dy) {
  const std::vector<double> y = Softmax(x);
  std::vector<double> dx(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j) {
    for (size_t i = 0; i < x.size(); ++i) dx[j] += dy[i] * ((i == j) - y[j]);
  }
  return dx;
}

inline double CrossEntropy(const std::vector<double>& x, int64_t target) {
  return LogSumExp(x) - x[target];
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_SOFTMAX_H_
