#include "distributed/sharding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "autograd/engine.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::distributed {

absl::StatusOr<ShardingRules> ShardingRules::Parse(absl::string_view text) {
  std::vector<std::pair<std::string, std::string>> rules;
  if (text.empty()) return ShardingRules();
  for (const absl::string_view part : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding rules \"", text, "\": expected logical=mesh_axis,... (e.g. embed=data,",
          "mlp=model; an empty mesh axis replicates), not \"", part, "\""));
    }
    for (const auto& [logical, axis] : rules) {
      if (logical == kv[0]) {
        return absl::InvalidArgumentError(
            absl::StrCat("sharding rules \"", text, "\": ", logical, " appears twice"));
      }
    }
    rules.emplace_back(std::string(kv[0]), std::string(kv[1]));
  }
  return ShardingRules(std::move(rules));
}

ShardingRules ShardingRules::Without(absl::string_view mesh_axis) const {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& rule : rules_) {
    if (rule.second != mesh_axis) kept.push_back(rule);
  }
  return ShardingRules(std::move(kept));
}

std::string ShardingRules::MeshAxis(absl::string_view logical) const {
  for (const auto& [name, axis] : rules_) {
    if (name == logical) return axis;
  }
  return "";
}

std::string ShardingRules::ToString() const {
  if (rules_.empty()) return "(none: replicated)";
  return absl::StrJoin(rules_, ",", [](std::string* out, const auto& rule) {
    absl::StrAppend(out, rule.first, "=", rule.second);
  });
}

bool ParamSharding::sharded() const {
  return std::any_of(mesh_axes.begin(), mesh_axes.end(),
                     [](const std::string& a) { return !a.empty(); });
}

Tensor ParamSharding::Slice(const Tensor& whole, const Mesh& mesh) const {
  EMBER_CHECK(whole.shape() == spec.shape, name, ": slicing a tensor of shape ",
              ShapeToString(whole.shape()), ", not ", ShapeToString(spec.shape));
  const autograd::NoGradGuard values;  // of a parameter too
  Tensor out = whole;
  for (size_t d = 0; d < mesh_axes.size(); ++d) {
    if (mesh_axes[d].empty()) continue;
    const std::vector<Tensor> views =
        nn::ShardViews(out, static_cast<int>(d), spec.parts_of(d), mesh.size(mesh_axes[d]),
                       mesh.coordinate(mesh_axes[d]));
    Shape shape = out.shape();
    shape[d] /= mesh.size(mesh_axes[d]);
    const Tensor cut = Empty(shape, out.dtype(), out.device());
    const int64_t piece = views.front().size(static_cast<int64_t>(d));
    for (size_t p = 0; p < views.size(); ++p)
      cut.Narrow(static_cast<int64_t>(d), static_cast<int64_t>(p) * piece, piece)
          .CopyFrom(views[p]);
    out = cut;
  }
  return out.Contiguous();
}

Tensor ParamSharding::Gather(const Tensor& shard, const Mesh& mesh) const {
  EMBER_CHECK(shard.shape() == local_shape, name, ": gathering a shard of shape ",
              ShapeToString(shard.shape()), ", not ", ShapeToString(local_shape));
  const autograd::NoGradGuard values;  // of a parameter too
  Tensor out = shard.Contiguous();
  for (size_t d = 0; d < mesh_axes.size(); ++d) {
    if (mesh_axes[d].empty()) continue;
    ProcessGroup& group = mesh.group(mesh_axes[d]);
    const int64_t n = group.size(), numel = out.numel();
    const Tensor gathered = Empty({n * numel}, out.dtype(), out.device());
    group.AllGather(out.View({numel}), gathered);
    Shape shape = out.shape();
    shape[d] *= n;
    const Tensor whole = Empty(shape, out.dtype(), out.device());
    for (int64_t k = 0; k < n; ++k) {
      const Tensor piece = gathered.Narrow(0, k * numel, numel).View(out.shape());
      const std::vector<Tensor> views =
          nn::ShardViews(whole, static_cast<int>(d), spec.parts_of(d), n, k);
      const int64_t rows = views.front().size(static_cast<int64_t>(d));
      for (size_t p = 0; p < views.size(); ++p)
        views[p].CopyFrom(
            piece.Narrow(static_cast<int64_t>(d), static_cast<int64_t>(p) * rows, rows));
    }
    out = whole;
  }
  return out;
}

Tensor ParamSharding::Draw(const Mesh& mesh, Generator& gen) const {
  std::vector<int64_t> split(mesh_axes.size(), 1), coord(mesh_axes.size(), 0);
  for (size_t d = 0; d < mesh_axes.size(); ++d) {
    if (mesh_axes[d].empty()) continue;
    split[d] = mesh.size(mesh_axes[d]);
    coord[d] = mesh.coordinate(mesh_axes[d]);
  }
  return nn::DrawShard(spec, split, coord, gen);
}

absl::StatusOr<std::vector<ParamSharding>> Shardings(const nn::Module& model, const Mesh& mesh,
                                                     const ShardingRules& rules) {
  std::vector<ParamSharding> out;
  for (const auto& [name, spec] : model.NamedParameterSpecs()) {
    ParamSharding p{name, spec, std::vector<std::string>(spec.shape.size()), spec.shape};
    for (size_t d = 0; d < spec.axes.size() && d < spec.shape.size(); ++d) {
      const std::string axis = rules.MeshAxis(spec.axes[d]);
      if (axis.empty() || mesh.size(axis) == 1) continue;
      for (size_t e = 0; e < d; ++e) {
        if (p.mesh_axes[e] == axis) {
          return absl::InvalidArgumentError(absl::StrCat(
              name, " ", spec.ToString(), ": its axes ", spec.axes[e], " and ", spec.axes[d],
              " both map to mesh axis ", axis, " under the rules ", rules.ToString()));
        }
      }
      const int64_t parts = mesh.size(axis), fused = spec.parts_of(d);
      if (spec.shape[d] % (parts * fused) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " ", spec.ToString(), ": its ", spec.axes[d], " axis (",
                         spec.shape[d], fused > 1 ? absl::StrCat(" in ", fused, " parts") : "",
                         ") does not split into ", parts, " equal parts along mesh axis ", axis));
      }
      p.mesh_axes[d] = axis;
      p.local_shape[d] = spec.shape[d] / parts;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string ShardingsTable(const std::vector<ParamSharding>& shardings, const Mesh& mesh,
                           const ShardingRules& rules) {
  size_t width = 0;
  for (const ParamSharding& p : shardings) width = std::max(width, p.name.size());
  std::string table = absl::StrCat("mesh ", mesh.ToString(), ", rules ", rules.ToString(), "\n");
  int64_t whole = 0, local = 0;
  for (const ParamSharding& p : shardings) {
    const std::string logical = absl::StrJoin(p.spec.axes, ", ");
    const std::string placed = absl::StrJoin(
        p.mesh_axes, ", ",
        [](std::string* out, const std::string& a) { out->append(a.empty() ? "-" : a); });
    absl::StrAppendFormat(&table, "  %-*s  %s (%s)  -> %s (%s)\n", static_cast<int>(width), p.name,
                          ShapeToString(p.spec.shape), logical, ShapeToString(p.local_shape),
                          placed);
    whole += p.spec.nbytes();
    local += p.local_numel() * ItemSize(p.spec.dtype);
  }
  absl::StrAppendFormat(&table, "parameters per rank: %.1f MB of %.1f MB (%.3f)\n", local / 1e6,
                        whole / 1e6, whole > 0 ? static_cast<double>(local) / whole : 0.0);
  return table;
}

}  // namespace ember::distributed
