#ifndef EMBER_KERNELS_REFERENCE_LAYERNORM_H_
#define EMBER_KERNELS_REFERENCE_LAYERNORM_H_

// float64 references for kernels/layernorm.h, one row at a time.

#include <cmath>
#include <vector>

namespace ember::kernels::reference {

struct LayerNormRow {
  std::vector<double> y, xhat;
  double mean, rstd;
};

inline LayerNormRow LayerNorm(const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& b, double eps) {
  const double c = static_cast<double>(x.size());
  LayerNormRow out;
  out.mean = 0;
  for (double v : x) out.mean += v / c;
  double var = 0;
  for (double v : x) var += (v - out.mean) * (v - out.mean) / c;
  out.rstd = 1 / std::sqrt(var + eps);
  for (size_t j = 0; j < x.size(); ++j) {
    out.xhat.push_back((x[j] - out.mean) * out.rstd);
    out.y.push_back(out.xhat[j] * w[j] + (b.empty() ? 0.0 : b[j]));
  }
  return out;
}

// dx_j = sum_i dy_i w_i d xhat_i / d x_j, with the full Jacobian of xhat:
// d xhat_i / d x_j = rstd ([i == j] - 1/c - xhat_i xhat_j / c).
inline std::vector<double> LayerNormBackward(const std::vector<double>& x,
                                             const std::vector<double>& w,
                                             const std::vector<double>& dy, double eps) {
  const LayerNormRow f = LayerNorm(x, w, {}, eps);
  const double c = static_cast<double>(x.size());
  std::vector<double> dx(x.size(), 0.0);
  for (size_t j = 0; j < x.size(); ++j) {
    for (size_t i = 0; i < x.size(); ++i) {
      dx[j] += dy[i] * w[i] * f.rstd * ((i == j) - 1 / c - f.xhat[i] * f.xhat[j] / c);
    }
  }
  return dx;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_LAYERNORM_H_
