// kernels.h in a build without CUDA (copy.h's are in no_cuda_copy.cc, runtime.h's and
// allocator.h's in no_cuda_runtime.cc).
//
// Every entry point throws "this build of ember has no CUDA support (build with
// --config=cuda)": a CUDA tensor op names what to do instead of failing to link. With
// --config=cuda, kernels/cuda/<family>.cu has them all instead.

#include "kernels/cuda/internal/unavailable.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {

// kernels/cpu/unary.h
void Neg(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Neg");
}
void Abs(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Abs");
}
void Exp(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Exp");
}
void Log(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Log");
}
void Sqrt(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Sqrt");
}
void Rsqrt(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Rsqrt");
}
void Reciprocal(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Reciprocal");
}
void Square(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Square");
}
void Tanh(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Tanh");
}
void Sigmoid(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Sigmoid");
}
void Relu(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::Relu");
}
void GeluTanh(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::GeluTanh");
}
void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  internal::Unavailable("kernels::cuda::GeluErf");
}
void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  internal::Unavailable("kernels::cuda::PowScalar");
}
void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  internal::Unavailable("kernels::cuda::ReluBackward");
}
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  internal::Unavailable("kernels::cuda::GeluTanhBackward");
}
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  internal::Unavailable("kernels::cuda::GeluErfBackward");
}
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  internal::Unavailable("kernels::cuda::TanhBackward");
}
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  internal::Unavailable("kernels::cuda::SigmoidBackward");
}

// kernels/cpu/binary.h
void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Add");
}
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Sub");
}
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Mul");
}
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Div");
}
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Maximum");
}
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Minimum");
}
void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Pow");
}
void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Eq");
}
void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Ne");
}
void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Lt");
}
void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Le");
}
void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Gt");
}
void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Ge");
}
void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out) {
  internal::Unavailable("kernels::cuda::Where");
}

// kernels/cpu/random.h
void UniformFill(DType dtype, int64_t n, uint64_t seed, uint64_t offset, void* out) {
  internal::Unavailable("kernels::cuda::UniformFill");
}

// kernels/cpu/reduce.h
void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  internal::Unavailable("kernels::cuda::SumRows");
}
void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  internal::Unavailable("kernels::cuda::MaxRows");
}
void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  internal::Unavailable("kernels::cuda::MinRows");
}
void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out) {
  internal::Unavailable("kernels::cuda::ArgMaxRows");
}
void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out) {
  internal::Unavailable("kernels::cuda::VarRows");
}
double SumSquares(DType dtype, int64_t n, const void* x) {
  internal::Unavailable("kernels::cuda::SumSquares");
}
void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out) {
  internal::Unavailable("kernels::cuda::SumColumns");
}

// kernels/cpu/matmul.h
void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  internal::Unavailable("kernels::cuda::Gemm");
}
void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate) {
  internal::Unavailable("kernels::cuda::GemmBatched");
}

// kernels/cpu/softmax.h
void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  internal::Unavailable("kernels::cuda::Softmax");
}
void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  internal::Unavailable("kernels::cuda::LogSoftmax");
}
void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  internal::Unavailable("kernels::cuda::SoftmaxBackward");
}
void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  internal::Unavailable("kernels::cuda::LogSoftmaxBackward");
}
void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  internal::Unavailable("kernels::cuda::CrossEntropyForward");
}
void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  internal::Unavailable("kernels::cuda::CrossEntropyBackward");
}

// kernels/cpu/layernorm.h
void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                      const void* bias, double eps, void* y, void* mean, void* rstd) {
  internal::Unavailable("kernels::cuda::LayerNormForward");
}
void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias) {
  internal::Unavailable("kernels::cuda::LayerNormBackward");
}

// kernels/cpu/embedding.h
void EmbeddingForward(DType dtype, int64_t n, int64_t dim, const void* weight, const int64_t* ids,
                      void* out) {
  internal::Unavailable("kernels::cuda::EmbeddingForward");
}
void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, const int64_t* ids, const void* dout,
                       void* dweight) {
  internal::Unavailable("kernels::cuda::EmbeddingBackward");
}

// kernels/cpu/adamw.h
void AdamWStep(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
               const AdamWHyper& hyper) {
  internal::Unavailable("kernels::cuda::AdamWStep");
}

// kernels/cpu/attention.h
void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d, const void* q,
                            const void* k, const void* v, void* y, void* lse) {
  internal::Unavailable("kernels::cuda::CausalAttentionForward");
}
void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d, const void* q,
                             const void* k, const void* v, const void* y, const void* lse, const void* dy,
                             void* dq, void* dk, void* dv) {
  internal::Unavailable("kernels::cuda::CausalAttentionBackward");
}

// kernels/cpu/sampling.h
void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices) {
  internal::Unavailable("kernels::cuda::TopKRows");
}
void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out) {
  internal::Unavailable("kernels::cuda::MultinomialRows");
}

// kernels/cpu/conv.h
void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  internal::Unavailable("kernels::cuda::Conv2dForward");
}
void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  internal::Unavailable("kernels::cuda::Conv2dBackward");
}

// kernels/cpu/pool.h
void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  internal::Unavailable("kernels::cuda::MaxPool2dForward");
}
bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx) {
  internal::Unavailable("kernels::cuda::MaxPool2dBackward");
}

}  // namespace ember::kernels::cuda
