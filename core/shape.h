#ifndef EMBER_CORE_SHAPE_H_
#define EMBER_CORE_SHAPE_H_

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ember {

// Sizes of a tensor's dimensions, outermost first. Strides are in elements (not
// bytes) and may be 0 (a broadcast dimension) but never negative. Up to six
// dimensions live inline, without a heap allocation.
using Shape = absl::InlinedVector<int64_t, 6>;
using Strides = absl::InlinedVector<int64_t, 6>;
using IntSpan = absl::Span<const int64_t>;

// "[2, 3]"; "[]" for a scalar.
std::string ShapeToString(IntSpan shape);

// Product of the sizes (1 for a scalar). Throws ember::Error, naming `op`, if a size
// is negative or the product overflows int64.
int64_t NumElements(IntSpan shape, absl::string_view op = "shape");

// Row-major strides: the last dimension has stride 1.
Strides ContiguousStrides(IntSpan shape);

// Whether (shape, strides) lays the elements out row-major with no gaps. Strides of
// size-1 dimensions do not matter, and an empty tensor is contiguous.
bool IsContiguous(IntSpan shape, IntSpan strides);

// Elements from the first element of (shape, strides) to one past its furthest:
// 1 + sum((shape[d] - 1) * strides[d]), or 0 when there are no elements.
int64_t SpanElements(IntSpan shape, IntSpan strides);

// Offset in elements of the element at `index`: sum of index[d] * strides[d].
int64_t FlatIndex(IntSpan index, IntSpan strides);

// Wraps a possibly negative dimension into [0, ndim); throws ember::Error naming
// `op` when it is out of range.
int64_t NormalizeDim(int64_t dim, int64_t ndim, absl::string_view op);

// The shape that numpy broadcasting gives: shapes are aligned at their last
// dimension, and each dimension's sizes must be equal or 1. Throws ember::Error,
// naming `op` and the shapes, otherwise.
Shape BroadcastShapes(IntSpan a, IntSpan b, absl::string_view op = "broadcast");
Shape BroadcastShapes(absl::Span<const Shape> shapes, absl::string_view op = "broadcast");

// Visits every index of a shape in row-major order (the last dimension fastest):
//   for (NdIndexIterator it(shape); !it.done(); it.Next()) use(it.index());
// A shape with a zero size has no index; a scalar has one (the empty index).
class NdIndexIterator {
 public:
  explicit NdIndexIterator(IntSpan shape);

  bool done() const { return done_; }
  const Shape& index() const { return index_; }
  void Next();

 private:
  Shape shape_;
  Shape index_;
  bool done_;
};

}  // namespace ember

#endif  // EMBER_CORE_SHAPE_H_
