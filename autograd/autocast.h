#ifndef EMBER_AUTOGRAD_AUTOCAST_H_
#define EMBER_AUTOGRAD_AUTOCAST_H_

// Mixed precision, as torch.autocast. Inside an AutocastGuard(kBF16) on this thread,
// the differentiable functions follow one policy:
//
//   products (Matmul, Linear, Conv2d, CausalAttention)     bf16 operands, f32 sums,
//                                                            bf16 result
//   LayerNorm, Softmax, LogSoftmax, CrossEntropy,           f32 (bf16 inputs widened;
//   BinaryCrossEntropyWithLogits                             CrossEntropy's kernel reads
//                                                            bf16 logits itself)
//   everything else (elementwise, views, Embedding,         the inputs' dtype; a binary
//   Dropout, reductions)                                     op of two floating dtypes
//                                                            promotes to the wider
//
// Parameters stay f32 (master weights, and AdamW's state with them): a product casts
// an f32 leaf that requires grad to bf16 once (cached: not per use, and not per forward
// while the leaf's values stay the same; CastCopy below), and the gradient reaches the
// f32 leaf in f32: Linear's weight gradient straight from the GEMM (kernels/matmul.h's
// GemmBf16F32) and its bias gradient as f32 sums, others back through the cast. Run one
// forward and its loss inside a guard and backward outside it, as PyTorch does (a
// guard's casts belong to the one graph its forward built).

#include "tensor/tensor.h"

namespace ember::autograd {

// x as `dtype`, differentiably: the gradient is converted back to x's dtype. x itself
// when it has that dtype already.
Tensor To(const Tensor& x, DType dtype);

// Turns autocast to `dtype` on for its scope on this thread (kBF16), or off (kF32: a
// region inside another guard that must run in full precision). Guards nest.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DType previous_;
};

// The products' dtype on this thread: kBF16 inside an AutocastGuard(kBF16), else kF32
// (autocast off).
DType AutocastDType();

// The copies of leaves. A leaf's bf16 copy, once a product under a guard has cast it, is
// kept on this thread past the guard, with its leaf's storage version: later guards read
// it while the leaf is unchanged (the weights between two optimizer steps are cast once,
// however many forwards run), and cast again once the leaf has been written. Copies of
// leaves that only this cache still holds are dropped when an outermost guard starts.
// CastCopy(x) is x's kept copy when no graph holds it any more, else an undefined
// tensor: an optimizer that updates x in place may write x's new values, rounded to bf16,
// into it in the same pass (the fused AdamW, tensor/ops/adamw.h) and then call
// KeepCast(x), after which the next guard reads the copy without casting.
Tensor CastCopy(const Tensor& x);
void KeepCast(const Tensor& x);

namespace internal {

// An operand of a product: under autocast, an f32 x as bf16 (a leaf that requires grad
// through the guard's cache); x itself otherwise.
Tensor ForProduct(const Tensor& x);
// An input of a function on the f32 list: under autocast, a bf16 x as f32; x itself
// otherwise.
Tensor ForF32(const Tensor& x);
// a and b of a binary function, the narrower floating one converted to the other's
// dtype (bf16 and f16 meet in f32), as PyTorch's type promotion; unchanged when they
// have one dtype or one is not floating.
void Promote(Tensor& a, Tensor& b);

}  // namespace internal
}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_AUTOCAST_H_
