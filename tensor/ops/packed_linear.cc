#include "tensor/ops/packed_linear.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::ops {

namespace cpu = kernels::cpu;

absl::StatusOr<PackedFormat> PackedFormatFromName(const std::string& name) {
  for (const PackedFormat format : {PackedFormat::kF32, PackedFormat::kBF16, PackedFormat::kI8}) {
    if (name == cpu::PackedFormatName(format)) return format;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("weight format \"", name, "\": expected f32, bf16 or int8"));
}

PackedWeight PackWeight(const Tensor& weight, PackedFormat format) {
  EMBER_CHECK(
      weight.dim() == 2 && weight.dtype() == DType::kF32 && weight.device() == Device::Cpu(),
      "pack_weight: expected an f32 [out, in] weight on the CPU, got ", DTypeName(weight.dtype()),
      " ", ShapeToString(weight.shape()), " on ", weight.device().ToString());
  const Tensor w = weight.Contiguous();
  PackedWeight packed{format, w.size(0), w.size(1), Tensor()};
  packed.data = Empty({cpu::PackedBytes(format, packed.out, packed.in)}, DType::kU8, Device::Cpu());
  cpu::PackWeights(format, packed.out, packed.in, w.data<float>(), packed.in,
                   packed.data.raw_data());
  return packed;
}

Tensor PackedLinear(const Tensor& x, const PackedWeight& weight, const Tensor& bias) {
  EMBER_CHECK(weight.data.defined(), "packed_linear: the weight was never packed");
  EMBER_CHECK(x.device() == Device::Cpu(), "packed_linear: packed weights are on the CPU, x on ",
              x.device().ToString());
  EMBER_CHECK(x.dtype() == DType::kF32 || x.dtype() == DType::kBF16,
              "packed_linear: x must be f32 or bf16, got ", DTypeName(x.dtype()));
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == weight.in, "packed_linear: x ",
              ShapeToString(x.shape()), " does not end in the weight's ", weight.in, " inputs");
  Tensor b;
  if (bias.defined()) {
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == weight.out && bias.device() == Device::Cpu(),
                "packed_linear: bias ", ShapeToString(bias.shape()), " for ", weight.out,
                " outputs");
    b = bias.To(DType::kF32).Contiguous();
  }
  const Tensor rows = x.Contiguous().View({-1, weight.in});
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  shape.push_back(weight.out);
  Tensor y = Empty(shape, x.dtype(), Device::Cpu());
  cpu::PackedLinear(weight.format, x.dtype(), rows.size(0), weight.in, weight.out, rows.raw_data(),
                    weight.in, weight.data.raw_data(), b.defined() ? b.data<float>() : nullptr,
                    y.raw_data(), weight.out);
  return y;
}

}  // namespace ember::ops
