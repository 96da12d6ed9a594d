#include "autograd/reduce.h"

#include "autograd/engine.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"

namespace ember::autograd {
namespace {

// x's shape with the reduced dimensions set to 1: the shape a keepdim result has, to
// which a gradient without keepdim is reshaped before it broadcasts back over x.
Shape KeptShape(const Tensor& x, IntSpan dims) {
  Shape kept = x.shape();
  if (dims.empty()) {
    for (int64_t& size : kept) size = 1;
  }
  for (int64_t d : dims) kept[NormalizeDim(d, x.dim(), "reduce")] = 1;
  return kept;
}

// Elements of x per output element.
double ReducedCount(const Tensor& x, const Shape& kept) {
  const int64_t out = NumElements(kept);
  return out == 0 ? 0.0 : static_cast<double>(x.numel()) / static_cast<double>(out);
}

}  // namespace

// d sum / dx_i = 1: g broadcast back over the reduced dimensions.
Tensor Sum(const Tensor& x, IntSpan dims, bool keepdim) {
  const Tensor out = WithoutGrad([&] { return ops::Sum(x, dims, keepdim); });
  if (!ShouldRecord({x})) return out;
  return Record("sum", out, {x}, [kept = KeptShape(x, dims), shape = x.shape()](const Tensor& g) {
    return std::vector<Tensor>{g.Reshape(kept).Expand(shape)};
  });
}

Tensor Mean(const Tensor& x, IntSpan dims, bool keepdim) {
  const Tensor out = WithoutGrad([&] { return ops::Mean(x, dims, keepdim); });
  if (!ShouldRecord({x})) return out;
  const Shape kept = KeptShape(x, dims);
  return Record("mean", out, {x},
                [kept, n = ReducedCount(x, kept), shape = x.shape()](const Tensor& g) {
                  return std::vector<Tensor>{ops::Div(g.Reshape(kept), n).Expand(shape)};
                });
}

namespace {

// g shared among the positions of x equal to the (kept) extreme m.
Tensor Extreme(const char* name, const Tensor& x, const Tensor& out, IntSpan dims) {
  if (!ShouldRecord({x})) return out;
  const Shape kept = KeptShape(x, dims);
  return Record(name, out, {x},
                [saved_x = SavedTensor(x), saved_m = SavedTensor(out), kept,
                 dims = Shape(dims.begin(), dims.end())](const Tensor& g) {
                  const Tensor& x = saved_x.get();
                  const Tensor m = saved_m.get().Reshape(kept);
                  const Tensor hit = ops::Eq(x, m).To(x.dtype());
                  const Tensor ties = ops::Sum(hit, dims, /*keepdim=*/true);
                  return std::vector<Tensor>{ops::Mul(hit, ops::Div(g.Reshape(m.shape()), ties))};
                });
}

}  // namespace

Tensor Max(const Tensor& x, IntSpan dims, bool keepdim) {
  return Extreme("max", x, WithoutGrad([&] { return ops::Max(x, dims, keepdim); }), dims);
}

Tensor Min(const Tensor& x, IntSpan dims, bool keepdim) {
  return Extreme("min", x, WithoutGrad([&] { return ops::Min(x, dims, keepdim); }), dims);
}

// var = sum (x - mean)^2 / (N - c)  =>  d var / dx_i = 2 (x_i - mean) / (N - c).
Tensor Var(const Tensor& x, IntSpan dims, int64_t correction, bool keepdim) {
  const Tensor out = WithoutGrad([&] { return ops::Var(x, dims, correction, keepdim); });
  if (!ShouldRecord({x})) return out;
  const Shape kept = KeptShape(x, dims);
  return Record(
      "var", out, {x},
      [saved_x = SavedTensor(x), kept, dims = Shape(dims.begin(), dims.end()),
       denominator = ReducedCount(x, kept) - static_cast<double>(correction)](const Tensor& g) {
        const Tensor& x = saved_x.get();
        const Tensor centered = ops::Sub(x, ops::Mean(x, dims, /*keepdim=*/true));
        return std::vector<Tensor>{ops::Mul(centered, ops::Div(g.Reshape(kept), denominator / 2))};
      });
}

}  // namespace ember::autograd
