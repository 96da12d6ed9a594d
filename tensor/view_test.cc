// Every view checked against a brute-force model: a row-major array of the source's
// element numbers, on which each view is computed index by index, the obvious way.
// Random chains of views (views of views) on random shapes, zero sizes included,
// must give the same elements in the same order, and share the source's storage.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/tensor.h"

namespace ember {
namespace {

using ::testing::ThrowsMessage;

// The model: a shape and the element numbers in row-major order.
struct Ref {
  Shape shape;
  std::vector<int64_t> values;

  int64_t Get(const Shape& index) const {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
    return values[flat];
  }
  // out[index] = Get(source_index(index)) over every index of out_shape.
  template <typename Fn>
  Ref Map(const Shape& out_shape, Fn source_index) const {
    Ref out{out_shape, {}};
    for (NdIndexIterator it(out_shape); !it.done(); it.Next()) {
      out.values.push_back(Get(source_index(it.index())));
    }
    return out;
  }
  Ref Reshaped(const Shape& new_shape) const { return Ref{new_shape, values}; }
};

Ref RefPermute(const Ref& r, const Shape& dims) {
  Shape out_shape;
  for (int64_t d : dims) out_shape.push_back(r.shape[d]);
  return r.Map(out_shape, [&](const Shape& idx) {
    Shape src(r.shape.size());
    for (size_t d = 0; d < dims.size(); ++d) src[dims[d]] = idx[d];
    return src;
  });
}

// The positions Python's range(start, end, step) picks after Python's clamping.
std::vector<int64_t> SlicePositions(int64_t size, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start = std::max<int64_t>(start + size, 0);
  if (end < 0) end = std::max<int64_t>(end + size, 0);
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < size; ++i) {
    if (i >= start && i < end && (i - start) % step == 0) picked.push_back(i);
  }
  return picked;
}

Ref RefSlice(const Ref& r, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const std::vector<int64_t> picked = SlicePositions(r.shape[dim], start, end, step);
  Shape out_shape = r.shape;
  out_shape[dim] = picked.size();
  return r.Map(out_shape, [&](const Shape& idx) {
    Shape src = idx;
    src[dim] = picked[idx[dim]];
    return src;
  });
}

Ref RefSelect(const Ref& r, int64_t dim, int64_t index) {
  Shape out_shape = r.shape;
  out_shape.erase(out_shape.begin() + dim);
  return r.Map(out_shape, [&](const Shape& idx) {
    Shape src = idx;
    src.insert(src.begin() + dim, index);
    return src;
  });
}

Ref RefExpand(const Ref& r, const Shape& shape) {
  const size_t lead = shape.size() - r.shape.size();
  return r.Map(shape, [&](const Shape& idx) {
    Shape src(idx.begin() + lead, idx.end());
    for (size_t d = 0; d < src.size(); ++d) {
      if (r.shape[d] == 1) src[d] = 0;
    }
    return src;
  });
}

class ViewChainTest : public ::testing::Test {
 protected:
  std::mt19937 rng_{20261121};

  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  Shape RandomShape() {
    Shape shape(Uniform(0, 4));
    for (int64_t& s : shape) s = Uniform(0, 9) == 0 ? 0 : Uniform(1, 5);
    return shape;
  }

  // A random split of numel into factors (with size-1 and -1 entries mixed in).
  Shape RandomReshape(const Shape& shape) {
    const int64_t numel = NumElements(shape);
    Shape out;
    if (numel == 0) {
      out = {0, Uniform(1, 3)};
    } else {
      int64_t rest = numel;
      while (rest > 1) {
        std::vector<int64_t> divisors;
        for (int64_t d = 2; d <= rest; ++d) {
          if (rest % d == 0) divisors.push_back(d);
        }
        const int64_t d = divisors[Uniform(0, divisors.size() - 1)];
        out.push_back(d);
        rest /= d;
      }
      if (Uniform(0, 2) == 0) out.insert(out.begin() + Uniform(0, out.size()), 1);
      if (!out.empty() && Uniform(0, 2) == 0) out[Uniform(0, out.size() - 1)] = -1;
    }
    return out;
  }

  // Applies one random view to both; returns a description for failure messages.
  std::string Step(Tensor* t, Ref* r) {
    const int64_t ndim = t->dim();
    switch (Uniform(0, 11)) {
      case 0: {
        Shape dims(ndim);
        for (int64_t d = 0; d < ndim; ++d) dims[d] = d;
        std::shuffle(dims.begin(), dims.end(), rng_);
        *t = t->Permute(dims);
        *r = RefPermute(*r, dims);
        return "permute " + ShapeToString(dims);
      }
      case 1: {
        if (ndim < 2) return "skip";
        const int64_t a = Uniform(0, ndim - 1), b = Uniform(0, ndim - 1);
        Shape dims(ndim);
        for (int64_t d = 0; d < ndim; ++d) dims[d] = d;
        std::swap(dims[a], dims[b]);
        *t = t->Transpose(a - ndim, b);  // a negative dim too
        *r = RefPermute(*r, dims);
        return absl::StrCat("transpose ", a, " ", b);
      }
      case 2: {
        if (ndim == 0) return "skip";
        const int64_t dim = Uniform(0, ndim - 1), size = r->shape[dim];
        const int64_t start = Uniform(-size - 2, size + 2), end = Uniform(-size - 2, size + 2);
        const int64_t step = Uniform(1, 3);
        *t = t->Slice(dim, start, end, step);
        *r = RefSlice(*r, dim, start, end, step);
        return absl::StrCat("slice ", dim, " ", start, ":", end, ":", step);
      }
      case 3: {
        if (ndim == 0) return "skip";
        const int64_t dim = Uniform(0, ndim - 1), size = r->shape[dim];
        const int64_t start = Uniform(0, size), length = Uniform(0, size - start);
        *t = t->Narrow(dim, start, length);
        *r = RefSlice(*r, dim, start, start + length, 1);
        return absl::StrCat("narrow ", dim, " ", start, " ", length);
      }
      case 4: {
        if (ndim == 0) return "skip";
        const int64_t dim = Uniform(0, ndim - 1), size = r->shape[dim];
        if (size == 0) return "skip";
        const int64_t index = Uniform(-size, size - 1);
        *t = t->Select(dim, index);
        *r = RefSelect(*r, dim, index < 0 ? index + size : index);
        return absl::StrCat("select ", dim, " ", index);
      }
      case 5: {
        Shape shape;
        for (int64_t i = Uniform(0, 1); i > 0; --i) shape.push_back(Uniform(0, 3));
        for (int64_t s : r->shape) shape.push_back(s == 1 ? Uniform(0, 3) : s);
        Shape request = shape;
        for (size_t d = shape.size() - ndim; d < shape.size(); ++d) {
          if (Uniform(0, 3) == 0) request[d] = -1, shape[d] = r->shape[d - (shape.size() - ndim)];
        }
        *t = Uniform(0, 1) ? t->Expand(request) : t->BroadcastTo(shape);
        *r = RefExpand(*r, shape);
        return "expand " + ShapeToString(request);
      }
      case 6: {
        const int64_t dim = Uniform(-ndim - 1, ndim);
        *t = t->Unsqueeze(dim);
        Shape shape = r->shape;
        shape.insert(shape.begin() + (dim < 0 ? dim + ndim + 1 : dim), 1);
        *r = r->Reshaped(shape);
        return absl::StrCat("unsqueeze ", dim);
      }
      case 7: {
        Shape shape;
        if (Uniform(0, 1) == 0 || ndim == 0) {
          *t = t->Squeeze();
          for (int64_t s : r->shape) {
            if (s != 1) shape.push_back(s);
          }
          *r = r->Reshaped(shape);
          return "squeeze";
        }
        const int64_t dim = Uniform(0, ndim - 1);
        *t = t->Squeeze(dim);
        shape = r->shape;
        if (shape[dim] == 1) shape.erase(shape.begin() + dim);
        *r = r->Reshaped(shape);
        return absl::StrCat("squeeze ", dim);
      }
      case 8: {
        const Shape request = RandomReshape(r->shape);
        const bool was_contiguous = t->is_contiguous();
        Tensor viewed;
        try {
          viewed = t->View(request);
        } catch (const Error&) {
          // A contiguous tensor can always be viewed; otherwise Reshape must copy.
          EXPECT_FALSE(was_contiguous) << "view " << ShapeToString(request) << " of contiguous "
                                       << ShapeToString(t->shape());
          viewed = t->Reshape(request);
        }
        *t = viewed;
        *r = r->Reshaped(t->shape());
        return "view/reshape " + ShapeToString(request);
      }
      case 9: {
        if (ndim == 0) {
          *t = t->Flatten();
          *r = r->Reshaped({1});
          return "flatten";
        }
        const int64_t start = Uniform(0, ndim - 1), end = Uniform(start, ndim - 1);
        *t = t->Flatten(start, end);
        Shape shape(r->shape.begin(), r->shape.begin() + start);
        int64_t merged = 1;
        for (int64_t d = start; d <= end; ++d) merged *= r->shape[d];
        shape.push_back(merged);
        shape.insert(shape.end(), r->shape.begin() + end + 1, r->shape.end());
        *r = r->Reshaped(shape);
        return absl::StrCat("flatten ", start, " ", end);
      }
      case 10: {
        if (ndim == 0) return "skip";
        const int64_t dim = Uniform(0, ndim - 1), size = r->shape[dim];
        const std::vector<Tensor> pieces =
            Uniform(0, 1) ? t->Split(std::max<int64_t>(1, Uniform(0, size)), dim)
                          : t->Chunk(Uniform(1, 4), dim);
        int64_t start = 0;
        const int64_t k = Uniform(0, pieces.size() - 1);
        for (int64_t i = 0; i < k; ++i) start += pieces[i].size(dim);
        *r = RefSlice(*r, dim, start, start + pieces[k].size(dim), 1);
        int64_t total = 0;
        for (const Tensor& p : pieces) total += p.size(dim);
        EXPECT_EQ(total, size);
        *t = pieces[k];
        return absl::StrCat("split/chunk ", dim, " piece ", k);
      }
      default: {
        if (ndim == 0) return "skip";
        Shape sizes;
        int64_t rest = r->shape[ndim - 1];
        while (rest > 0) {
          sizes.push_back(Uniform(0, rest));
          rest -= sizes.back();
        }
        sizes.push_back(0);
        const std::vector<Tensor> pieces = t->SplitWithSizes(sizes, -1);
        const int64_t k = Uniform(0, pieces.size() - 1);
        int64_t start = 0;
        for (int64_t i = 0; i < k; ++i) start += sizes[i];
        *r = RefSlice(*r, ndim - 1, start, start + sizes[k], 1);
        *t = pieces[k];
        return "split_with_sizes " + ShapeToString(sizes);
      }
    }
  }
};

TEST_F(ViewChainTest, RandomChainsMatchTheBruteForceModel) {
  int steps_checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Shape shape = RandomShape();
    const Tensor base = Arange(NumElements(shape)).View(shape);
    Tensor t = base;
    Ref r{shape, base.ToVector<int64_t>()};
    std::string history = "shape " + ShapeToString(shape);
    const int64_t length = Uniform(1, 5);
    for (int64_t s = 0; s < length; ++s) {
      absl::StrAppend(&history, " -> ", Step(&t, &r));
      ASSERT_EQ(t.shape(), r.shape) << history;
      ASSERT_EQ(t.ToVector<int64_t>(), r.values) << history;
      ASSERT_EQ(t.is_contiguous(), IsContiguous(t.shape(), t.strides()));
      // Contiguous() gives the same values, row-major in memory.
      const Tensor c = t.Contiguous();
      ASSERT_TRUE(c.is_contiguous());
      ASSERT_TRUE(std::equal(r.values.begin(), r.values.end(), c.data<int64_t>())) << history;
      ++steps_checked;
    }
  }
  EXPECT_GT(steps_checked, 5000);
}

TEST(ViewTest, ViewsShareStorageAndSeeWrites) {
  const Tensor base = Arange(24).View({2, 3, 4});
  const std::vector<Tensor> views = {base.View({6, 4}),
                                     base.Permute({2, 0, 1}),
                                     base.Transpose(0, 2),
                                     base.Slice(2, 1, 4, 2),
                                     base.Narrow(1, 1, 2),
                                     base.Select(1, 2),
                                     base.Unsqueeze(1).Expand({2, 5, 3, 4}),
                                     base.Unsqueeze(0).Squeeze(),
                                     base.Flatten(1),
                                     base.Split(2, 2)[1],
                                     base.Chunk(3, 1)[2]};
  for (const Tensor& v : views) {
    EXPECT_TRUE(v.storage().is_same(base.storage())) << v.ToString();
  }
  base.Select(0, 1).Select(0, 2).Fill(-1);  // elements [1, 2, :]
  EXPECT_EQ(views[0].at<int64_t>({5, 3}), -1);
  EXPECT_EQ(views[1].at<int64_t>({0, 1, 2}), -1);
  EXPECT_EQ(views[5].at<int64_t>({1, 0}), -1);
}

TEST(ViewTest, ViewOfNonContiguousWhereChunksAllow) {
  // [4, 6] transposed is [6, 4] with strides [1, 6]: splitting dim 0 keeps a view,
  // merging the two dims cannot.
  const Tensor t = Arange(24).View({4, 6}).Transpose(0, 1);
  const Tensor v = t.View({2, 3, 4});
  EXPECT_TRUE(v.storage().is_same(t.storage()));
  EXPECT_EQ(v.strides(), (Strides{3, 1, 6}));
  EXPECT_EQ(v.ToVector<int64_t>(), t.ToVector<int64_t>());
  try {
    t.View({24});
    FAIL() << "view of a transposed tensor into one dimension should throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "view: shape [24] cannot be a view of a tensor of shape [6, 4] and strides [1, 6]; "
              "use Reshape, which copies");
  }
  const Tensor flat = t.Reshape({24});
  EXPECT_FALSE(flat.storage().is_same(t.storage()));
  EXPECT_EQ(flat.ToVector<int64_t>(), t.ToVector<int64_t>());
  // Flatten copies only when it must.
  const Tensor base = Arange(24).View({2, 3, 4});
  EXPECT_TRUE(base.Flatten(0, 1).storage().is_same(base.storage()));
  EXPECT_FALSE(base.Transpose(1, 2).Flatten(1).storage().is_same(base.storage()));
}

TEST(ViewTest, ZeroSizeDimensions) {
  const Tensor t = Zeros({3, 0, 2});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.View({0, 5}).shape(), (Shape{0, 5}));
  EXPECT_EQ(t.View({-1, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(t.Permute({2, 1, 0}).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(t.Select(0, 2).shape(), (Shape{0, 2}));
  EXPECT_EQ(t.Expand({4, 3, 0, 2}).shape(), (Shape{4, 3, 0, 2}));
  EXPECT_EQ(t.Slice(0, 1, 1).shape(), (Shape{0, 0, 2}));
  EXPECT_EQ(t.Split(2, 1).size(), 1u);
  EXPECT_EQ(t.Chunk(3, 1).size(), 1u);
  EXPECT_EQ(t.Clone().shape(), t.shape());
  EXPECT_THROW(t.Select(1, 0), Error);
}

TEST(ViewTest, BadViewsThrowNamingTheOpAndShapes) {
  const Tensor t = Zeros({2, 3});
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(
      [&] {
        t.View({4, 2});
      },
      ThrowsMessage<Error>("view: shape [4, 2] is invalid for input of size 6"));
  EXPECT_THAT(
      [&] {
        t.View({-1, -1});
      },
      ThrowsMessage<Error>("view: only one dimension can be -1 in [-1, -1]"));
  EXPECT_THAT(
      [&] {
        t.View({int64_t{1} << 62, 4, -1});
      },  // overflow, not wrap-around
      ThrowsMessage<Error>("view: invalid size 4 in [4611686018427387904, 4, -1]"));
  EXPECT_THAT(
      [&] {
        t.Permute({0, 0});
      },
      ThrowsMessage<Error>("permute: dimension 0 repeats in [0, 0]"));
  EXPECT_THAT(
      [&] { t.Permute({0}); },
      ThrowsMessage<Error>("permute: [0] does not name each of the 2 dimensions of shape [2, 3]"));
  EXPECT_THAT([&] { t.Transpose(0, 2); },
              ThrowsMessage<Error>(
                  "transpose: dimension 2 is out of range for a 2-d tensor (expected -2 to 1)"));
  EXPECT_THAT([&] { t.Select(1, 3); },
              ThrowsMessage<Error>(
                  "select: index 3 is out of range for dimension 1 of size 3 (shape [2, 3])"));
  EXPECT_THAT([&] { t.Narrow(1, 2, 2); },
              ThrowsMessage<Error>("narrow: start 2 + length 2 exceeds dimension 1 of size 3"));
  EXPECT_THAT([&] { t.Slice(0, 0, 2, 0); },
              ThrowsMessage<Error>("slice: step must be positive, got 0"));
  EXPECT_THAT(
      [&] {
        t.Expand({3, 3});
      },
      ThrowsMessage<Error>(
          "expand: cannot expand shape [2, 3] to [3, 3] (dimension 0: 2 to 3; only size-1 "
          "dimensions can grow)"));
  EXPECT_THAT([&] { t.BroadcastTo({3}); },
              ThrowsMessage<Error>("broadcast_to: cannot broadcast shape [2, 3] to [3]"));
  EXPECT_THAT(
      [&] {
        t.BroadcastTo({2, 2});
      },
      ThrowsMessage<Error>(
          "broadcast_to: shapes [2, 3] and [2, 2] cannot be broadcast (dimension -1: 3 vs 2)"));
  EXPECT_THAT(
      [&] {
        t.SplitWithSizes({1, 1}, 1);
      },
      ThrowsMessage<Error>("split: sizes [1, 1] add up to 2, not to the size 3 of dimension 1"));
  EXPECT_THAT([&] { t.Chunk(0); },
              ThrowsMessage<Error>("chunk: number of chunks must be positive, got 0"));
  EXPECT_THAT([&] { t.Unsqueeze(4); },
              ThrowsMessage<Error>(
                  "unsqueeze: dimension 4 is out of range for a 3-d tensor (expected -3 to 2)"));
}

}  // namespace
}  // namespace ember
