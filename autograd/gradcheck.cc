#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/elementwise.h"
#include "autograd/engine.h"
#include "autograd/reduce.h"
#include "base/error.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"
#include "tensor/random.h"

namespace ember::autograd {

std::vector<double> GradCheck(const TensorFn& f, const std::vector<Tensor>& inputs, double eps) {
  for (const Tensor& t : inputs) {
    EMBER_CHECK(!t.defined() || t.dtype() == DType::kF64, "grad_check: inputs must be f64, got ",
                DTypeName(t.dtype()));
  }
  Generator gen(1234);
  const Tensor probe = f(inputs);
  const Tensor w = Randn(probe.shape(), gen, DType::kF64);
  auto loss = [&] {
    NoGradGuard no_grad;
    return ops::Sum(ops::Mul(f(inputs), w)).item<double>();
  };
  for (const Tensor& t : inputs) {
    if (t.defined()) ZeroGrad(t);
  }
  Backward(Sum(Mul(f(inputs), w)));
  std::vector<double> worst;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !RequiresGrad(t)) {
      worst.push_back(0);
      continue;
    }
    const Tensor analytic = Grad(t);
    EMBER_CHECK(analytic.defined(), "grad_check: no gradient reached an input of shape ",
                ShapeToString(t.shape()));
    double* base = static_cast<double*>(t.raw_data());
    std::vector<double> numeric, exact;
    for (NdIndexIterator it(t.shape()); !it.done(); it.Next()) {
      int64_t offset = 0;
      for (int64_t d = 0; d < t.dim(); ++d) offset += it.index()[d] * t.stride(d);
      const double saved = base[offset];
      base[offset] = saved + eps;
      const double plus = loss();
      base[offset] = saved - eps;
      const double minus = loss();
      base[offset] = saved;
      numeric.push_back((plus - minus) / (2 * eps));
      exact.push_back(analytic.at<double>(it.index()));
    }
    double scale = 1, error = 0;
    for (double v : numeric) scale = std::max(scale, std::fabs(v));
    for (size_t j = 0; j < numeric.size(); ++j) {
      error = std::max(error, std::fabs(exact[j] - numeric[j]));
    }
    worst.push_back(error / scale);
  }
  return worst;
}

}  // namespace ember::autograd
