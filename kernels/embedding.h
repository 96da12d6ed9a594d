#ifndef EMBER_KERNELS_EMBEDDING_H_
#define EMBER_KERNELS_EMBEDDING_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_EMBEDDING_KERNELS(X) X(EmbeddingForward) X(EmbeddingBackward)

namespace ember::kernels::cpu {

// Embedding lookup: out[i, :] = weight[ids[i], :].
// weight: [vocab, dim] of dtype (any), contiguous; ids: int64 [n]; out: [n, dim],
// overwritten. An id outside [0, vocab) reads nothing and gives a row of NaN (as
// core/dtype.h's Convert stores NaN in dtype): a GPU's callers do not wait to check.
void EmbeddingForward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const void* weight,
                      const int64_t* ids, void* out);

// Its gradient, scatter-added: dweight[ids[i], :] += dout[i, :] for every i, so a
// repeated id sums its rows (f32 or f64). dout: [n, dim]; dweight: [vocab, dim],
// accumulated into (zero it first for a plain gradient); an id outside [0, vocab) adds
// nothing. Threads split the columns, so every row of dweight sums its contributions in
// the order of i, whatever the thread count.
void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const int64_t* ids,
                       const void* dout, void* dweight);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_EMBEDDING_KERNELS)

#endif  // EMBER_KERNELS_EMBEDDING_H_
