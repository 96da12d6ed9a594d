// kernels/reduce.h on the GPU. Row reductions run one block per row (grid-stride
// over rows), each thread striding through the row and the block combining the
// threads' results (internal::BlockReduce); sums accumulate in double, so they are at
// least as accurate as the CPU's pairwise sums (the two agree to rounding, not to the
// bit). The order of every sum depends only on the sizes: results repeat exactly.

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/columns.cu.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/reduce.h"

namespace ember::kernels::cuda {
namespace {

using internal::DispatchFloat;

using internal::BlockReduce;
using internal::kThreads;
using internal::RowBlocks;

template <typename T>
__global__ void SumRowsKernel(int64_t rows, int64_t n, const T* x, int64_t ld, T* out) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * ld;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += row[j];
    sum = BlockReduce(sum, internal::SumOp{}, 0.0);
    if (threadIdx.x == 0) out[r] = static_cast<T>(sum);
  }
}

template <typename T, typename Op>
__global__ void ExtremeRowsKernel(int64_t rows, int64_t n, const T* x, int64_t ld, T* out, Op op,
                                  T identity) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * ld;
    T best = identity;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) best = op(best, row[j]);
    best = BlockReduce(best, op, identity);
    if (threadIdx.x == 0) out[r] = best;
  }
}

// Whether candidate (va, ia) beats (vb, ib) for argmax: the first NaN wins, then the
// largest value, then the smaller index. An index of -1 is "none yet".
template <typename T>
__device__ bool Beats(T va, int64_t ia, T vb, int64_t ib) {
  if (ia < 0) return false;
  if (ib < 0) return true;
  const bool a_nan = va != va, b_nan = vb != vb;
  if (a_nan || b_nan) return a_nan && (!b_nan || ia < ib);
  return va > vb || (va == vb && ia < ib);
}

// blockDim.x == kThreads.
template <typename T>
__global__ void ArgMaxRowsKernel(int64_t rows, int64_t n, const T* x, int64_t ld, int64_t* out) {
  __shared__ T values[kThreads];
  __shared__ int64_t indices[kThreads];
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * ld;
    T best = 0;
    int64_t best_index = -1;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      if (Beats(row[j], j, best, best_index)) {
        best = row[j];
        best_index = j;
      }
    }
    values[threadIdx.x] = best;
    indices[threadIdx.x] = best_index;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const int other = threadIdx.x + half;
        if (Beats(values[other], indices[other], values[threadIdx.x], indices[threadIdx.x])) {
          values[threadIdx.x] = values[other];
          indices[threadIdx.x] = indices[other];
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[r] = indices[0];
    __syncthreads();  // before the next row overwrites values
  }
}

// sum((x - mean)^2) / (n - correction), two passes in double.
template <typename T>
__global__ void VarRowsKernel(int64_t rows, int64_t n, const T* x, int64_t ld, int64_t correction,
                              T* out) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * ld;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += row[j];
    const double mean = BlockReduce(sum, internal::SumOp{}, 0.0) / n;
    double squares = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double d = row[j] - mean;
      squares += d * d;
    }
    squares = BlockReduce(squares, internal::SumOp{}, 0.0);
    if (threadIdx.x == 0) out[r] = static_cast<T>(squares / static_cast<double>(n - correction));
  }
}

// Each block's sum of squares (in double) into partial[blockIdx.x].
template <typename T>
__global__ void SumSquaresKernel(int64_t n, const T* x, double* partial) {
  double sum = 0;
  EMBER_GRID_STRIDE(i, n) {
    const double v = x[i];
    sum += v * v;
  }
  sum = BlockReduce(sum, internal::SumOp{}, 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// *out = the partial sums added in block order, by one thread: the same result every run.
__global__ void SumPartialsKernel(int blocks, const double* partial, double* out) {
  double total = 0;
  for (int b = 0; b < blocks; ++b) total += partial[b];
  *out = total;
}

// SumColumns' terms and store for internal::ColumnSums: x[i, j] into out[j].
template <typename T>
struct ColumnOfX {
  const T* x;
  int64_t ld;
  __device__ internal::Terms<1> operator()(int64_t i, int64_t j) const {
    return {{static_cast<double>(x[i * ld + j])}};
  }
};
template <typename T>
struct StoreSum {
  T* out;
  __device__ void operator()(int64_t j, internal::Terms<1> sum) const {
    out[j] = static_cast<T>(sum.v[0]);
  }
};

template <typename Op>
void Extreme(const char* name, DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld,
             void* out, Op op, double identity) {
  EMBER_CHECK(n >= 1 || rows == 0, name, ": a row of 0 elements has no extreme");
  if (rows == 0) return;
  DispatchFloat(name, dtype, [&](auto type) {
    using T = decltype(type);
    ExtremeRowsKernel<<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), ld,
                                                     static_cast<T*>(out), op, T(identity));
  });
  EMBER_CUDA_CHECK_LAUNCH(name);
}

}  // namespace

void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  if (rows == 0) return;
  DispatchFloat("sum", dtype, [&](auto type) {
    using T = decltype(type);
    SumRowsKernel<<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), ld,
                                                 static_cast<T*>(out));
  });
  EMBER_CUDA_CHECK_LAUNCH("sum");
}

void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  Extreme("max", dtype, rows, n, x, ld, out, internal::MaxOp{}, -INFINITY);
}

void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out) {
  Extreme("min", dtype, rows, n, x, ld, out, internal::MinOp{}, INFINITY);
}

void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out) {
  EMBER_CHECK(n >= 1 || rows == 0, "argmax: a row of 0 elements has no largest element");
  if (rows == 0) return;
  DispatchFloat("argmax", dtype, [&](auto type) {
    using T = decltype(type);
    ArgMaxRowsKernel<<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), ld, out);
  });
  EMBER_CUDA_CHECK_LAUNCH("argmax");
}

void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out) {
  if (rows == 0) return;
  DispatchFloat("var", dtype, [&](auto type) {
    using T = decltype(type);
    VarRowsKernel<<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), ld, correction,
                                                 static_cast<T*>(out));
  });
  EMBER_CUDA_CHECK_LAUNCH("var");
}

void SumSquares(DType dtype, int64_t n, const void* x, double* out) {
  // A fixed number of blocks for a given n, their partial sums added on the device in
  // block order: the result does not vary from run to run, and nothing waits for it.
  const int blocks = n == 0 ? 0 : std::min(internal::Blocks(n), 1024);
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "sum_squares");
  const ScopedAllocation partial(device, std::max(blocks, 1) * sizeof(double));
  DispatchFloat("sum_squares", dtype, [&](auto type) {
    using T = decltype(type);
    if (blocks > 0) {
      SumSquaresKernel<<<blocks, kThreads>>>(n, static_cast<const T*>(x), partial.as<double>());
    }
  });
  SumPartialsKernel<<<1, 1>>>(blocks, partial.as<double>(), out);
  EMBER_CUDA_CHECK_LAUNCH("sum_squares");
}

void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out) {
  if (cols == 0) return;
  DispatchFloat("sum", dtype, [&](auto type) {
    using T = decltype(type);
    internal::ColumnSums<1>("sum", n, cols, ColumnOfX<T>{static_cast<const T*>(x), ld},
                            StoreSum<T>{static_cast<T*>(out)});
  });
}

}  // namespace ember::kernels::cuda
