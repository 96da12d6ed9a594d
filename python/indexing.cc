// Indexing and in-place writes in PyTorch's names: Tensor.__getitem__ (basic keys as
// views; integer tensors, lists and bool masks as PyTorch's advanced indexing, through
// IndexSelect), __setitem__, index_select, nonzero, and copy_, fill_ and zero_, under
// PyTorch's version-counter rules while gradients are recorded: a write to a result of
// recorded ops is recorded (the tensor takes the write's history), a write to a leaf that
// requires grad or to a view of a recorded tensor is refused.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "python/args.h"
#include "python/status.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/cat.h"
#include "tensor/ops/reduce.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

// Whether an in-place write to t must be recorded: t requires grad and grad mode is on.
// Such a write is refused, as PyTorch refuses it, for a leaf (a parameter: write it
// under no_grad) and for a view of another tensor that records gradients (the tensor it
// views would not learn of the write); a result of recorded ops is rebased (Rebase).
bool InPlaceRecorded(const Tensor& t) {
  if (!(ag::RequiresGrad(t) && ag::GradModeEnabled())) return false;
  if (ag::IsLeaf(t)) {
    throw std::runtime_error(
        "a leaf Variable that requires grad is being used in an in-place operation (write it "
        "under `with ember.no_grad():`)");
  }
  if (t.autograd_meta()->is_view) {
    throw std::runtime_error(absl::StrCat(
        "an in-place write to a view (", ag::GradFnName(t),
        ") of a tensor that records gradients is not supported yet; compute the new tensor "
        "out of place (where, masked_fill, cat)"));
  }
  return true;
}

// t takes `result`'s values (written into t's memory, which counts as a new version of
// it) and its history: t is now what the recorded ops made of it, as PyTorch's in-place
// ops on a result. A backward that saved t's old values then refuses (SavedTensor).
void Rebase(const Tensor& t, const Tensor& result) {
  // t's history must not be a view's (a later write to t would be refused): a result that
  // broadcasts to t is expanded and then copied.
  Tensor values = result.dtype() == t.dtype() ? result : ag::To(result, t.dtype());
  if (values.shape() != t.shape()) values = ag::Clone(ag::Expand(values, t.shape()));
  {
    ag::NoGradGuard plain;
    t.CopyFrom(values);
  }
  t.set_autograd_meta(values.autograd_meta());
}

// One step of t[key] along dimension `dim`: an int selects (the dimension goes), a slice
// narrows, None inserts a dimension of 1. Returns the dimension the next key applies to.
int64_t ApplyIndex(Tensor& t, int64_t dim, const py::handle& key) {
  if (key.is_none()) {
    t = ag::Unsqueeze(t, dim);
    return dim + 1;
  }
  if (dim >= t.dim())
    throw py::index_error(absl::StrCat("too many indices for a tensor of dimension ", t.dim()));
  const int64_t size = t.size(dim);
  if (py::isinstance<py::slice>(key)) {
    py::ssize_t start, stop, step, length;
    if (!key.cast<py::slice>().compute(size, &start, &stop, &step, &length))
      throw py::error_already_set();
    if (step <= 0)
      throw py::value_error("slices with a negative step are not supported (as in PyTorch)");
    t = ag::Slice(t, dim, start, std::max(start, stop), step);
    return dim + 1;
  }
  if (py::isinstance<py::int_>(key) && !py::isinstance<py::bool_>(key)) {
    int64_t i = key.cast<int64_t>();
    if (i < -size || i >= size) {
      throw py::index_error(
          absl::StrCat("index ", i, " is out of bounds for dimension ", dim, " with size ", size));
    }
    t = ag::Select(t, dim, i < 0 ? i + size : i);
    return dim;
  }
  throw py::index_error(
      "only integers, slices (:), None, ..., and integer or bool tensors (or lists) are valid "
      "indices");
}

// The positions where mask is true, one int64 tensor per dimension of mask, in row-major
// order (torch.nonzero(mask, as_tuple=True)); read on the host, as PyTorch's nonzero
// waits for the device.
std::vector<Tensor> Nonzero(const Tensor& mask) {
  const Tensor host = ag::Detach(mask).To(Device::Cpu()).To(DType::kBool).Contiguous();
  const bool* m = host.data<bool>();
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (m[i]) flat.push_back(i);
  }
  const int64_t count = static_cast<int64_t>(flat.size());
  std::vector<Tensor> positions;
  int64_t inner = host.numel();
  for (int64_t d = 0; d < std::max<int64_t>(host.dim(), 1); ++d) {
    const int64_t size = host.dim() == 0 ? 1 : host.size(d);
    inner = size == 0 ? 0 : inner / size;
    Tensor p = Empty({count}, DType::kI64);
    int64_t* out = p.data<int64_t>();
    for (int64_t i = 0; i < count; ++i) out[i] = inner == 0 ? 0 : flat[i] / inner % size;
    positions.push_back(p.To(mask.device()));
  }
  return positions;
}

// torch.nonzero: the positions as a tuple of tensors, or stacked as [count, dims].
py::object NonzeroOf(const Tensor& t, bool as_tuple) {
  const std::vector<Tensor> positions = Nonzero(t.dim() == 0 ? t.View({1}) : t);
  if (as_tuple) return py::cast(positions);
  return py::cast(ops::Stack(positions, 1));
}

// An integer index (a tensor, or a list of integers) that applies to dimension `dim`
// of the basic-indexed tensor.
struct Advanced {
  int64_t dim;
  Tensor index;
};

// Whether key is an advanced index (a tensor or a list), and its tensors: a bool mask
// gives one per dimension it covers.
std::vector<Tensor> AdvancedKey(const py::handle& key) {
  if (py::isinstance<Tensor>(key)) {
    const Tensor& t = key.cast<const Tensor&>();
    if (t.dtype() == DType::kBool) return Nonzero(t);
    if (IsFloatingPoint(t.dtype())) {
      throw py::index_error(absl::StrCat("tensors used as indices must be integer or bool, not ",
                                         DTypeName(t.dtype())));
    }
    return {t};
  }
  if (py::isinstance<py::list>(key)) {
    for (const py::handle item : key.cast<py::list>()) {
      if (!py::isinstance<py::int_>(item) || py::isinstance<py::bool_>(item)) {
        throw py::index_error("a list index must hold integers");
      }
    }
    return {FromList(Nested(key), DType::kI64)};
  }
  return {};
}

// t[i_1, ..., i_k] for integer indices on dimensions d_1 < ... < d_k (broadcast
// together to shape B), as PyTorch's advanced indexing: those dimensions become B, in
// their place when they are adjacent, else first. Several indices pick entries of t
// with those dimensions flattened: one IndexSelect of the linear index.
Tensor ApplyAdvanced(const Tensor& t, const std::vector<Advanced>& advanced) {
  for (const Advanced& a : advanced) {  // PyTorch's IndexError, before any work
    const int64_t size = t.size(a.dim);
    if (a.index.numel() == 0) continue;
    const Tensor exact = a.index.To(DType::kF64);
    const auto lo = static_cast<int64_t>(ops::Min(exact).item<double>());
    const auto hi = static_cast<int64_t>(ops::Max(exact).item<double>());
    if (lo < -size || hi >= size) {
      throw py::index_error(absl::StrCat("index ", lo < -size ? lo : hi,
                                         " is out of bounds for dimension ", a.dim, " with size ",
                                         size));
    }
  }
  if (advanced.size() == 1) return ag::IndexSelect(t, advanced[0].dim, advanced[0].index);
  Shape b;
  for (const Advanced& a : advanced) b = BroadcastShapes(b, a.index.shape(), "index");
  std::vector<int64_t> order;
  for (const Advanced& a : advanced) order.push_back(a.dim);
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  Tensor linear = Zeros(b, DType::kI64).To(t.device());
  int64_t span = 1;
  for (const Advanced& a : advanced) {
    const int64_t size = t.size(a.dim);
    const Tensor i = a.index.To(DType::kI64);
    const Tensor wrapped = ops::Where(ops::Lt(i, 0), ops::Add(i, size), i);
    linear = ops::Add(ops::Mul(linear, size), wrapped.BroadcastTo(b));
    span *= size;
  }
  const Tensor front = ag::Permute(t, order);
  Shape rest(front.shape().begin() + advanced.size(), front.shape().end());
  Shape flat = {span};
  flat.insert(flat.end(), rest.begin(), rest.end());
  const Tensor picked = ag::IndexSelect(ag::Reshape(front, flat), 0, linear);  // [B..., rest...]
  bool adjacent = true;
  for (size_t k = 1; k < advanced.size(); ++k) {
    adjacent = adjacent && advanced[k].dim == advanced[k - 1].dim + 1;
  }
  const int64_t first = advanced[0].dim;
  if (!adjacent || first == 0) return picked;
  const int64_t nb = static_cast<int64_t>(b.size());
  std::vector<int64_t> back;
  for (int64_t d = 0; d < first; ++d) back.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) back.push_back(d);
  for (int64_t d = nb + first; d < picked.dim(); ++d) back.push_back(d);
  return ag::Permute(picked, back);
}

Tensor Index(const Tensor& x, const py::object& key) {
  const py::tuple keys =
      py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  // The keys' tensors first (a bool mask counts a dimension for each of its own).
  std::vector<std::vector<Tensor>> tensors;
  int64_t used = 0;  // dimensions of x the keys name (not None, not ...)
  for (const py::handle k : keys) {
    tensors.push_back(AdvancedKey(k));
    if (!tensors.back().empty()) {
      used += static_cast<int64_t>(tensors.back().size());
    } else {
      used += !k.is_none() && !k.is(py::ellipsis());
    }
  }
  Tensor t = x;
  std::vector<Advanced> advanced;
  int64_t dim = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const py::handle k = keys[i];
    if (k.is(py::ellipsis())) {
      dim += x.dim() - used;
    } else if (!tensors[i].empty()) {
      if (py::isinstance<Tensor>(k) && k.cast<const Tensor&>().dtype() == DType::kBool) {
        const Shape& mask = k.cast<const Tensor&>().shape();
        for (size_t j = 0; j < mask.size(); ++j) {
          const int64_t d = dim + static_cast<int64_t>(j);
          if (d >= t.dim() || t.size(d) != mask[j]) {
            throw py::index_error(absl::StrCat("the shape of the mask ", ShapeToString(mask),
                                               " at index ", j,
                                               " does not match the shape of the indexed tensor ",
                                               ShapeToString(t.shape()), " at index ", d));
          }
        }
      }
      for (const Tensor& index : tensors[i]) advanced.push_back({dim++, index});
    } else {
      dim = ApplyIndex(t, dim, k);
    }
  }
  if (dim > t.dim()) {
    throw py::index_error(absl::StrCat("too many indices for a tensor of dimension ", x.dim()));
  }
  return advanced.empty() ? t : ApplyAdvanced(t, advanced);
}

// Whether t is all of its storage's memory, not a view into a larger tensor: a write that
// gives t a history then reaches every tensor that holds the memory.
bool CoversItsStorage(const Tensor& t) {
  return t.offset_elements() == 0 && t.is_contiguous() &&
         t.numel() * ItemSize(t.dtype()) == t.storage().nbytes();
}

// Whether key holds an integer index (a tensor or a list): t[key] is then a copy, and an
// assignment must place the values at the positions the key picks (AssignAtPositions).
bool HasIntegerIndex(const py::object& key) {
  const py::tuple keys =
      py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  for (const py::handle k : keys) {
    if (py::isinstance<py::list>(k)) return true;
    if (py::isinstance<Tensor>(k) && k.cast<const Tensor&>().dtype() != DType::kBool) return true;
  }
  return false;
}

// t[key] = value for a key with integer indices, or a value that records gradients.
// Reading t's flat positions through the
// same key says where each element of t[key] lives; those positions take the value
// (broadcast to t[key]'s shape). A tensor value with a position picked twice is
// refused: PyTorch leaves which write wins undefined. Recorded like any in-place write
// (the value's gradient comes back from its positions).
void AssignAtPositions(const Tensor& t, const py::object& key, const py::object& value,
                       bool recorded) {
  Tensor positions, hit;
  Shape picked;
  {
    ag::NoGradGuard plain;
    const Tensor all = Arange(Scalar(t.numel())).To(t.device()).View(t.shape());
    const Tensor at = Index(all, key);
    picked = at.shape();
    positions = at.Contiguous().Reshape({at.numel()});
    hit = ag::IndexAdd(Zeros({t.numel()}, DType::kF32).To(t.device()), 0, positions,
                       Ones({at.numel()}, DType::kF32).To(t.device()));
  }
  const Tensor mask = ops::Gt(hit, 0).View(t.shape());
  Tensor updated;
  if (py::isinstance<Tensor>(value)) {
    if (positions.numel() > 0 && ops::Max(hit).item<double>() > 1) {
      throw py::index_error(
          "assigning a tensor through an index that picks a position twice is not supported "
          "(PyTorch leaves which value wins undefined)");
    }
    // Integers are placed through f64 (exact below 2^53), as the scatter-add is floating.
    const DType place = IsFloatingPoint(t.dtype()) ? t.dtype() : DType::kF64;
    const Tensor v = ag::Reshape(ag::Expand(ag::To(value.cast<const Tensor&>(), place), picked),
                                 {positions.numel()});
    const Tensor placed = ag::IndexAdd(Zeros({t.numel()}, place).To(t.device()), 0, positions, v);
    updated = ag::Where(mask, ag::To(ag::View(placed, t.shape()), t.dtype()), t);
  } else {
    updated = ag::Where(mask, Full({}, ScalarOf(value), t.dtype()).To(t.device()), t);
  }
  if (recorded) {
    Rebase(t, updated);
  } else {
    ag::NoGradGuard plain;
    t.CopyFrom(updated);
  }
}

}  // namespace

void BindIndexing(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor.def("__getitem__", &Index)
      .def("__setitem__",
           [](const Tensor& t, const py::object& key, const py::object& value) {
             const bool recorded = InPlaceRecorded(t);
             // A value that records gradients makes the write a recorded op (PyTorch's
             // CopySlices): t, recorded or not, then holds the value's history.
             const bool value_records = py::isinstance<Tensor>(value) && ag::GradModeEnabled() &&
                                        ag::RequiresGrad(value.cast<const Tensor&>());
             if (value_records && !recorded && !CoversItsStorage(t)) {
               throw std::runtime_error(
                   "assigning a tensor that requires grad into a view of another tensor is "
                   "not supported (the tensor it views would not learn of the write); index "
                   "the whole tensor with one key, as out[0, 1:] = v");
             }
             if (HasIntegerIndex(key) || value_records) {
               return AssignAtPositions(t, key, value, recorded || value_records);
             }
             Tensor where, v;
             {
               ag::NoGradGuard plain;
               // Where the key writes: a bool mask (broadcast to t), or the entries the
               // basic index picks.
               if (py::isinstance<Tensor>(key)) {
                 const Tensor& mask = key.cast<const Tensor&>();
                 where = mask;  // a bool mask (integer indices took AssignAtPositions)
               } else if (recorded) {
                 where = Zeros(t.shape(), DType::kBool).To(t.device());
                 Index(where, key).Fill(true);
               }
               const bool tensor_value = py::isinstance<Tensor>(value);
               if (!where.defined()) {  // into the view itself
                 const Tensor view = Index(t, key);
                 if (tensor_value) {
                   view.CopyFrom(value.cast<const Tensor&>().BroadcastTo(view.shape()));
                 } else {
                   view.Fill(ScalarOf(value));
                 }
                 return;
               }
               // The new values where the key writes, t's elsewhere.
               if (!tensor_value) {
                 v = Full({}, ScalarOf(value), t.dtype()).To(t.device());
               } else if (py::isinstance<Tensor>(key)) {
                 v = value.cast<const Tensor&>().To(t.dtype());
               } else {  // a value of the indexed region's shape, placed in t's
                 v = Zeros(t.shape(), t.dtype()).To(t.device());
                 const Tensor region = Index(v, key);
                 region.CopyFrom(value.cast<const Tensor&>().BroadcastTo(region.shape()));
               }
               if (!recorded) {
                 t.CopyFrom(ops::Where(where, v, t));
                 return;
               }
             }
             Rebase(t, ag::Where(where, v, t));
           })
      .def(
          "copy_",
          [](const py::object& self, const Tensor& src) {
            const Tensor& t = self.cast<const Tensor&>();
            if (InPlaceRecorded(t)) {
              Rebase(t, src);  // t's gradient goes to src; its old values get none
              return self;
            }
            ag::NoGradGuard plain;
            t.CopyFrom(src.BroadcastTo(t.shape()));  // src's dtype and device converted
            return self;
          },
          py::arg("src"))
      .def(
          "fill_",
          [](const py::object& self, const py::object& value) {
            const Tensor& t = self.cast<const Tensor&>();
            if (InPlaceRecorded(t)) {  // still recorded: every gradient through it zero
              Rebase(t, ag::Add(ag::Mul(t, 0.0), ScalarOf(value)));
              return self;
            }
            t.Fill(ScalarOf(value));
            return self;
          },
          py::arg("value"))
      .def("zero_",
           [](const py::object& self) {
             const Tensor& t = self.cast<const Tensor&>();
             if (InPlaceRecorded(t)) {
               Rebase(t, ag::Mul(t, 0.0));
               return self;
             }
             t.Fill(0);
             return self;
           })
      .def("index_select", &ag::IndexSelect, py::arg("dim"), py::arg("index"))
      .def("nonzero", &NonzeroOf, py::kw_only(), py::arg("as_tuple") = false);
  m.def("index_select", &ag::IndexSelect, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("nonzero", &NonzeroOf, py::arg("input"), py::kw_only(), py::arg("as_tuple") = false);
}

}  // namespace ember::python
