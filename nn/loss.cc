#include "nn/loss.h"

#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"

namespace ember::nn {

namespace ag = autograd;

Tensor MseLoss(const Tensor& input, const Tensor& target) {
  return ag::Mean(ag::Square(input - target));
}

namespace {

// 1 where the target counts, else 0, in `dtype`, and how many count.
std::pair<Tensor, double> Counted(const Tensor& targets, int64_t ignore_index, DType dtype) {
  const Tensor weight = ops::Ne(targets, ignore_index).To(dtype);
  return {weight, ops::Sum(weight.To(DType::kF64)).item<double>()};
}

}  // namespace

Tensor CrossEntropyLoss(const Tensor& logits, const Tensor& targets, int64_t ignore_index,
                        double label_smoothing) {
  EMBER_CHECK(label_smoothing >= 0 && label_smoothing <= 1,
              "cross_entropy: label_smoothing must be in [0, 1], got ", label_smoothing);
  const Tensor nll = ag::CrossEntropy(logits, targets, ignore_index);
  if (label_smoothing == 0) return nll;
  // The uniform part: -sum_c log_softmax / C per counted row, averaged over those rows.
  const auto [weight, count] = Counted(targets, ignore_index, logits.dtype());
  const Tensor per_row = ag::Sum(ag::LogSoftmax(logits), {-1});
  const Tensor smooth =
      ag::Sum(per_row * weight) * (-1.0 / (static_cast<double>(logits.size(-1)) * count));
  return nll * (1 - label_smoothing) + smooth * label_smoothing;
}

Tensor NllLoss(const Tensor& log_probs, const Tensor& targets, int64_t ignore_index) {
  EMBER_CHECK(log_probs.dim() == 2 && targets.dim() == 1 && targets.size(0) == log_probs.size(0) &&
                  targets.dtype() == DType::kI64,
              "nll_loss: need log_probs [N, C] and i64 targets [N], got ",
              ShapeToString(log_probs.shape()), " and ", ShapeToString(targets.shape()), " ",
              DTypeName(targets.dtype()));
  // pick[n][c] = [c == target_n] for counted rows: a mask, not a gather, since NLL is
  // never on a hot path here (the fused CrossEntropy is).
  const Tensor classes =
      Arange(0, log_probs.size(1), 1, DType::kI64).View({1, -1}).To(log_probs.device());
  const auto [counted, count] = Counted(targets, ignore_index, log_probs.dtype());
  const Tensor pick = ops::Mul(ops::Eq(classes, targets.View({-1, 1})).To(log_probs.dtype()),
                               counted.View({-1, 1}));
  return ag::Sum(log_probs * pick) * (-1.0 / count);
}

Tensor BceWithLogitsLoss(const Tensor& logits, const Tensor& targets) {
  return ag::BinaryCrossEntropyWithLogits(logits, targets);
}

}  // namespace ember::nn
