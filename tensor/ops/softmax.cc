#include "tensor/ops/softmax.h"

#include "kernels/softmax.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"
#include "tensor/ops/reduce.h"

namespace ember::ops {
namespace {

// Rows of the last dimension (a 0-d tensor is one row of one).
int64_t RowLength(const Tensor& x) { return x.dim() == 0 ? 1 : x.size(-1); }

using RowsKernel = internal::Kernel<void(DType, int64_t, int64_t, const void*, void*)>;
using RowsBackwardKernel =
    internal::Kernel<void(DType, int64_t, int64_t, const void*, const void*, void*)>;

// The kernels read and write f32, f64 and bf16 (in f32); f16 goes through f32.
Tensor Forward(const char* op, const Tensor& x, const RowsKernel& kernel) {
  const DType compute = internal::FloatOrBf16DType(op, x);
  const Tensor in = x.To(compute).Contiguous();
  const int64_t n = RowLength(x);
  Tensor out = Empty(x.shape(), compute, x.device());
  kernel.On(x.device())(compute, n == 0 ? 0 : x.numel() / n, n, in.raw_data(), out.raw_data());
  return out.To(x.dtype());
}

Tensor Backward(const char* op, const Tensor& y, const Tensor& dy,
                const RowsBackwardKernel& kernel) {
  const Device device = internal::SameDevice(op, {y, dy});
  const DType compute = internal::FloatOrBf16DType(op, y);
  EMBER_CHECK(y.shape() == dy.shape() && y.dtype() == dy.dtype(), op, ": dy (",
              DTypeName(dy.dtype()), ", shape ", ShapeToString(dy.shape()),
              ") does not match the output (", DTypeName(y.dtype()), ", shape ",
              ShapeToString(y.shape()), ")");
  const Tensor a = y.To(compute).Contiguous(), g = dy.To(compute).Contiguous();
  const int64_t n = RowLength(y);
  Tensor out = Empty(y.shape(), compute, device);
  kernel.On(device)(compute, n == 0 ? 0 : y.numel() / n, n, a.raw_data(), g.raw_data(),
                    out.raw_data());
  return out.To(y.dtype());
}

// Checks logits [rows, n] (the first `classes` columns the classes) and targets [rows];
// on the host, each target's value too (on a GPU that would wait for it: a target out of
// range gives a NaN loss there).
void CheckCrossEntropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index,
                       int64_t classes) {
  internal::SameDevice("cross_entropy", {logits, targets});
  internal::FloatComputeDType("cross_entropy", logits);
  EMBER_CHECK(logits.dim() == 2 && targets.dim() == 1 && targets.size(0) == logits.size(0),
              "cross_entropy: expected logits [rows, classes] and targets [rows], got ",
              ShapeToString(logits.shape()), " and ", ShapeToString(targets.shape()));
  EMBER_CHECK(targets.dtype() == DType::kI64, "cross_entropy: targets must be i64, got ",
              DTypeName(targets.dtype()));
  EMBER_CHECK(classes >= 1 && classes <= logits.size(1), "cross_entropy: ", classes,
              " classes in rows of ", logits.size(1));
  if (!targets.device().is_cpu()) return;
  const Tensor t = targets.Contiguous();
  const int64_t* data = t.data<int64_t>();
  for (int64_t r = 0; r < t.numel(); ++r) {
    EMBER_CHECK(data[r] == ignore_index || (data[r] >= 0 && data[r] < classes),
                "cross_entropy: target ", data[r], " at row ", r, " is out of range for ", classes,
                " classes");
  }
}

}  // namespace

Tensor Softmax(const Tensor& x) { return Forward("softmax", x, EMBER_KERNEL(Softmax)); }
Tensor LogSoftmax(const Tensor& x) { return Forward("log_softmax", x, EMBER_KERNEL(LogSoftmax)); }
Tensor SoftmaxBackward(const Tensor& y, const Tensor& dy) {
  return Backward("softmax_backward", y, dy, EMBER_KERNEL(SoftmaxBackward));
}
Tensor LogSoftmaxBackward(const Tensor& y, const Tensor& dy) {
  return Backward("log_softmax_backward", y, dy, EMBER_KERNEL(LogSoftmaxBackward));
}

CrossEntropyResult CrossEntropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index,
                                std::optional<DType> loss_dtype, int64_t classes) {
  if (classes < 0 && logits.dim() == 2) classes = logits.size(1);
  CheckCrossEntropy(logits, targets, ignore_index, classes);
  // The kernel reads f32, f64 or bf16 logits; its row statistics are f32 or f64.
  const DType kernel = internal::FloatOrBf16DType("cross_entropy", logits);
  const DType compute = logits.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  const Tensor x = logits.To(kernel).Contiguous(), t = targets.Contiguous();
  const int64_t rows = x.size(0);
  const Device device = logits.device();
  Tensor losses = Empty({rows}, compute, device);
  // Everything stays on the logits' device: nothing here waits for a GPU.
  CrossEntropyResult result{Tensor(), Empty({rows}, compute, device),
                            Empty({rows}, compute, device),
                            Sum(Ne(t, Scalar(ignore_index)).To(compute)), classes};
  EMBER_KERNEL(CrossEntropyForward)
      .On(device)(kernel, rows, x.size(1), classes, x.raw_data(), t.data<int64_t>(), ignore_index,
                  losses.raw_data(), result.row_max.raw_data(), result.sum_exp.raw_data());
  // The mean over counted rows (0 / 0 = NaN when none count, as PyTorch).
  result.loss = Div(Sum(losses.To(DType::kF64)), result.count.To(DType::kF64))
                    .To(loss_dtype.value_or(logits.dtype()));
  return result;
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& targets,
                            const CrossEntropyResult& forward, const Tensor& grad,
                            int64_t ignore_index, bool in_place) {
  CheckCrossEntropy(logits, targets, ignore_index, forward.classes);
  const DType kernel = internal::FloatOrBf16DType("cross_entropy_backward", logits);
  EMBER_CHECK(!in_place || (logits.is_contiguous() && logits.dtype() == kernel),
              "cross_entropy_backward: in place needs contiguous f32, f64 or bf16 logits, got ",
              DTypeName(logits.dtype()), logits.is_contiguous() ? "" : " (not contiguous)");
  const DType compute = forward.row_max.dtype();
  const Tensor x = logits.To(kernel).Contiguous(), t = targets.Contiguous();
  const int64_t rows = x.size(0), n = x.size(1);
  EMBER_CHECK(grad.numel() == 1 && grad.device() == logits.device(),
              "cross_entropy_backward: the loss's gradient must be one number on the logits' "
              "device, got ",
              ShapeToString(grad.shape()), " on ", grad.device().ToString());
  // Each counted row's loss enters the mean with weight 1 / count (ignored rows, the
  // only ones when count is 0, get zeros whatever their weight).
  const Tensor row_grad =
      Div(grad.Reshape({}).To(compute), forward.count).Expand({rows}).Contiguous();
  Tensor dlogits = in_place ? x : Empty({rows, n}, kernel, logits.device());
  EMBER_KERNEL(CrossEntropyBackward)
      .On(logits.device())(kernel, rows, n, forward.classes, x.raw_data(), t.data<int64_t>(),
                           ignore_index, forward.row_max.raw_data(), forward.sum_exp.raw_data(),
                           row_grad.raw_data(), dlogits.raw_data());
  return dlogits.To(logits.dtype());
}

}  // namespace ember::ops
