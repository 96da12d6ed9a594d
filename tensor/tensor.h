#ifndef EMBER_TENSOR_TENSOR_H_
#define EMBER_TENSOR_TENSOR_H_

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "tensor/storage.h"

namespace ember {

// What autograd records about a tensor (requires_grad, grad, the node that made it).
// Defined in autograd/; opaque here: the tensor core never sees a gradient.
struct AutogradMeta;

// A tensor is a view: storage + offset (in elements) + shape + strides + dtype.
//
// Views and autograd: a view method (View, Reshape, Permute, Transpose, Slice, Narrow,
// Select, Expand, BroadcastTo, Squeeze, Unsqueeze, Flatten, Split, SplitWithSizes,
// Chunk) called on a tensor that requires grad while grad mode is on throws
// ember::Error naming the op and pointing to its recorded twin in autograd/views.h
// (ag::Transpose, ...): the plain view shares the data but not the graph, so the
// gradient would silently stop there. Under ag::NoGradGuard, or on ag::Detach(x), the
// plain view is what is wanted and works. (The tensor core asks autograd through a hook
// that autograd installs; a program without autograd has nothing that requires grad.)
//
// Tensor is a handle: copying one shares the same tensor (as a Python reference to a
// torch.Tensor does), so what is set on one copy is seen through all. The view
// methods below make a new tensor over the same storage and never copy data (but
// Reshape and Flatten, where no view can express the result, as in PyTorch).
//
// Wrong shapes, dims, indices or dtypes throw ember::Error naming the op and shapes.
class Tensor {
 public:
  // An undefined tensor (defined() is false); most methods throw on it.
  Tensor() = default;
  // A view of `storage`; throws if the view reaches outside it.
  Tensor(Storage storage, int64_t offset_elements, IntSpan shape, IntSpan strides, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage.device(); }
  const Shape& shape() const { return impl().shape; }
  const Strides& strides() const { return impl().strides; }
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  // Size and stride of one dimension (negative counts from the end).
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return impl().numel; }
  int64_t itemsize() const { return ItemSize(dtype()); }
  // Elements between the storage's start and element [0, ..., 0].
  int64_t offset_elements() const { return impl().offset_elements; }
  const Storage& storage() const { return impl().storage; }
  bool is_contiguous() const;
  // Whether this handle is the only one to its data: no other handle shares this
  // tensor, and no other tensor (view) shares its storage. Such a tensor can be taken
  // over instead of copied (autograd does so with gradients).
  bool is_sole_owner() const { return impl_.use_count() == 1 && storage().use_count() == 1; }
  // Whether both handles are the same tensor (not merely equal values).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // Pointer to element [0, ..., 0]. data<T>() checks that T is the tensor's type.
  void* raw_data() const;
  template <typename T>
  T* data() const {
    EMBER_CHECK(dtype() == kDTypeOf<T>, "data: tensor has dtype ", DTypeName(dtype()), ", not ",
                DTypeName(kDTypeOf<T>));
    return static_cast<T*>(raw_data());
  }

  // One element, converted to T (bounds-checked; for tests and small reads). On a
  // GPU, waits for the work queued before it, as PyTorch's item() does.
  template <typename T = double>
  T at(IntSpan index) const {
    return VisitDType(dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      S element;
      ReadElement(index, &element);
      return Convert<T>(element);
    });
  }
  // The only element of a one-element tensor, converted to T.
  template <typename T = double>
  T item() const {
    EMBER_CHECK(numel() == 1, "item: tensor of shape ", ShapeToString(shape()), " has ", numel(),
                " elements, not 1");
    return at<T>(Shape(dim(), 0));
  }
  // All elements in row-major order, converted to T.
  template <typename T>
  std::vector<T> ToVector() const {
    if (!device().is_cpu()) return To(Device::Cpu()).ToVector<T>();
    if (is_contiguous() && dtype() == DTypeOf<T>::value) {  // one copy (a decoded token's logits)
      const T* first = static_cast<const T*>(raw_data());
      return std::vector<T>(first, first + numel());
    }
    std::vector<T> out;
    out.reserve(numel());
    for (NdIndexIterator it(shape()); !it.done(); it.Next()) out.push_back(at<T>(it.index()));
    return out;
  }

  // ---- Views (share storage; never copy) ----

  // The same elements in row-major order under a new shape (one size may be -1, to be
  // inferred). Throws if the strides cannot express it: see Reshape.
  Tensor View(IntSpan shape) const;
  // View when possible, otherwise a contiguous copy.
  Tensor Reshape(IntSpan shape) const;
  // Dimension d of the result is dimension dims[d] of this tensor.
  Tensor Permute(IntSpan dims) const;
  Tensor Transpose(int64_t dim0, int64_t dim1) const;
  // Python slicing x[start:end:step] along `dim`: start and end may be negative
  // (counting from the end) and are clamped to [0, size]; step must be positive.
  static constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
  Tensor Slice(int64_t dim, int64_t start = 0, int64_t end = kEnd, int64_t step = 1) const;
  // Elements [start, start + length) of `dim`; unlike Slice, out of range throws.
  Tensor Narrow(int64_t dim, int64_t start, int64_t length) const;
  // Element `index` of `dim`, removing that dimension.
  Tensor Select(int64_t dim, int64_t index) const;
  // Broadcasts size-1 dimensions to `shape` (stride 0), and prepends new ones; -1
  // keeps a size.
  Tensor Expand(IntSpan shape) const;
  Tensor BroadcastTo(IntSpan shape) const;
  // Removes every size-1 dimension; or `dim` alone, when its size is 1.
  Tensor Squeeze() const;
  Tensor Squeeze(int64_t dim) const;
  // Inserts a size-1 dimension at `dim` (in [-dim()-1, dim()]).
  Tensor Unsqueeze(int64_t dim) const;
  // Merges dimensions start_dim..end_dim into one (a copy where no view can).
  Tensor Flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  // Pieces of `split_size` along `dim` (the last may be smaller).
  std::vector<Tensor> Split(int64_t split_size, int64_t dim = 0) const;
  // Pieces of the given sizes along `dim`; they must add up to its size.
  std::vector<Tensor> SplitWithSizes(IntSpan sizes, int64_t dim = 0) const;
  // At most `chunks` pieces of ceil(size / chunks) along `dim`, as torch.chunk.
  std::vector<Tensor> Chunk(int64_t chunks, int64_t dim = 0) const;

  // ---- Copies ----

  // This tensor if already contiguous, otherwise a contiguous copy.
  Tensor Contiguous() const;
  // A contiguous copy with its own storage.
  Tensor Clone() const;
  // The values converted to `dtype` (this tensor itself when it has that dtype).
  Tensor To(DType dtype) const;
  // A contiguous copy on `device` (this tensor itself when it is there already), as
  // torch.Tensor.to(device). A copy to the host waits for the GPU work queued before it;
  // large host <-> GPU copies go through pinned memory.
  Tensor To(Device device) const;
  // Sets every element to `value`, in place; returns *this.
  const Tensor& Fill(const Scalar& value) const;
  // Copies `src` into this tensor in place, broadcasting it to this shape and
  // converting its dtype; returns *this.
  const Tensor& CopyFrom(const Tensor& src) const;

  // Makes this tensor, and every handle to it, view `source`'s data (its storage,
  // offset, shape, strides and dtype), keeping its own autograd slot, as PyTorch's
  // `param.data = source`: Module::To moves parameters to a device this way, so that a
  // layer's members and its parameter list still name the same tensors. Views made
  // before keep the old data.
  void SetData(const Tensor& source) const;

  // PyTorch-style text: tensor([[1.0000, 2.0000]], dtype=f32).
  std::string ToString() const;

  // The autograd slot, null until autograd fills it; shared by every copy of this
  // handle (not by views, which are other tensors).
  const std::shared_ptr<AutogradMeta>& autograd_meta() const { return impl().autograd; }
  void set_autograd_meta(std::shared_ptr<AutogradMeta> meta) const {
    impl().autograd = std::move(meta);
  }

 private:
  struct Impl {
    Storage storage;
    int64_t offset_elements;
    Shape shape;
    Strides strides;
    DType dtype;
    int64_t numel;
    mutable std::shared_ptr<AutogradMeta> autograd;
  };
  const Impl& impl() const;
  // A view of the same storage with another offset, shape and strides, made by view
  // `method`; refuses a tensor whose graph it would cut (see the top of this file).
  Tensor MakeView(const char* method, int64_t offset_elements, Shape shape, Strides strides) const;
  // Throws if a view of this tensor would cut its graph, naming the view method and its
  // recorded twin ag::<recorded>.
  void CheckNotTracked(const char* method, const char* recorded) const;
  const void* ElementPointer(IntSpan index) const;
  // Copies element `index` (bounds-checked) to host memory at `out`, from either device.
  void ReadElement(IntSpan index, void* out) const;

  std::shared_ptr<Impl> impl_;  // shared by every copy of the handle
};

std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

// Installed once by autograd (autograd/engine.cc): whether `t` requires grad while grad
// mode is on, for the view methods' check (see the top of this file).
using TracksGradFn = bool (*)(const Tensor& t);
void SetTracksGrad(TracksGradFn tracks_grad);

// A new contiguous tensor whose values are whatever the memory held (see
// tensor/creation.h for zeros, ones, ranges and lists); on the meta device, no memory.
Tensor Empty(IntSpan shape, DType dtype = DType::kF32, Device device = Device::Cpu());

// The error of every op that reads or writes values, given a meta tensor.
[[noreturn]] void ThrowMetaHasNoData(const char* op);

}  // namespace ember

#endif  // EMBER_TENSOR_TENSOR_H_
