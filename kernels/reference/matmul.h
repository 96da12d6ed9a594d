#ifndef EMBER_KERNELS_REFERENCE_MATMUL_H_
#define EMBER_KERNELS_REFERENCE_MATMUL_H_

// float64 reference for kernels/matmul.h: the triple loop.

#include <cmath>
#include <cstdint>
#include <vector>

namespace ember::kernels::reference {

// C[i][j] = sum_p A[i][p] B[p][j] in double, row-major [m, n]; with `abs_sum`, also
// sum_p |A[i][p] B[p][j]|, the scale of the rounding error a float sum can make.
template <typename T>
std::vector<double> Matmul(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs,
                           const T* b, int64_t brs, int64_t bcs, std::vector<double>* abs_sum) {
  std::vector<double> c(m * n, 0.0);
  if (abs_sum) abs_sum->assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        const double product = static_cast<double>(a[i * ars + p * acs]) * b[p * brs + j * bcs];
        c[i * n + j] += product;
        if (abs_sum) (*abs_sum)[i * n + j] += std::fabs(product);
      }
    }
  }
  return c;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_MATMUL_H_
