#ifndef EMBER_DISTRIBUTED_MESH_H_
#define EMBER_DISTRIBUTED_MESH_H_

// A device mesh, as JAX's Mesh and PyTorch's DeviceMesh: the world's ranks arranged in a
// grid with named axes, and a process group per axis.
//
//   mpirun -np 4 ... --mesh=data:2,model:2
//
//        model 0  model 1
//   data 0  rank 0   rank 1
//   data 1  rank 2   rank 3
//
// A rank's coordinates are its index's digits in the grid, row-major (the last axis
// varies fastest, so a "model" group's ranks are neighbours: on one machine before
// several). Group(axis) holds the ranks that differ from this one along that axis only:
// on the grid above, rank 1's "model" group is {0, 1} and its "data" group {1, 3}. Each
// is a ProcessGroup of its own (MPI sub-communicator, NCCL communicator), split from
// the world once, when the mesh is made.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/process_group.h"

namespace ember::distributed {

class Mesh {
 public:
  // "name:size,name:size,..." (names of lowercase letters, digits and '_', not starting
  // with a digit, distinct; sizes >= 1)
  // whose sizes multiply to world.size(); "" is one axis, "data", over the whole world.
  // Every rank calls it with the same spec (it splits the world's communicator).
  static absl::StatusOr<Mesh> Create(absl::string_view spec, ProcessGroup& world);
  // The same grid seen from rank `rank` of `world_size` (0: as many ranks as the axes
  // multiply to), without groups (group() is an error): for planning a run from one
  // process (train --print_shardings).
  static absl::StatusOr<Mesh> Layout(absl::string_view spec, int world_size, int rank = 0);

  // The axes' names, in order.
  std::vector<std::string> axes() const;
  bool has(absl::string_view axis) const;
  // The axis' size and this rank's coordinate along it; an axis the mesh lacks has size
  // 1 and coordinate 0 (a table of rules names axes that a smaller mesh leaves out).
  int size(absl::string_view axis) const;
  int coordinate(absl::string_view axis) const;
  // The ranks that differ from this one along `axis` only (an error for an axis the
  // mesh lacks).
  ProcessGroup& group(absl::string_view axis) const;
  // "data:2,model:2".
  std::string ToString() const;

 private:
  struct Axis {
    std::string name;
    int size = 1;
    int coordinate = 0;
    std::shared_ptr<ProcessGroup> group;
  };
  const Axis* Find(absl::string_view axis) const;
  std::vector<Axis> axes_;
};

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_MESH_H_
