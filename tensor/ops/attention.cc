#include "tensor/ops/attention.h"

#include <algorithm>

#include "kernels/attention.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

// The heads (the product of the leading dimensions); the dtype the kernel is given q, k,
// v and dy in and writes y and the gradients in, and the compute dtype (lse's). The
// kernels read and write bf16 themselves (CUDA's for heads of d = 64; other heads are
// widened for them).
// (CUDA's bf16 kernels have no dropout: those heads are widened too.)
int64_t Check(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
              const kernels::AttentionDropout& dropout, DType* kernel, DType* compute) {
  internal::SameDevice(op, {q, k, v});
  *compute = internal::FloatComputeDType(op, q);
  EMBER_CHECK(dropout.p >= 0 && dropout.p <= 1, op, ": dropout probability must be in [0, 1], got ",
              dropout.p);
  const bool bf16 = q.dtype() == DType::kBF16 &&
                    (q.device().is_cpu() || kernels::CudaTakesBf16Heads(q.size(-1), dropout));
  *kernel = bf16 ? DType::kBF16 : *compute;
  EMBER_CHECK(q.dim() >= 2 && q.dim() == k.dim() && k.shape() == v.shape() &&
                  std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()) &&
                  q.size(-1) == k.size(-1) && q.size(-2) <= k.size(-2),
              op, ": expected q [..., tq, d] and k, v [..., tk, d] with tq <= tk, got ",
              ShapeToString(q.shape()), ", ", ShapeToString(k.shape()), " and ",
              ShapeToString(v.shape()));
  EMBER_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), op,
              ": q, k and v must share a dtype, got ", DTypeName(q.dtype()), ", ",
              DTypeName(k.dtype()), " and ", DTypeName(v.dtype()));
  const int64_t rows = q.size(-2) * q.size(-1);
  return rows == 0 ? 0 : q.numel() / rows;
}

// The elements from one head of t [..., rows, d] to the next when its rows are contiguous
// and its heads (the leading dimensions flattened) evenly spaced a whole number of rows
// apart, at least `rows` rows: rows d for a contiguous t, capacity d for the first rows
// of a cache [..., capacity, d]. 0 when t is not so laid out.
int64_t HeadStride(const Tensor& t) {
  const int64_t rows = t.size(-2), d = t.size(-1);
  if ((d > 1 && t.stride(-1) != 1) || (rows > 1 && t.stride(-2) != d)) return 0;
  int64_t stride = rows * d;  // one head's
  int64_t next = -1;          // what the next outer dimension's stride must be (-1: any)
  for (int64_t i = t.dim() - 3; i >= 0; --i) {
    if (t.size(i) == 1) continue;
    if (next == -1) {
      stride = t.stride(i);
    } else if (t.stride(i) != next) {
      return 0;
    }
    next = t.stride(i) * t.size(i);
  }
  return stride >= rows * d && d > 0 && stride % d == 0 ? stride : 0;
}

}  // namespace

CausalAttentionResult CausalAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const kernels::AttentionDropout& dropout) {
  DType kernel, compute;
  const int64_t heads = Check("causal_attention", q, k, v, dropout, &kernel, &compute);
  const int64_t tq = q.size(-2), tk = k.size(-2), d = q.size(-1);
  // K and V are read in place when their heads are laid out alike (a cache's first tk
  // rows), else copied contiguous.
  const int64_t in_place = k.dtype() == kernel ? HeadStride(k) : 0;
  const bool strided = in_place != 0 && HeadStride(v) == in_place && v.dtype() == kernel;
  const Tensor qc = q.To(kernel).Contiguous(), kc = strided ? k : k.To(kernel).Contiguous(),
               vc = strided ? v : v.To(kernel).Contiguous();
  const int64_t kv_stride = strided ? in_place : tk * d;
  std::vector<int64_t> lse_shape(q.shape().begin(), q.shape().end() - 1);
  CausalAttentionResult result{Empty(q.shape(), kernel, q.device()),
                               Empty(lse_shape, compute, q.device()), dropout};
  if (heads > 0 && tq > 0 && d > 0) {
    EMBER_KERNEL(CausalAttentionForward)
        .On(q.device())(kernel, heads, tq, tk, d, qc.raw_data(), kc.raw_data(), vc.raw_data(),
                        kv_stride, result.y.raw_data(), result.lse.raw_data(), dropout);
  } else {
    result.y.Fill(0);
    result.lse.Fill(0);
  }
  result.y = result.y.To(q.dtype());
  return result;
}

CausalAttentionGrads CausalAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const CausalAttentionResult& forward,
                                             const Tensor& dy) {
  DType kernel, compute;
  const int64_t heads =
      Check("causal_attention_backward", q, k, v, forward.dropout, &kernel, &compute);
  EMBER_CHECK(dy.shape() == q.shape() && forward.y.shape() == q.shape(),
              "causal_attention_backward: dy ", ShapeToString(dy.shape()), " and y ",
              ShapeToString(forward.y.shape()), " must have the queries' shape ",
              ShapeToString(q.shape()));
  internal::SameDevice("causal_attention_backward", {q, dy, forward.y, forward.lse});
  const int64_t tq = q.size(-2), tk = k.size(-2), d = q.size(-1);
  const Tensor qc = q.To(kernel).Contiguous(), kc = k.To(kernel).Contiguous(),
               vc = v.To(kernel).Contiguous();
  const Tensor y = forward.y.To(kernel).Contiguous(), g = dy.To(kernel).Contiguous();
  CausalAttentionGrads grads{Empty(q.shape(), kernel, q.device()),
                             Empty(k.shape(), kernel, q.device()),
                             Empty(k.shape(), kernel, q.device())};
  if (heads > 0 && tq > 0 && d > 0) {
    EMBER_KERNEL(CausalAttentionBackward)
        .On(q.device())(kernel, heads, tq, tk, d, qc.raw_data(), kc.raw_data(), vc.raw_data(),
                        y.raw_data(), forward.lse.raw_data(), g.raw_data(), grads.dq.raw_data(),
                        grads.dk.raw_data(), grads.dv.raw_data(), forward.dropout);
  } else {
    for (Tensor* t : {&grads.dq, &grads.dk, &grads.dv}) t->Fill(0);
  }
  grads.dq = grads.dq.To(q.dtype());
  grads.dk = grads.dk.To(k.dtype());
  grads.dv = grads.dv.To(v.dtype());
  return grads;
}

}  // namespace ember::ops
