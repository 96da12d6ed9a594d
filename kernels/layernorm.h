#ifndef EMBER_KERNELS_LAYERNORM_H_
#define EMBER_KERNELS_LAYERNORM_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_LAYERNORM_KERNELS(X) X(LayerNormForward) X(LayerNormBackward)

namespace ember::kernels::cpu {

// Layer normalisation over the rows of a contiguous [rows, c] matrix, f32, f64 or bf16:
//   mean = sum_j x_j / c,  var = sum_j (x_j - mean)^2 / c  (two passes),
//   rstd = 1 / sqrt(var + eps),  xhat = (x - mean) rstd,  y = xhat w + b.
// weight w, bias b: [c] (bias may be null); y: [rows, c]; mean, rstd: [rows] (saved
// for the backward pass). All outputs overwritten. dtype bf16: x, y, dy and dx bf16
// (computed in f32, each result rounded once), the parameters, their gradients, mean and
// rstd f32.
// With a residual ([rows, c], else null) the row normalised is x + residual, added in
// the compute type and rounded to dtype once (as the elementwise add), and written to
// sum ([rows, c]): a transformer's residual add fused with the LayerNorm after it
// (llm.c's fused residual forward), the row read from memory once.
void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* residual,
                      const void* weight, const void* bias, double eps, void* sum, void* y,
                      void* mean, void* rstd);

// The gradients, from the saved mean and rstd:
//   g = dy w,  dx = rstd (g - mean_j(g) - xhat mean_j(g xhat)),
//   dweight = sum_rows dy xhat,  dbias = sum_rows dy.
// dx: [rows, c]; dweight, dbias: [c] (dbias may be null); all overwritten. dx is split
// over rows and the parameter gradients over columns, so no result depends on the
// thread count.
void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_LAYERNORM_KERNELS)

#endif  // EMBER_KERNELS_LAYERNORM_H_
