#include "tensor/tensor.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/copy.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"
#include "kernels/twins.h"

namespace ember {
namespace {

// Replaces a single -1 in `shape` by the size that makes it hold `numel` elements.
Shape InferSize(IntSpan requested, int64_t numel, absl::string_view op) {
  Shape shape(requested.begin(), requested.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      EMBER_CHECK(!infer, op, ": only one dimension can be -1 in ", ShapeToString(requested));
      infer = d;
    } else {
      EMBER_CHECK(shape[d] >= 0 && !__builtin_mul_overflow(known, shape[d], &known), op,
                  ": invalid size ", shape[d], " in ", ShapeToString(requested));
    }
  }
  if (infer) {
    EMBER_CHECK(known != 0 && numel % known == 0, op, ": shape ", ShapeToString(requested),
                " is invalid for input of size ", numel);
    shape[*infer] = numel / known;
  }
  EMBER_CHECK(NumElements(shape, op) == numel, op, ": shape ", ShapeToString(requested),
              " is invalid for input of size ", numel);
  return shape;
}

// Strides that make `shape` walk the elements of (old_shape, old_strides) in their
// row-major order, or nullopt when no strides can. The old dimensions are cut into
// chunks that are each contiguous in memory (stride[d] == stride[d+1] * size[d+1]);
// a view is possible when every new dimension falls inside one chunk.
std::optional<Strides> ViewStrides(IntSpan old_shape, IntSpan old_strides, IntSpan shape) {
  if (old_shape.empty() || NumElements(old_shape) == 0) return ContiguousStrides(shape);
  Strides strides(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    const bool chunk_ends =
        d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

}  // namespace

Tensor::Tensor(Storage storage, int64_t offset_elements, IntSpan shape, IntSpan strides,
               DType dtype) {
  EMBER_CHECK(shape.size() == strides.size(), "tensor: shape ", ShapeToString(shape),
              " and strides ", ShapeToString(strides), " have different lengths");
  const int64_t numel = NumElements(shape, "tensor");
  EMBER_CHECK(offset_elements >= 0, "tensor: negative offset ", offset_elements);
  for (int64_t stride : strides) {
    EMBER_CHECK(stride >= 0, "tensor: negative stride in ", ShapeToString(strides));
  }
  const int64_t span = SpanElements(shape, strides);
  const int64_t needed = span == 0 ? 0 : (offset_elements + span) * ItemSize(dtype);
  EMBER_CHECK(needed <= storage.nbytes(), "tensor: a view of shape ", ShapeToString(shape),
              ", strides ", ShapeToString(strides), " and offset ", offset_elements, " needs ",
              needed, " bytes but the storage has ", storage.nbytes());
  impl_ = std::make_shared<Impl>(
      Impl{std::move(storage), offset_elements, Shape(shape.begin(), shape.end()),
           Strides(strides.begin(), strides.end()), dtype, numel, nullptr});
}

const Tensor::Impl& Tensor::impl() const {
  EMBER_CHECK(impl_ != nullptr, "the tensor is undefined (default-constructed)");
  return *impl_;
}

namespace {
TracksGradFn tracks_grad_hook = nullptr;  // set before main by autograd, when linked

}  // namespace

void SetTracksGrad(TracksGradFn tracks_grad) { tracks_grad_hook = tracks_grad; }

void Tensor::CheckNotTracked(const char* method, const char* recorded) const {
  if (impl().autograd != nullptr && tracks_grad_hook != nullptr && tracks_grad_hook(*this)) {
    EMBER_THROW(method, ": the tensor of shape ", ShapeToString(this->shape()),
                " requires grad and grad mode is on, so a plain view would cut the graph; use ag::",
                recorded,
                " (autograd/views.h) to record it, or take the view of ag::Detach(x) or under "
                "NoGradGuard (as a differentiable function computes its forward: ag::WithoutGrad)");
  }
}

Tensor Tensor::MakeView(const char* method, int64_t offset_elements, Shape shape,
                        Strides strides) const {
  CheckNotTracked(method, method);
  // No bounds check needed: every view method only narrows or repeats elements.
  const int64_t numel = NumElements(shape);
  Tensor view;
  view.impl_ = std::make_shared<Impl>(Impl{storage(), offset_elements, std::move(shape),
                                           std::move(strides), dtype(), numel, nullptr});
  return view;
}

int64_t Tensor::size(int64_t dim) const { return shape()[NormalizeDim(dim, this->dim(), "size")]; }

int64_t Tensor::stride(int64_t dim) const {
  return strides()[NormalizeDim(dim, this->dim(), "stride")];
}

bool Tensor::is_contiguous() const { return IsContiguous(shape(), strides()); }

void* Tensor::raw_data() const {
  EMBER_CHECK(!storage().released(), "a tensor of shape ", ShapeToString(shape()),
              " whose memory was released (a fully sharded layer's weights, outside its use)");
  return static_cast<char*>(storage().data()) + offset_elements() * itemsize();
}

const void* Tensor::ElementPointer(IntSpan index) const {
  EMBER_CHECK(static_cast<int64_t>(index.size()) == dim(), "at: index ", ShapeToString(index),
              " has ", index.size(), " entries for a ", dim(), "-d tensor of shape ",
              ShapeToString(shape()));
  for (int64_t d = 0; d < dim(); ++d) {
    EMBER_CHECK(index[d] >= 0 && index[d] < shape()[d], "at: index ", index[d],
                " is out of bounds for dimension ", d, " with size ", shape()[d], " (shape ",
                ShapeToString(shape()), ")");
  }
  return static_cast<const char*>(raw_data()) + FlatIndex(index, strides()) * itemsize();
}

void Tensor::ReadElement(IntSpan index, void* out) const {
  if (device().type == DeviceType::kMeta) ThrowMetaHasNoData("reading an element");
  const void* element = ElementPointer(index);
  if (device().is_cpu()) {
    std::memcpy(out, element, itemsize());
  } else {
    kernels::cuda::CopyBytes(out, kernels::cuda::kHost, element, device().index, itemsize());
  }
}

// ---- Views ----

Tensor Tensor::View(IntSpan requested) const {
  Shape new_shape = InferSize(requested, numel(), "view");
  std::optional<Strides> new_strides = ViewStrides(shape(), strides(), new_shape);
  EMBER_CHECK(new_strides.has_value(), "view: shape ", ShapeToString(requested),
              " cannot be a view of a tensor of shape ", ShapeToString(shape()), " and strides ",
              ShapeToString(strides()), "; use Reshape, which copies");
  return MakeView("View", offset_elements(), std::move(new_shape), *std::move(new_strides));
}

Tensor Tensor::Reshape(IntSpan requested) const {
  Shape new_shape = InferSize(requested, numel(), "reshape");
  if (std::optional<Strides> new_strides = ViewStrides(shape(), strides(), new_shape)) {
    return MakeView("Reshape", offset_elements(), std::move(new_shape), *std::move(new_strides));
  }
  return Clone().View(new_shape);
}

Tensor Tensor::Permute(IntSpan dims) const {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute: ", ShapeToString(dims),
              " does not name each of the ", dim(), " dimensions of shape ",
              ShapeToString(shape()));
  Shape new_shape(dim());
  Strides new_strides(dim());
  std::vector<bool> seen(dim(), false);
  for (int64_t d = 0; d < dim(); ++d) {
    const int64_t from = NormalizeDim(dims[d], dim(), "permute");
    EMBER_CHECK(!seen[from], "permute: dimension ", dims[d], " repeats in ", ShapeToString(dims));
    seen[from] = true;
    new_shape[d] = shape()[from];
    new_strides[d] = strides()[from];
  }
  return MakeView("Permute", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::Transpose(int64_t dim0, int64_t dim1) const {
  dim0 = NormalizeDim(dim0, dim(), "transpose");
  dim1 = NormalizeDim(dim1, dim(), "transpose");
  Shape new_shape = shape();
  Strides new_strides = strides();
  std::swap(new_shape[dim0], new_shape[dim1]);
  std::swap(new_strides[dim0], new_strides[dim1]);
  return MakeView("Transpose", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::Slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  EMBER_CHECK(this->dim() > 0, "slice: cannot slice a 0-d tensor");
  dim = NormalizeDim(dim, this->dim(), "slice");
  EMBER_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t size = shape()[dim];
  auto clamp = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape new_shape = shape();
  Strides new_strides = strides();
  new_shape[dim] = (end - start + step - 1) / step;
  new_strides[dim] *= step;
  return MakeView("Slice", offset_elements() + start * strides()[dim], std::move(new_shape),
                  std::move(new_strides));
}

Tensor Tensor::Narrow(int64_t dim, int64_t start, int64_t length) const {
  CheckNotTracked("Narrow", "Narrow");
  EMBER_CHECK(this->dim() > 0, "narrow: cannot narrow a 0-d tensor");
  dim = NormalizeDim(dim, this->dim(), "narrow");
  const int64_t size = shape()[dim];
  EMBER_CHECK(start >= -size && start <= size, "narrow: start ", start,
              " is out of range for dimension ", dim, " of size ", size);
  if (start < 0) start += size;
  EMBER_CHECK(length >= 0 && start + length <= size, "narrow: start ", start, " + length ", length,
              " exceeds dimension ", dim, " of size ", size);
  return Slice(dim, start, start + length);
}

Tensor Tensor::Select(int64_t dim, int64_t index) const {
  EMBER_CHECK(this->dim() > 0, "select: cannot select from a 0-d tensor");
  dim = NormalizeDim(dim, this->dim(), "select");
  const int64_t size = shape()[dim];
  EMBER_CHECK(index >= -size && index < size, "select: index ", index,
              " is out of range for dimension ", dim, " of size ", size, " (shape ",
              ShapeToString(shape()), ")");
  if (index < 0) index += size;
  Shape new_shape = shape();
  Strides new_strides = strides();
  new_shape.erase(new_shape.begin() + dim);
  new_strides.erase(new_strides.begin() + dim);
  return MakeView("Select", offset_elements() + index * strides()[dim], std::move(new_shape),
                  std::move(new_strides));
}

Tensor Tensor::Expand(IntSpan requested) const {
  const int64_t ndim = static_cast<int64_t>(requested.size());
  EMBER_CHECK(ndim >= dim(), "expand: shape ", ShapeToString(requested),
              " has fewer dimensions than ", ShapeToString(shape()));
  Shape new_shape(ndim);
  Strides new_strides(ndim);
  const int64_t lead = ndim - dim();  // new leading dimensions
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t want = requested[d];
    if (d < lead) {
      EMBER_CHECK(want >= 0, "expand: size ", want,
                  " is not allowed for the new leading dimension ", d, " in ",
                  ShapeToString(requested));
      new_shape[d] = want;
      new_strides[d] = 0;
      continue;
    }
    const int64_t have = shape()[d - lead];
    if (want == -1 || want == have) {
      new_shape[d] = have;
      new_strides[d] = strides()[d - lead];
    } else {
      EMBER_CHECK(have == 1 && want >= 0, "expand: cannot expand shape ", ShapeToString(shape()),
                  " to ", ShapeToString(requested), " (dimension ", d, ": ", have, " to ", want,
                  "; only size-1 dimensions can grow)");
      new_shape[d] = want;
      new_strides[d] = 0;
    }
  }
  return MakeView("Expand", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::BroadcastTo(IntSpan shape) const {
  CheckNotTracked("BroadcastTo", "Expand");
  NumElements(shape, "broadcast_to");  // no -1 here, unlike Expand
  const Shape broadcast = BroadcastShapes(this->shape(), shape, "broadcast_to");
  EMBER_CHECK(IntSpan(broadcast) == shape, "broadcast_to: cannot broadcast shape ",
              ShapeToString(this->shape()), " to ", ShapeToString(shape));
  return Expand(shape);
}

Tensor Tensor::Squeeze() const {
  Shape new_shape;
  Strides new_strides;
  for (int64_t d = 0; d < dim(); ++d) {
    if (shape()[d] == 1) continue;
    new_shape.push_back(shape()[d]);
    new_strides.push_back(strides()[d]);
  }
  return MakeView("Squeeze", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::Squeeze(int64_t dim) const {
  dim = NormalizeDim(dim, this->dim(), "squeeze");
  if (this->dim() == 0 || shape()[dim] != 1)
    return MakeView("Squeeze", offset_elements(), shape(), strides());
  Shape new_shape = shape();
  Strides new_strides = strides();
  new_shape.erase(new_shape.begin() + dim);
  new_strides.erase(new_strides.begin() + dim);
  return MakeView("Squeeze", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::Unsqueeze(int64_t dim) const {
  dim = NormalizeDim(dim, this->dim() + 1, "unsqueeze");
  Shape new_shape = shape();
  Strides new_strides = strides();
  // Any stride works for a size-1 dimension; this one keeps contiguous tensors
  // contiguous by PyTorch's definition.
  const int64_t stride = dim < this->dim() ? shape()[dim] * strides()[dim] : 1;
  new_shape.insert(new_shape.begin() + dim, 1);
  new_strides.insert(new_strides.begin() + dim, stride);
  return MakeView("Unsqueeze", offset_elements(), std::move(new_shape), std::move(new_strides));
}

Tensor Tensor::Flatten(int64_t start_dim, int64_t end_dim) const {
  CheckNotTracked("Flatten", "Flatten");
  if (dim() == 0) return Reshape({1});
  start_dim = NormalizeDim(start_dim, dim(), "flatten");
  end_dim = NormalizeDim(end_dim, dim(), "flatten");
  EMBER_CHECK(start_dim <= end_dim, "flatten: start_dim ", start_dim, " comes after end_dim ",
              end_dim);
  Shape new_shape(shape().begin(), shape().begin() + start_dim);
  int64_t merged = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) merged *= shape()[d];
  new_shape.push_back(merged);
  new_shape.insert(new_shape.end(), shape().begin() + end_dim + 1, shape().end());
  return Reshape(new_shape);
}

std::vector<Tensor> Tensor::SplitWithSizes(IntSpan sizes, int64_t dim) const {
  CheckNotTracked("SplitWithSizes", "Narrow");
  EMBER_CHECK(this->dim() > 0, "split: cannot split a 0-d tensor");
  dim = NormalizeDim(dim, this->dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "split: negative size ", s, " in ", ShapeToString(sizes));
    total += s;
  }
  EMBER_CHECK(total == shape()[dim], "split: sizes ", ShapeToString(sizes), " add up to ", total,
              ", not to the size ", shape()[dim], " of dimension ", dim);
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t s : sizes) {
    pieces.push_back(Narrow(dim, start, s));
    start += s;
  }
  return pieces;
}

std::vector<Tensor> Tensor::Split(int64_t split_size, int64_t dim) const {
  CheckNotTracked("Split", "Split");
  EMBER_CHECK(this->dim() > 0, "split: cannot split a 0-d tensor");
  const int64_t size = shape()[NormalizeDim(dim, this->dim(), "split")];
  EMBER_CHECK(split_size > 0 || (split_size == 0 && size == 0),
              "split: split_size must be positive, got ", split_size);
  Shape sizes;
  for (int64_t start = 0; start < size; start += split_size) {
    sizes.push_back(std::min(split_size, size - start));
  }
  if (sizes.empty()) sizes.push_back(0);  // an empty dimension gives one empty piece
  return SplitWithSizes(sizes, dim);
}

std::vector<Tensor> Tensor::Chunk(int64_t chunks, int64_t dim) const {
  CheckNotTracked("Chunk", "Chunk");
  EMBER_CHECK(chunks > 0, "chunk: number of chunks must be positive, got ", chunks);
  EMBER_CHECK(this->dim() > 0, "chunk: cannot chunk a 0-d tensor");
  const int64_t size = shape()[NormalizeDim(dim, this->dim(), "chunk")];
  return Split((size + chunks - 1) / chunks, dim);
}

// ---- Copies ----

Tensor Tensor::Contiguous() const { return is_contiguous() ? *this : Clone(); }

Tensor Tensor::Clone() const {
  Tensor copy = Empty(shape(), dtype(), device());
  copy.CopyFrom(*this);
  return copy;
}

Tensor Tensor::To(DType dtype) const {
  if (dtype == this->dtype()) return *this;
  Tensor converted = Empty(shape(), dtype, device());
  converted.CopyFrom(*this);
  return converted;
}

void Tensor::SetData(const Tensor& source) const {
  EMBER_CHECK(defined() && source.defined(), "set_data: the tensor or its source is undefined");
  Impl& self = *impl_;
  const Impl& from = source.impl();
  self.storage = from.storage;
  self.offset_elements = from.offset_elements;
  self.shape = from.shape;
  self.strides = from.strides;
  self.dtype = from.dtype;
  self.numel = from.numel;
}

Tensor Tensor::To(Device device) const {
  if (device == this->device()) return *this;
  if (device.type == DeviceType::kMeta) return Empty(shape(), dtype(), device);  // the shape alone
  if (this->device().type == DeviceType::kMeta) ThrowMetaHasNoData("to");
  const Tensor source = Contiguous();
  Tensor moved = Empty(shape(), dtype(), device);
  // CopyBytes takes a CUDA device index, or kHost for the CPU.
  auto index = [](Device d) { return d.is_cpu() ? kernels::cuda::kHost : d.index; };
  kernels::cuda::CopyBytes(moved.raw_data(), index(device), source.raw_data(),
                           index(source.device()), numel() * itemsize());
  return moved;
}

// Fill and CopyFrom pick their backend by device, as tensor/ops does (the one switch
// on the device type each).
const Tensor& Tensor::Fill(const Scalar& value) const {
  switch (device().type) {
    case DeviceType::kCpu:
      kernels::cpu::Fill(shape(), dtype(), raw_data(), strides(), value);
      break;
    case DeviceType::kCuda:
      kernels::cuda::UseDevice(device().index);
      EMBER_CUDA_KERNEL(Fill)(shape(), dtype(), raw_data(), strides(), value);
      break;
    case DeviceType::kMeta:
      ThrowMetaHasNoData("fill");
  }
  storage().BumpVersion();
  return *this;
}

namespace {
// [first, last) bytes of the storage that a tensor's elements can touch.
std::pair<int64_t, int64_t> ByteRange(const Tensor& t) {
  const int64_t span = SpanElements(t.shape(), t.strides());
  return {t.offset_elements() * t.itemsize(), (t.offset_elements() + span) * t.itemsize()};
}
}  // namespace

const Tensor& Tensor::CopyFrom(const Tensor& src) const {
  EMBER_CHECK(device() == src.device(), "copy: expected both tensors on one device, got ",
              src.device().ToString(), " and ", device().ToString());
  EMBER_CHECK(BroadcastShapes(src.shape(), shape(), "copy") == shape(), "copy: a source of shape ",
              ShapeToString(src.shape()), " cannot be broadcast to the destination's shape ",
              ShapeToString(shape()));
  // A copy takes values, never the graph: src's elements without its autograd slot.
  Tensor from =
      Tensor(src.storage(), src.offset_elements(), src.shape(), src.strides(), src.dtype())
          .Expand(shape());
  if (numel() == 0) return *this;
  for (int64_t d = 0; d < dim(); ++d) {
    EMBER_CHECK(strides()[d] != 0 || shape()[d] == 1, "copy: the destination of shape ",
                ShapeToString(shape()), " and strides ", ShapeToString(strides()),
                " writes several elements to one memory location");
  }
  if (from.storage().is_same(storage())) {
    if (from.offset_elements() == offset_elements() && from.strides() == strides() &&
        from.dtype() == dtype()) {
      return *this;  // the very same elements
    }
    const auto [a0, a1] = ByteRange(from);
    const auto [b0, b1] = ByteRange(*this);
    if (a0 < b1 && b0 < a1) from = from.Clone();  // overlapping: read from a snapshot
  }
  switch (device().type) {
    case DeviceType::kCpu:
      kernels::cpu::CopyCast(shape(), from.dtype(), from.raw_data(), from.strides(), dtype(),
                             raw_data(), strides());
      break;
    case DeviceType::kCuda:
      kernels::cuda::UseDevice(device().index);
      EMBER_CUDA_KERNEL(CopyCast)
      (shape(), from.dtype(), from.raw_data(), from.strides(), dtype(), raw_data(), strides());
      break;
    case DeviceType::kMeta:
      ThrowMetaHasNoData("copy");
  }
  storage().BumpVersion();
  return *this;
}

void ThrowMetaHasNoData(const char* op) {
  EMBER_THROW(op, ": a meta tensor has a shape but no data; make it on a real device first");
}

Tensor Empty(IntSpan shape, DType dtype, Device device) {
  const int64_t numel = NumElements(shape, "empty");
  EMBER_CHECK(numel <= std::numeric_limits<int64_t>::max() / ItemSize(dtype), "empty: shape ",
              ShapeToString(shape), " needs more bytes than int64 can count");
  return Tensor(Storage::Allocate(numel * ItemSize(dtype), device), 0, shape,
                ContiguousStrides(shape), dtype);
}

}  // namespace ember
