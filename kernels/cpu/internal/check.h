#ifndef EMBER_KERNELS_CPU_INTERNAL_CHECK_H_
#define EMBER_KERNELS_CPU_INTERNAL_CHECK_H_

#include "base/error.h"
#include "tensor/dtype.h"

namespace ember::kernels::cpu::internal {

// The floating-point kernels compute in f32 or f64 (tensor ops convert bf16 and f16
// to f32 first); anything else is a caller's mistake, reported naming the op.
inline void CheckFloatDType(const char* op, DType dtype) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, op, ": dtype ", DTypeName(dtype),
              " is not supported (f32 or f64)");
}

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_CHECK_H_
