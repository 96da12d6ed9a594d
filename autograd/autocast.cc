#include "autograd/autocast.h"

#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "base/error.h"

namespace ember::autograd {
namespace {

// This thread's autocast dtype, and the bf16 copies of the leaves that products used
// under the outermost guard (cleared when it ends).
thread_local DType current = DType::kF32;
thread_local int depth = 0;
thread_local std::vector<std::pair<Tensor, Tensor>> cast_leaves;

// The rank of a floating dtype in promotion: f64 > f32 > bf16, f16.
int Rank(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 3;
    case DType::kF32:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

Tensor To(const Tensor& x, DType dtype) {
  if (!x.defined() || x.dtype() == dtype) return x;
  const Tensor y = WithoutGrad([&] { return x.To(dtype); });
  if (!ShouldRecord({x})) return y;
  return Record("to", y, {x},
                [from = x.dtype()](const Tensor& g) { return std::vector<Tensor>{g.To(from)}; });
}

AutocastGuard::AutocastGuard(DType dtype) : previous_(current) {
  EMBER_CHECK(dtype == DType::kBF16 || dtype == DType::kF32, "autocast: dtype ", DTypeName(dtype),
              " is not supported (bf16, or f32 to turn it off)");
  current = dtype;
  ++depth;
}

AutocastGuard::~AutocastGuard() {
  current = previous_;
  if (--depth == 0) cast_leaves.clear();
}

DType AutocastDType() { return current; }

namespace internal {

Tensor ForProduct(const Tensor& x) {
  if (current == DType::kF32 || !x.defined() || x.dtype() != DType::kF32) return x;
  if (!(IsLeaf(x) && RequiresGrad(x))) return To(x, current);
  for (const auto& [leaf, cast] : cast_leaves) {
    if (leaf.is_same(x) && cast.dtype() == current) return cast;
  }
  cast_leaves.emplace_back(x, To(x, current));
  return cast_leaves.back().second;
}

Tensor ForF32(const Tensor& x) {
  if (current == DType::kF32 || !x.defined() || Rank(x.dtype()) != 1) return x;
  return To(x, DType::kF32);
}

void Promote(Tensor& a, Tensor& b) {
  if (!a.defined() || !b.defined() || a.dtype() == b.dtype() || !IsFloatingPoint(a.dtype()) ||
      !IsFloatingPoint(b.dtype())) {
    return;
  }
  const int ra = Rank(a.dtype()), rb = Rank(b.dtype());
  const DType to = ra > rb ? a.dtype() : rb > ra ? b.dtype() : DType::kF32;
  a = To(a, to);
  b = To(b, to);
}

}  // namespace internal
}  // namespace ember::autograd
