#include "kernels/cuda/copy.h"

#include <cstring>

#include "base/error.h"
#include "kernels/cuda/fill_kernel.h"

namespace ember::kernels::cuda {

void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  internal::FillLayout layout{};
  layout.numel = NumElements(shape, "fill");
  // Size-1 dimensions do not move the offset; dropping them keeps more shapes within
  // the kernel's fixed number of dimensions.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    EMBER_CHECK(layout.ndim < internal::kMaxFillDims, "fill: shape ", ShapeToString(shape),
                " has more than ", internal::kMaxFillDims, " dimensions of size > 1");
    layout.shape[layout.ndim] = shape[d];
    layout.strides[layout.ndim] = strides[d];
    ++layout.ndim;
  }
  // The value, converted on the host, as the raw bits of one element.
  uint64_t bits = 0;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T converted = value.to<T>();
    std::memcpy(&bits, &converted, sizeof(T));
  });
  cudaError_t error = internal::LaunchFill(dst, ItemSize(dtype), bits, layout);
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  EMBER_CHECK(error == cudaSuccess, "fill: CUDA error: ", cudaGetErrorString(error));
}

}  // namespace ember::kernels::cuda
