#include "tensor/ops/pool.h"

#include "base/error.h"
#include "kernels/pool.h"
#include "tensor/creation.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"
#include "tensor/ops/internal/window.h"

namespace ember::ops {
namespace {

using kernels::Window2d;

Window2d PoolWindow(IntSpan x, const MaxPool2dParams& p) {
  const std::array<int64_t, 2> stride{p.stride[0] == 0 ? p.kernel[0] : p.stride[0],
                                      p.stride[1] == 0 ? p.kernel[1] : p.stride[1]};
  const Window2d window = internal::MakeWindow("max_pool2d", x, p.kernel[0], p.kernel[1], stride,
                                               p.padding, p.dilation);
  EMBER_CHECK(2 * p.padding[0] <= p.kernel[0] && 2 * p.padding[1] <= p.kernel[1],
              "max_pool2d: padding (", p.padding[0], ", ", p.padding[1],
              ") must be at most half the kernel ", p.kernel[0], "x", p.kernel[1]);
  return window;
}

}  // namespace

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
