#ifndef EMBER_NN_MODULE_H_
#define EMBER_NN_MODULE_H_

// Module: the base of every layer, as torch.nn.Module. A module registers its
// parameters (leaves that require gradients), buffers (state without gradients) and
// submodules under names; their dotted paths (h.0.attn.c_attn.weight) are the keys of
// NamedParameters() and StateDict(), spelled as PyTorch spells them, so that state
// dicts move between the two.
//
// A module declares each parameter as a spec (nn/param_spec.h: shape, dtype,
// initializer, logical axes). Made the usual way, the parameter is created on the CPU
// at once and drawn from the module's generator. Made while a MetaDeviceGuard lives, it
// is a meta tensor (no memory, no draws): the model can be inspected, counted and
// planned (gpt2-xl's 1.56B parameters in no memory), and Materialize then makes every
// parameter on a device, whole or one rank's shard along a logical axis.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "nn/param_spec.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::nn {

class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The layer's computation (autograd functions, so it records for backward).
  virtual Tensor Forward(const Tensor& input) = 0;
  // Forward between the forward hooks, if any: post(Forward(pre(input))).
  Tensor operator()(const Tensor& input);

  // As torch.nn.Module's forward pre-hook and forward hook, run by operator() (a model
  // calls the submodules that may be wrapped, GPT-2's blocks, through it): `pre` may
  // replace the input and `post` the output, with a node of its own for backward, say.
  // Fully sharded training gathers a block's weights in `pre` and frees them in `post`.
  // One of each per module; empty functions remove them.
  using ForwardHook = std::function<Tensor(const Tensor&)>;
  void SetForwardHooks(ForwardHook pre, ForwardHook post);
  // The class name and configuration, as PyTorch's repr: "Linear(in_features=4, ...)".
  virtual std::string ToString() const = 0;

  // Depth first, in registration order, with dotted names.
  std::vector<std::pair<std::string, Tensor>> NamedParameters() const;
  // The same parameters' specs, in the same order.
  std::vector<std::pair<std::string, ParamSpec>> NamedParameterSpecs() const;
  // Changes the spec of parameter `name` (dotted, as NamedParameters names it): how it
  // is drawn by the next Materialize, and the logical names of its axes (one per
  // dimension, and optionally the parts along each: ParamSpec's). A model sets these for
  // its layers (GPT-2's init, its axis names).
  void SetInitializer(const std::string& name, const Initializer& init);
  void SetAxes(const std::string& name, std::vector<std::string> axes,
               std::vector<int64_t> parts = {});
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
  // Registers a parameter of this spec (axes: none, or one per dimension) and returns
  // it, made to require gradients: on the CPU with its initializer's values drawn from
  // gen, or, under a MetaDeviceGuard, on the meta device without drawing.
  // (A constant initializer draws nothing: its gen may be left out.)
  Tensor RegisterParameter(std::string name, ParamSpec spec, Generator& gen = DefaultGenerator());
  Tensor RegisterBuffer(std::string name, Tensor value);
  template <class M>
  std::shared_ptr<M> RegisterModule(std::string name, std::shared_ptr<M> module) {
    children_.emplace_back(std::move(name), module);
    return module;
  }

 private:
  void CollectParameters(const std::string& prefix,
                         std::vector<std::pair<std::string, Tensor>>& out) const;
  void CollectSpecs(const std::string& prefix,
                    std::vector<std::pair<std::string, ParamSpec>>& out) const;
  // The spec of parameter `name` (dotted), or an error naming it.
  ParamSpec& Spec(const std::string& name);
  void CollectBuffers(const std::string& prefix,
                      std::vector<std::pair<std::string, Tensor>>& out) const;

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<ParamSpec> specs_;  // parameters_[i]'s
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  ForwardHook pre_hook_, post_hook_;
  bool training_ = true;
};

// While one lives (on this thread), modules register their parameters on the meta
// device, as PyTorch's `with torch.device("meta")`.
class MetaDeviceGuard {
 public:
  MetaDeviceGuard();
  ~MetaDeviceGuard();
  MetaDeviceGuard(const MetaDeviceGuard&) = delete;
  MetaDeviceGuard& operator=(const MetaDeviceGuard&) = delete;
  static bool Active();

 private:
  bool previous_;
};

// One rank's part of a sharded model: parameters with the logical axis `axis` are split
// along it into `world` equal parts, and rank `rank` makes part `rank`.
struct Sharding {
  std::string axis;
  int rank = 0;
  int world = 1;
};

// Makes every parameter of `module` on `device` from its spec, drawing from gen in
// NamedParameters() order (the same numbers for the same seed whatever the device), in
// place (the handles stay the same). With a sharding, a parameter that has the axis
// gets only this rank's rows of it along that axis (of each of its parts, ParamSpec's),
// with the numbers of the whole tensor's slice (the axis' size must divide by the world);
// one without it is whole.
// Buffers are left as they are.
void Materialize(Module& module, Device device, Generator& gen, const Sharding* sharding = nullptr);

// Makes every parameter of `module` on `device` from its spec's shape and dtype,
// uninitialised (no draws), as torch.nn.Module.to_empty: for a model whose every
// parameter a checkpoint is about to overwrite (LoadStateDict), made in the time of the
// allocation rather than of drawing its initial values. Buffers are left as they are.
void ToEmpty(Module& module, Device device);

// Parameters and their bytes, from the specs alone (a meta model's too).
struct ParameterCount {
  int64_t parameters = 0;
  int64_t bytes = 0;
};
ParameterCount CountParameters(const Module& module);

}  // namespace ember::nn

#endif  // EMBER_NN_MODULE_H_
