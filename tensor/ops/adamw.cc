#include "tensor/ops/adamw.h"

#include "kernels/adamw.h"
#include "tensor/ops/internal/backend.h"

namespace ember::ops {

void AdamWStep(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
               const Tensor& exp_avg_sq, const AdamWHyper& hyper) {
  for (const Tensor* t : {&grad, &exp_avg, &exp_avg_sq}) {
    EMBER_CHECK(t->shape() == param.shape() && t->dtype() == param.dtype(),
                "adamw: a tensor of shape ", ShapeToString(t->shape()), " and dtype ",
                DTypeName(t->dtype()), " does not match the parameter (",
                ShapeToString(param.shape()), ", ", DTypeName(param.dtype()), ")");
  }
  const Device device = internal::SameDevice("adamw", {param, grad, exp_avg, exp_avg_sq});
  for (const Tensor* t : {&param, &grad, &exp_avg, &exp_avg_sq}) {
    EMBER_CHECK(t->is_contiguous(), "adamw: tensors must be contiguous (shape ",
                ShapeToString(t->shape()), ")");
  }
  EMBER_KERNEL(AdamWStep).On(device)(param.dtype(), param.numel(), param.raw_data(),
                                     grad.raw_data(), exp_avg.raw_data(), exp_avg_sq.raw_data(),
                                     hyper);
}

}  // namespace ember::ops
