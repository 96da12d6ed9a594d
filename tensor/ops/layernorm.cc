#include "tensor/ops/layernorm.h"

#include "kernels/layernorm.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

DType Check(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  internal::SameDevice("layer_norm", {x, weight, bias});
  const DType compute = internal::FloatComputeDType("layer_norm", x);
  EMBER_CHECK(x.dim() >= 1, "layer_norm: the input needs at least 1 dimension");
  const int64_t c = x.size(-1);
  EMBER_CHECK(weight.dim() == 1 && weight.size(0) == c && weight.dtype() == x.dtype(),
              "layer_norm: weight must be [", c, "] of ", DTypeName(x.dtype()), ", got ",
              ShapeToString(weight.shape()), " of ", DTypeName(weight.dtype()));
  EMBER_CHECK(
      !bias.defined() || (bias.dim() == 1 && bias.size(0) == c && bias.dtype() == x.dtype()),
      "layer_norm: bias must be [", c, "] of ", DTypeName(x.dtype()), ", got ",
      bias.defined() ? ShapeToString(bias.shape()) : "", " of ",
      bias.defined() ? DTypeName(bias.dtype()) : "");
  return compute;
}

}  // namespace

// The kernels read and write bf16 rows themselves (x, y, dy, dx), with the parameters
// and statistics in f32; f16 goes through f32.
LayerNormResult LayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                          const Tensor& residual) {
  const DType compute = Check(x, weight, bias);
  if (residual.defined()) {
    internal::SameDevice("layer_norm", {x, residual});
    EMBER_CHECK(residual.shape() == x.shape() && residual.dtype() == x.dtype(),
                "layer_norm: the residual must match the input (", ShapeToString(x.shape()), " ",
                DTypeName(x.dtype()), "), got ", ShapeToString(residual.shape()), " ",
                DTypeName(residual.dtype()));
  }
  const DType rows_dtype = internal::FloatOrBf16DType("layer_norm", x);
  const int64_t c = x.size(-1), rows = c == 0 ? 0 : x.numel() / c;
  const Tensor in = x.To(rows_dtype).Contiguous(), w = weight.To(compute).Contiguous();
  const Tensor b = bias.defined() ? bias.To(compute).Contiguous() : Tensor();
  const Tensor r = residual.defined() ? residual.To(rows_dtype).Contiguous() : Tensor();
  const Device device = x.device();
  LayerNormResult result{Empty(x.shape(), rows_dtype, device), Empty({rows}, compute, device),
                         Empty({rows}, compute, device),
                         r.defined() ? Empty(x.shape(), rows_dtype, device) : Tensor()};
  EMBER_KERNEL(LayerNormForward)
      .On(device)(rows_dtype, rows, c, in.raw_data(), r.defined() ? r.raw_data() : nullptr,
                  w.raw_data(), b.defined() ? b.raw_data() : nullptr, eps,
                  r.defined() ? result.sum.raw_data() : nullptr, result.y.raw_data(),
                  result.mean.raw_data(), result.rstd.raw_data());
  result.y = result.y.To(x.dtype());
  if (r.defined()) result.sum = result.sum.To(x.dtype());
  return result;
}

LayerNormGrads LayerNormBackward(const Tensor& x, const Tensor& weight, bool has_bias,
                                 const LayerNormResult& forward, const Tensor& dy) {
  const DType compute = Check(x, weight, Tensor());
  EMBER_CHECK(dy.shape() == x.shape(), "layer_norm_backward: dy of shape ",
              ShapeToString(dy.shape()), " does not match the input's shape ",
              ShapeToString(x.shape()));
  const DType rows_dtype = internal::FloatOrBf16DType("layer_norm_backward", x);
  const int64_t c = x.size(-1), rows = c == 0 ? 0 : x.numel() / c;
  const Tensor in = x.To(rows_dtype).Contiguous(), w = weight.To(compute).Contiguous();
  const Tensor g = dy.To(rows_dtype).Contiguous();
  const Device device = internal::SameDevice("layer_norm_backward", {x, dy, forward.mean});
  LayerNormGrads grads{Empty(x.shape(), rows_dtype, device), Empty({c}, compute, device),
                       has_bias ? Empty({c}, compute, device) : Tensor()};
  EMBER_KERNEL(LayerNormBackward)
      .On(device)(rows_dtype, rows, c, in.raw_data(), w.raw_data(), forward.mean.raw_data(),
                  forward.rstd.raw_data(), g.raw_data(), grads.dx.raw_data(),
                  grads.dweight.raw_data(), has_bias ? grads.dbias.raw_data() : nullptr);
  grads.dx = grads.dx.To(x.dtype());
  grads.dweight = grads.dweight.To(x.dtype());
  if (has_bias) grads.dbias = grads.dbias.To(x.dtype());
  return grads;
}

}  // namespace ember::ops
