#include "distributed/sharding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

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

ShardingRules ShardingRules::Gpt2(bool fsdp) {
  std::vector<std::pair<std::string, std::string>> rules = {
      {"qkv", "model"}, {"heads", "model"}, {"mlp", "model"}};
  if (fsdp) rules.emplace_back("embed", "data");
  return ShardingRules(std::move(rules));
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
      const int parts = mesh.size(axis);
      if (spec.shape[d] % parts != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, " ", spec.ToString(), ": its ", spec.axes[d], " axis (", spec.shape[d],
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
