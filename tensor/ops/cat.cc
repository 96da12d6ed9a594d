#include "tensor/ops/cat.h"

#include "base/error.h"

namespace ember::ops {

Tensor Cat(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "cat: expected at least one tensor");
  const Tensor& first = tensors.front();
  EMBER_CHECK(first.dim() > 0, "cat: zero-dimensional tensors cannot be joined");
  dim = NormalizeDim(dim, first.dim(), "cat");
  Shape shape = first.shape();
  shape[dim] = 0;
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dtype() == first.dtype() && t.device() == first.device(),
                "cat: tensors of dtype ", DTypeName(first.dtype()), " on ",
                first.device().ToString(), " and ", DTypeName(t.dtype()), " on ",
                t.device().ToString());
    bool same = t.dim() == first.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d) same = d == dim || t.size(d) == first.size(d);
    EMBER_CHECK(same, "cat: shapes ", ShapeToString(first.shape()), " and ",
                ShapeToString(t.shape()), " differ outside dimension ", dim);
    shape[dim] += t.size(dim);
  }
  const Tensor out = Empty(shape, first.dtype(), first.device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    out.Narrow(dim, offset, t.size(dim)).CopyFrom(t);
    offset += t.size(dim);
  }
  return out;
}

Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack: expected at least one tensor");
  dim = NormalizeDim(dim, tensors.front().dim() + 1, "stack");
  std::vector<Tensor> pieces;
  pieces.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.shape() == tensors.front().shape(), "stack: shapes ",
                ShapeToString(tensors.front().shape()), " and ", ShapeToString(t.shape()),
                " differ");
    pieces.push_back(t.Unsqueeze(dim));
  }
  return Cat(pieces, dim);
}

}  // namespace ember::ops
