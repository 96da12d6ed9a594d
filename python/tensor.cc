// Tensors and autograd in `ember._ember`, in PyTorch's names: ember.Tensor with its
// operators, views, elementwise functions and autograd; dtypes and devices; no_grad. The
// rest of the module, by topic: indexing.cc (indexing and in-place writes), creation.cc,
// reduce.cc (reductions, scans, sorting), memory.cc (raw memory), random.cc, nn.cc,
// cuda.cc, distributed.cc.
// Every op that can be differentiated goes through ember::autograd, so gradients flow
// as in PyTorch. Math that runs long (matmul, backward) releases the GIL.
//
// NumPy shares memory both ways without being a build dependency: a CPU tensor exposes
// the buffer protocol (numpy.asarray(t) and t.numpy() are views of it), and
// from_numpy wraps the array's buffer in a borrowed Storage that keeps the array alive.

#include "tensor/tensor.h"

#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/autograd.h"
#include "kernels/cpu/thread_pool.h"
#include "python/args.h"
#include "python/status.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

// Where tril (lower) or triu keeps t's entries: column - row <= diagonal (tril) or >=
// diagonal (triu), over t's last two dimensions; true marks an entry set to 0.
Tensor TriangleZeros(const Tensor& t, int64_t diagonal, bool lower) {
  EMBER_CHECK(t.dim() >= 2, lower ? "tril" : "triu", ": expected at least 2 dimensions, got ",
              t.dim());
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const Tensor offset = ops::Sub(Arange(cols).View({1, cols}), Arange(rows).View({rows, 1}));
  return (lower ? ops::Gt(offset, diagonal) : ops::Lt(offset, diagonal)).To(t.device());
}

// torch.split: equal pieces of split_size (the last may be shorter), or pieces of the
// given sizes, which must add up to the dimension.
std::vector<Tensor> SplitTensor(const Tensor& t, const py::object& sizes, int64_t dim) {
  if (py::isinstance<py::int_>(sizes)) return ag::Split(t, sizes.cast<int64_t>(), dim);
  const std::vector<int64_t> lengths = sizes.cast<std::vector<int64_t>>();
  const int64_t d = dim < 0 ? dim + t.dim() : dim;
  EMBER_CHECK(d >= 0 && d < t.dim(), "split: dimension ", dim, " is out of range for ", t.dim(),
              " dimensions");
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  EMBER_CHECK(total == t.size(d), "split: sizes ", absl::StrJoin(lengths, ", "), " add up to ",
              total, ", not to dimension ", dim, "'s ", t.size(d));
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t n : lengths) {
    pieces.push_back(ag::Narrow(t, d, start, n));
    start += n;
  }
  return pieces;
}

// ember.autograd.Function's node: `output` (made under no_grad) recorded as op `name`
// of `inputs`, its gradients from the Python callable backward(grad_output) -> one
// tensor or None per input. Backward runs without the GIL, and may free the node
// without it: the callable is called and dropped holding it.
Tensor RecordPython(const std::string& name, const Tensor& output,
                    const std::vector<Tensor>& inputs, py::function backward) {
  auto fn =
      std::shared_ptr<py::function>(new py::function(std::move(backward)), [](py::function* f) {
        py::gil_scoped_acquire gil;
        delete f;
      });
  const size_t count = inputs.size();
  // A fresh handle, so that an output that is an input (or shares its handle) is not
  // given the node in the input's place.
  return ag::Record(
      name.c_str(), ag::Detach(output), inputs, [fn, name, count](const Tensor& grad) {
        py::gil_scoped_acquire gil;
        const py::object result = (*fn)(grad);
        std::vector<Tensor> grads;
        for (const py::handle item : result) {
          grads.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
        }
        if (grads.size() != count) {
          throw py::value_error(absl::StrCat(name, ".backward returned ", grads.size(),
                                             " gradients for its tensor inputs; expected ", count));
        }
        return grads;
      });
}

// ---- Operators ----

// The method `a OP b` for b a Tensor or a Python number; f is overloaded on both.
template <typename F>
auto Binary(F f) {
  return [f](const Tensor& a, const py::object& b) -> Tensor {
    if (py::isinstance<Tensor>(b)) return f(a, b.cast<const Tensor&>());
    return f(a, ScalarOf(b));
  };
}

// A comparison's operands: no gradient flows through a bool result.
Tensor Detached(const Tensor& t) { return ag::Detach(t); }

// A conversion to `to` (a dtype or a device) as PyTorch's: the tensor itself, the same
// Python object, where it is there already (x.cuda() is x on the GPU), else a copy.
template <typename Target>
py::object SelfOr(const py::object& self, const Target& to) {
  const Tensor& t = self.cast<const Tensor&>();
  bool there;
  if constexpr (std::is_same_v<Target, DType>) {
    there = t.dtype() == to;
  } else {
    there = t.device() == to;
  }
  return there ? self : py::cast(t.To(to));
}
const Scalar& Detached(const Scalar& s) { return s; }

py::object ToPython(const Tensor& t) {
  if (t.dtype() == DType::kBool) return py::bool_(t.item<bool>());
  if (IsFloatingPoint(t.dtype())) return py::float_(t.item<double>());
  return py::int_(t.item<int64_t>());
}

py::object ToList(const Tensor& x) {
  const Tensor t = ag::Detach(x);  // values only, so plain views
  if (t.dim() == 0) return ToPython(t);
  py::list out;
  for (int64_t i = 0; i < t.size(0); ++i) out.append(ToList(t.Select(0, i)));
  return out;
}

// PyTorch's printing: the default dtypes (float32, int64, bool) left out, the others
// named ember.<name>, then requires_grad=True on a leaf or grad_fn=<op> on a result.
std::string Repr(const Tensor& t) {
  std::string text = t.ToString();  // "tensor(<values>, [device='...', ]dtype=<short name>)"
  const size_t at = text.rfind("dtype=");
  if (at == std::string::npos) return text;
  text.resize(at);
  std::vector<std::string> extra;
  if (t.dtype() != DType::kF32 && t.dtype() != DType::kI64 && t.dtype() != DType::kBool) {
    extra.push_back(absl::StrCat("dtype=ember.", Info(t.dtype()).name));
  }
  if (const std::string op = ag::GradFnName(t); !op.empty()) {
    extra.push_back(absl::StrCat("grad_fn=<", op, ">"));
  } else if (ag::RequiresGrad(t)) {
    extra.push_back("requires_grad=True");
  }
  if (extra.empty()) text.resize(text.size() - 2);  // the ", " before dtype=
  return absl::StrCat(text, absl::StrJoin(extra, ", "), ")");
}

// A context manager that turns gradient recording off (torch.no_grad).
class NoGrad {
 public:
  void Enter() { guard_ = std::make_unique<ag::NoGradGuard>(); }
  void Exit() { guard_.reset(); }

 private:
  std::unique_ptr<ag::NoGradGuard> guard_;
};

// torch.autocast's scope: bf16 products inside (autograd/autocast.h), or autocast off
// (f32), from __enter__ to __exit__.
class Autocast {
 public:
  explicit Autocast(DType dtype) : dtype_(dtype) {}
  void Enter() { guard_ = std::make_unique<ag::AutocastGuard>(dtype_); }
  void Exit() { guard_.reset(); }

 private:
  DType dtype_;
  std::unique_ptr<ag::AutocastGuard> guard_;
};

}  // namespace

void BindTensor(py::module_& m) {
  py::enum_<DType> dtype(m, "dtype");
  for (const DTypeInfo& info : AllDTypes()) dtype.value(info.name, info.dtype);
  // Replacing (not overloading) the names enum_ defines: ember.float32, as torch.float32.
  const py::cpp_function name([](DType d) { return absl::StrCat("ember.", Info(d).name); },
                              py::is_method(dtype));
  dtype.attr("__repr__") = name;
  dtype.attr("__str__") = name;
  dtype.def_property_readonly("is_floating_point", [](DType d) { return IsFloatingPoint(d); })
      .def_property_readonly("itemsize", [](DType d) { return ItemSize(d); });
  for (const DTypeInfo& info : AllDTypes()) m.attr(info.name) = py::cast(info.dtype);

  py::class_<Device>(m, "device")
      .def(py::init([](const std::string& text) { return ValueOrRaise(ParseDevice(text)); }),
           py::arg("type"))
      .def_property_readonly(
          "type", [](const Device& d) { return d.is_cpu() ? "cpu" : d.ToString().substr(0, 4); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               return d.is_cpu() ? py::object(py::none())
                                                 : py::object(py::int_(d.index));
                             })
      .def("__str__", &Device::ToString)
      .def("__repr__",
           [](const Device& d) { return absl::StrCat("device(type='", d.ToString(), "')"); })
      .def("__eq__",
           [](const Device& a, const py::object& b) {
             const std::optional<Device> other =
                 py::isinstance<py::str>(b) || py::isinstance<Device>(b) ? DeviceArg(b)
                                                                         : std::nullopt;
             return other && a == *other;
           })
      .def("__hash__", [](const Device& d) { return py::hash(py::str(d.ToString())); });

  py::class_<NoGrad>(m, "no_grad", "Turns gradient recording off inside `with ember.no_grad():`.")
      .def(py::init<>())
      .def("__enter__", &NoGrad::Enter)
      .def("__exit__", [](NoGrad& g, const py::args&) { g.Exit(); });
  m.def("is_grad_enabled", &ag::GradModeEnabled);

  py::class_<Tensor> tensor(m, "Tensor", py::buffer_protocol());
  tensor.def_buffer([](const Tensor& t) -> py::buffer_info {
    EMBER_CHECK(t.device().is_cpu(), "a tensor on ", t.device().ToString(),
                " has no host memory to share: .to('cpu') first");
    const DTypeInfo& info = Info(t.dtype());
    EMBER_CHECK(info.format != nullptr, "NumPy has no ", info.name, "; .to(ember.float32) first");
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
    for (const int64_t s : t.strides()) strides.push_back(s * t.itemsize());
    return py::buffer_info(t.raw_data(), t.itemsize(), info.format, t.dim(), shape, strides);
  });

  // Properties and conversions.
  const auto shape = [](const Tensor& t) {
    return py::tuple(py::cast(std::vector<int64_t>(t.shape().begin(), t.shape().end())));
  };
  tensor.def_property_readonly("shape", shape)
      .def(
          "size",
          [shape](const Tensor& t, const py::object& dim) -> py::object {
            if (dim.is_none()) return shape(t);
            return py::int_(t.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("item", &ToPython)
      .def("tolist", &ToList)
      .def(
          "numpy",
          [](const py::object& self) {
            if (ag::RequiresGrad(self.cast<const Tensor&>())) {
              throw std::runtime_error(
                  "Can't call numpy() on a tensor that requires grad: use tensor.detach().numpy()");
            }
            return py::module_::import("numpy").attr("asarray")(self);
          })
      .def(
          "to",
          [](const py::object& self, const py::object& where) {
            if (py::isinstance<DType>(where)) return SelfOr(self, where.cast<DType>());
            return SelfOr(self, *DeviceArg(where));
          },
          py::arg("dtype_or_device"))
      .def("cpu", [](const py::object& self) { return SelfOr(self, Device::Cpu()); })
      .def(
          "cuda",
          [](const py::object& self, const py::object& device) {
            // None: cuda:0; an int N: cuda:N; or a device as to() takes it.
            const Device d = device.is_none()                   ? Device::Cuda(0)
                             : py::isinstance<py::int_>(device) ? Device::Cuda(device.cast<int>())
                                                                : *DeviceArg(device);
            EMBER_CHECK(!d.is_cpu(), "cuda(): ", d.ToString(), " is not a CUDA device");
            return SelfOr(self, d);
          },
          py::arg("device") = py::none())
      .def_property_readonly("is_cuda", [](const Tensor& t) { return !t.device().is_cpu(); })
      .def("float", [](const py::object& self) { return SelfOr(self, DType::kF32); })
      .def("double", [](const py::object& self) { return SelfOr(self, DType::kF64); })
      .def("long", [](const py::object& self) { return SelfOr(self, DType::kI64); })
      .def("__repr__", &Repr)
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__bool__", [](const Tensor& t) { return t.item<bool>(); })
      .def("__float__", [](const Tensor& t) { return t.item<double>(); })
      .def("__int__", [](const Tensor& t) { return t.item<int64_t>(); })
      .def("__format__",
           [](const py::object& self, const py::str& spec) {
             // As PyTorch: a 0-d tensor formats as its number (f"{loss:.4f}").
             const Tensor& t = self.cast<const Tensor&>();
             if (t.dim() == 0)
               return py::str(
                   py::module_::import("builtins").attr("format")(self.attr("item")(), spec));
             return py::str(self);
           })
      .def("__index__", [](const Tensor& t) {
        // An integer tensor of one element as an index (numpy's slices, range), as
        // PyTorch's; a float one is not an index.
        if (IsFloatingPoint(t.dtype()) || t.dtype() == DType::kBool || t.numel() != 1) {
          throw py::type_error(
              "only integer tensors of a single element can be converted to an "
              "index");
        }
        return t.item<int64_t>();
      });

  // Autograd. Tensor(t) is another handle to t's tensor (for ember.nn.Parameter).
  tensor
      .def(py::init([](const Tensor& t) { return Tensor(t); }), py::arg("data"))
      // torch.Tensor(data) and torch.Tensor(*sizes): a float32 tensor of a list's values,
      // or of that shape (PyTorch's memory is uninitialised; ember's holds zeros).
      .def(py::init([](const py::args& args) {
        if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) {
          return FromList(Nested(args[0]), DType::kF32);
        }
        return Zeros(ShapeArg(args), DType::kF32);
      }))
      .def_property("data", &ag::Detach,
                    [](const Tensor& t, const Tensor& source) { t.SetData(source); })
      .def_property(
          "requires_grad", [](const Tensor& t) { return ag::RequiresGrad(t); },
          [](const Tensor& t, bool on) { ag::SetRequiresGrad(t, on); })
      .def(
          "requires_grad_", [](const Tensor& t, bool on) { return ag::SetRequiresGrad(t, on); },
          py::arg("requires_grad") = true)
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            const Tensor g = ag::Grad(t);
            return g.defined() ? py::cast(g) : py::none();
          },
          [](const Tensor& t, const py::object& grad) {
            ag::SetGrad(t, grad.is_none() ? Tensor() : grad.cast<Tensor>());
          })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return ag::IsLeaf(t); })
      // torch's version counter: in-place writes to the tensor's memory so far.
      .def_property_readonly("_version", [](const Tensor& t) { return t.storage().version(); })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               const std::string name = ag::GradFnName(t);
                               return name.empty() ? py::object(py::none())
                                                   : py::object(py::str(name));
                             })
      .def(
          "backward",
          [](const Tensor& t, const std::optional<Tensor>& gradient, bool retain_graph) {
            py::gil_scoped_release release;
            ag::BackwardOptions options;
            options.retain_graph = retain_graph;
            ag::Backward(t, gradient.value_or(Tensor()), options);
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = false)
      .def("zero_grad_", [](const Tensor& t) { ag::ZeroGrad(t); })
      .def("detach", &ag::Detach);

  // Views (through autograd, so gradients flow back through them).
  tensor
      .def("view",
           [](const Tensor& t, const py::args& shape) { return ag::View(t, ShapeArg(shape)); })
      .def("reshape",
           [](const Tensor& t, const py::args& shape) { return ag::Reshape(t, ShapeArg(shape)); })
      .def("expand",
           [](const Tensor& t, const py::args& sizes) {
             // torch.Tensor.expand: -1 keeps a dimension's size (aligned from the right).
             std::vector<int64_t> shape = ShapeArg(sizes);
             const int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
             for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
               if (shape[d] != -1) continue;
               EMBER_CHECK(d >= lead, "expand: -1 is not allowed for a new leading dimension (", d,
                           ")");
               shape[d] = t.size(d - lead);
             }
             return ag::Expand(t, shape);
           })
      .def("permute",
           [](const Tensor& t, const py::args& dims) { return ag::Permute(t, ShapeArg(dims)); })
      .def("transpose",
           [](const Tensor& t, int64_t d0, int64_t d1) { return ag::Transpose(t, d0, d1); })
      .def_property_readonly("T",
                             [](const Tensor& t) {
                               std::vector<int64_t> dims;
                               for (int64_t d = t.dim() - 1; d >= 0; --d) dims.push_back(d);
                               return ag::Permute(t, dims);
                             })
      .def(
          "flatten",
          [](const Tensor& t, int64_t start, int64_t end) { return ag::Flatten(t, start, end); },
          py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def(
          "squeeze",
          [](const Tensor& t, const py::object& dim) {
            return dim.is_none() ? ag::Squeeze(t) : ag::Squeeze(t, dim.cast<int64_t>());
          },
          py::arg("dim") = py::none())
      .def("unsqueeze", [](const Tensor& t, int64_t dim) { return ag::Unsqueeze(t, dim); })
      .def("contiguous", [](const Tensor& t) { return ag::Contiguous(t); })
      .def("clone", &ag::Clone)
      .def("t", [](const Tensor& t) {
        EMBER_CHECK(t.dim() <= 2, "t: expected a tensor of at most 2 dimensions, got ", t.dim());
        return t.dim() < 2 ? t : ag::Transpose(t, 0, 1);
      });

  // Arithmetic, through autograd. Python numbers on either side.
  tensor.def("__add__", Binary([](const Tensor& x, const auto& y) { return ag::Add(x, y); }))
      .def("__radd__", [](const Tensor& a, const py::object& b) { return ag::Add(a, ScalarOf(b)); })
      .def("__sub__", Binary([](const Tensor& x, const auto& y) { return ag::Sub(x, y); }))
      .def("__rsub__", [](const Tensor& a, const py::object& b) { return ag::Sub(ScalarOf(b), a); })
      .def("__mul__", Binary([](const Tensor& x, const auto& y) { return ag::Mul(x, y); }))
      .def("__rmul__", [](const Tensor& a, const py::object& b) { return ag::Mul(a, ScalarOf(b)); })
      .def("__truediv__", Binary([](const Tensor& x, const auto& y) { return ag::Div(x, y); }))
      .def("__rtruediv__",
           [](const Tensor& a, const py::object& b) { return ag::Div(ScalarOf(b), a); })
      .def("__pow__",
           [](const Tensor& a, const py::object& b) {
             return py::isinstance<Tensor>(b) ? ag::Pow(a, b.cast<const Tensor&>())
                                              : ag::Pow(a, b.cast<double>());
           })
      .def("__matmul__",
           [](const Tensor& a, const Tensor& b) {
             py::gil_scoped_release release;
             return ag::Matmul(a, b);
           })
      .def("__neg__", [](const Tensor& a) { return ag::Neg(a); })
      .def("__abs__", [](const Tensor& a) { return ag::Abs(a); })
      // Comparisons: bool tensors, no gradient.
      .def("__eq__", Binary([](const Tensor& x, const auto& y) {
             return ops::Eq(ag::Detach(x), Detached(y));
           }))
      .def("__ne__", Binary([](const Tensor& x, const auto& y) {
             return ops::Ne(ag::Detach(x), Detached(y));
           }))
      .def("__lt__", Binary([](const Tensor& x, const auto& y) {
             return ops::Lt(ag::Detach(x), Detached(y));
           }))
      .def("__le__", Binary([](const Tensor& x, const auto& y) {
             return ops::Le(ag::Detach(x), Detached(y));
           }))
      .def("__gt__", Binary([](const Tensor& x, const auto& y) {
             return ops::Gt(ag::Detach(x), Detached(y));
           }))
      .def("__ge__", Binary([](const Tensor& x, const auto& y) {
             return ops::Ge(ag::Detach(x), Detached(y));
           }))
      .attr("__hash__") = py::none();  // == is elementwise, so tensors are not hashable by value

  // Elementwise functions (the reductions are in reduce.cc).
  tensor.def("exp", &ag::Exp)
      .def("log", &ag::Log)
      .def("sqrt", &ag::Sqrt)
      .def("rsqrt", &ag::Rsqrt)
      .def("tanh", &ag::Tanh)
      .def("sin", &ag::Sin)
      .def("cos", &ag::Cos)
      .def("sigmoid", &ag::Sigmoid)
      .def("relu", &ag::Relu)
      .def("abs", &ag::Abs)
      .def("square", &ag::Square)
      .def("neg", &ag::Neg)
      .def("reciprocal", &ag::Reciprocal)
      .def(
          "masked_fill",
          [](const Tensor& t, const Tensor& mask, const py::object& value) {
            return ag::MaskedFill(t, mask, ScalarOf(value));
          },
          py::arg("mask"), py::arg("value"))
      .def("split", &SplitTensor, py::arg("split_size_or_sections"), py::arg("dim") = 0)
      .def("_index_add", &ag::IndexAdd, py::arg("dim"), py::arg("index"), py::arg("source"))
      .def(
          "tril",
          [](const Tensor& t, int64_t diagonal) {
            return ag::MaskedFill(t, TriangleZeros(t, diagonal, true), 0);
          },
          py::arg("diagonal") = 0)
      .def(
          "triu",
          [](const Tensor& t, int64_t diagonal) {
            return ag::MaskedFill(t, TriangleZeros(t, diagonal, false), 0);
          },
          py::arg("diagonal") = 0)
      .def(
          "softmax",
          [](const Tensor& t, int64_t dim) {
            EMBER_CHECK(dim == -1 || dim == t.dim() - 1,
                        "softmax: only over the last dimension (dim=-1), not ", dim);
            return ag::Softmax(t);
          },
          py::arg("dim"));

  py::class_<Autocast>(m, "_autocast")
      .def(py::init<DType>(), py::arg("dtype"))
      .def("__enter__", &Autocast::Enter)
      .def("__exit__", [](Autocast& a, const py::args&) { a.Exit(); });
  m.def("_autocast_dtype", &ag::AutocastDType);
  m.def("_set_grad_enabled", &ag::SetGradModeEnabled, py::arg("enabled"));
  m.def("get_num_threads", &kernels::cpu::NumThreads,
        "Threads of the CPU kernels' pool (EMBER_NUM_THREADS, else the usable CPUs).");
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1) throw py::value_error("set_num_threads: expected at least 1 thread");
        kernels::cpu::SetNumThreads(n);
      },
      py::arg("num_threads"),
      "Replaces the CPU kernels' pool by one of num_threads threads (not while another "
      "Python thread runs ember's kernels).");
  m.def(
      "masked_fill",
      [](const Tensor& t, const Tensor& mask, const py::object& value) {
        return ag::MaskedFill(t, mask, ScalarOf(value));
      },
      py::arg("input"), py::arg("mask"), py::arg("value"));
  m.def("split", &SplitTensor, py::arg("tensor"), py::arg("split_size_or_sections"),
        py::arg("dim") = 0);
  m.def(
      "tril",
      [](const Tensor& t, int64_t diagonal) {
        return ag::MaskedFill(t, TriangleZeros(t, diagonal, true), 0);
      },
      py::arg("input"), py::arg("diagonal") = 0);
  m.def(
      "triu",
      [](const Tensor& t, int64_t diagonal) {
        return ag::MaskedFill(t, TriangleZeros(t, diagonal, false), 0);
      },
      py::arg("input"), py::arg("diagonal") = 0);
  m.def("cat", &ag::Cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", &ag::Stack, py::arg("tensors"), py::arg("dim") = 0);
  m.def("matmul", [](const Tensor& a, const Tensor& b) {
    py::gil_scoped_release release;
    return ag::Matmul(a, b);
  });
  m.def("where", &ag::Where, py::arg("condition"), py::arg("input"), py::arg("other"));
  m.def("maximum", py::overload_cast<const Tensor&, const Tensor&>(&ag::Maximum), py::arg("input"),
        py::arg("other"));
  m.def("minimum", py::overload_cast<const Tensor&, const Tensor&>(&ag::Minimum), py::arg("input"),
        py::arg("other"));
  m.def("_record", &RecordPython, py::arg("name"), py::arg("output"), py::arg("inputs"),
        py::arg("backward"));
}

}  // namespace ember::python
