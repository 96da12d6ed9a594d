#ifndef EMBER_KERNELS_REFERENCE_BINARY_H_
#define EMBER_KERNELS_REFERENCE_BINARY_H_

// float64 references for kernels/binary.h: every output element computed on its
// own from the strided, broadcast inputs.

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/shape.h"

namespace ember::kernels::reference {

// out[i] = f(a[i], b[i]) in row-major order over `shape`, reading each input element
// at sum(index[d] * strides[d]).
template <typename T, typename F>
std::vector<double> Binary(IntSpan shape, const T* a, IntSpan a_strides, const T* b,
                           IntSpan b_strides, F f) {
  std::vector<double> out;
  for (NdIndexIterator it(shape); !it.done(); it.Next()) {
    out.push_back(f(Convert<double>(a[FlatIndex(it.index(), a_strides)]),
                    Convert<double>(b[FlatIndex(it.index(), b_strides)])));
  }
  return out;
}

inline double Add(double a, double b) { return a + b; }
inline double Sub(double a, double b) { return a - b; }
inline double Mul(double a, double b) { return a * b; }
inline double Div(double a, double b) { return a / b; }
inline double Maximum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
inline double Minimum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}
inline double Pow(double a, double b) { return std::pow(a, b); }

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_BINARY_H_
