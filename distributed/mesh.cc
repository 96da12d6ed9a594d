#include "distributed/mesh.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/error.h"

namespace ember::distributed {
namespace {

// A lowercase letter or '_', then those or digits ("dp", "dim_0").
bool ValidName(absl::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (const char c : name) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Mesh> Mesh::Layout(absl::string_view spec, int world_size, int rank) {
  Mesh mesh;
  if (spec.empty()) {
    mesh.axes_.push_back({"data", world_size, 0, nullptr});
  } else {
    for (const absl::string_view part : absl::StrSplit(spec, ',')) {
      const std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits(':', 1));
      int size = 0;
      if (kv.size() != 2 || !ValidName(kv[0]) || !absl::SimpleAtoi(kv[1], &size) || size < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "mesh \"", spec, "\": expected name:size,... (names of a-z, 0-9 and _, sizes ",
            ">= 1), e.g. data:2,model:2; \"", part, "\" is not"));
      }
      if (mesh.Find(kv[0]) != nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("mesh \"", spec, "\": axis ", kv[0], " appears twice"));
      }
      mesh.axes_.push_back({std::string(kv[0]), size, 0, nullptr});
    }
  }
  int64_t ranks = 1;
  for (const Axis& a : mesh.axes_) ranks *= a.size;
  if (world_size != 0 && ranks != world_size) {
    return absl::InvalidArgumentError(absl::StrCat("mesh ", mesh.ToString(), " has ", ranks,
                                                   " ranks, but the world has ", world_size,
                                                   " (mpirun -np ", ranks, ")"));
  }
  // Coordinates: the rank's digits, the last axis fastest.
  int rest = rank;
  for (auto a = mesh.axes_.rbegin(); a != mesh.axes_.rend(); ++a) {
    a->coordinate = rest % a->size;
    rest /= a->size;
  }
  return mesh;
}

absl::StatusOr<Mesh> Mesh::Create(absl::string_view spec, ProcessGroup& world) {
  absl::StatusOr<Mesh> mesh = Layout(spec, world.size(), world.rank());
  if (!mesh.ok()) return mesh.status();
  // An axis' group: the ranks with every other coordinate equal (the rank with this
  // axis' coordinate set to 0 names it), in the order of this axis' coordinate. Every
  // rank splits for every axis, in the same order.
  int stride = 1;
  for (auto a = mesh->axes_.rbegin(); a != mesh->axes_.rend(); ++a) {
    a->group = world.Split(world.rank() - a->coordinate * stride, a->coordinate);
    EMBER_CHECK(a->group->size() == a->size && a->group->rank() == a->coordinate,
                "mesh: the split for axis ", a->name, " gave rank ", a->group->rank(), " of ",
                a->group->size(), ", expected ", a->coordinate, " of ", a->size);
    stride *= a->size;
  }
  return mesh;
}

const Mesh::Axis* Mesh::Find(absl::string_view axis) const {
  for (const Axis& a : axes_) {
    if (a.name == axis) return &a;
  }
  return nullptr;
}

std::vector<std::string> Mesh::axes() const {
  std::vector<std::string> names;
  for (const Axis& a : axes_) names.push_back(a.name);
  return names;
}

bool Mesh::has(absl::string_view axis) const { return Find(axis) != nullptr; }

int Mesh::size(absl::string_view axis) const {
  const Axis* a = Find(axis);
  return a == nullptr ? 1 : a->size;
}

int Mesh::coordinate(absl::string_view axis) const {
  const Axis* a = Find(axis);
  return a == nullptr ? 0 : a->coordinate;
}

ProcessGroup& Mesh::group(absl::string_view axis) const {
  const Axis* a = Find(axis);
  EMBER_CHECK(a != nullptr, "mesh ", ToString(), " has no axis ", axis);
  EMBER_CHECK(a->group != nullptr, "mesh ", ToString(),
              ": a layout for planning has no process groups (Mesh::Create makes them)");
  return *a->group;
}

std::string Mesh::ToString() const {
  return absl::StrJoin(axes_, ",", [](std::string* out, const Axis& a) {
    absl::StrAppend(out, a.name, ":", a.size);
  });
}

}  // namespace ember::distributed
