// Several processes in `ember._ember`: the process group (distributed/process_group.h:
// MPI under mpirun, one process otherwise) and data parallelism's bucketed gradient
// averager (distributed/data_parallel.h), which ember.distributed and
// ember.nn.parallel.DistributedDataParallel present in PyTorch's names. Every call that
// waits for other ranks releases the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "distributed/data_parallel.h"
#include "distributed/process_group.h"
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
}

}  // namespace ember::python
