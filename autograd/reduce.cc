#include "autograd/reduce.h"

#include "autograd/engine.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/embedding.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/scan.h"

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

Tensor Cumsum(const Tensor& x, int64_t dim) {
  const Tensor out = WithoutGrad([&] { return ops::Cumsum(x, dim); });
  if (!ShouldRecord({x})) return out;
  return Record("cumsum", out, {x}, [dim](const Tensor& g) {
    return std::vector<Tensor>{ops::Cumsum(g, dim, /*reverse=*/true)};
  });
}

Tensor Cumprod(const Tensor& x, int64_t dim) {
  const Tensor out = WithoutGrad([&] { return ops::Cumprod(x, dim); });
  if (!ShouldRecord({x})) return out;
  return Record("cumprod", out, {x}, [saved_x = SavedTensor(x), dim](const Tensor& g) {
    return std::vector<Tensor>{ops::CumprodBackward(saved_x.get(), g, dim)};
  });
}

std::pair<Tensor, Tensor> Sort(const Tensor& x, int64_t dim, bool descending) {
  ops::SortResult sorted = WithoutGrad([&] { return ops::Sort(x, dim, descending); });
  if (!ShouldRecord({x}) || x.dim() == 0) {
    if (x.dim() == 0 && ShouldRecord({x})) {  // one element: values = x
      sorted.values = Record("sort", sorted.values, {x},
                             [](const Tensor& g) { return std::vector<Tensor>{g}; });
    }
    return {sorted.values, sorted.indices};
  }
  // With dim last, as [rows, n]: output (r, j) came from x's flat position r n + index.
  const int64_t d = NormalizeDim(dim, x.dim(), "sort"), last = x.dim() - 1;
  const Tensor moved = sorted.indices.Transpose(d, last).Contiguous();
  const int64_t n = x.size(d), count = x.numel(), rows = n == 0 ? 0 : count / n;
  const Tensor starts = ops::Mul(Arange(rows).To(x.device()), n).Reshape({rows, 1});
  const Tensor positions = ops::Add(moved.Reshape({rows, n}), starts).Reshape({count});
  const Tensor values =
      Record("sort", sorted.values, {x},
             [positions, moved_shape = moved.shape(), d, last, count](const Tensor& g) {
               const Tensor rows = g.Transpose(d, last).Contiguous().Reshape({count, 1});
               const Tensor dx = ops::EmbeddingBackward(rows, positions, count);
               return std::vector<Tensor>{dx.Reshape(moved_shape).Transpose(d, last)};
             });
  return {values, sorted.indices};
}

}  // namespace ember::autograd
