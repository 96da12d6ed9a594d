#include "nn/param_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::nn {

Initializer Initializer::Zeros() { return {Kind::kZeros, 0, 0}; }
Initializer Initializer::Ones() { return {Kind::kOnes, 0, 0}; }
Initializer Initializer::Uniform(double low, double high) {
  EMBER_CHECK(low <= high, "uniform initializer: low ", low, " is greater than high ", high);
  return {Kind::kUniform, low, high};
}
Initializer Initializer::Normal(double mean, double std) {
  EMBER_CHECK(std >= 0, "normal initializer: std must be non-negative, got ", std);
  return {Kind::kNormal, mean, std};
}
Initializer Initializer::KaimingUniform(double a) { return {Kind::kKaimingUniform, a, 0}; }

std::string Initializer::ToString() const {
  switch (kind_) {
    case Kind::kZeros:
      return "zeros";
    case Kind::kOnes:
      return "ones";
    case Kind::kUniform:
      return absl::StrCat("uniform(", a_, ", ", b_, ")");
    case Kind::kNormal:
      return absl::StrCat("normal(", a_, ", ", b_, ")");
    case Kind::kKaimingUniform:
      return absl::StrCat("kaiming_uniform(a=", a_, ")");
  }
  return "?";
}

void Initializer::Fill(const Tensor& out, IntSpan whole, int axis, int64_t begin,
                       Generator& gen) const {
  EMBER_CHECK(out.device().is_cpu() && out.is_contiguous(),
              "initializer: fills a contiguous CPU tensor");
  if (kind_ == Kind::kZeros || kind_ == Kind::kOnes) {
    out.Fill(kind_ == Kind::kOnes ? 1 : 0);
    return;
  }
  double low = a_, high = b_;
  if (kind_ == Kind::kKaimingUniform) {
    // As nn::InitKaimingUniform computes it: sqrt(3) gain / sqrt(fan_in), with
    // fan_in = shape[1] x the kernel's elements.
    EMBER_CHECK(whole.size() >= 2,
                "kaiming_uniform: fans need a weight of at least 2 dimensions, got shape ",
                ShapeToString(whole));
    const double fan_in = static_cast<double>(NumElements(whole) / whole[0]);
    high = std::sqrt(3.0) * (std::sqrt(2.0 / (1 + a_ * a_)) / std::sqrt(fan_in));
    low = -high;
  }
  const int64_t numel = NumElements(whole);
  // The whole tensor's elements of out: `outer` runs of `run` elements, run o starting
  // at element (o size(axis) + begin) inner.
  int64_t outer = 1, inner = 1, rows = 1, size = 1;
  if (axis >= 0) {
    for (int d = 0; d < axis; ++d) outer *= whole[d];
    for (size_t d = axis + 1; d < whole.size(); ++d) inner *= whole[d];
    rows = out.size(axis);
    size = whole[axis];
  } else {
    inner = numel;
  }
  EMBER_CHECK(out.numel() == outer * rows * inner && begin >= 0 && begin + rows <= size,
              "initializer: a tensor of shape ", ShapeToString(out.shape()), " is not rows [",
              begin, ", ", begin + rows, ") of axis ", axis, " of ", ShapeToString(whole));
  const uint64_t base = gen.offset();
  const Tensor flat = out.View({out.numel()});
  const int64_t run = rows * inner;
  for (int64_t o = 0; o < outer; ++o) {
    gen.set_offset(base);
    const int64_t first = (o * size + begin) * inner;
    flat.Narrow(0, o * run, run)
        .CopyFrom(kind_ == Kind::kNormal
                      ? NormalRange(numel, first, first + run, a_, b_, gen, out.dtype())
                      : UniformRange(numel, first, first + run, low, high, gen, out.dtype()));
  }
}

std::string ParamSpec::ToString() const {
  std::vector<std::string> names;
  for (size_t d = 0; d < axes.size(); ++d)
    names.push_back(parts_of(d) > 1 ? absl::StrCat(axes[d], "*", parts_of(d)) : axes[d]);
  return absl::StrCat(ShapeToString(shape), " ", DTypeName(dtype), " (", absl::StrJoin(names, ", "),
                      ") ", init.ToString());
}

std::vector<Tensor> ShardViews(const Tensor& t, int dim, int64_t parts, int64_t n, int64_t k) {
  const int64_t part = t.size(dim) / parts;
  EMBER_CHECK(parts >= 1 && n >= 1 && k >= 0 && k < n && t.size(dim) % parts == 0 && part % n == 0,
              "shard ", k, " of ", n, ": dimension ", dim, " of ", ShapeToString(t.shape()),
              " is not ", parts, " part(s) that split into ", n, " equal shards");
  std::vector<Tensor> views;
  for (int64_t p = 0; p < parts; ++p)
    views.push_back(t.Narrow(dim, p * part + k * (part / n), part / n));
  return views;
}

Tensor DrawShard(const ParamSpec& spec, IntSpan split, IntSpan coord, Generator& gen) {
  const int dims = static_cast<int>(spec.shape.size());
  EMBER_CHECK(static_cast<int>(split.size()) == dims && static_cast<int>(coord.size()) == dims,
              "draw shard: ", split.size(), " splits for the ", dims, " dimensions of ",
              ShapeToString(spec.shape));
  Shape shape = spec.shape;
  std::vector<int> sharded;
  for (int d = 0; d < dims; ++d) {
    if (split[d] == 1) continue;
    EMBER_CHECK(spec.shape[d] % (spec.parts_of(d) * split[d]) == 0, "draw shard: dimension ", d,
                " of ", ShapeToString(spec.shape), " is not ", spec.parts_of(d),
                " part(s) that split into ", split[d], " equal shards");
    shape[d] /= split[d];
    sharded.push_back(d);
  }
  if (sharded.empty()) {
    const Tensor out = Empty(shape, spec.dtype);
    spec.init.Fill(out, spec.shape, -1, 0, gen);
    return out;
  }
  // The first sharded dimension's rows are drawn, a part at a time (each draw starts
  // from the same generator state and leaves it where the whole tensor would); the
  // others are cut from them.
  const int a = sharded.front();
  Shape rows_shape = spec.shape;
  rows_shape[a] = shape[a];
  Tensor rows = Empty(rows_shape, spec.dtype);
  const int64_t parts = spec.parts_of(a), part = spec.shape[a] / parts, piece = part / split[a];
  const uint64_t start = gen.offset();
  for (int64_t p = 0; p < parts; ++p) {
    gen.set_offset(start);
    Shape piece_shape = rows_shape;
    piece_shape[a] = piece;
    const Tensor values = parts == 1 ? rows : Empty(piece_shape, spec.dtype);
    spec.init.Fill(values, spec.shape, a, p * part + coord[a] * piece, gen);
    if (parts > 1) rows.Narrow(a, p * piece, piece).CopyFrom(values);
  }
  for (size_t i = 1; i < sharded.size(); ++i) {
    const int d = sharded[i];
    const std::vector<Tensor> views = ShardViews(rows, d, spec.parts_of(d), split[d], coord[d]);
    Shape cut = rows.shape();
    cut[d] /= split[d];
    const Tensor out = Empty(cut, spec.dtype);
    for (size_t p = 0; p < views.size(); ++p)
      out.Narrow(d, static_cast<int64_t>(p) * views[p].size(d), views[p].size(d))
          .CopyFrom(views[p]);
    rows = out;
  }
  return rows;
}

}  // namespace ember::nn
