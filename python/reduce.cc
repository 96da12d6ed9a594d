// Reductions, scans and sorting in PyTorch's names: sum, mean, max, min, var, argmax,
// topk; cumsum and cumprod; sort, argsort and msort. Each differentiable one records
// through autograd (autograd/reduce.h); argmax and the indices carry no gradient.

#include "tensor/ops/reduce.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <vector>

#include "autograd/autograd.h"
#include "python/status.h"
#include "tensor/ops/sampling.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

// The dims of a reduction: None (all), an int, or a sequence of ints.
std::vector<int64_t> Dims(const py::object& dim) {
  if (dim.is_none()) return {};
  if (py::isinstance<py::int_>(dim)) return {dim.cast<int64_t>()};
  return dim.cast<std::vector<int64_t>>();
}

// torch.topk along the last dimension, largest first: a (values, indices) named tuple.
py::object TopK(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  EMBER_CHECK(dim == -1 || dim == t.dim() - 1, "topk: only along the last dimension (dim=-1), not ",
              dim);
  EMBER_CHECK(largest && sorted,
              "topk: only the largest entries, sorted (largest=True, "
              "sorted=True)");
  EMBER_CHECK(!(ag::GradModeEnabled() && ag::RequiresGrad(t)),
              "topk: its values carry no gradient; call it under ember.no_grad()");
  const ops::TopKResult result = ops::TopK(t, k);
  static const py::object kType =
      py::module_::import("collections").attr("namedtuple")("topk", "values indices");
  return kType(result.values, result.indices);
}

// torch.return_types.sort: a (values, indices) named tuple.
py::object SortResult(const std::pair<Tensor, Tensor>& sorted) {
  static const py::object kType =
      py::module_::import("collections").attr("namedtuple")("sort", "values indices");
  return kType(sorted.first, sorted.second);
}

// x in the dtype asked for (the scans' dtype= argument), or as it is.
Tensor AsDType(const Tensor& x, std::optional<DType> dtype) {
  return dtype ? ag::To(x, *dtype) : x;
}

}  // namespace

void BindReductions(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor
      .def(
          "sum",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return ag::Sum(t, Dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "mean",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return ag::Mean(t, Dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "max",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return ag::Max(t, Dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "min",
          [](const Tensor& t, const py::object& dim, bool keepdim) {
            return ag::Min(t, Dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "var",
          [](const Tensor& t, const py::object& dim, int64_t correction, bool keepdim) {
            return ag::Var(t, Dims(dim), correction, keepdim);
          },
          py::arg("dim") = py::none(), py::arg("correction") = 1, py::arg("keepdim") = false)
      .def(
          "argmax",
          [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
            return ops::ArgMax(ag::Detach(t), dim, keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false);
  tensor.def("topk", &TopK, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
             py::arg("sorted") = true);
  m.def("topk", &TopK, py::arg("input"), py::arg("k"), py::arg("dim") = -1,
        py::arg("largest") = true, py::arg("sorted") = true);

  // torch.cumsum / torch.cumprod (input, dim, *, dtype=None): floating dtypes kept,
  // integers and bool to int64.
  auto cumsum = [](const Tensor& t, int64_t dim, std::optional<DType> dtype) {
    return ag::Cumsum(AsDType(t, dtype), dim);
  };
  auto cumprod = [](const Tensor& t, int64_t dim, std::optional<DType> dtype) {
    return ag::Cumprod(AsDType(t, dtype), dim);
  };
  tensor.def("cumsum", cumsum, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  tensor.def("cumprod", cumprod, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  m.def("cumsum", cumsum, py::arg("input"), py::arg("dim"), py::kw_only(),
        py::arg("dtype") = py::none());
  m.def("cumprod", cumprod, py::arg("input"), py::arg("dim"), py::kw_only(),
        py::arg("dtype") = py::none());

  // torch.sort / argsort / msort. Every sort is stable (torch's stable=True), which is
  // also a valid answer for stable=False.
  auto sort = [](const Tensor& t, int64_t dim, bool descending, bool) {
    return SortResult(ag::Sort(t, dim, descending));
  };
  auto argsort = [](const Tensor& t, int64_t dim, bool descending, bool) {
    return ag::Sort(ag::Detach(t), dim, descending).second;
  };
  auto msort = [](const Tensor& t) { return ag::Sort(t, 0).first; };
  tensor.def("sort", sort, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
             py::arg("stable") = false);
  tensor.def("argsort", argsort, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
             py::arg("stable") = false);
  tensor.def("msort", msort);
  m.def("sort", sort, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false,
        py::kw_only(), py::arg("stable") = false);
  m.def("argsort", argsort, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false,
        py::kw_only(), py::arg("stable") = false);
  m.def("msort", msort, py::arg("input"));
}

}  // namespace ember::python
