// The kernels/cuda interface without kernels, for builds that have none.
//
// Without --config=cuda, every entry point throws "this build of ember has no CUDA
// support (build with --config=cuda)": a CUDA tensor op names what to do instead of
// failing to link. With --config=cuda (EMBER_CUDA defined), the same file stands in for
// the kernels the CUDA backend does not have yet (all but fill), which throw saying
// so; each goes from here as its .cu arrives.

#include "base/error.h"
#include "kernels/cuda/adamw.h"
#include "kernels/cuda/binary.h"
#include "kernels/cuda/conv.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/layernorm.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/pool.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/sampling.h"
#include "kernels/cuda/softmax.h"
#include "kernels/cuda/unary.h"

namespace ember::kernels::cuda {
namespace {

[[noreturn]] void Unavailable(const char* kernel) {
#ifdef EMBER_CUDA
  EMBER_THROW(kernel, ": ember's CUDA backend has no kernel for this op yet (it runs on the CPU)");
#else
  EMBER_THROW(kernel, ": this build of ember has no CUDA support (build with --config=cuda)");
#endif
}

}  // namespace

// kernels/cuda/unary.h
void Neg(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Neg"); }
void Abs(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Abs"); }
void Exp(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Exp"); }
void Log(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Log"); }
void Sqrt(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Sqrt"); }
void Rsqrt(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::Rsqrt");
}
void Reciprocal(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::Reciprocal");
}
void Square(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::Square");
}
void Tanh(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Tanh"); }
void Sigmoid(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::Sigmoid");
}
void Relu(DType dtype, int64_t n, const void* in, void* out) { Unavailable("kernels::cuda::Relu"); }
void GeluTanh(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::GeluTanh");
}
void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  Unavailable("kernels::cuda::GeluErf");
}
void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  Unavailable("kernels::cuda::PowScalar");
}
void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Unavailable("kernels::cuda::ReluBackward");
}
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Unavailable("kernels::cuda::GeluTanhBackward");
}
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Unavailable("kernels::cuda::GeluErfBackward");
}
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  Unavailable("kernels::cuda::TanhBackward");
}
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  Unavailable("kernels::cuda::SigmoidBackward");
}

// kernels/cuda/binary.h
void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Add");
}
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Sub");
}
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Mul");
}
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Div");
}
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Maximum");
}
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Minimum");
}
void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Pow");
}
void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Eq");
}
void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Ne");
}
void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Lt");
}
void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Le");
}
void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Gt");
}
void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Ge");
}
void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out) {
  Unavailable("kernels::cuda::Where");
}

// kernels/cuda/reduce.h
void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  Unavailable("kernels::cuda::SumRows");
}
void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  Unavailable("kernels::cuda::MaxRows");
}
void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  Unavailable("kernels::cuda::MinRows");
}
void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out) {
  Unavailable("kernels::cuda::ArgMaxRows");
}
void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out) {
  Unavailable("kernels::cuda::VarRows");
}
double SumSquares(DType dtype, int64_t n, const void* x) {
  Unavailable("kernels::cuda::SumSquares");
}
void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out) {
  Unavailable("kernels::cuda::SumColumns");
}

// kernels/cuda/matmul.h
void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  Unavailable("kernels::cuda::Gemm");
}
void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate) {
  Unavailable("kernels::cuda::GemmBatched");
}

// kernels/cuda/softmax.h
void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  Unavailable("kernels::cuda::Softmax");
}
void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  Unavailable("kernels::cuda::LogSoftmax");
}
void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  Unavailable("kernels::cuda::SoftmaxBackward");
}
void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  Unavailable("kernels::cuda::LogSoftmaxBackward");
}
void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  Unavailable("kernels::cuda::CrossEntropyForward");
}
void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  Unavailable("kernels::cuda::CrossEntropyBackward");
}

// kernels/cuda/layernorm.h
void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                      const void* bias, double eps, void* y, void* mean, void* rstd) {
  Unavailable("kernels::cuda::LayerNormForward");
}
void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias) {
  Unavailable("kernels::cuda::LayerNormBackward");
}

// kernels/cuda/embedding.h
void EmbeddingForward(DType dtype, int64_t n, int64_t dim, const void* weight, const int64_t* ids,
                      void* out) {
  Unavailable("kernels::cuda::EmbeddingForward");
}
void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, const int64_t* ids, const void* dout,
                       void* dweight) {
  Unavailable("kernels::cuda::EmbeddingBackward");
}

// kernels/cuda/adamw.h
void AdamWStep(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
               const AdamWHyper& hyper) {
  Unavailable("kernels::cuda::AdamWStep");
}

// kernels/cuda/sampling.h
void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices) {
  Unavailable("kernels::cuda::TopKRows");
}
void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out) {
  Unavailable("kernels::cuda::MultinomialRows");
}

// kernels/cuda/conv.h
void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  Unavailable("kernels::cuda::Conv2dForward");
}
void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  Unavailable("kernels::cuda::Conv2dBackward");
}

// kernels/cuda/pool.h
void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  Unavailable("kernels::cuda::MaxPool2dForward");
}
bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx) {
  Unavailable("kernels::cuda::MaxPool2dBackward");
}

// kernels/cuda/copy.h
void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  Unavailable("kernels::cuda::CopyCast");
}
#ifndef EMBER_CUDA  // the CUDA build has this one (fill.cc)
void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  Unavailable("kernels::cuda::Fill");
}
#endif

}  // namespace ember::kernels::cuda
