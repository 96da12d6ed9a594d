#include "tensor/ops/scan.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/scan.h"
#include "kernels/sort.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

// The dtype the scan and sort kernels take for x: f64, f32 (the other floats), or i64
// (integers and bool).
DType KernelDType(const char* op, const Tensor& x) {
  return IsFloatingPoint(x.dtype()) ? internal::FloatComputeDType(op, x) : DType::kI64;
}

// x as [outer, n, inner] around dimension dim.
struct Around {
  Around(const Tensor& x, int64_t dim, const char* op) {
    const int64_t d = NormalizeDim(dim, std::max<int64_t>(x.dim(), 1), op);
    if (x.dim() == 0) return;
    n = x.size(d);
    for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
    for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  }
  int64_t outer = 1, n = 1, inner = 1;
};

}  // namespace

Tensor Cumsum(const Tensor& x, int64_t dim, bool reverse) {
  const DType compute = KernelDType("cumsum", x);
  const Around a(x, dim, "cumsum");
  const Tensor in = x.To(compute).Contiguous();
  Tensor out = Empty(x.shape(), compute, x.device());
  EMBER_KERNEL(CumulativeSum)
      .On(x.device())(compute, a.outer, a.n, a.inner, reverse, in.raw_data(), out.raw_data());
  return IsFloatingPoint(x.dtype()) ? out.To(x.dtype()) : out;
}

Tensor Cumprod(const Tensor& x, int64_t dim) {
  const DType compute = KernelDType("cumprod", x);
  const Around a(x, dim, "cumprod");
  const Tensor in = x.To(compute).Contiguous();
  Tensor out = Empty(x.shape(), compute, x.device());
  EMBER_KERNEL(CumulativeProduct)
      .On(x.device())(compute, a.outer, a.n, a.inner, in.raw_data(), out.raw_data());
  return IsFloatingPoint(x.dtype()) ? out.To(x.dtype()) : out;
}

Tensor CumprodBackward(const Tensor& x, const Tensor& dout, int64_t dim) {
  const DType compute = internal::FloatComputeDType("cumprod_backward", x);
  EMBER_CHECK(dout.shape() == x.shape() && dout.device() == x.device(), "cumprod_backward: dout ",
              ShapeToString(dout.shape()), " on ", dout.device().ToString(), " for x ",
              ShapeToString(x.shape()), " on ", x.device().ToString());
  const Around a(x, dim, "cumprod_backward");
  const Tensor in = x.To(compute).Contiguous(), g = dout.To(compute).Contiguous();
  Tensor dx = Empty(x.shape(), compute, x.device());
  EMBER_KERNEL(CumulativeProductBackward)
      .On(x.device())(compute, a.outer, a.n, a.inner, in.raw_data(), g.raw_data(), dx.raw_data());
  return dx.To(x.dtype());
}

SortResult Sort(const Tensor& x, int64_t dim, bool descending) {
  const DType compute = KernelDType("sort", x);
  if (x.dim() == 0) {  // as a 1-element vector
    NormalizeDim(dim, 1, "sort");
    const SortResult one = Sort(x.Reshape({1}), 0, descending);
    return {one.values.Reshape({}), one.indices.Reshape({})};
  }
  const int64_t last = x.dim() - 1;
  const int64_t d = NormalizeDim(dim, x.dim(), "sort");
  // dim moved last, rows of n sorted, moved back.
  const Tensor in = x.Transpose(d, last).To(compute).Contiguous();
  const int64_t n = x.size(d), rows = n == 0 ? 0 : x.numel() / n;
  Tensor values = Empty(in.shape(), compute, x.device());
  Tensor indices = Empty(in.shape(), DType::kI64, x.device());
  EMBER_KERNEL(SortRows).On(x.device())(compute, rows, n, descending, in.raw_data(),
                                        values.raw_data(), indices.data<int64_t>());
  return {values.Transpose(d, last).To(x.dtype()).Contiguous(),
          indices.Transpose(d, last).Contiguous()};
}

}  // namespace ember::ops
