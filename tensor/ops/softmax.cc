#include "tensor/ops/softmax.h"

#include "kernels/softmax.h"
#include "tensor/creation.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

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

// Checks logits [rows, n] (the first `classes` columns the classes) and targets [rows]
// and returns the count of rows that are not ignored.
int64_t CheckCrossEntropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index,
                          int64_t classes) {
  internal::SameDevice("cross_entropy", {logits, targets});
  internal::FloatComputeDType("cross_entropy", logits);
  EMBER_CHECK(logits.dim() == 2 && targets.dim() == 1 && targets.size(0) == logits.size(0),
              "cross_entropy: expected logits [rows, classes] and targets [rows], got ",
              ShapeToString(logits.shape()), " and ", ShapeToString(targets.shape()));
  EMBER_CHECK(targets.dtype() == DType::kI64, "cross_entropy: targets must be i64, got ",
              DTypeName(targets.dtype()));
  // Read on the host (from a GPU, one copy of the targets: the check needs their values).
  EMBER_CHECK(classes >= 1 && classes <= logits.size(1), "cross_entropy: ", classes,
              " classes in rows of ", logits.size(1));
  const Tensor t = targets.To(Device::Cpu()).Contiguous();
  const int64_t* data = t.data<int64_t>();
  int64_t count = 0;
  for (int64_t r = 0; r < t.numel(); ++r) {
    if (data[r] == ignore_index) continue;
    EMBER_CHECK(data[r] >= 0 && data[r] < classes, "cross_entropy: target ", data[r], " at row ", r,
                " is out of range for ", classes, " classes");
    ++count;
  }
  return count;
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
  const int64_t count = CheckCrossEntropy(logits, targets, ignore_index, classes);
  // The kernel reads f32, f64 or bf16 logits; its row statistics are f32 or f64.
  const DType kernel = internal::FloatOrBf16DType("cross_entropy", logits);
  const DType compute = logits.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  const Tensor x = logits.To(kernel).Contiguous(), t = targets.Contiguous();
  const int64_t rows = x.size(0);
  const Device device = logits.device();
  Tensor losses = Empty({rows}, compute, device);
  CrossEntropyResult result{Tensor(), Empty({rows}, compute, device),
                            Empty({rows}, compute, device), count, classes};
  EMBER_KERNEL(CrossEntropyForward)
      .On(device)(kernel, rows, x.size(1), classes, x.raw_data(), t.data<int64_t>(), ignore_index,
                  losses.raw_data(), result.row_max.raw_data(), result.sum_exp.raw_data());
  // The mean over counted rows, summed in double on the host (as loss.item() would
  // wait for the GPU anyway).
  const Tensor host_losses = losses.To(Device::Cpu());
  double total = 0;
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t r = 0; r < rows; ++r) total += host_losses.data<T>()[r];
    }
  });
  result.loss =
      Full({}, count == 0 ? NAN : total / count, loss_dtype.value_or(logits.dtype())).To(device);
  return result;
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& targets,
                            const CrossEntropyResult& forward, double grad, int64_t ignore_index,
                            bool in_place) {
  CheckCrossEntropy(logits, targets, ignore_index, forward.classes);
  const DType kernel = internal::FloatOrBf16DType("cross_entropy_backward", logits);
  EMBER_CHECK(!in_place || (logits.is_contiguous() && logits.dtype() == kernel),
              "cross_entropy_backward: in place needs contiguous f32, f64 or bf16 logits, got ",
              DTypeName(logits.dtype()), logits.is_contiguous() ? "" : " (not contiguous)");
  const DType compute = forward.row_max.dtype();
  const Tensor x = logits.To(kernel).Contiguous(), t = targets.Contiguous();
  const int64_t rows = x.size(0), n = x.size(1);
  // Each counted row's loss enters the mean with weight 1 / count.
  const Tensor row_grad =
      Full({rows}, forward.count == 0 ? 0.0 : grad / forward.count, compute).To(logits.device());
  Tensor dlogits = in_place ? x : Empty({rows, n}, kernel, logits.device());
  EMBER_KERNEL(CrossEntropyBackward)
      .On(logits.device())(kernel, rows, n, forward.classes, x.raw_data(), t.data<int64_t>(),
                           ignore_index, forward.row_max.raw_data(), forward.sum_exp.raw_data(),
                           row_grad.raw_data(), dlogits.raw_data());
  return dlogits.To(logits.dtype());
}

}  // namespace ember::ops
