#include "tensor/ops/adamw.h"

#include <algorithm>

#include "kernels/adamw.h"
#include "tensor/ops/internal/backend.h"

namespace ember::ops {

void AdamWStep(const std::vector<AdamWUpdate>& updates) {
  // The kernel's tables, one per device and dtype (usually one), in the order given.
  struct Table {
    Device device;
    DType dtype;
    std::vector<kernels::AdamWTensor> tensors;
  };
  std::vector<Table> tables;
  for (const AdamWUpdate& u : updates) {
    const Tensor& param = u.param;
    for (const Tensor* t : {&u.grad, &u.exp_avg, &u.exp_avg_sq}) {
      EMBER_CHECK(t->shape() == param.shape() && t->dtype() == param.dtype(),
                  "adamw: a tensor of shape ", ShapeToString(t->shape()), " and dtype ",
                  DTypeName(t->dtype()), " does not match the parameter (",
                  ShapeToString(param.shape()), ", ", DTypeName(param.dtype()), ")");
    }
    const Device device = internal::SameDevice("adamw", {param, u.grad, u.exp_avg, u.exp_avg_sq});
    for (const Tensor* t : {&param, &u.grad, &u.exp_avg, &u.exp_avg_sq}) {
      EMBER_CHECK(t->is_contiguous(), "adamw: tensors must be contiguous (shape ",
                  ShapeToString(t->shape()), ")");
    }
    const Tensor& copy = u.bf16_copy;
    if (copy.defined()) {
      EMBER_CHECK(
          copy.dtype() == DType::kBF16 && param.dtype() == DType::kF32 &&
              copy.shape() == param.shape() && copy.is_contiguous() && copy.device() == device,
          "adamw: the bf16 copy (", ShapeToString(copy.shape()), ", ", DTypeName(copy.dtype()),
          ") must be a contiguous bf16 tensor of an f32 ", "parameter's shape on its device (",
          ShapeToString(param.shape()), ", ", DTypeName(param.dtype()), ")");
    }
    auto table = std::find_if(tables.begin(), tables.end(), [&](const Table& t) {
      return t.device == device && t.dtype == param.dtype();
    });
    if (table == tables.end()) table = tables.insert(tables.end(), {device, param.dtype(), {}});
    table->tensors.push_back({param.numel(), param.raw_data(), u.grad.raw_data(),
                              u.exp_avg.raw_data(), u.exp_avg_sq.raw_data(), u.hyper,
                              copy.defined() ? copy.raw_data() : nullptr});
  }
  for (const Table& t : tables) {
    EMBER_KERNEL(AdamWStep).On(t.device)(t.dtype, static_cast<int64_t>(t.tensors.size()),
                                         t.tensors.data());
  }
  // Written in place, as CopyFrom: each counts one write (what was saved for a backward,
  // or packed for inference, from the old values is stale now).
  for (const AdamWUpdate& u : updates) {
    for (const Tensor* t : {&u.param, &u.exp_avg, &u.exp_avg_sq}) t->storage().BumpVersion();
    if (u.bf16_copy.defined()) u.bf16_copy.storage().BumpVersion();
  }
}

}  // namespace ember::ops
