#include "distributed/sharded_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "autograd/engine.h"
#include "base/error.h"
#include "base/status.h"
#include "optim/optimizer.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"

namespace ember::distributed {
namespace ag = autograd;
namespace {

constexpr char kData[] = "data";
constexpr char kModel[] = "model";

// FSDP2's Shard(0) for a parameter the rules leave whole along "data": its first
// dimension that is not split already and whose parts each divide into n.
void SplitAlongData(ParamSharding& p, int n) {
  for (const std::string& axis : p.mesh_axes) {
    if (axis == kData) return;
  }
  for (size_t d = 0; d < p.mesh_axes.size(); ++d) {
    if (p.mesh_axes[d].empty() && p.spec.shape[d] % (n * p.spec.parts_of(d)) == 0) {
      p.mesh_axes[d] = kData;
      p.local_shape[d] = p.spec.shape[d] / n;
      return;
    }
  }
}

// Every module's dotted prefix under `module` ("h.3.").
void Prefixes(const nn::Module& module, const std::string& prefix,
              std::map<const nn::Module*, std::string>& out) {
  out.emplace(&module, prefix);
  for (const auto& [name, child] : module.Children()) Prefixes(*child, prefix + name + ".", out);
}

}  // namespace

std::vector<nn::Module*> ChildUnits(const nn::Module& model,
                                    const std::vector<const nn::Module*>& keep_in_root) {
  std::vector<nn::Module*> units;
  for (const auto& [name, child] : model.Children()) {
    if (child->NumParameters() > 0 &&
        std::find(keep_in_root.begin(), keep_in_root.end(), child.get()) == keep_in_root.end()) {
      units.push_back(child.get());
    }
  }
  return units;
}

bool SplitsParameters(const Mesh& mesh, const ShardOptions& options) {
  return mesh.size(kModel) > 1 || (options.fsdp && mesh.size(kData) > 1);
}

ShardedModel::ShardedModel(std::shared_ptr<nn::Module> model, const Mesh& mesh,
                           const ShardOptions& options)
    : model_(std::move(model)), mesh_(mesh), options_(options) {}

ShardedModel::~ShardedModel() = default;

absl::StatusOr<std::unique_ptr<ShardedModel>> ShardedModel::Create(
    std::shared_ptr<nn::Module> model, const Mesh& mesh, const ShardingPlan& plan,
    const ShardOptions& options, Generator& gen) {
  EMBER_CHECK(model != nullptr, "ShardedModel: no model");
  if (mesh.size(kModel) > 1 && !plan.tensor_parallel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mesh ", mesh.ToString(), ": this model has no tensor-parallel layers for the ",
        mesh.size(kModel), " ranks of its model axis (shard it across the data axis, FSDP)"));
  }
  const int data = mesh.size(kData);
  const ShardingRules rules = options.fsdp ? plan.rules : plan.rules.Without(kData);
  std::unique_ptr<ShardedModel> out(new ShardedModel(std::move(model), mesh, options));
  nn::Module& m = *out->model_;
  ASSIGN_OR_RETURN(out->shardings_, Shardings(m, mesh, rules));
  for (ParamSharding& p : out->shardings_) {
    if (options.fsdp && data > 1) SplitAlongData(p, data);
    out->split_ = out->split_ || p.sharded();
  }
  const std::vector<std::pair<std::string, Tensor>> params = m.NamedParameters();
  const bool meta = !params.empty() && params.front().second.device() == Device::Meta();
  if (!meta) m.To(options.device);

  // FSDP's units: the root (index 0), then the plan's modules; a parameter belongs to the
  // unit of the longest prefix of its name.
  std::map<const nn::Module*, std::string> prefixes;
  Prefixes(m, "", prefixes);
  std::vector<std::string> unit_prefix = {""};
  for (const nn::Module* unit : plan.units) {
    const auto it = prefixes.find(unit);
    EMBER_CHECK(it != prefixes.end() && unit != &m,
                "ShardedModel: an FSDP unit that is not a submodule of the model");
    unit_prefix.push_back(it->second);
  }
  std::vector<std::vector<FullyShardedData::Param>> units(unit_prefix.size());
  bool fsdp = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const FullyShardedData::Param placed = out->Place(i, params[i].second, gen);
    fsdp = fsdp || placed.dim >= 0;
    size_t unit = 0;
    for (size_t u = 1; u < unit_prefix.size(); ++u) {
      if (absl::StartsWith(params[i].first, unit_prefix[u]) &&
          unit_prefix[u].size() > unit_prefix[unit].size()) {
        unit = u;
      }
    }
    units[unit].push_back(placed);
  }
  if (mesh.size(kModel) > 1) plan.tensor_parallel(mesh.group(kModel));
  if (fsdp) {
    out->fsdp_ =
        std::make_unique<FullyShardedData>(mesh.group(kData), std::move(units), plan.units);
  } else if (data > 1) {
    // Every data rank starts from the first's values, as DistributedDataParallel does
    // (equal already when made from one seed or file; this makes sure).
    for (const Tensor& p : out->parameters_) mesh.group(kData).Broadcast(p, 0);
    if (options.average_gradients)
      out->averager_ = std::make_unique<GradientAverager>(mesh.group(kData), out->parameters_);
  }
  return out;
}

FullyShardedData::Param ShardedModel::Place(size_t i, const Tensor& param, Generator& gen) {
  const ParamSharding& s = shardings_[i];
  int dim = -1;
  for (size_t d = 0; d < s.mesh_axes.size(); ++d) {
    if (s.mesh_axes[d] == kData) dim = static_cast<int>(d);
  }
  Tensor local;
  if (param.device() == Device::Meta()) {
    local = s.Draw(mesh_, gen).To(options_.device);
  } else if (s.sharded()) {
    local = s.Slice(ag::Detach(param), mesh_);
  }
  if (dim < 0) {
    if (local.defined()) param.SetData(local);
    parameters_.push_back(param);
    return {param, -1, 1, Tensor()};
  }
  // The model's tensor: this rank's share along the model axis, whole along "data", with
  // no memory until FSDP gathers it.
  Shape shape = s.local_shape;
  shape[dim] = s.spec.shape[dim];
  param.SetData(Empty(shape, local.dtype(), options_.device));
  param.storage().Release();
  parameters_.push_back(ag::SetRequiresGrad(local));
  return {param, dim, s.spec.parts_of(dim), parameters_.back()};
}

void ShardedModel::ZeroGrad() {
  model_->ZeroGrad();
  if (fsdp_) fsdp_->ZeroGrad();
}

void ShardedModel::BeginForward() {
  if (fsdp_) fsdp_->BeginForward();
}

void ShardedModel::BeginBackward(bool last_micro_batch) {
  if (averager_ && last_micro_batch) averager_->Arm();
}

void ShardedModel::EndBackward() {
  if (fsdp_) fsdp_->EndBackward();
}

void ShardedModel::FinishGradients() {
  if (averager_) averager_->Finish();
}

double ShardedModel::GradNorm() const {
  if (!split_) return optim::GradNorm(parameters_);
  // A shard split along axes of sizes n1, n2, ... has world / (n1 n2 ...) copies (the
  // ranks that differ along the other axes), so each rank weighs its sum by the inverse.
  // The weighted sum is kept on the gradients' device and read once.
  int world = 1;
  for (const std::string& axis : mesh_.axes()) world *= mesh_.size(axis);
  Tensor sum = Zeros({}, DType::kF64, options_.device);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor grad = ag::Grad(parameters_[i]);
    if (!grad.defined()) continue;
    double split = 1;
    for (const std::string& axis : shardings_[i].mesh_axes) {
      if (!axis.empty()) split *= mesh_.size(axis);
    }
    sum = ops::Add(sum, ops::Mul(ops::SumOfSquares(grad), split / world));
  }
  return std::sqrt(World().AllReduce(sum.item<double>()));
}

void ShardedModel::ParametersUpdated() {
  if (fsdp_) fsdp_->ShardsUpdated();
}

Tensor ShardedModel::Slice(size_t i, const Tensor& whole) const {
  // Sliced where the whole is (a checkpoint's, on the host), then moved: only the share
  // is read and copied.
  const Tensor share = shardings_[i].sharded() ? shardings_[i].Slice(whole, mesh_) : whole;
  return share.To(options_.device);
}

Tensor ShardedModel::Gather(size_t i, const Tensor& local) const {
  return shardings_[i].sharded() ? shardings_[i].Gather(local, mesh_) : local;
}

absl::Status ShardedModel::LoadStateDict(const std::map<std::string, Tensor>& whole) {
  if (!split_) return model_->LoadStateDict(whole);  // its messages list every problem
  for (const ParamSharding& s : shardings_) {
    const auto it = whole.find(s.name);
    if (it == whole.end()) return absl::InvalidArgumentError("missing " + s.name);
    if (it->second.shape() != s.spec.shape) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.name, " is ", ShapeToString(it->second.shape()), ", the model's ",
                       ShapeToString(s.spec.shape)));
    }
  }
  if (whole.size() != shardings_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(whole.size(), " tensors for the model's ", shardings_.size(), " parameters"));
  }
  const ag::NoGradGuard no_grad;
  for (size_t i = 0; i < shardings_.size(); ++i) {
    const Tensor& w = whole.at(shardings_[i].name);
    parameters_[i].CopyFrom(Slice(i, w.To(parameters_[i].dtype())));
  }
  if (fsdp_) fsdp_->ShardsUpdated();
  return absl::OkStatus();
}

absl::Status ShardedModel::WriteShare(size_t i, const Tensor& local, const std::string& name,
                                      nn::SharedSafetensorsWriter& file) const {
  const ParamSharding& s = shardings_[i];
  for (const std::string& axis : mesh_.axes()) {
    if (mesh_.coordinate(axis) != 0 &&
        std::find(s.mesh_axes.begin(), s.mesh_axes.end(), axis) == s.mesh_axes.end()) {
      return absl::OkStatus();  // another rank holds the same share and writes it
    }
  }
  // Along a split dimension of P parts (c_attn's q, k and v) the share is P blocks, the
  // k-th of N of each part: their product over the split dimensions.
  std::vector<int64_t> begin(s.spec.shape.size(), 0);
  std::function<absl::Status(size_t, const Tensor&)> write = [&](size_t d, const Tensor& block) {
    if (d == begin.size()) return file.WriteBlock(name, begin, block);
    if (s.mesh_axes[d].empty()) return write(d + 1, block);
    const int64_t parts = s.spec.parts_of(d), n = mesh_.size(s.mesh_axes[d]);
    const int64_t part = s.spec.shape[d] / parts, chunk = part / n;
    for (int64_t q = 0; q < parts; ++q) {
      begin[d] = q * part + mesh_.coordinate(s.mesh_axes[d]) * chunk;
      RETURN_IF_ERROR(write(d + 1, block.Narrow(static_cast<int64_t>(d), q * chunk, chunk)));
    }
    begin[d] = 0;
    return absl::OkStatus();
  };
  return write(0, local);
}

std::map<std::string, Tensor> ShardedModel::StateDict() const {
  if (!split_) return model_->StateDict();
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < shardings_.size(); ++i)
    out[shardings_[i].name] = Gather(i, parameters_[i]);
  return out;
}

std::optional<size_t> ShardedModel::EntryParameter(const optim::Optimizer& optimizer,
                                                   const std::string& key) const {
  size_t index = 0;
  if (!absl::SimpleAtoi(key.substr(0, key.find('.')), &index)) return std::nullopt;
  for (const optim::ParamGroup& group : optimizer.param_groups()) {
    if (index >= group.params.size()) {
      index -= group.params.size();
      continue;
    }
    for (size_t i = 0; i < parameters_.size(); ++i) {
      if (parameters_[i].is_same(group.params[index])) return i;
    }
    break;
  }
  return std::nullopt;
}

std::optional<size_t> ShardedModel::StateParameter(const optim::Optimizer& optimizer,
                                                   const std::string& key,
                                                   const Tensor& value) const {
  const std::optional<size_t> i = EntryParameter(optimizer, key);
  if (i && value.shape() == parameters_[*i].shape()) return i;
  return std::nullopt;
}

std::map<std::string, Tensor> ShardedModel::OptimizerStateDict(
    const optim::Optimizer& optimizer) const {
  std::map<std::string, Tensor> state = optimizer.StateDict();
  if (!split_) return state;
  for (auto& [key, t] : state) {
    if (const std::optional<size_t> i = StateParameter(optimizer, key, t)) t = Gather(*i, t);
  }
  return state;
}

absl::Status ShardedModel::LoadOptimizerStateDict(
    optim::Optimizer& optimizer, const std::map<std::string, Tensor>& whole) const {
  if (!split_) return optimizer.LoadStateDict(whole);
  std::map<std::string, Tensor> local;
  for (const auto& [key, t] : whole) {
    const std::optional<size_t> i = EntryParameter(optimizer, key);
    local[key] = i && t.shape() == shardings_[*i].spec.shape ? Slice(*i, t) : t;
  }
  return optimizer.LoadStateDict(local);
}

}  // namespace ember::distributed
