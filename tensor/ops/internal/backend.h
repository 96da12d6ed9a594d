#ifndef EMBER_TENSOR_OPS_INTERNAL_BACKEND_H_
#define EMBER_TENSOR_OPS_INTERNAL_BACKEND_H_

// How an op reaches its kernel: the operands' one device, and the backend for it.
//
//   const Device device = internal::SameDevice("layer_norm", {x, weight, bias});
//   ... outputs allocated on `device` ...
//   EMBER_KERNEL(LayerNormForward).On(device)(compute, rows, c, ...);
//
// EMBER_KERNEL(Name) pairs kernels::cpu::Name with kernels::cuda::Name, the twins that
// kernels/<family>.h declares with one type (kernels/twins.h: the CUDA one is null in a
// build without CUDA, whose UseDevice refuses before it could be called); On(device) is
// the one switch on the device type, the only place below autograd that asks which
// device it is on.

#include <functional>
#include <initializer_list>

#include "base/error.h"
#include "core/device.h"
#include "kernels/cuda/runtime.h"
#include "kernels/twins.h"
#include "tensor/tensor.h"

namespace ember::ops::internal {

template <typename Fn>
struct Kernel {
  Fn* cpu;
  Fn* cuda;

  Fn* On(Device device) const {
    switch (device.type) {
      case DeviceType::kCpu:
        return cpu;
      case DeviceType::kCuda:
        kernels::cuda::UseDevice(device.index);  // the kernel launches there
        return cuda;
      case DeviceType::kMeta:
        ThrowMetaHasNoData("a tensor op");
    }
    EMBER_THROW("no kernel for device ", device.ToString());
  }
};

#define EMBER_KERNEL(name)                                                \
  ::ember::ops::internal::Kernel<decltype(::ember::kernels::cpu::name)> { \
    &::ember::kernels::cpu::name, EMBER_CUDA_KERNEL(name)                 \
  }

// The device that all defined tensors among `tensors` are on (the CPU when none is
// defined). Operands on two devices are an ember::Error naming op and both devices:
// ember never copies between devices behind the caller's back.
inline Device SameDevice(const char* op,
                         std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (first == nullptr) {
      first = &t;
      continue;
    }
    EMBER_CHECK(t.device() == first->device(), op, ": expected all tensors on one device, got ",
                first->device().ToString(), " and ", t.device().ToString(),
                " (move one with To(Device))");
  }
  return first ? first->device() : Device::Cpu();
}

}  // namespace ember::ops::internal

#endif  // EMBER_TENSOR_OPS_INTERNAL_BACKEND_H_
