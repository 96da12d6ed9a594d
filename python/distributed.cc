// Several processes in `ember._ember`: the process group (distributed/process_group.h:
// MPI under mpirun, one process otherwise), data parallelism's bucketed gradient
// averager (distributed/data_parallel.h), the mesh (distributed/mesh.h), FSDP's units
// (distributed/fsdp.h) and Megatron's two functions (distributed/tensor_parallel.h),
// which ember.distributed, ember.nn.parallel.DistributedDataParallel,
// ember.distributed.device_mesh, .fsdp and .tensor.parallel present in PyTorch's names.
// Every call that waits for other ranks releases the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/time/time.h"
#include "distributed/data_parallel.h"
#include "distributed/fsdp.h"
#include "distributed/mesh.h"
#include "distributed/process_group.h"
#include "distributed/tensor_parallel.h"
#include "python/status.h"

namespace py = pybind11;
namespace dist = ::ember::distributed;

namespace ember::python {
namespace {

dist::ReduceOp ReduceOpOf(const std::string& op) {
  if (op == "sum") return dist::ReduceOp::kSum;
  if (op == "avg") return dist::ReduceOp::kMean;
  throw py::value_error("all_reduce: op " + op +
                        " is not supported (ReduceOp.SUM or ReduceOp.AVG)");
}

// FSDP over one axis of a mesh, the mesh kept alive with it. A unit is a list of
// (parameter, dimension split or -1, shard or None).
class PyFullyShardedData {
 public:
  using Entry = std::tuple<Tensor, int, std::optional<Tensor>>;
  PyFullyShardedData(dist::Mesh mesh, const std::string& axis,
                     const std::vector<std::vector<Entry>>& units)
      : mesh_(std::move(mesh)) {
    std::vector<std::vector<dist::FullyShardedData::Param>> params;
    for (const std::vector<Entry>& unit : units) {
      params.emplace_back();
      for (const auto& [param, dim, shard] : unit)
        params.back().push_back({param, dim, 1, shard ? *shard : Tensor()});
    }
    // The units' whole weights have memory only while gathered (the root's stay).
    for (size_t u = 1; u < params.size(); ++u) {
      for (const dist::FullyShardedData::Param& p : params[u]) {
        if (p.dim >= 0) p.param.storage().Release();
      }
    }
    fsdp_ = std::make_unique<dist::FullyShardedData>(mesh_.group(axis), std::move(params),
                                                     std::vector<nn::Module*>());
  }
  dist::FullyShardedData& operator*() { return *fsdp_; }

 private:
  dist::Mesh mesh_;
  std::unique_ptr<dist::FullyShardedData> fsdp_;
};

}  // namespace

void BindDistributed(py::module_& m) {
  py::class_<dist::Work, std::shared_ptr<dist::Work>>(m, "_Work")
      .def("wait",
           [](dist::Work& w) {
             py::gil_scoped_release release;
             w.Wait();
             return true;
           })
      .def("is_completed", &dist::Work::done);
  // The first call chooses the group (MPI_Init under mpirun).
  m.def("_world", [] {
    const dist::ProcessGroup* world;
    {
      py::gil_scoped_release release;
      world = &dist::World();
    }
    return py::make_tuple(world->rank(), world->size(), world->backend());
  });
  m.def("_local_rank", &dist::LocalRank);
  m.def("_set_timeout", [](double seconds) { dist::SetTimeout(absl::Seconds(seconds)); });
  m.def("_all_reduce", [](const Tensor& t, const std::string& op) {
    py::gil_scoped_release release;
    return dist::World().AllReduceAsync(t, ReduceOpOf(op));
  });
  m.def("_broadcast", [](const Tensor& t, int root) {
    py::gil_scoped_release release;
    return dist::World().BroadcastAsync(t, root);
  });
  m.def("_all_gather", [](const Tensor& input, const Tensor& output) {
    py::gil_scoped_release release;
    return dist::World().AllGatherAsync(input, output);
  });
  m.def("_reduce_scatter", [](const Tensor& input, const Tensor& output, const std::string& op) {
    py::gil_scoped_release release;
    return dist::World().ReduceScatterAsync(input, output, ReduceOpOf(op));
  });
  m.def("_barrier", [] {
    py::gil_scoped_release release;
    dist::World().Barrier();
  });
  py::class_<dist::GradientAverager>(m, "_GradientAverager")
      .def(py::init([](std::vector<Tensor> params, int64_t bucket_bytes) {
             py::gil_scoped_release release;
             return std::make_unique<dist::GradientAverager>(dist::World(), std::move(params),
                                                             bucket_bytes);
           }),
           py::arg("params"), py::arg("bucket_bytes"))
      .def("arm", &dist::GradientAverager::Arm)
      .def("finish",
           [](dist::GradientAverager& a) {
             py::gil_scoped_release release;
             a.Finish();
           })
      .def("stats", [](const dist::GradientAverager& a) {
        const dist::GradientAverager::Stats& s = a.stats();
        py::dict d;
        d["buckets"] = s.buckets;
        d["bytes"] = s.bytes;
        d["comm_seconds"] = s.comm_seconds;
        d["wait_seconds"] = s.wait_seconds;
        return d;
      });
  py::class_<dist::Mesh>(m, "_Mesh")
      .def(py::init([](const std::string& spec) {
             py::gil_scoped_release release;
             return ValueOrRaise(dist::Mesh::Create(spec, dist::World()));
           }),
           py::arg("spec"))
      .def("axes", &dist::Mesh::axes)
      .def("size", [](const dist::Mesh& mesh, const std::string& axis) { return mesh.size(axis); })
      .def("coordinate",
           [](const dist::Mesh& mesh, const std::string& axis) { return mesh.coordinate(axis); })
      .def("__str__", &dist::Mesh::ToString);
  py::class_<PyFullyShardedData>(m, "_FullyShardedData")
      .def(py::init([](const dist::Mesh& mesh, const std::string& axis,
                       const std::vector<std::vector<PyFullyShardedData::Entry>>& units) {
             return std::make_unique<PyFullyShardedData>(mesh, axis, units);
           }),
           py::arg("mesh"), py::arg("axis"), py::arg("units"))
      .def("begin_forward",
           [](PyFullyShardedData& f) {
             py::gil_scoped_release release;
             (*f).BeginForward();
           })
      .def("before",
           [](PyFullyShardedData& f, size_t unit, const Tensor& x) {
             py::gil_scoped_release release;
             return (*f).Before(unit, x);
           })
      .def("after",
           [](PyFullyShardedData& f, size_t unit, const Tensor& y) {
             py::gil_scoped_release release;
             return (*f).After(unit, y);
           })
      .def("end_backward",
           [](PyFullyShardedData& f) {
             py::gil_scoped_release release;
             (*f).EndBackward();
           })
      .def("zero_grad", [](PyFullyShardedData& f) { (*f).ZeroGrad(); })
      .def("shards_updated", [](PyFullyShardedData& f) { (*f).ShardsUpdated(); })
      .def("gathered_bytes", [](PyFullyShardedData& f) { return (*f).gathered_bytes(); })
      .def("reduced_bytes", [](PyFullyShardedData& f) { return (*f).reduced_bytes(); });
  m.def("_all_gather_axis", [](const Tensor& input, const Tensor& output, const dist::Mesh& mesh,
                               const std::string& axis) {
    py::gil_scoped_release release;
    mesh.group(axis).AllGather(input, output);
  });
  m.def("_to_tensor_parallel",
        [](const Tensor& x, const dist::Mesh& mesh, const std::string& axis) {
          return dist::ToTensorParallel(x, mesh.group(axis));
        });
  m.def("_from_tensor_parallel",
        [](const Tensor& x, const dist::Mesh& mesh, const std::string& axis) {
          py::gil_scoped_release release;
          return dist::FromTensorParallel(x, mesh.group(axis));
        });
}

}  // namespace ember::python
