#include "core/shape.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace ember {

std::string ShapeToString(IntSpan shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

int64_t NumElements(IntSpan shape, absl::string_view op) {
  int64_t count = 1;
  for (int64_t size : shape) {
    EMBER_CHECK(size >= 0, op, ": negative size ", size, " in shape ", ShapeToString(shape));
    EMBER_CHECK(!__builtin_mul_overflow(count, size, &count), op, ": shape ", ShapeToString(shape),
                " has more elements than int64 can count");
  }
  return count;
}

Strides ContiguousStrides(IntSpan shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

bool IsContiguous(IntSpan shape, IntSpan strides) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return true;
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

int64_t SpanElements(IntSpan shape, IntSpan strides) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t span = 1;
  for (size_t d = 0; d < shape.size(); ++d) span += (shape[d] - 1) * strides[d];
  return span;
}

int64_t FlatIndex(IntSpan index, IntSpan strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return offset;
}

int64_t NormalizeDim(int64_t dim, int64_t ndim, absl::string_view op) {
  const int64_t low = ndim == 0 ? -1 : -ndim, high = ndim == 0 ? 0 : ndim - 1;
  EMBER_CHECK(dim >= low && dim <= high, op, ": dimension ", dim, " is out of range for a ", ndim,
              "-d tensor (expected ", low, " to ", high, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

Shape BroadcastShapes(IntSpan a, IntSpan b, absl::string_view op) {
  return BroadcastShapes({Shape(a.begin(), a.end()), Shape(b.begin(), b.end())}, op);
}

Shape BroadcastShapes(absl::Span<const Shape> shapes, absl::string_view op) {
  size_t ndim = 0;
  for (const Shape& shape : shapes) ndim = std::max(ndim, shape.size());
  Shape out(ndim, 1);
  for (const Shape& shape : shapes) {
    for (size_t i = 0; i < shape.size(); ++i) {  // i counts from the last dimension
      const int64_t size = shape[shape.size() - 1 - i];
      int64_t& merged = out[ndim - 1 - i];
      if (size == merged || size == 1) continue;
      if (merged != 1) {
        std::vector<std::string> names;
        for (const Shape& s : shapes) names.push_back(ShapeToString(s));
        const std::string last = names.back();
        names.pop_back();
        EMBER_THROW(op, ": shapes ", absl::StrJoin(names, ", "), " and ", last,
                    " cannot be broadcast (dimension ", -static_cast<int64_t>(i) - 1, ": ", merged,
                    " vs ", size, ")");
      }
      merged = size;
    }
  }
  return out;
}

NdIndexIterator::NdIndexIterator(IntSpan shape)
    : shape_(shape.begin(), shape.end()),
      index_(shape.size(), 0),
      done_(std::find(shape.begin(), shape.end(), 0) != shape.end()) {}

void NdIndexIterator::Next() {
  for (size_t d = shape_.size(); d-- > 0;) {
    if (++index_[d] < shape_[d]) return;
    index_[d] = 0;
  }
  done_ = true;  // wrapped around (or a scalar's single index was visited)
}

}  // namespace ember
