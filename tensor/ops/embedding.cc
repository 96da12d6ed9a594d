#include "tensor/ops/embedding.h"

#include "kernels/embedding.h"
#include "tensor/creation.h"
#include "tensor/ops/internal/backend.h"

namespace ember::ops {
namespace {

// Contiguous ids; on the host each is checked against the vocabulary size (on a GPU that
// would wait for it: the kernels give an id out of range a row of NaN there).
Tensor CheckIds(const char* op, const Tensor& ids, int64_t vocab) {
  EMBER_CHECK(ids.dtype() == DType::kI64, op, ": ids must be i64, got ", DTypeName(ids.dtype()));
  const Tensor flat = ids.Contiguous();
  if (!flat.device().is_cpu()) return flat;
  const int64_t* data = flat.data<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    EMBER_CHECK(data[i] >= 0 && data[i] < vocab, op, ": id ", data[i], " at position ", i,
                " is out of range for a vocabulary of ", vocab);
  }
  return flat;
}

}  // namespace

Tensor Embedding(const Tensor& weight, const Tensor& ids) {
  EMBER_CHECK(weight.dim() == 2, "embedding: weight must be [vocab, dim], got ",
              ShapeToString(weight.shape()));
  const Device device = internal::SameDevice("embedding", {weight, ids});
  const Tensor flat = CheckIds("embedding", ids, weight.size(0));
  const Tensor w = weight.Contiguous();
  Shape shape = ids.shape();
  shape.push_back(weight.size(1));
  Tensor out = Empty(shape, weight.dtype(), device);
  EMBER_KERNEL(EmbeddingForward)
      .On(device)(weight.dtype(), flat.numel(), weight.size(1), weight.size(0), w.raw_data(),
                  flat.data<int64_t>(), out.raw_data());
  return out;
}

void EmbeddingBackwardInto(const Tensor& dout, const Tensor& ids, const Tensor& dweight) {
  const Device device = internal::SameDevice("embedding_backward", {dout, ids, dweight});
  EMBER_CHECK(
      dweight.dim() == 2 && dweight.is_contiguous() && dweight.dtype() == dout.dtype() &&
          (dout.dtype() == DType::kF32 || dout.dtype() == DType::kF64),
      "embedding_backward: the gradient to add to must be contiguous [vocab, dim] of dout's dtype "
      "(f32 or f64), got ",
      ShapeToString(dweight.shape()), " ", DTypeName(dweight.dtype()), " for dout ",
      DTypeName(dout.dtype()));
  const Tensor flat = CheckIds("embedding_backward", ids, dweight.size(0));
  EMBER_CHECK(dout.dim() == ids.dim() + 1 &&
                  IntSpan(dout.shape()).subspan(0, ids.dim()) == IntSpan(ids.shape()) &&
                  dout.size(-1) == dweight.size(1),
              "embedding_backward: dout of shape ", ShapeToString(dout.shape()),
              " does not match ids of shape ", ShapeToString(ids.shape()), " plus [",
              dweight.size(1), "]");
  const Tensor g = dout.Contiguous();
  EMBER_KERNEL(EmbeddingBackward)
      .On(device)(dout.dtype(), flat.numel(), dweight.size(1), dweight.size(0),
                  flat.data<int64_t>(), g.raw_data(), dweight.raw_data());
}

Tensor EmbeddingBackward(const Tensor& dout, const Tensor& ids, int64_t vocab) {
  EMBER_CHECK(IsFloatingPoint(dout.dtype()) && dout.dim() >= 1,
              "embedding_backward: dout must be floating point with a last [dim] axis, got ",
              ShapeToString(dout.shape()), " ", DTypeName(dout.dtype()));
  const DType compute = dout.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  const Tensor dweight = Zeros({vocab, dout.size(-1)}, compute, dout.device());
  EmbeddingBackwardInto(dout.To(compute), ids, dweight);
  return dweight.To(dout.dtype());
}

}  // namespace ember::ops
