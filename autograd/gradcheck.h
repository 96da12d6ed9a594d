#ifndef EMBER_AUTOGRAD_GRADCHECK_H_
#define EMBER_AUTOGRAD_GRADCHECK_H_

// A gradient checker for tests: the analytic gradient of a function against float64
// central differences.

#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace ember::autograd {

using TensorFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

// For L = sum(w * f(inputs)) with fixed random weights w (so that outputs which sum to a
// constant, like softmax's, are still checked), compares dL/d input (by Backward) with
//   (L(x + eps e_j) - L(x - eps e_j)) / (2 eps)
// for every element j of every input that requires gradients. Inputs must be f64 leaves
// with non-negative strides and no repeated elements (transposed or sliced layouts are
// fine; an expanded view belongs inside f). Returns, per input, the worst
//   |analytic - numeric| / max(1, max_j |numeric_j|)
// (0 for inputs that require no gradient).
std::vector<double> GradCheck(const TensorFn& f, const std::vector<Tensor>& inputs,
                              double eps = 1e-6);

}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_GRADCHECK_H_
