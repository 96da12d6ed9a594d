#include "tensor/ops/conv.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"
#include "kernels/cuda/kernels.h"
#include "tensor/creation.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

using kernels::Window2d;

void CheckPairs(const char* op, const std::array<int64_t, 2>& stride,
                const std::array<int64_t, 2>& padding, const std::array<int64_t, 2>& dilation) {
  for (int d = 0; d < 2; ++d) {
    EMBER_CHECK(stride[d] >= 1 && padding[d] >= 0 && dilation[d] >= 1, op,
                ": stride and dilation must be positive and padding non-negative, got stride (",
                stride[0], ", ", stride[1], "), padding (", padding[0], ", ", padding[1],
                "), dilation (", dilation[0], ", ", dilation[1], ")");
  }
}

// The window of params over an input of shape [N, C, H, W], checked to give at least
// one output.
Window2d MakeWindow(const char* op, IntSpan x, int64_t kh, int64_t kw,
                    const std::array<int64_t, 2>& stride, const std::array<int64_t, 2>& padding,
                    const std::array<int64_t, 2>& dilation) {
  EMBER_CHECK(x.size() == 4, op, ": expected an input [N, C, H, W], got ", ShapeToString(x));
  EMBER_CHECK(kh >= 1 && kw >= 1, op, ": the kernel must be at least 1x1, got ", kh, "x", kw);
  CheckPairs(op, stride, padding, dilation);
  const Window2d window{x[2],      x[3],       kh,         kw,          stride[0],
                        stride[1], padding[0], padding[1], dilation[0], dilation[1]};
  EMBER_CHECK(window.out_h() >= 1 && window.out_w() >= 1, op, ": the input ", ShapeToString(x),
              " padded by (", padding[0], ", ", padding[1], ") is smaller than the kernel ", kh,
              "x", kw, " dilated by (", dilation[0], ", ", dilation[1], ")");
  return window;
}

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

Window2d PoolWindow(IntSpan x, const MaxPool2dParams& p) {
  const std::array<int64_t, 2> stride{p.stride[0] == 0 ? p.kernel[0] : p.stride[0],
                                      p.stride[1] == 0 ? p.kernel[1] : p.stride[1]};
  const Window2d window =
      MakeWindow("max_pool2d", x, p.kernel[0], p.kernel[1], stride, p.padding, p.dilation);
  EMBER_CHECK(2 * p.padding[0] <= p.kernel[0] && 2 * p.padding[1] <= p.kernel[1],
              "max_pool2d: padding (", p.padding[0], ", ", p.padding[1],
              ") must be at most half the kernel ", p.kernel[0], "x", p.kernel[1]);
  return window;
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

MaxPool2dResult MaxPool2d(const Tensor& x, const MaxPool2dParams& params) {
  const DType compute = internal::FloatComputeDType("max_pool2d", x);
  const Window2d window = PoolWindow(x.shape(), params);
  const Shape y_shape{x.size(0), x.size(1), window.out_h(), window.out_w()};
  const Tensor in = x.To(compute).Contiguous();
  MaxPool2dResult result{Empty(y_shape, compute, x.device()),
                         Empty(y_shape, DType::kI64, x.device())};
  EMBER_KERNEL(MaxPool2dForward)
      .On(x.device())(compute, x.size(0) * x.size(1), window, in.raw_data(), result.y.raw_data(),
                      result.indices.data<int64_t>());
  result.y = result.y.To(x.dtype());
  return result;
}

Tensor MaxPool2dBackward(IntSpan x_shape, const Tensor& indices, const Tensor& dy,
                         const MaxPool2dParams& params) {
  const DType compute = internal::FloatComputeDType("max_pool2d_backward", dy);
  EMBER_CHECK(x_shape.size() == 4,
              "max_pool2d_backward: expected an input shape [N, C, H, W], got ",
              ShapeToString(x_shape));
  const Window2d window = PoolWindow(x_shape, params);
  const Shape y_shape{x_shape[0], x_shape[1], window.out_h(), window.out_w()};
  EMBER_CHECK(dy.shape() == y_shape && indices.shape() == y_shape && indices.dtype() == DType::kI64,
              "max_pool2d_backward: dy ", ShapeToString(dy.shape()), " and indices ",
              ShapeToString(indices.shape()), " of ", DTypeName(indices.dtype()),
              " must both be the output's shape ", ShapeToString(y_shape), " (indices i64)");
  const Tensor g = dy.To(compute).Contiguous(), at = indices.Contiguous();
  const int64_t area = x_shape[2] * x_shape[3];
  const int64_t* index = at.data<int64_t>();
  const Device device = internal::SameDevice("max_pool2d_backward", {indices, dy});
  Tensor dx = Empty(x_shape, compute, device);  // the kernel writes every entry
  if (!EMBER_KERNEL(MaxPool2dBackward)
           .On(device)(compute, x_shape[0] * x_shape[1], window, index, g.raw_data(),
                       dx.raw_data())) {
    // The kernel skipped an index outside the planes (it checks as it scatters): name one.
    const int64_t* bad =
        std::find_if(index, index + at.numel(), [&](int64_t k) { return k < 0 || k >= area; });
    EMBER_THROW("max_pool2d_backward: index ", *bad, " is outside the ", x_shape[2], "x",
                x_shape[3], " input planes");
  }
  return dx.To(dy.dtype());
}

}  // namespace ember::ops
