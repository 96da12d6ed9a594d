#ifndef EMBER_TENSOR_OPS_INTERNAL_FLOAT_DTYPE_H_
#define EMBER_TENSOR_OPS_INTERNAL_FLOAT_DTYPE_H_

#include "base/error.h"
#include "tensor/tensor.h"

namespace ember::ops::internal {

// For the floating-point ops: checks that `t` is a floating-point tensor (ember::Error
// naming `op`, the dtype and the shape otherwise) and returns the dtype the kernels
// compute it in: f64 stays f64; f32, bf16 and f16 compute in f32.
inline DType FloatComputeDType(const char* op, const Tensor& t) {
  EMBER_CHECK(IsFloatingPoint(t.dtype()), op, ": expected a floating-point tensor, got dtype ",
              DTypeName(t.dtype()), " (shape ", ShapeToString(t.shape()), ")");
  return t.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
}

// The dtype a kernel that also reads and writes bf16 (computing in f32) is given: bf16
// stays bf16; the other floats as FloatComputeDType.
inline DType FloatOrBf16DType(const char* op, const Tensor& t) {
  const DType compute = FloatComputeDType(op, t);
  return t.dtype() == DType::kBF16 ? DType::kBF16 : compute;
}

}  // namespace ember::ops::internal

#endif  // EMBER_TENSOR_OPS_INTERNAL_FLOAT_DTYPE_H_
