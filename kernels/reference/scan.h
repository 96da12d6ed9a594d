#ifndef EMBER_KERNELS_REFERENCE_SCAN_H_
#define EMBER_KERNELS_REFERENCE_SCAN_H_

// References for kernels/scan.h over [outer, n, inner], in long double, each from its
// defining sum, O(n^2) a column (the product's gradient term by term, not scan.h's
// recurrence).

#include <cstdint>
#include <vector>

namespace ember::kernels::reference {

template <typename T>
std::vector<long double> CumulativeSum(int64_t outer, int64_t n, int64_t inner, bool reverse,
                                       const std::vector<T>& x) {
  std::vector<long double> out(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      for (int64_t i = 0; i < n; ++i) {
        long double sum = 0;
        for (int64_t j = reverse ? i : 0; j < (reverse ? n : i + 1); ++j) {
          sum += x[(o * n + j) * inner + k];
        }
        out[(o * n + i) * inner + k] = sum;
      }
    }
  }
  return out;
}

template <typename T>
std::vector<long double> CumulativeProduct(int64_t outer, int64_t n, int64_t inner,
                                           const std::vector<T>& x) {
  std::vector<long double> out(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      for (int64_t i = 0; i < n; ++i) {
        long double product = 1;
        for (int64_t j = 0; j <= i; ++j) product *= x[(o * n + j) * inner + k];
        out[(o * n + i) * inner + k] = product;
      }
    }
  }
  return out;
}

// dx_i = sum_{j >= i} dout_j prod_{l <= j, l != i} x_l.
template <typename T>
std::vector<long double> CumulativeProductBackward(int64_t outer, int64_t n, int64_t inner,
                                                   const std::vector<T>& x,
                                                   const std::vector<T>& dout) {
  std::vector<long double> dx(x.size());
  auto at = [&](int64_t o, int64_t j, int64_t k) { return (o * n + j) * inner + k; };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      for (int64_t i = 0; i < n; ++i) {
        long double before = 1;  // prod_{l < i} x_l
        for (int64_t l = 0; l < i; ++l) before *= x[at(o, l, k)];
        long double sum = 0, after = 1;  // after: prod_{i < l <= j} x_l
        for (int64_t j = i; j < n; ++j) {
          if (j > i) after *= x[at(o, j, k)];
          sum += dout[at(o, j, k)] * before * after;
        }
        dx[at(o, i, k)] = sum;
      }
    }
  }
  return dx;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_SCAN_H_
