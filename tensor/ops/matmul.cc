#include "tensor/ops/matmul.h"

#include <vector>

#include "kernels/matmul.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/internal/backend.h"

namespace ember::ops {
namespace {

// Whether the dimensions before the last two merge into one without a copy (x.View
// can then make [rows, k] of x [..., m, k]).
bool LeadingDimsMerge(const Tensor& x) {
  for (int64_t d = x.dim() - 3; d >= 0; --d) {
    if (x.size(d) != 1 && x.stride(d) != x.stride(d + 1) * x.size(d + 1)) return false;
  }
  return true;
}

}  // namespace

Tensor Matmul(const Tensor& a, const Tensor& b) {
  const Device device = internal::SameDevice("matmul", {a, b});
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1,
              "matmul: both operands need at least 1 dimension, got shapes ",
              ShapeToString(a.shape()), " and ", ShapeToString(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "matmul: dtypes differ (", DTypeName(a.dtype()), " and ",
              DTypeName(b.dtype()), ")");
  EMBER_CHECK(IsFloatingPoint(a.dtype()), "matmul: expected floating-point tensors, got dtype ",
              DTypeName(a.dtype()));
  // Vectors become matrices: a row [1, k] on the left, a column [k, 1] on the right.
  const Tensor x = a.dim() == 1 ? a.Unsqueeze(0) : a;
  const Tensor y = b.dim() == 1 ? b.Unsqueeze(1) : b;
  const int64_t m = x.size(-2), k = x.size(-1), n = y.size(-1);
  EMBER_CHECK(y.size(-2) == k, "matmul: shapes ", ShapeToString(a.shape()), " and ",
              ShapeToString(b.shape()), " cannot be multiplied (", k, " != ", y.size(-2), ")");
  // The batch dimensions broadcast; the message names the whole shapes (built only on
  // failure: matmul is called per attention head).
  Shape batch;
  try {
    batch = BroadcastShapes(IntSpan(x.shape()).subspan(0, x.dim() - 2),
                            IntSpan(y.shape()).subspan(0, y.dim() - 2), "matmul");
  } catch (const Error& e) {
    EMBER_THROW("matmul: the batch dimensions of ", ShapeToString(a.shape()), " and ",
                ShapeToString(b.shape()), " cannot be broadcast (", e.what(), ")");
  }
  // [..., m, k] x [k, n]: one product of all the rows, so B is packed once.
  if (x.dim() > 2 && y.dim() == 2 && LeadingDimsMerge(x)) {
    Shape out_shape(x.shape().begin(), x.shape().end() - 1);
    out_shape.push_back(n);
    Tensor out = Matmul(x.View({-1, k}), y).View(out_shape);
    return b.dim() == 1 ? out.Squeeze(-1) : out;
  }
  // bf16 stays bf16 (the kernels sum its products in f32 and round once); f16 computes
  // in f32.
  const DType compute = a.dtype() == DType::kF16 ? DType::kF32 : a.dtype();
  Shape x_shape = batch, y_shape = batch, out_shape = batch;
  x_shape.insert(x_shape.end(), {m, k});
  y_shape.insert(y_shape.end(), {k, n});
  out_shape.insert(out_shape.end(), {m, n});
  const Tensor xb = x.To(compute).Expand(x_shape), yb = y.To(compute).Expand(y_shape);
  Tensor out = Empty(out_shape, compute, device);
  // Each product's offset in x and y (batch dimensions broadcast with stride 0).
  const int64_t batches = NumElements(batch);
  const Strides x_batch(xb.strides().begin(), xb.strides().end() - 2);
  const Strides y_batch(yb.strides().begin(), yb.strides().end() - 2);
  std::vector<int64_t> x_offsets, y_offsets;
  x_offsets.reserve(batches);
  y_offsets.reserve(batches);
  for (NdIndexIterator it(batch); !it.done(); it.Next()) {
    x_offsets.push_back(FlatIndex(it.index(), x_batch));
    y_offsets.push_back(FlatIndex(it.index(), y_batch));
  }
  EMBER_KERNEL(GemmBatched)
      .On(device)(compute, batches, m, k, n, {xb.raw_data(), xb.stride(-2), xb.stride(-1)},
                  x_offsets.data(), {yb.raw_data(), yb.stride(-2), yb.stride(-1)}, y_offsets.data(),
                  out.raw_data(), n, m * n, /*accumulate=*/false);
  if (a.dim() == 1) out = out.Squeeze(-2);
  if (b.dim() == 1) out = out.Squeeze(-1);
  return out.To(a.dtype());
}

Tensor MatmulToF32(const Tensor& a, const Tensor& b) {
  const Device device = internal::SameDevice("matmul", {a, b});
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) && a.dtype() == DType::kBF16 &&
                  b.dtype() == DType::kBF16,
              "matmul into f32: expected bf16 [m, k] and [k, n], got ", DTypeName(a.dtype()), " ",
              ShapeToString(a.shape()), " and ", DTypeName(b.dtype()), " ",
              ShapeToString(b.shape()));
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor out = Empty({m, n}, DType::kF32, device);
  EMBER_KERNEL(GemmBf16F32)
      .On(device)(m, k, n, {a.raw_data(), a.stride(0), a.stride(1)},
                  {b.raw_data(), b.stride(0), b.stride(1)}, out.raw_data(), n,
                  /*accumulate=*/false);
  return out;
}

Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1),
              "linear: input of shape ", ShapeToString(x.shape()), " and weight of shape ",
              ShapeToString(weight.shape()), " (expected [..., in] and [out, in])");
  const int64_t in = weight.size(1), out = weight.size(0);
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out), "linear: bias of shape ",
              ShapeToString(bias.shape()), " for ", out, " outputs");
  const Device device = internal::SameDevice("linear", {x, weight, bias});
  const bool fused = x.dtype() != DType::kF16 && weight.dtype() == x.dtype() &&
                     (!bias.defined() || bias.dtype() == x.dtype());
  if (!fused || !bias.defined()) {
    const Tensor y = Matmul(x, weight.Transpose(0, 1));
    return bias.defined() ? Add(y, bias) : y;
  }
  const Tensor rows = x.Reshape({-1, in});  // a view when the dimensions merge
  Shape out_shape(x.shape().begin(), x.shape().end() - 1);
  out_shape.push_back(out);
  Tensor y = Empty(out_shape, x.dtype(), device);
  const Tensor b = bias.Contiguous();
  EMBER_KERNEL(GemmBias).On(device)(
      x.dtype(), rows.size(0), in, out, {rows.raw_data(), rows.stride(0), rows.stride(1)},
      {weight.raw_data(), weight.stride(1), weight.stride(0)}, b.raw_data(), y.raw_data(), out);
  return y;
}

}  // namespace ember::ops
