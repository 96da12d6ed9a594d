#ifndef EMBER_NN_MODULE_H_
#define EMBER_NN_MODULE_H_

// Module: the base of every layer, as torch.nn.Module. A module registers its
// parameters (leaves that require gradients), buffers (state without gradients) and
// submodules under names; their dotted paths (h.0.attn.c_attn.weight) are the keys of
// NamedParameters() and StateDict(), spelled as PyTorch spells them, so that state
// dicts move between the two.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "tensor/tensor.h"

namespace ember::nn {

class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The layer's computation (autograd functions, so it records for backward).
  virtual Tensor Forward(const Tensor& input) = 0;
  Tensor operator()(const Tensor& input) { return Forward(input); }
  // The class name and configuration, as PyTorch's repr: "Linear(in_features=4, ...)".
  virtual std::string ToString() const = 0;

  // Depth first, in registration order, with dotted names.
  std::vector<std::pair<std::string, Tensor>> NamedParameters() const;
  std::vector<Tensor> Parameters() const;
  std::vector<std::pair<std::string, Tensor>> NamedBuffers() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& Children() const {
    return children_;
  }
  int64_t NumParameters() const;

  // Training mode (dropout active) for this module and every submodule.
  void Train(bool training = true);
  void Eval() { Train(false); }
  bool is_training() const { return training_; }
  // Forgets every parameter's gradient.
  void ZeroGrad();

  // The device of the first parameter (the CPU for a module without parameters).
  Device device() const;

  // Moves every parameter and buffer (and any gradient already there) to `device`, in
  // place, as torch.nn.Module.to: the tensors stay the same handles, so a layer's
  // members and an optimizer made before still name them. Returns *this.
  Module& To(Device device);

  // Parameters and buffers by dotted name (sharing storage with the module).
  std::map<std::string, Tensor> StateDict() const;
  // Copies each entry into the parameter or buffer of that name (converting dtype).
  // Strict: every key must match and every parameter and buffer be given; otherwise
  // InvalidArgument lists the missing keys, the unexpected keys and the shape
  // mismatches, and nothing is changed. Not strict: unknown keys and missing entries
  // are skipped (shape mismatches are still errors).
  absl::Status LoadStateDict(const std::map<std::string, Tensor>& state, bool strict = true);

 protected:
  Module() = default;
  // Registers `value` as a parameter (it is made to require gradients) and returns it.
  Tensor RegisterParameter(std::string name, Tensor value);
  Tensor RegisterBuffer(std::string name, Tensor value);
  template <class M>
  std::shared_ptr<M> RegisterModule(std::string name, std::shared_ptr<M> module) {
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  void CollectParameters(const std::string& prefix,
                         std::vector<std::pair<std::string, Tensor>>& out) const;
  void CollectBuffers(const std::string& prefix,
                      std::vector<std::pair<std::string, Tensor>>& out) const;

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace ember::nn

#endif  // EMBER_NN_MODULE_H_
