// kernels/matmul.h on the GPU, through cuBLAS.
//
// cuBLAS is column-major; ember's C is row-major [m, n] with row stride ldc, which is
// C^T [n, m] column-major with leading dimension ldc. So ember's C = A B is computed
// as C^T = B^T A^T: cuBLAS's first operand is B, its second A. A row-major operand
// (column stride 1) is, read column-major, its own transpose with leading dimension
// its row stride: op N. A column-major one (row stride 1) is itself with leading
// dimension its column stride: op T. An operand with neither stride 1 (a broadcast,
// or a view with steps) is first copied contiguous. f32 runs in full f32 (PyTorch's
// default) unless runtime.h's SetAllowTf32 allows TF32 tensor cores; f64 in f64; bf16
// on tensor cores with f32 sums, C rounded once to bf16 (C + A B in f32 when
// accumulating), as the CPU. GemmBias runs through cuBLASLt, the bias added in its
// epilogue.

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <vector>

#include "kernels/copy.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/runtime.h"
#include "kernels/matmul.h"

namespace ember::kernels::cuda {
namespace {

void CheckCublas(cublasStatus_t status, const char* what) {
  EMBER_CHECK(status == CUBLAS_STATUS_SUCCESS, what,
              ": cuBLAS error: ", cublasGetStatusString(status));
}

// The current device and its cuBLAS handle (made on first use, on the default stream,
// kept for the process).
struct Current {
  int device;
  cublasHandle_t handle;
};

Current CurrentHandle() {
  static std::mutex mutex;
  static auto* const handles = new std::vector<cublasHandle_t>();
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "matmul");
  std::lock_guard<std::mutex> lock(mutex);
  if (handles->size() <= static_cast<size_t>(device)) handles->resize(device + 1, nullptr);
  cublasHandle_t& handle = (*handles)[device];
  if (handle == nullptr) {
    CheckCublas(cublasCreate(&handle), "matmul: cublasCreate");
  }
  return {device, handle};
}

// The current device's cuBLASLt handle (made on first use, kept for the process).
cublasLtHandle_t CurrentLtHandle(int device) {
  static std::mutex mutex;
  static auto* const handles = new std::vector<cublasLtHandle_t>();
  std::lock_guard<std::mutex> lock(mutex);
  if (handles->size() <= static_cast<size_t>(device)) handles->resize(device + 1, nullptr);
  cublasLtHandle_t& handle = (*handles)[device];
  if (handle == nullptr) CheckCublas(cublasLtCreate(&handle), "linear: cublasLtCreate");
  return handle;
}

// An operand of `rows` x `cols` (row-major logical shape) as cuBLAS takes it.
struct Operand {
  cublasOperation_t op;
  int64_t ld;
  const void* data;
  void* copy = nullptr;  // a contiguous copy, given back by Release
  int64_t copy_bytes = 0;
};

Operand Describe(const MatrixIn& x, int64_t rows, int64_t cols, DType dtype, int device) {
  if (x.col_stride == 1 && (rows <= 1 || x.row_stride >= std::max<int64_t>(cols, 1))) {
    return {CUBLAS_OP_N, rows <= 1 ? std::max<int64_t>(cols, 1) : x.row_stride, x.data};
  }
  if (x.row_stride == 1 && (cols <= 1 || x.col_stride >= std::max<int64_t>(rows, 1))) {
    return {CUBLAS_OP_T, cols <= 1 ? std::max<int64_t>(rows, 1) : x.col_stride, x.data};
  }
  Operand o{CUBLAS_OP_N, std::max<int64_t>(cols, 1), nullptr};
  o.copy_bytes = rows * cols * ItemSize(dtype);
  o.copy = Allocate(device, o.copy_bytes);
  const Shape shape = {rows, cols};
  const Strides from = {x.row_stride, x.col_stride}, to = {cols, 1};
  CopyCast(shape, dtype, x.data, from, dtype, o.copy, to);
  o.data = o.copy;
  return o;
}

void Release(const Operand& o, int device) {
  if (o.copy != nullptr) Deallocate(device, o.copy, o.copy_bytes);
}

void CheckArguments(const char* op, DType dtype, int64_t m, int64_t k, int64_t n, int64_t ldc) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16, op, ": dtype ",
              DTypeName(dtype), " is not supported (f32, f64 or bf16)");
  EMBER_CHECK(ldc >= n, op, ": ldc ", ldc, " < n ", n);
  const int64_t limit = int64_t{1} << 31;
  EMBER_CHECK(m < limit && k < limit && n < limit && ldc < limit, op, ": sizes [", m, ", ", k,
              "] x [", k, ", ", n, "] exceed cuBLAS's 32-bit dimensions");
}

// C^T (+)= B^T A^T for `batches` products, operand i at base + offset * i (strided
// batch) in elements.
void Run(const char* name, DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n,
         const Operand& a, int64_t a_stride, const Operand& b, int64_t b_stride, void* c,
         int64_t ldc, int64_t c_stride, bool accumulate, cublasHandle_t handle) {
  if (dtype == DType::kF32) {
    // Asked on every call (a cheap setter on the handle), so that SetAllowTf32 takes
    // effect at once.
    CheckCublas(
        cublasSetMathMode(handle, AllowTf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH),
        "matmul: math mode");
    const float alpha = 1, beta = accumulate ? 1 : 0;
    CheckCublas(cublasSgemmStridedBatched(handle, b.op, a.op, n, m, k, &alpha,
                                          static_cast<const float*>(b.data), b.ld, b_stride,
                                          static_cast<const float*>(a.data), a.ld, a_stride, &beta,
                                          static_cast<float*>(c), ldc, c_stride, batches),
                name);
  } else if (dtype == DType::kBF16) {
    const float alpha = 1, beta = accumulate ? 1 : 0;
    CheckCublas(cublasGemmStridedBatchedEx(handle, b.op, a.op, n, m, k, &alpha, b.data, CUDA_R_16BF,
                                           b.ld, b_stride, a.data, CUDA_R_16BF, a.ld, a_stride,
                                           &beta, c, CUDA_R_16BF, ldc, c_stride, batches,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                name);
  } else {
    const double alpha = 1, beta = accumulate ? 1 : 0;
    CheckCublas(cublasDgemmStridedBatched(handle, b.op, a.op, n, m, k, &alpha,
                                          static_cast<const double*>(b.data), b.ld, b_stride,
                                          static_cast<const double*>(a.data), a.ld, a_stride, &beta,
                                          static_cast<double*>(c), ldc, c_stride, batches),
                name);
  }
}

// C (+)= A B for one product (k == 0: C = 0, or unchanged when accumulating).
void GemmOne(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
             int64_t ldc, bool accumulate, const Current& current) {
  const Operand oa = Describe(a, m, k, dtype, current.device);
  const Operand ob = Describe(b, k, n, dtype, current.device);
  Run("matmul", dtype, 1, m, k, n, oa, 0, ob, 0, c, ldc, 0, accumulate, current.handle);
  Release(oa, current.device);
  Release(ob, current.device);
}

}  // namespace

void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  CheckArguments("matmul", dtype, m, k, n, ldc);
  if (m == 0 || n == 0) return;
  GemmOne(dtype, m, k, n, a, b, c, ldc, accumulate, CurrentHandle());
}

namespace {

// The largest power of two up to 256 that divides the address: cuBLASLt's heuristic
// picks kernels for the alignment it is told.
uint32_t Alignment(const void* p) {
  uint32_t alignment = 256;
  while (reinterpret_cast<uintptr_t>(p) % alignment != 0) alignment /= 2;
  return alignment;
}

// C^T = B^T A^T + bias (one bias entry per row of C^T, i.e. per column of C) through
// cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS; false (having done nothing) where cuBLASLt
// offers no kernel for it.
bool LtGemmBias(DType dtype, int64_t m, int64_t k, int64_t n, const Operand& a, const Operand& b,
                const void* bias, void* c, int64_t ldc, int device) {
  const cudaDataType_t type = dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute =
      dtype == DType::kF32 && AllowTf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  // cuBLAS's first operand is B (op(B^T): n x k), its second A (op(A^T): k x m).
  CheckCublas(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "linear: matmul desc");
  const cublasOperation_t ta = b.op, tb = a.op;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  CheckCublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
              "linear: transa");
  CheckCublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
              "linear: transb");
  CheckCublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                             sizeof(epilogue)),
              "linear: epilogue");
  CheckCublas(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
      "linear: bias");
  CheckCublas(cublasLtMatrixLayoutCreate(&first, type, ta == CUBLAS_OP_N ? n : k,
                                         ta == CUBLAS_OP_N ? k : n, b.ld),
              "linear: layout");
  CheckCublas(cublasLtMatrixLayoutCreate(&second, type, tb == CUBLAS_OP_N ? k : m,
                                         tb == CUBLAS_OP_N ? m : k, a.ld),
              "linear: layout");
  CheckCublas(cublasLtMatrixLayoutCreate(&out, type, n, m, ldc), "linear: layout");
  // llm.c's workspace for Hopper.
  constexpr size_t kWorkspace = size_t{32} << 20;
  CheckCublas(cublasLtMatmulPreferenceCreate(&preference), "linear: preference");
  CheckCublas(
      cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &kWorkspace, sizeof(kWorkspace)),
      "linear: workspace");
  const std::pair<cublasLtMatmulPreferenceAttributes_t, const void*> aligned[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, b.data},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, a.data},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, c}};
  for (const auto& [attribute, pointer] : aligned) {
    const uint32_t alignment = Alignment(pointer);
    CheckCublas(
        cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof(alignment)),
        "linear: alignment");
  }
  const cublasLtHandle_t handle = CurrentLtHandle(device);
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  const bool ok = cublasLtMatmulAlgoGetHeuristic(handle, desc, first, second, out, out, preference,
                                                 1, &heuristic, &found) == CUBLAS_STATUS_SUCCESS &&
                  found > 0;
  if (ok) {
    const ScopedAllocation workspace(device, static_cast<int64_t>(heuristic.workspaceSize));
    const float alpha = 1, beta = 0;
    CheckCublas(cublasLtMatmul(handle, desc, &alpha, b.data, first, a.data, second, &beta, c, out,
                               c, out, &heuristic.algo, workspace.as<void>(),
                               heuristic.workspaceSize, /*stream=*/0),
                "linear: cublasLtMatmul");
  }
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(out);
  cublasLtMatrixLayoutDestroy(second);
  cublasLtMatrixLayoutDestroy(first);
  cublasLtMatmulDescDestroy(desc);
  return ok;
}

}  // namespace

// f32 and bf16 through the epilogue; f64 (and any shape cuBLASLt has no kernel for)
// as the CPU does it: C's rows start as the bias, the product accumulates onto them.
void GemmBias(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b,
              const void* bias, void* c, int64_t ldc) {
  CheckArguments("linear", dtype, m, k, n, ldc);
  if (m == 0 || n == 0) return;
  const Current current = CurrentHandle();
  if (dtype != DType::kF64 && k > 0) {
    const Operand oa = Describe(a, m, k, dtype, current.device);
    const Operand ob = Describe(b, k, n, dtype, current.device);
    const bool done = LtGemmBias(dtype, m, k, n, oa, ob, bias, c, ldc, current.device);
    Release(oa, current.device);
    Release(ob, current.device);
    if (done) return;
  }
  const Shape shape = {m, n};
  const Strides broadcast = {0, 1}, rows = {ldc, 1};
  CopyCast(shape, dtype, bias, broadcast, dtype, c, rows);
  GemmOne(dtype, m, k, n, a, b, c, ldc, /*accumulate=*/true, current);
}

void GemmBf16F32(int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c, int64_t ldc,
                 bool accumulate) {
  CheckArguments("matmul", DType::kBF16, m, k, n, ldc);
  if (m == 0 || n == 0) return;
  const Current current = CurrentHandle();
  const Operand oa = Describe(a, m, k, DType::kBF16, current.device);
  const Operand ob = Describe(b, k, n, DType::kBF16, current.device);
  const float alpha = 1, beta = accumulate ? 1 : 0;
  CheckCublas(cublasGemmEx(current.handle, ob.op, oa.op, n, m, k, &alpha, ob.data, CUDA_R_16BF,
                           ob.ld, oa.data, CUDA_R_16BF, oa.ld, &beta, c, CUDA_R_32F, ldc,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "matmul (bf16 into f32)");
  Release(oa, current.device);
  Release(ob, current.device);
}

void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate) {
  CheckArguments("bmm", dtype, m, k, n, ldc);
  if (batches == 0 || m == 0 || n == 0) return;
  const Current current = CurrentHandle();
  // Offsets in arithmetic progression (every contiguous batch) make one strided-batch
  // call; any other pattern, one call per product.
  auto stride_of = [batches](const int64_t* offsets, int64_t* stride) {
    *stride = batches > 1 ? offsets[1] - offsets[0] : 0;
    for (int64_t i = 1; i < batches; ++i) {
      if (offsets[i] - offsets[i - 1] != *stride) return false;
    }
    return true;
  };
  int64_t a_stride = 0, b_stride = 0;
  const int64_t item = ItemSize(dtype);
  auto moved = [item](const MatrixIn& x, int64_t offset) {  // x, offset elements on
    return MatrixIn{static_cast<const char*>(x.data) + offset * item, x.row_stride, x.col_stride};
  };
  if (stride_of(a_offsets, &a_stride) && stride_of(b_offsets, &b_stride)) {
    const Operand oa = Describe(moved(a, a_offsets[0]), m, k, dtype, current.device);
    const Operand ob = Describe(moved(b, b_offsets[0]), k, n, dtype, current.device);
    // A copied operand no longer has the batch stride; such batches go one by one.
    if (oa.copy == nullptr && ob.copy == nullptr) {
      Run("bmm", dtype, batches, m, k, n, oa, a_stride, ob, b_stride, c, ldc, c_batch_stride,
          accumulate, current.handle);
      return;
    }
    Release(oa, current.device);
    Release(ob, current.device);
  }
  for (int64_t i = 0; i < batches; ++i) {
    GemmOne(dtype, m, k, n, moved(a, a_offsets[i]), moved(b, b_offsets[i]),
            static_cast<char*>(c) + i * c_batch_stride * item, ldc, accumulate, current);
  }
}

}  // namespace ember::kernels::cuda
