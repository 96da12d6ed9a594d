#include "tensor/ops/conv.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/conv.h"
#include "tensor/creation.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"
#include "tensor/ops/internal/window.h"

namespace ember::ops {
namespace {

using internal::MakeWindow;
using kernels::Window2d;

DType CheckConv(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const DType compute = internal::FloatComputeDType("conv2d", x);
  EMBER_CHECK(x.dim() == 4, "conv2d: expected an input [N, C, H, W], got ",
              ShapeToString(x.shape()));
  EMBER_CHECK(weight.dim() == 4 && weight.size(1) == x.size(1) && weight.dtype() == x.dtype(),
              "conv2d: weight must be [O, ", x.size(1), ", kh, kw] of ", DTypeName(x.dtype()),
              " for the input ", ShapeToString(x.shape()), ", got ", ShapeToString(weight.shape()),
              " of ", DTypeName(weight.dtype()));
  EMBER_CHECK(!bias.defined() ||
                  (bias.dim() == 1 && bias.size(0) == weight.size(0) && bias.dtype() == x.dtype()),
              "conv2d: bias must be [", weight.size(0), "] of ", DTypeName(x.dtype()), ", got ",
              bias.defined() ? ShapeToString(bias.shape()) : "", " of ",
              bias.defined() ? DTypeName(bias.dtype()) : "");
  return compute;
}

Window2d ConvWindow(const Tensor& x, const Tensor& weight, const Conv2dParams& p) {
  return MakeWindow("conv2d", x.shape(), weight.size(2), weight.size(3), p.stride, p.padding,
                    p.dilation);
}

}  // namespace

Tensor Conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Conv2dParams& params) {
  const DType compute = CheckConv(x, weight, bias);
  const Window2d window = ConvWindow(x, weight, params);
  const int64_t n = x.size(0), c = x.size(1), o = weight.size(0);
  const Tensor in = x.To(compute).Contiguous(), w = weight.To(compute).Contiguous();
  const Tensor b = bias.defined() ? bias.To(compute).Contiguous() : Tensor();
  const Device device = internal::SameDevice("conv2d", {x, weight, bias});
  Tensor y = Empty({n, o, window.out_h(), window.out_w()}, compute, device);
  EMBER_KERNEL(Conv2dForward)
      .On(device)(compute, n, c, o, window, in.raw_data(), w.raw_data(),
                  b.defined() ? b.raw_data() : nullptr, y.raw_data());
  return y.To(x.dtype());
}

Conv2dGrads Conv2dBackward(const Tensor& x, const Tensor& weight, const Tensor& dy,
                           const Conv2dParams& params, bool want_dx, bool want_dbias) {
  const DType compute = CheckConv(x, weight, Tensor());
  const Window2d window = ConvWindow(x, weight, params);
  const int64_t n = x.size(0), c = x.size(1), o = weight.size(0);
  const Shape y_shape{n, o, window.out_h(), window.out_w()};
  EMBER_CHECK(dy.shape() == y_shape, "conv2d_backward: dy of shape ", ShapeToString(dy.shape()),
              " does not match the output's shape ", ShapeToString(y_shape));
  const Tensor in = x.To(compute).Contiguous(), w = weight.To(compute).Contiguous();
  const Tensor g = dy.To(compute).Contiguous();
  const Device device = internal::SameDevice("conv2d_backward", {x, weight, dy});
  Conv2dGrads grads{want_dx ? Empty(x.shape(), compute, device) : Tensor(),
                    Empty(weight.shape(), compute, device),
                    want_dbias ? Empty({o}, compute, device) : Tensor()};
  EMBER_KERNEL(Conv2dBackward)
      .On(device)(compute, n, c, o, window, in.raw_data(), w.raw_data(), g.raw_data(),
                  want_dx ? grads.dx.raw_data() : nullptr, grads.dweight.raw_data(),
                  want_dbias ? grads.dbias.raw_data() : nullptr);
  if (want_dx) grads.dx = grads.dx.To(x.dtype());
  grads.dweight = grads.dweight.To(x.dtype());
  if (want_dbias) grads.dbias = grads.dbias.To(x.dtype());
  return grads;
}

}  // namespace ember::ops
