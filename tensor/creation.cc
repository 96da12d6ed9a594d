#include "tensor/creation.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ember {

Tensor Zeros(IntSpan shape, DType dtype, Device device) { return Full(shape, 0, dtype, device); }

Tensor Ones(IntSpan shape, DType dtype, Device device) { return Full(shape, 1, dtype, device); }

Tensor Full(IntSpan shape, const Scalar& value, DType dtype, Device device) {
  Tensor t = Empty(shape, dtype, device);
  t.Fill(value);
  return t;
}

Tensor Arange(const Scalar& end) { return Arange(0, end); }

Tensor Arange(const Scalar& start, const Scalar& end, const Scalar& step,
              std::optional<DType> dtype) {
  const bool integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  const DType out_dtype = dtype.value_or(integral ? DType::kI64 : DType::kF32);
  const double first = start.to<double>(), last = end.to<double>(), delta = step.to<double>();
  EMBER_CHECK(delta != 0, "arange: step must be nonzero");
  EMBER_CHECK(std::isfinite(first) && std::isfinite(last), "arange: start ", start.ToString(),
              " and end ", end.ToString(), " must be finite");
  EMBER_CHECK((delta > 0 && last >= first) || (delta < 0 && last <= first), "arange: end ",
              end.ToString(), " cannot be reached from start ", start.ToString(), " with step ",
              step.ToString());
  // Integers count exactly (a double cannot tell 2^60 from 2^60 + 3).
  const int64_t count =
      integral
          ? (end.to<int64_t>() - start.to<int64_t>() + step.to<int64_t>() + (delta > 0 ? -1 : 1)) /
                step.to<int64_t>()
          : static_cast<int64_t>(std::ceil((last - first) / delta));
  Tensor t = Empty({count}, out_dtype);
  VisitDType(out_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = t.data<T>();
    if (integral) {  // exact for every int64
      const int64_t s = start.to<int64_t>(), d = step.to<int64_t>();
      for (int64_t i = 0; i < count; ++i) out[i] = Convert<T>(s + i * d);
    } else {
      for (int64_t i = 0; i < count; ++i) out[i] = Convert<T>(first + i * delta);
    }
  });
  return t;
}

Tensor Linspace(double start, double end, int64_t steps, DType dtype) {
  EMBER_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  Tensor t = Empty({steps}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // PyTorch's arithmetic, to give its exact values: in float for f32, f16 and bf16,
    // in double otherwise, with fused multiply-adds; the first half counts up from
    // start and the second down from end, so that both ends are exact.
    using Acc = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Float16> ||
                                       std::is_same_v<T, BFloat16>,
                                   float, double>;
    const Acc a = static_cast<Acc>(start), b = static_cast<Acc>(end);
    const Acc delta = steps > 1 ? (b - a) / static_cast<Acc>(steps - 1) : Acc(0);
    T* out = t.data<T>();
    for (int64_t i = 0; i < steps; ++i) {
      out[i] = Convert<T>(i < steps / 2 || steps == 1
                              ? std::fma(static_cast<Acc>(i), delta, a)
                              : std::fma(-static_cast<Acc>(steps - 1 - i), delta, b));
    }
  });
  return t;
}

Tensor Eye(int64_t rows, int64_t cols, DType dtype) {
  if (cols == -1) cols = rows;
  Tensor t = Zeros({rows, cols}, dtype);
  const int64_t n = std::min(rows, cols);
  // The diagonal is a strided view with stride cols + 1.
  if (n > 0) Tensor(t.storage(), 0, {n}, {cols + 1}, dtype).Fill(1);
  return t;
}

namespace {

// The shape a nested list claims: the lengths along its first items.
Shape ListShape(const NestedList& list) {
  Shape shape;
  for (const NestedList* l = &list; !l->is_leaf(); l = &l->items().front()) {
    shape.push_back(static_cast<int64_t>(l->items().size()));
    if (l->items().empty()) break;
  }
  return shape;
}

// Checks that every part of the list has `shape`, and appends its numbers in order.
void Flatten(const NestedList& list, const Shape& shape, size_t depth,
             std::vector<Scalar>* values) {
  if (depth == shape.size()) {
    EMBER_CHECK(list.is_leaf(), "from_list: ragged nested list (a list at depth ", depth,
                " where shape ", ShapeToString(shape), " wants a number)");
    values->push_back(list.value());
    return;
  }
  EMBER_CHECK(!list.is_leaf() && static_cast<int64_t>(list.items().size()) == shape[depth],
              "from_list: ragged nested list (", list.is_leaf() ? "a number" : "a list of ",
              list.is_leaf() ? "" : absl::StrCat(list.items().size(), " items"), " at depth ",
              depth, " where shape ", ShapeToString(shape), " wants ", shape[depth], " items)");
  for (const NestedList& item : list.items()) Flatten(item, shape, depth + 1, values);
}

}  // namespace

Tensor FromList(const NestedList& list, std::optional<DType> dtype) {
  const Shape shape = ListShape(list);
  std::vector<Scalar> values;
  Flatten(list, shape, 0, &values);
  // torch.tensor's inference: bool if all are bools, i64 if all are integers or
  // bools, f32 otherwise (an empty list too).
  DType inferred = values.empty() ? DType::kF32 : DType::kBool;
  for (const Scalar& v : values) {
    if (v.kind() == Scalar::Kind::kFloat) inferred = DType::kF32;
    if (v.kind() == Scalar::Kind::kInt && inferred == DType::kBool) inferred = DType::kI64;
  }
  const DType out_dtype = dtype.value_or(inferred);
  Tensor t = Empty(shape, out_dtype);
  VisitDType(out_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i].to<T>();
  });
  return t;
}

}  // namespace ember
