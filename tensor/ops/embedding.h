#ifndef EMBER_TENSOR_OPS_EMBEDDING_H_
#define EMBER_TENSOR_OPS_EMBEDDING_H_

// Embedding lookup and its gradient (kernels in kernels/embedding.h).

#include "tensor/tensor.h"

namespace ember::ops {

// weight [vocab, dim] looked up at ids (i64, any shape): the result is ids' shape
// plus [dim]. An id outside [0, vocab) throws ember::Error naming it on the host; on a
// GPU (where PyTorch asserts in the kernel) its row is NaN, as reading the ids back
// would wait for the device.
Tensor Embedding(const Tensor& weight, const Tensor& ids);

// The gradient of weight: zeros of weight's shape with each row of dout added at its
// id (repeated ids sum; on a GPU an id out of range adds nothing). dout: ids' shape
// plus [dim].
Tensor EmbeddingBackward(const Tensor& dout, const Tensor& ids, int64_t vocab);

// dweight += that gradient, in dweight's own memory: dweight is contiguous [vocab,
// dim] of dout's dtype, f32 or f64. Autograd adds an embedding's gradient this way to
// one its weight already has (a tied output layer's), without a dense tensor of zeros
// and an addition over all of it.
void EmbeddingBackwardInto(const Tensor& dout, const Tensor& ids, const Tensor& dweight);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_EMBEDDING_H_
