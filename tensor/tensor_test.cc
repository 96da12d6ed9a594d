#include "tensor/tensor.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(TensorTest, Metadata) {
  const Tensor t = Empty({2, 3, 4}, DType::kF64);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), DType::kF64);
  EXPECT_EQ(t.device(), Device::Cpu());
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.itemsize(), 8);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(t.offset_elements(), 0);
  EXPECT_EQ(t.storage().nbytes(), 24 * 8);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kStorageAlignment, 0u);
  EXPECT_THAT([&] { t.size(3); },
              ThrowsMessage<Error>(
                  "size: dimension 3 is out of range for a 3-d tensor (expected -3 to 2)"));
}

TEST(TensorTest, HandlesShareTheTensor) {
  const Tensor a = Zeros({3});
  const Tensor b = a;  // a handle, like a Python reference
  EXPECT_TRUE(a.is_same(b));
  b.Fill(2);
  EXPECT_EQ(a.at({1}), 2.0);
  EXPECT_FALSE(a.is_same(a.View({3})));
  EXPECT_FALSE(Tensor().defined());
  EXPECT_THAT([] { Tensor().numel(); },
              ThrowsMessage<Error>("the tensor is undefined (default-constructed)"));
}

// SetData (PyTorch's `t.data = source`): every handle sees the new data; a view made
// before keeps the old.
TEST(TensorTest, SetDataReplacesTheDataOfEveryHandle) {
  const Tensor a = Arange(6).View({2, 3});
  const Tensor same = a, row = a.Select(0, 1);
  a.SetData(Arange(10, 14).To(DType::kF64));
  EXPECT_EQ(same.shape(), Shape({4}));
  EXPECT_EQ(same.dtype(), DType::kF64);
  EXPECT_EQ(same.ToVector<double>(), (std::vector<double>{10, 11, 12, 13}));
  EXPECT_EQ(row.ToVector<int64_t>(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_THROW(Tensor().SetData(a), Error);
}

TEST(TensorTest, SoleOwnershipCountsHandlesAndViews) {
  Tensor a = Zeros({4});
  EXPECT_TRUE(a.is_sole_owner());
  {
    const Tensor handle = a;
    EXPECT_FALSE(a.is_sole_owner());
  }
  EXPECT_TRUE(a.is_sole_owner());
  {
    const Tensor view = a.Slice(0, 1);
    EXPECT_FALSE(a.is_sole_owner());
    EXPECT_FALSE(view.is_sole_owner());
  }
  EXPECT_TRUE(a.is_sole_owner());
}

TEST(TensorTest, ElementAccessIsCheckedAndConverts) {
  const Tensor t = FromList({{1.5, 2.5, 3.5}, {4.5, 5.5, 6.5}});
  EXPECT_EQ(t.at({1, 2}), 6.5);
  EXPECT_EQ(t.at<int>({0, 1}), 2);
  EXPECT_EQ(t.data<float>()[4], 5.5f);
  EXPECT_EQ(t.Select(1, 1).ToVector<float>(), (std::vector<float>{2.5f, 5.5f}));
  EXPECT_EQ(t.Select(0, 1).Select(0, 0).item(), 4.5);
  EXPECT_THAT(
      [&] {
        t.at({2, 0});
      },
      ThrowsMessage<Error>(
          "at: index 2 is out of bounds for dimension 0 with size 2 (shape [2, 3])"));
  EXPECT_THAT([&] { t.at({0}); },
              ThrowsMessage<Error>("at: index [0] has 1 entries for a 2-d tensor of shape [2, 3]"));
  EXPECT_THAT([&] { t.data<double>(); },
              ThrowsMessage<Error>("data: tensor has dtype f32, not f64"));
  EXPECT_THAT([&] { t.item(); },
              ThrowsMessage<Error>("item: tensor of shape [2, 3] has 6 elements, not 1"));
}

TEST(TensorTest, ConstructorRejectsViewsOutsideTheStorage) {
  Storage storage = Storage::Allocate(6 * sizeof(float));
  EXPECT_NO_THROW(Tensor(storage, 2, {2, 2}, {2, 1}, DType::kF32));
  EXPECT_THAT(
      [&] {
        Tensor(storage, 3, {2, 2}, {2, 1}, DType::kF32);
      },
      ThrowsMessage<Error>(
          "tensor: a view of shape [2, 2], strides [2, 1] and offset 3 needs 28 bytes but the "
          "storage has 24"));
  EXPECT_THAT([&] { Tensor(storage, 0, {2}, {-1}, DType::kF32); },
              ThrowsMessage<Error>("tensor: negative stride in [-1]"));
  EXPECT_THAT(
      [&] {
        Tensor(storage, 0, {2}, {1, 1}, DType::kF32);
      },
      ThrowsMessage<Error>("tensor: shape [2] and strides [1, 1] have different lengths"));
  EXPECT_NO_THROW(Tensor(storage, 100, {0, 5}, {5, 1}, DType::kF32));  // no element to reach
}

TEST(TensorTest, CloneContiguousAndTo) {
  const Tensor t = Arange(6).View({2, 3}).Transpose(0, 1);
  const Tensor c = t.Contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_FALSE(c.storage().is_same(t.storage()));
  EXPECT_EQ(c.ToVector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  const Tensor already = Arange(4);
  EXPECT_TRUE(already.Contiguous().is_same(already));
  const Tensor clone = already.Clone();
  clone.Fill(9);
  EXPECT_EQ(already.at({0}), 0.0);  // a clone owns its memory
  EXPECT_TRUE(already.To(DType::kI64).is_same(already));
  const Tensor f = FromList({-1.7, 0.2, 2.5, 300.0}).To(DType::kU8);
  EXPECT_EQ(f.dtype(), DType::kU8);
  EXPECT_EQ(f.ToVector<int>(), (std::vector<int>{0, 0, 2, 255}));  // truncate, saturate
  const Tensor h = FromList({1.0, 1.0009765625, 65520.0}).To(DType::kF16);
  EXPECT_EQ(h.ToVector<float>(), (std::vector<float>{1.0f, 1.0009765625f, INFINITY}));
  EXPECT_EQ(FromList({0.0, 0.5}).To(DType::kBool).ToVector<bool>(),
            (std::vector<bool>{false, true}));
}

TEST(TensorTest, FillWritesOnlyTheView) {
  const Tensor t = Zeros({3, 4}, DType::kI32);
  t.Slice(1, 0, Tensor::kEnd, 2).Fill(5);
  EXPECT_EQ(t.ToVector<int>(), (std::vector<int>{5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0}));
  t.Fill(int64_t{1} << 40);  // converted like a cast: wraps to 0 in i32
  EXPECT_EQ(t.at<int64_t>({0, 0}), 0);
  const Tensor big = Zeros({1}, DType::kI64);
  big.Fill(int64_t{9007199254740993});  // kept exact
  EXPECT_EQ(big.at<int64_t>({0}), 9007199254740993);
}

TEST(TensorTest, CopyFromBroadcastsConvertsAndHandlesOverlap) {
  const Tensor dst = Zeros({2, 3});
  dst.CopyFrom(FromList({1, 2, 3}));
  EXPECT_EQ(dst.ToVector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_THAT([&] { dst.CopyFrom(Zeros({2})); },
              ThrowsMessage<Error>(
                  "copy: shapes [2] and [2, 3] cannot be broadcast (dimension -1: 2 vs 3)"));
  EXPECT_THAT(
      [&] {
        dst.CopyFrom(Zeros({4, 2, 3}));
      },
      ThrowsMessage<Error>("copy: a source of shape [4, 2, 3] cannot be broadcast to the "
                           "destination's shape [2, 3]"));
  EXPECT_THAT(
      [&] { Zeros({1}).Expand({3}).CopyFrom(Ones({3})); },
      ThrowsMessage<Error>(
          "copy: the destination of shape [3] and strides [0] writes several elements to one "
          "memory location"));
  // Overlapping source and destination: x[1:] = x[:-1] must read the old values.
  const Tensor x = Arange(6);
  x.Slice(0, 1).CopyFrom(x.Slice(0, 0, 5));
  EXPECT_EQ(x.ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 3, 4}));
  const Tensor y = Arange(6);
  y.Slice(0, 0, 5).CopyFrom(y.Slice(0, 1));
  EXPECT_EQ(y.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 5}));
  // In-place transpose of a square matrix through a copy.
  const Tensor m = Arange(4).View({2, 2});
  m.CopyFrom(m.Transpose(0, 1));
  EXPECT_EQ(m.ToVector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(TensorTest, MetaTensorsHaveShapesViewsAndNoMemory) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  const Tensor big = Empty({50257, 1600}, DType::kF32, Device::Meta());  // gpt2-xl's wte
  EXPECT_EQ(cpu.live_bytes(), live);
  EXPECT_EQ(big.device(), Device::Meta());
  EXPECT_EQ(big.Transpose(0, 1).Narrow(0, 10, 5).shape(), (Shape{5, 50257}));
  EXPECT_EQ(Ones({2, 2}).To(Device::Meta()).device(), Device::Meta());
  EXPECT_EQ(Empty({2, 3}, DType::kBF16, Device::Meta()).ToString(),
            "tensor(..., size=(2, 3), device='meta', dtype=bf16)");
  for (const auto& [what, fn] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"fill", [&] { big.Fill(1); }},
           {"copy", [&] { big.Narrow(0, 0, 1).CopyFrom(big.Narrow(0, 1, 1)); }},
           {"reading an element",
            [&] {
              big.at<float>({0, 0});
            }},
           {"to", [&] { big.To(Device::Cpu()); }}}) {
    EXPECT_THAT(fn, ThrowsMessage<Error>(
                        ::testing::StartsWith(what + ": a meta tensor has a shape but no data")));
  }
}

TEST(TensorTest, MemoryIsReturnedWhenTheLastViewGoes) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  {
    Tensor view;
    {
      const Tensor t = Zeros({256, 256});
      EXPECT_EQ(cpu.live_bytes(), live + 256 * 256 * 4);
      view = t.Select(0, 3);
    }
    EXPECT_EQ(cpu.live_bytes(), live + 256 * 256 * 4);  // the view keeps it alive
  }
  EXPECT_EQ(cpu.live_bytes(), live);
}

// Fully sharded training frees a layer's weights while autograd holds views of them,
// and gathers them back into the same storage before backward reads those views.
TEST(TensorTest, ReleasedStorageFreesItsMemoryAndRestoresUnderEveryView) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  const Tensor t = Zeros({64, 64});
  const Tensor row = t.Select(0, 5);  // a view, as a node saves it
  t.storage().Release();
  EXPECT_TRUE(row.storage().released());
  EXPECT_EQ(cpu.live_bytes(), live);
  EXPECT_EQ(t.storage().nbytes(), 64 * 64 * 4);
  EXPECT_THAT([&] { row.data<float>(); },
              ThrowsMessage<Error>(HasSubstr("tensor of shape [64] whose memory was released")));
  t.storage().Restore();
  EXPECT_EQ(cpu.live_bytes(), live + 64 * 64 * 4);
  t.Fill(2);
  EXPECT_EQ(row.at<float>({7}), 2.0f);  // the old view sees the new memory
}

}  // namespace
}  // namespace ember
