#include "autograd/views.h"

#include <utility>

#include "autograd/engine.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/cat.h"
#include "tensor/ops/reduce.h"

namespace ember::autograd {
namespace {

// Marks a recorded result that shares x's memory as a view (AutogradMeta::is_view).
Tensor MarkView(const Tensor& x, const Tensor& out) {
  if (out.autograd_meta() && out.storage().is_same(x.storage()))
    out.autograd_meta()->is_view = true;
  return out;
}

// A function of x alone whose gradient is `backward(g)`.
template <typename Backward>
Tensor Recorded(const char* name, const Tensor& x, const Tensor& out, Backward backward) {
  if (!ShouldRecord({x})) return out;
  return MarkView(x, Record(name, out, {x}, [backward = std::move(backward)](const Tensor& g) {
                    return std::vector<Tensor>{backward(g)};
                  }));
}

// The gradient of a reshaping view: g in the input's shape.
Tensor Reshaped(const char* name, const Tensor& x, const Tensor& out) {
  return Recorded(name, x, out, [shape = x.shape()](const Tensor& g) { return g.Reshape(shape); });
}

// The gradient of a view that picks some of x's elements: zeros with g written where
// `pick` (the same view, applied to the gradient) puts them. Where x already has a
// gradient from another of its views (the pieces of a Split: attention's q, k and v),
// g is added into that one's picked elements instead: for GPT-2's [B, T, 3 C]
// projection, one zeroed gradient and two slice additions where each piece made and
// summed a whole zeroed [B, T, 3 C].
template <typename Pick>
Tensor Picked(const char* name, const Tensor& x, Pick pick) {
  const Tensor out = WithoutGrad([&] { return pick(x); });
  if (!ShouldRecord({x})) return out;
  return MarkView(x, Record(
                         name, out, {x},
                         [shape = x.shape(), pick](const Tensor& g) {
                           const Tensor grad = Zeros(shape, g.dtype(), g.device());
                           pick(grad).CopyFrom(g);
                           return std::vector<Tensor>{grad};
                         },
                         [pick](const Tensor& g, const Tensor& into) {
                           if (into.dtype() != g.dtype()) return false;
                           const Tensor picked = pick(into);
                           picked.CopyFrom(ops::Add(picked, g));
                           return true;
                         }));
}

}  // namespace

Tensor View(const Tensor& x, IntSpan shape) {
  return Reshaped("view", x, WithoutGrad([&] { return x.View(shape); }));
}
Tensor Reshape(const Tensor& x, IntSpan shape) {
  return Reshaped("reshape", x, WithoutGrad([&] { return x.Reshape(shape); }));
}
Tensor Squeeze(const Tensor& x) {
  return Reshaped("squeeze", x, WithoutGrad([&] { return x.Squeeze(); }));
}
Tensor Squeeze(const Tensor& x, int64_t dim) {
  return Reshaped("squeeze", x, WithoutGrad([&] { return x.Squeeze(dim); }));
}
Tensor Unsqueeze(const Tensor& x, int64_t dim) {
  return Reshaped("unsqueeze", x, WithoutGrad([&] { return x.Unsqueeze(dim); }));
}
Tensor Flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  return Reshaped("flatten", x, WithoutGrad([&] { return x.Flatten(start_dim, end_dim); }));
}

// Output dimension d is input dimension dims[d], so the gradient's dimension dims[d]
// is g's dimension d: permute g by the inverse.
Tensor Permute(const Tensor& x, IntSpan dims) {
  const Tensor out = WithoutGrad([&] { return x.Permute(dims); });
  Shape inverse(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) inverse[NormalizeDim(dims[d], x.dim(), "permute")] = d;
  return Recorded("permute", x, out, [inverse](const Tensor& g) { return g.Permute(inverse); });
}

Tensor Transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return Recorded("transpose", x, WithoutGrad([&] { return x.Transpose(dim0, dim1); }),
                  [dim0, dim1](const Tensor& g) { return g.Transpose(dim0, dim1); });
}

Tensor Slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return Picked("slice", x, [=](const Tensor& t) { return t.Slice(dim, start, end, step); });
}

Tensor Narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return Picked("narrow", x, [=](const Tensor& t) { return t.Narrow(dim, start, length); });
}

Tensor Select(const Tensor& x, int64_t dim, int64_t index) {
  return Picked("select", x, [=](const Tensor& t) { return t.Select(dim, index); });
}

Tensor Expand(const Tensor& x, IntSpan shape) {
  return Recorded("expand", x, WithoutGrad([&] { return x.Expand(shape); }),
                  [in = x.shape()](const Tensor& g) { return ops::SumToSize(g, in); });
}

Tensor Contiguous(const Tensor& x) {
  return Recorded("contiguous", x, WithoutGrad([&] { return x.Contiguous(); }),
                  [](const Tensor& g) { return g; });
}

Tensor Clone(const Tensor& x) {
  return Recorded("clone", x, WithoutGrad([&] { return x.Clone(); }),
                  [](const Tensor& g) { return g; });
}

namespace {

// Each of `pieces` (consecutive slabs of x along dim d) as a recorded Narrow of x.
std::vector<Tensor> NarrowEach(const Tensor& x, int64_t d, std::vector<Tensor> pieces) {
  int64_t start = 0;
  for (Tensor& piece : pieces) {
    const int64_t length = piece.size(d);
    piece = Narrow(x, d, start, length);
    start += length;
  }
  return pieces;
}

}  // namespace

std::vector<Tensor> Split(const Tensor& x, int64_t split_size, int64_t dim) {
  std::vector<Tensor> pieces =
      WithoutGrad([&] { return x.Split(split_size, dim); });  // checks the arguments
  return NarrowEach(x, NormalizeDim(dim, x.dim(), "split"), std::move(pieces));
}

std::vector<Tensor> Chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  std::vector<Tensor> pieces = WithoutGrad([&] { return x.Chunk(chunks, dim); });
  return NarrowEach(x, NormalizeDim(dim, x.dim(), "chunk"), std::move(pieces));
}

// Input i's gradient is g's slab of input i's extent along dim.
Tensor Cat(const std::vector<Tensor>& tensors, int64_t dim) {
  const Tensor out = WithoutGrad([&] { return ops::Cat(tensors, dim); });
  if (!ShouldRecord(tensors)) return out;
  const int64_t d = NormalizeDim(dim, out.dim(), "cat");
  std::vector<int64_t> sizes;
  for (const Tensor& t : tensors) sizes.push_back(t.size(d));
  return Record("cat", out, tensors, [d, sizes](const Tensor& g) {
    std::vector<Tensor> grads;
    int64_t start = 0;
    for (int64_t size : sizes) {
      grads.push_back(g.Narrow(d, start, size));
      start += size;
    }
    return grads;
  });
}

Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim) {
  const Tensor out = WithoutGrad([&] { return ops::Stack(tensors, dim); });
  if (!ShouldRecord(tensors)) return out;
  const int64_t d = NormalizeDim(dim, out.dim(), "stack");
  return Record("stack", out, tensors, [d, n = tensors.size()](const Tensor& g) {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < n; ++i) grads.push_back(g.Select(d, static_cast<int64_t>(i)));
    return grads;
  });
}

}  // namespace ember::autograd
