#ifndef EMBER_KERNELS_OPERANDS_H_
#define EMBER_KERNELS_OPERANDS_H_

// The operand descriptions that the kernels of both backends take (kernels/cpu and
// kernels/cuda share every contract, argument for argument).

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"

namespace ember::kernels {

// An input operand: element [0, ..., 0] and its strides (in elements) over the op's
// shape; 0 where the operand is broadcast. Any strides work.
struct StridedIn {
  const void* data;
  IntSpan strides;
};

// A matrix operand: element [0, 0] and the strides (in elements) of its rows and
// columns. Any strides work: a transposed matrix is the same memory with the two
// strides swapped.
struct MatrixIn {
  const void* data;
  int64_t row_stride;
  int64_t col_stride;
};

// A sliding window over one [H, W] plane (convolution, pooling). Output position
// (oy, ox) reads input rows oy*stride_h - pad_h + i*dilation_h for i in [0, kernel_h),
// likewise for columns; positions outside the plane are padding.
struct Window2d {
  int64_t height, width;
  int64_t kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;

  // floor((H + 2 pad - dilation (kernel - 1) - 1) / stride) + 1, as PyTorch.
  EMBER_HOST_DEVICE int64_t out_h() const {
    return (height + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1;
  }
  EMBER_HOST_DEVICE int64_t out_w() const {
    return (width + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1;
  }

  // Calls tap(k, at) for each tap k = i kernel_w + j of the window at output (oy, ox)
  // whose input, at = iy width + ix of the plane, is not padding; in the order of k.
  template <typename Tap>
  EMBER_HOST_DEVICE void ForEachInput(int64_t oy, int64_t ox, Tap&& tap) const {
    for (int64_t i = 0; i < kernel_h; ++i) {
      const int64_t iy = oy * stride_h - pad_h + i * dilation_h;
      if (iy < 0 || iy >= height) continue;
      for (int64_t j = 0; j < kernel_w; ++j) {
        const int64_t ix = ox * stride_w - pad_w + j * dilation_w;
        if (ix >= 0 && ix < width) tap(i * kernel_w + j, iy * width + ix);
      }
    }
  }
};

// The hyperparameters of one AdamW step.
struct AdamWHyper {
  double lr, beta1, beta2, eps, weight_decay;
  int64_t step;  // 1 for the first update
  // The gradient is read as grad_scale g: gradient clipping's factor, applied in the
  // step's one pass over g rather than in a pass of its own (torch's fused AdamW takes
  // a grad_scale the same way).
  double grad_scale = 1;
};

// One tensor's part in an AdamW step over many: parameter p, gradient g and the moments
// m, v, n elements each in the device's memory, with its own hyperparameters (its
// group's lr and weight decay, its own step count). p_bf16, when set (an f32 p only),
// gets the updated p rounded to bf16 (to nearest even, as BFloat16::FromFloat): the copy
// that autocast's products read, written in the step's pass over p instead of a cast
// pass of its own.
struct AdamWTensor {
  int64_t n;
  void* p;
  const void* g;
  void* m;
  void* v;
  AdamWHyper hyper;
  void* p_bf16 = nullptr;
};

// The per-step constants of AdamW in the parameter's type T, as PyTorch applies them:
// computed in double (as Python does), then cast to T. Both backends' kernels run
//   g = g grad_scale (in T, as clipping's in-place multiply would),
//   p = p decay,  m = m beta1 + g one_minus_beta1,  v = v beta2 + g^2 one_minus_beta2,
//   p = p + neg_step_size m / (sqrt(v) / bc2_sqrt + eps)
// with bc2_sqrt = sqrt(1 - beta2^t) and neg_step_size = -lr / (1 - beta1^t).
template <typename T>
struct AdamWConstants {
  T decay, beta1, one_minus_beta1, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size, grad_scale;

  static AdamWConstants Of(const AdamWHyper& h) {
    const double bias_correction1 = 1 - std::pow(h.beta1, static_cast<double>(h.step));
    const double bias_correction2 = 1 - std::pow(h.beta2, static_cast<double>(h.step));
    return {static_cast<T>(1 - h.lr * h.weight_decay),
            static_cast<T>(h.beta1),
            static_cast<T>(1 - h.beta1),
            static_cast<T>(h.beta2),
            static_cast<T>(1 - h.beta2),
            static_cast<T>(std::sqrt(bias_correction2)),
            static_cast<T>(h.eps),
            static_cast<T>(-(h.lr / bias_correction1)),
            static_cast<T>(h.grad_scale)};
  }
};

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_OPERANDS_H_
