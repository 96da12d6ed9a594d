#include "nn/module.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/engine.h"
#include "base/error.h"

namespace ember::nn {

namespace {
thread_local bool meta_device_active = false;
}  // namespace

MetaDeviceGuard::MetaDeviceGuard() : previous_(meta_device_active) { meta_device_active = true; }
MetaDeviceGuard::~MetaDeviceGuard() { meta_device_active = previous_; }
bool MetaDeviceGuard::Active() { return meta_device_active; }

Tensor Module::RegisterParameter(std::string name, ParamSpec spec, Generator& gen) {
  EMBER_CHECK(spec.axes.empty() || spec.axes.size() == spec.shape.size(), "parameter ", name, ": ",
              spec.axes.size(), " axis names for ", spec.shape.size(), " dimensions");
  if (spec.axes.empty()) spec.axes.assign(spec.shape.size(), "");
  Tensor value =
      Empty(spec.shape, spec.dtype, MetaDeviceGuard::Active() ? Device::Meta() : Device::Cpu());
  if (!MetaDeviceGuard::Active()) spec.init.Fill(value, spec.shape, -1, 0, gen);
  autograd::SetRequiresGrad(value);
  parameters_.emplace_back(std::move(name), value);
  specs_.push_back(std::move(spec));
  return value;
}

void Module::CollectSpecs(const std::string& prefix,
                          std::vector<std::pair<std::string, ParamSpec>>& out) const {
  for (size_t i = 0; i < parameters_.size(); ++i)
    out.emplace_back(prefix + parameters_[i].first, specs_[i]);
  for (const auto& [name, child] : children_) child->CollectSpecs(prefix + name + ".", out);
}

std::vector<std::pair<std::string, ParamSpec>> Module::NamedParameterSpecs() const {
  std::vector<std::pair<std::string, ParamSpec>> out;
  CollectSpecs("", out);
  return out;
}

ParamSpec& Module::Spec(const std::string& name) {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i].first == name) return specs_[i];
  }
  for (const auto& [child_name, child] : children_) {
    if (name.size() > child_name.size() && name.compare(0, child_name.size(), child_name) == 0 &&
        name[child_name.size()] == '.') {
      return child->Spec(name.substr(child_name.size() + 1));
    }
  }
  EMBER_THROW("no parameter named ", name);
}

Tensor Module::operator()(const Tensor& input) {
  const Tensor output = Forward(pre_hook_ ? pre_hook_(input) : input);
  return post_hook_ ? post_hook_(output) : output;
}

void Module::SetForwardHooks(ForwardHook pre, ForwardHook post) {
  pre_hook_ = std::move(pre);
  post_hook_ = std::move(post);
}

void Module::SetInitializer(const std::string& name, const Initializer& init) {
  Spec(name).init = init;
}

void Module::SetAxes(const std::string& name, std::vector<std::string> axes,
                     std::vector<int64_t> parts) {
  ParamSpec& spec = Spec(name);
  EMBER_CHECK(axes.size() == spec.shape.size(), "parameter ", name, ": ", axes.size(),
              " axis names for ", spec.shape.size(), " dimensions");
  EMBER_CHECK(parts.empty() || parts.size() == spec.shape.size(), "parameter ", name, ": ",
              parts.size(), " part counts for ", spec.shape.size(), " dimensions");
  for (size_t d = 0; d < parts.size(); ++d) {
    EMBER_CHECK(parts[d] >= 1 && spec.shape[d] % parts[d] == 0, "parameter ", name, ": ",
                spec.shape[d], " rows of dimension ", d, " are not ", parts[d], " equal parts");
  }
  spec.axes = std::move(axes);
  spec.parts = std::move(parts);
}

void Materialize(Module& module, Device device, Generator& gen, const Sharding* sharding) {
  EMBER_CHECK(sharding == nullptr ||
                  (sharding->world >= 1 && sharding->rank >= 0 && sharding->rank < sharding->world),
              "materialize: rank ", sharding ? sharding->rank : 0, " of a world of ",
              sharding ? sharding->world : 0);
  const std::vector<std::pair<std::string, Tensor>> params = module.NamedParameters();
  const std::vector<std::pair<std::string, ParamSpec>> specs = module.NamedParameterSpecs();
  // Each parameter's split per dimension, all checked before anything is made.
  std::vector<std::vector<int64_t>> splits(params.size()), coords(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& spec = specs[i].second;
    splits[i].assign(spec.shape.size(), 1);
    coords[i].assign(spec.shape.size(), 0);
    for (size_t d = 0; sharding != nullptr && d < spec.axes.size(); ++d) {
      if (spec.axes[d] != sharding->axis) continue;
      EMBER_CHECK(
          spec.shape[d] % (spec.parts_of(d) * sharding->world) == 0,
          "materialize: ", specs[i].first, "'s axis ", sharding->axis, " has ", spec.shape[d],
          " rows, which do not split into ", sharding->world, " equal shards",
          spec.parts_of(d) > 1 ? absl::StrCat(" in each of ", spec.parts_of(d), " parts") : "");
      splits[i][d] = sharding->world;
      coords[i][d] = sharding->rank;
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].second.SetData(DrawShard(specs[i].second, splits[i], coords[i], gen).To(device));
    autograd::ZeroGrad(params[i].second);  // a gradient of the old tensor means nothing now
  }
}

void ToEmpty(Module& module, Device device) {
  const std::vector<std::pair<std::string, Tensor>> params = module.NamedParameters();
  const std::vector<std::pair<std::string, ParamSpec>> specs = module.NamedParameterSpecs();
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].second.SetData(Empty(specs[i].second.shape, specs[i].second.dtype, device));
    autograd::ZeroGrad(params[i].second);
  }
}

ParameterCount CountParameters(const Module& module) {
  ParameterCount count;
  for (const auto& [name, spec] : module.NamedParameterSpecs()) {
    count.parameters += spec.numel();
    count.bytes += spec.nbytes();
  }
  return count;
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
  // The first parameter in NamedParameters' order (a module's own, then its children's),
  // found without listing and naming them all: a decoder asks once a token.
  std::function<const Tensor*(const Module&)> first = [&](const Module& m) -> const Tensor* {
    if (!m.parameters_.empty()) return &m.parameters_.front().second;
    for (const auto& [name, child] : m.children_) {
      if (const Tensor* t = first(*child)) return t;
    }
    return nullptr;
  };
  const Tensor* const t = first(*this);
  return t != nullptr ? t->device() : Device::Cpu();
}

Module& Module::To(Device device) {
  for (const auto& [name, p] : NamedParameters()) {
    if (p.device() == device) continue;
    p.SetData(autograd::Detach(p).To(device));
    if (const std::shared_ptr<AutogradMeta>& meta = p.autograd_meta();
        meta && meta->grad.defined()) {
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
