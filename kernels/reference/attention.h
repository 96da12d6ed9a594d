#ifndef EMBER_KERNELS_REFERENCE_ATTENTION_H_
#define EMBER_KERNELS_REFERENCE_ATTENTION_H_

// float64 reference for kernels/attention.h, one head from the definitions: each
// query's scores over the keys it sees, softmax.h's softmax, and the backward through
// softmax's full Jacobian (not the kernel's D = dY . Y shortcut).

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/reference/softmax.h"

namespace ember::kernels::reference {

// Row-major [tq, d] queries and [tk, d] keys and values; query i sees keys
// j <= i + tk - tq.
struct AttentionHead {
  int64_t tq, tk, d;
  std::vector<double> q, k, v;
};

struct AttentionOutput {
  std::vector<double> y, lse;      // [tq, d], [tq]
  std::vector<double> dq, dk, dv;  // [tq, d], [tk, d], [tk, d]
};

// Query i's scores s_j = q_i . k_j / sqrt(d) over the keys it sees.
inline std::vector<double> AttentionScores(const AttentionHead& h, int64_t i) {
  std::vector<double> s;
  for (int64_t j = 0; j <= i + h.tk - h.tq; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < h.d; ++c) dot += h.q[i * h.d + c] * h.k[j * h.d + c];
    s.push_back(dot / std::sqrt(double(h.d)));
  }
  return s;
}

// The forward, and the gradients for an upstream gradient dy [tq, d]. With a dropout
// mask [tq, tk] (attention.h's M: 0 or 1 / (1 - p)), Y = (P * M) V: the gradient flows
// through M's factors into softmax's Jacobian.
inline AttentionOutput CausalAttention(const AttentionHead& h, const std::vector<double>& dy,
                                       const std::vector<double>* mask = nullptr) {
  AttentionOutput out{std::vector<double>(h.tq * h.d, 0.0), std::vector<double>(h.tq, 0.0),
                      std::vector<double>(h.tq * h.d, 0.0), std::vector<double>(h.tk * h.d, 0.0),
                      std::vector<double>(h.tk * h.d, 0.0)};
  const double scale = 1 / std::sqrt(double(h.d));
  for (int64_t i = 0; i < h.tq; ++i) {
    const std::vector<double> s = AttentionScores(h, i), p = Softmax(s);
    out.lse[i] = LogSumExp(s);
    std::vector<double> dp(s.size(), 0.0);
    for (size_t j = 0; j < s.size(); ++j) {
      const double m = mask != nullptr ? (*mask)[i * h.tk + j] : 1.0;
      for (int64_t c = 0; c < h.d; ++c) {
        out.y[i * h.d + c] += p[j] * m * h.v[j * h.d + c];
        dp[j] += dy[i * h.d + c] * h.v[j * h.d + c] * m;
        out.dv[j * h.d + c] += p[j] * m * dy[i * h.d + c];
      }
    }
    const std::vector<double> ds = SoftmaxBackward(s, dp);
    for (size_t j = 0; j < s.size(); ++j) {
      for (int64_t c = 0; c < h.d; ++c) {
        out.dq[i * h.d + c] += ds[j] * h.k[j * h.d + c] * scale;
        out.dk[j * h.d + c] += ds[j] * h.q[i * h.d + c] * scale;
      }
    }
  }
  return out;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_ATTENTION_H_
