#ifndef EMBER_TENSOR_CREATION_H_
#define EMBER_TENSOR_CREATION_H_

#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

// New contiguous tensors, on the CPU unless a device is given (filled where they are
// made). Empty is in tensor.h; random tensors in random.h. The rest below are CPU
// tensors: move one with To(Device).
Tensor Zeros(IntSpan shape, DType dtype = DType::kF32, Device device = Device::Cpu());
Tensor Ones(IntSpan shape, DType dtype = DType::kF32, Device device = Device::Cpu());
Tensor Full(IntSpan shape, const Scalar& value, DType dtype = DType::kF32,
            Device device = Device::Cpu());

// start, start + step, ... while < end (> end for a negative step), as torch.arange.
// Without a dtype: i64 when start, end and step are all integers, f32 otherwise.
Tensor Arange(const Scalar& end);
Tensor Arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              std::optional<DType> dtype = std::nullopt);

// `steps` evenly spaced values from start to end inclusive, as torch.linspace.
Tensor Linspace(double start, double end, int64_t steps, DType dtype = DType::kF32);

// A rows x cols matrix with ones on the diagonal (cols = rows when -1).
Tensor Eye(int64_t rows, int64_t cols = -1, DType dtype = DType::kF32);

// A tensor of `shape` holding `values` in row-major order; the dtype is T's.
template <typename T>
Tensor FromVector(const std::vector<T>& values, IntSpan shape) {
  EMBER_CHECK(NumElements(shape, "from_vector") == static_cast<int64_t>(values.size()),
              "from_vector: ", values.size(), " values do not fill shape ", ShapeToString(shape));
  Tensor t = Empty(shape, kDTypeOf<T>);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}
// A 1-d tensor of `values`.
template <typename T>
Tensor FromVector(const std::vector<T>& values) {
  return FromVector(values, {static_cast<int64_t>(values.size())});
}

// A number, or a nested list of them, for FromList: {{1, 2}, {3, 4}}.
class NestedList {
 public:
  NestedList(const Scalar& value) : value_(value) {}  // NOLINT: a leaf
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  NestedList(T value) : value_(Scalar(value)) {}                          // NOLINT
  NestedList(std::initializer_list<NestedList> items) : items_(items) {}  // NOLINT
  explicit NestedList(std::vector<NestedList> items) : items_(std::move(items)) {}

  bool is_leaf() const { return value_.has_value(); }
  const Scalar& value() const { return *value_; }
  const std::vector<NestedList>& items() const { return items_; }

 private:
  std::optional<Scalar> value_;
  std::vector<NestedList> items_;
};

// A tensor from a nested list, as torch.tensor: FromList({{1.5, 2}, {3, 4}}) has shape
// [2, 2]. Lists must be rectangular. Without a dtype: bool if every value is a bool,
// i64 if every value is an integer (or bool), f32 otherwise.
Tensor FromList(const NestedList& list, std::optional<DType> dtype = std::nullopt);

}  // namespace ember

#endif  // EMBER_TENSOR_CREATION_H_
