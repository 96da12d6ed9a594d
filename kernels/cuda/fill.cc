#include "kernels/cuda/fill.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/fill_kernel.h"

namespace ember::kernels::cuda {

absl::Status Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  internal::FillLayout layout{};
  layout.numel = NumElements(shape, "fill");
  // Size-1 dimensions do not move the offset; dropping them keeps more shapes within
  // the kernel's fixed number of dimensions.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (layout.ndim == internal::kMaxFillDims) {
      return absl::InvalidArgumentError(absl::StrCat("fill: shape ", ShapeToString(shape),
                                                     " has more than ", internal::kMaxFillDims,
                                                     " dimensions of size > 1"));
    }
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
  if (error != cudaSuccess) {
    return absl::InternalError(absl::StrCat("fill: CUDA error: ", cudaGetErrorString(error)));
  }
  return absl::OkStatus();
}

}  // namespace ember::kernels::cuda
