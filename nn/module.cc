#include "nn/module.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/engine.h"
#include "base/error.h"

namespace ember::nn {

Tensor Module::RegisterParameter(std::string name, Tensor value) {
  autograd::SetRequiresGrad(value);
  parameters_.emplace_back(std::move(name), value);
  return value;
}

Tensor Module::RegisterBuffer(std::string name, Tensor value) {
  buffers_.emplace_back(std::move(name), value);
  return value;
}

void Module::CollectParameters(const std::string& prefix,
                               std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, p] : parameters_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->CollectParameters(prefix + name + ".", out);
}

void Module::CollectBuffers(const std::string& prefix,
                            std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, b] : buffers_) out.emplace_back(prefix + name, b);
  for (const auto& [name, child] : children_) child->CollectBuffers(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::NamedParameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  CollectParameters("", out);
  return out;
}

std::vector<Tensor> Module::Parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, p] : NamedParameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::NamedBuffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  CollectBuffers("", out);
  return out;
}

int64_t Module::NumParameters() const {
  int64_t count = 0;
  for (const auto& [name, p] : NamedParameters()) count += p.numel();
  return count;
}

void Module::Train(bool training) {
  training_ = training;
  for (auto& [name, child] : children_) child->Train(training);
}

void Module::ZeroGrad() {
  for (const auto& [name, p] : NamedParameters()) autograd::ZeroGrad(p);
}

Device Module::device() const {
  const std::vector<std::pair<std::string, Tensor>> params = NamedParameters();
  return params.empty() ? Device::Cpu() : params.front().second.device();
}

Module& Module::To(Device device) {
  for (const auto& [name, p] : NamedParameters()) {
    if (p.device() == device) continue;
    p.SetData(autograd::Detach(p).To(device));
    if (const std::shared_ptr<AutogradMeta>& meta = p.autograd_meta(); meta && meta->grad.defined()) {
      meta->grad = meta->grad.To(device);
    }
  }
  for (const auto& [name, b] : NamedBuffers()) {
    if (b.device() != device) b.SetData(b.To(device));
  }
  return *this;
}

std::map<std::string, Tensor> Module::StateDict() const {
  std::map<std::string, Tensor> out;
  for (auto& [name, p] : NamedParameters()) out[name] = autograd::Detach(p);
  for (auto& [name, b] : NamedBuffers()) out[name] = b;
  return out;
}

absl::Status Module::LoadStateDict(const std::map<std::string, Tensor>& state, bool strict) {
  std::map<std::string, Tensor> own = StateDict();
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [name, target] : own) {
    auto it = state.find(name);
    if (it == state.end()) {
      missing.push_back(name);
    } else if (it->second.shape() != target.shape()) {
      mismatched.push_back(absl::StrCat(name, " (checkpoint ", ShapeToString(it->second.shape()),
                                        ", model ", ShapeToString(target.shape()), ")"));
    }
  }
  for (const auto& [name, value] : state) {
    if (!own.count(name)) unexpected.push_back(name);
  }
  std::vector<std::string> problems;
  if (strict && !missing.empty()) {
    problems.push_back("missing keys: " + absl::StrJoin(missing, ", "));
  }
  if (strict && !unexpected.empty()) {
    problems.push_back("unexpected keys: " + absl::StrJoin(unexpected, ", "));
  }
  if (!mismatched.empty())
    problems.push_back("shape mismatches: " + absl::StrJoin(mismatched, ", "));
  if (!problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("load_state_dict: ", absl::StrJoin(problems, "; ")));
  }
  for (const auto& [name, target] : own) {
    auto it = state.find(name);
    if (it != state.end()) target.CopyFrom(it->second.To(target.device()));
  }
  return absl::OkStatus();
}

}  // namespace ember::nn
