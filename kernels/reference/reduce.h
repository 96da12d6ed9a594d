#ifndef EMBER_KERNELS_REFERENCE_REDUCE_H_
#define EMBER_KERNELS_REFERENCE_REDUCE_H_

// References for kernels/reduce.h over one row of n values, in long double.

#include <cmath>
#include <cstdint>
#include <limits>

namespace ember::kernels::reference {

template <typename T>
long double Sum(const T* x, int64_t n) {
  long double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

template <typename T>
long double SumSquares(const T* x, int64_t n) {
  long double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<long double>(x[i]) * x[i];
  return sum;
}

template <typename T>
long double AbsSum(const T* x, int64_t n) {
  long double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(static_cast<long double>(x[i]));
  return sum;
}

template <typename T>
T Max(const T* x, int64_t n) {
  T best = x[0];
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    if (x[i] > best) best = x[i];
  }
  return best;
}

template <typename T>
T Min(const T* x, int64_t n) {
  T best = x[0];
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    if (x[i] < best) best = x[i];
  }
  return best;
}

// First index of the maximum; a NaN counts as the maximum (torch.argmax).
template <typename T>
int64_t ArgMax(const T* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return i;
    if (x[i] > x[best]) best = i;
  }
  return best;
}

template <typename T>
long double Var(const T* x, int64_t n, int64_t correction) {
  const long double mean = Sum(x, n) / n;
  long double squares = 0;
  for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  return squares / (n - correction);
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_REDUCE_H_
