#include "tensor/ops/sampling.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/sampling.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"
#include "tensor/ops/reduce.h"

namespace ember::ops {
TopKResult TopK(const Tensor& x, int64_t k) {
  const DType compute = internal::FloatComputeDType("topk", x);
  EMBER_CHECK(x.dim() >= 1, "topk: expected at least 1 dimension, got a 0-d tensor");
  const int64_t n = x.size(-1), rows = n == 0 ? 0 : x.numel() / n;
  EMBER_CHECK(k >= 1 && k <= n, "topk: k = ", k, " is out of range for a last dimension of ", n);
  const Tensor in = x.To(compute).Contiguous();
  Shape shape = x.shape();
  shape.back() = k;
  TopKResult result{Empty(shape, compute, x.device()), Empty(shape, DType::kI64, x.device())};
  EMBER_KERNEL(TopKRows).On(x.device())(compute, rows, n, k, in.raw_data(),
                                        result.values.raw_data(), result.indices.data<int64_t>());
  result.values = result.values.To(x.dtype());
  return result;
}

Tensor Multinomial(const Tensor& probs, Generator& gen) {
  const DType compute = internal::FloatComputeDType("multinomial", probs);
  EMBER_CHECK(probs.dim() >= 1, "multinomial: expected at least 1 dimension, got a 0-d tensor");
  const int64_t n = probs.size(-1), rows = n == 0 ? 0 : probs.numel() / n;
  const Tensor in = probs.To(compute).Contiguous();
  if (in.numel() > 0) {  // the smallest weight (NaN if any is), read back to the host
    const double smallest = Min(in).item<double>();
    EMBER_CHECK(smallest >= 0, "multinomial: weights must be non-negative and not NaN, got ",
                smallest);
  }
  std::vector<double> uniform(rows);
  for (double& u : uniform) u = gen.NextUniform(53);
  const Shape shape(probs.shape().begin(), probs.shape().end() - 1);
  Tensor out = Empty(shape, DType::kI64, probs.device());
  EMBER_KERNEL(MultinomialRows)
      .On(probs.device())(compute, rows, n, in.raw_data(), uniform.data(), out.data<int64_t>());
  const Tensor host = out.To(Device::Cpu());
  const int64_t* picked = host.data<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    EMBER_CHECK(picked[r] >= 0, "multinomial: row ", r, " has no positive weight");
  }
  return out;
}

Tensor MultinomialWithReplacement(const Tensor& probs, int64_t num_samples, Generator& gen) {
  EMBER_CHECK(probs.dim() == 2, "multinomial: expected [rows, n] weights, got ",
              ShapeToString(probs.shape()));
  EMBER_CHECK(num_samples >= 0, "multinomial: num_samples must be non-negative, got ", num_samples);
  const int64_t rows = probs.size(0), n = probs.size(1);
  const Tensor host = probs.To(Device::Cpu()).To(DType::kF64).Contiguous();
  const double* w = host.data<double>();
  Tensor out = Empty({rows, num_samples}, DType::kI64);
  int64_t* picked = out.data<int64_t>();
  std::vector<double> running(n);
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double weight = w[r * n + i];
      EMBER_CHECK(weight >= 0, "multinomial: weights must be non-negative and not NaN, got ",
                  weight, " in row ", r);
      total += weight;
      running[i] = total;
    }
    EMBER_CHECK(total > 0 && std::isfinite(total), "multinomial: row ", r,
                " has no positive weight (or an infinite one)");
    for (int64_t s = 0; s < num_samples; ++s) {
      const double u = gen.NextUniform(53) * total;
      const auto at = std::upper_bound(running.begin(), running.end(), u);
      picked[r * num_samples + s] = std::min<int64_t>(at - running.begin(), n - 1);
    }
  }
  return out.To(probs.device());
}

}  // namespace ember::ops
