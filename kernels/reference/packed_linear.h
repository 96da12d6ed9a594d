#ifndef EMBER_KERNELS_REFERENCE_PACKED_LINEAR_H_
#define EMBER_KERNELS_REFERENCE_PACKED_LINEAR_H_

// float64 reference for kernels/packed_linear.h: the weights a format stores, W', and the
// activations int8 multiplies, A', from the contract's equations, one at a time (the
// product is then Matmul's).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/packed_linear.h"

namespace ember::kernels::reference {

// W' [n, k] (row-major) of W [n, k]: W, bf16(W), or s q with s the group's largest |W|
// over 127 rounded up to bf16 and q = round(W / s) to nearest even.
inline std::vector<double> StoredWeights(cpu::PackedFormat format, int64_t n, int64_t k,
                                         const std::vector<float>& w) {
  std::vector<double> stored(w.size());
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p0 = 0; p0 < k; p0 += cpu::kPackedGroup) {
      const int64_t p1 = std::min(k, p0 + cpu::kPackedGroup);
      float largest = 0;
      for (int64_t p = p0; p < p1; ++p) largest = std::max(largest, std::fabs(w[j * k + p]));
      BFloat16 scale = BFloat16::FromFloat(largest / 127.0f);
      if (scale.ToFloat() < largest / 127.0f) ++scale.bits;
      const double s = scale.ToFloat();
      for (int64_t p = p0; p < p1; ++p) {
        const float x = w[j * k + p];
        switch (format) {
          case cpu::PackedFormat::kF32:
            stored[j * k + p] = x;
            break;
          case cpu::PackedFormat::kBF16:
            stored[j * k + p] = BFloat16::FromFloat(x).ToFloat();
            break;
          case cpu::PackedFormat::kI8:
            stored[j * k + p] = s > 0 ? s * std::nearbyint(x / static_cast<float>(s)) : 0.0;
            break;
        }
      }
    }
  }
  return stored;
}

// A' [m, k] (row-major) of A [m, k] (row stride lda), the activations the int8 product
// multiplies: per row and group of 32, a r with a = max |A| / 127 and r = round(A 127 /
// max |A|) to nearest even, each in f32 as the contract writes it; NaN for a group with
// an inf or a NaN.
inline std::vector<double> QuantizedActivations(int64_t m, int64_t k, const float* a, int64_t lda) {
  std::vector<double> quantized(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p0 = 0; p0 < k; p0 += cpu::kPackedGroup) {
      const int64_t p1 = std::min(k, p0 + cpu::kPackedGroup);
      float largest = 0;
      bool finite = true;
      for (int64_t p = p0; p < p1; ++p) {
        finite = finite && std::isfinite(a[i * lda + p]);
        largest = std::max(largest, std::fabs(a[i * lda + p]));
      }
      for (int64_t p = p0; p < p1; ++p) {
        const float x = a[i * lda + p];
        quantized[i * k + p] = !finite        ? NAN
                               : largest == 0 ? 0.0
                                              : static_cast<double>(largest / 127.0f) *
                                                    std::nearbyint(x * (127.0f / largest));
      }
    }
  }
  return quantized;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_PACKED_LINEAR_H_
