#include "autograd/autocast.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "autograd/engine.h"
#include "base/error.h"

namespace ember::autograd {
namespace {

// This thread's autocast dtype, and the casts of the leaves that products used under
// the outermost guard (in its graph; cleared when it ends).
thread_local DType current = DType::kF32;
thread_local int depth = 0;
thread_local std::vector<std::pair<Tensor, Tensor>> cast_leaves;

// The values of those casts, kept past the guards (CastCopy in autocast.h), each with
// the version of the leaf's storage it was cast from.
struct Kept {
  Tensor leaf, values;
  uint64_t version;
};
thread_local std::vector<Kept> kept;

Kept* FindKept(const Tensor& leaf) {
  for (Kept& k : kept) {
    if (k.leaf.is_same(leaf)) return &k;
  }
  return nullptr;
}

// y (x's values as another dtype, outside the graph) as x's differentiable cast: the
// gradient is converted back to x's dtype.
Tensor RecordTo(const Tensor& x, const Tensor& y) {
  return Record("to", y, {x},
                [from = x.dtype()](const Tensor& g) { return std::vector<Tensor>{g.To(from)}; });
}

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
  return RecordTo(x, WithoutGrad([&] { return x.To(dtype); }));
}

AutocastGuard::AutocastGuard(DType dtype) : previous_(current) {
  EMBER_CHECK(dtype == DType::kBF16 || dtype == DType::kF32, "autocast: dtype ", DTypeName(dtype),
              " is not supported (bf16, or f32 to turn it off)");
  if (depth == 0) {  // copies of leaves that nothing but this cache holds any more
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [](const Kept& k) { return k.leaf.is_sole_owner(); }),
               kept.end());
  }
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
  const uint64_t version = x.storage().version();
  Kept* k = FindKept(x);
  if (!k || k->version != version || k->values.dtype() != current) {
    const Tensor values = WithoutGrad([&] { return x.To(current); });
    if (k) {
      *k = {x, values, version};
    } else {
      k = &kept.emplace_back(Kept{x, values, version});
    }
  }
  // A handle of its own in the graph: the kept tensor stays outside it.
  cast_leaves.emplace_back(x, RecordTo(x, Detach(k->values)));
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

Tensor CastCopy(const Tensor& x) {
  const Kept* k = FindKept(x);
  // A graph's handle (Detach'd, as ForProduct hands it out) or a view shares the storage.
  return k && k->values.storage().use_count() == 1 ? k->values : Tensor();
}

void KeepCast(const Tensor& x) {
  if (Kept* k = FindKept(x)) k->version = x.storage().version();
}

}  // namespace ember::autograd
