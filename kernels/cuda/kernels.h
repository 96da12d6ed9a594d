#ifndef EMBER_KERNELS_CUDA_KERNELS_H_
#define EMBER_KERNELS_CUDA_KERNELS_H_

// The CUDA backend's interface for the tensor ops (copy.h has the tensor core's copy
// and fill): every kernel of kernels/cpu again, in namespace kernels::cuda, each
// declared with its CPU twin's type (so the two signatures cannot drift apart) and
// keeping the contract its CPU header states, on device memory (arrays a CPU header
// marks as host memory stay on the host). tensor/ops picks between the two by device
// (tensor/ops/internal/backend.h). Each family's CUDA code goes in
// kernels/cuda/<family>.{cc,cu}; until it is there, and in a build without CUDA,
// no_cuda.cc stands in, whose every function throws.

#include "kernels/cpu/adamw.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/binary.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/layernorm.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/random.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/sampling.h"
#include "kernels/cpu/softmax.h"
#include "kernels/cpu/unary.h"

namespace ember::kernels::cuda {

// kernels/cpu/adamw.h
decltype(cpu::AdamWStep) AdamWStep;

// kernels/cpu/attention.h
decltype(cpu::CausalAttentionForward) CausalAttentionForward;
decltype(cpu::CausalAttentionBackward) CausalAttentionBackward;

// kernels/cpu/binary.h
decltype(cpu::Add) Add;
decltype(cpu::Sub) Sub;
decltype(cpu::Mul) Mul;
decltype(cpu::Div) Div;
decltype(cpu::Maximum) Maximum;
decltype(cpu::Minimum) Minimum;
decltype(cpu::Pow) Pow;
decltype(cpu::Eq) Eq;
decltype(cpu::Ne) Ne;
decltype(cpu::Lt) Lt;
decltype(cpu::Le) Le;
decltype(cpu::Gt) Gt;
decltype(cpu::Ge) Ge;
decltype(cpu::Where) Where;

// kernels/cpu/conv.h
decltype(cpu::Conv2dForward) Conv2dForward;
decltype(cpu::Conv2dBackward) Conv2dBackward;

// kernels/cpu/embedding.h
decltype(cpu::EmbeddingForward) EmbeddingForward;
decltype(cpu::EmbeddingBackward) EmbeddingBackward;

// kernels/cpu/layernorm.h
decltype(cpu::LayerNormForward) LayerNormForward;
decltype(cpu::LayerNormBackward) LayerNormBackward;

// kernels/cpu/matmul.h
decltype(cpu::Gemm) Gemm;
decltype(cpu::GemmBatched) GemmBatched;

// kernels/cpu/pool.h
decltype(cpu::MaxPool2dForward) MaxPool2dForward;
decltype(cpu::MaxPool2dBackward) MaxPool2dBackward;

// kernels/cpu/random.h
decltype(cpu::UniformFill) UniformFill;

// kernels/cpu/reduce.h
decltype(cpu::SumRows) SumRows;
decltype(cpu::MaxRows) MaxRows;
decltype(cpu::MinRows) MinRows;
decltype(cpu::ArgMaxRows) ArgMaxRows;
decltype(cpu::VarRows) VarRows;
decltype(cpu::SumSquares) SumSquares;
decltype(cpu::SumColumns) SumColumns;

// kernels/cpu/sampling.h
decltype(cpu::TopKRows) TopKRows;
decltype(cpu::MultinomialRows) MultinomialRows;

// kernels/cpu/softmax.h
decltype(cpu::Softmax) Softmax;
decltype(cpu::LogSoftmax) LogSoftmax;
decltype(cpu::SoftmaxBackward) SoftmaxBackward;
decltype(cpu::LogSoftmaxBackward) LogSoftmaxBackward;
decltype(cpu::CrossEntropyForward) CrossEntropyForward;
decltype(cpu::CrossEntropyBackward) CrossEntropyBackward;

// kernels/cpu/unary.h
decltype(cpu::Neg) Neg;
decltype(cpu::Abs) Abs;
decltype(cpu::Exp) Exp;
decltype(cpu::Log) Log;
decltype(cpu::Sqrt) Sqrt;
decltype(cpu::Rsqrt) Rsqrt;
decltype(cpu::Reciprocal) Reciprocal;
decltype(cpu::Square) Square;
decltype(cpu::Tanh) Tanh;
decltype(cpu::Sigmoid) Sigmoid;
decltype(cpu::Relu) Relu;
decltype(cpu::GeluTanh) GeluTanh;
decltype(cpu::GeluErf) GeluErf;
decltype(cpu::PowScalar) PowScalar;
decltype(cpu::ReluBackward) ReluBackward;
decltype(cpu::GeluTanhBackward) GeluTanhBackward;
decltype(cpu::GeluErfBackward) GeluErfBackward;
decltype(cpu::TanhBackward) TanhBackward;
decltype(cpu::SigmoidBackward) SigmoidBackward;

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_KERNELS_H_
