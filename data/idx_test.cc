#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "data/datasets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::data {
namespace {

using ::testing::HasSubstr;

std::string Temp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string Message(const absl::StatusOr<Tensor>& t) { return std::string(t.status().message()); }

TEST(IdxTest, ReadsWhatItWritesPlainAndGzipped) {
  const Tensor bytes = FromVector<uint8_t>({0, 1, 2, 250, 251, 255}, {2, 3});
  const Tensor ints = FromVector<int32_t>({-5, 70000, 0}, {3});
  const Tensor floats = FromVector<float>({1.5f, -2.25f}, {1, 2});
  for (const char* suffix : {"", ".gz"}) {
    ASSERT_TRUE(WriteIdx(bytes, Temp(absl::StrCat("b.idx", suffix))).ok());
    ASSERT_TRUE(WriteIdx(ints, Temp(absl::StrCat("i.idx", suffix))).ok());
    ASSERT_TRUE(WriteIdx(floats, Temp(absl::StrCat("f.idx", suffix))).ok());
    EXPECT_EQ(ReadIdx(Temp(absl::StrCat("b.idx", suffix)))->ToVector<uint8_t>(),
              bytes.ToVector<uint8_t>());
    EXPECT_EQ(ReadIdx(Temp(absl::StrCat("i.idx", suffix)))->ToVector<int32_t>(),
              ints.ToVector<int32_t>());
    const Tensor f = *ReadIdx(Temp(absl::StrCat("f.idx", suffix)));
    EXPECT_EQ(f.shape(), floats.shape());
    EXPECT_EQ(f.ToVector<float>(), floats.ToVector<float>());
  }
}

TEST(IdxTest, LayoutIsBigEndianAsMnists) {
  // Hand-written: type 0x0B (short), 1 dimension of 2, values -2 and 258.
  WriteBytes(Temp("s.idx"), std::string("\0\0\x0B\x01\0\0\0\x02\xFF\xFE\x01\x02", 12));
  const Tensor t = *ReadIdx(Temp("s.idx"));
  EXPECT_EQ(t.dtype(), DType::kI32);
  EXPECT_EQ(t.ToVector<int32_t>(), (std::vector<int32_t>{-2, 258}));
}

TEST(IdxTest, MalformedFilesNameTheOffset) {
  WriteBytes(Temp("short.idx"), std::string("\0\0", 2));
  EXPECT_THAT(Message(ReadIdx(Temp("short.idx"))), HasSubstr("short.idx: at byte 0: truncated"));
  WriteBytes(Temp("magic.idx"), std::string("\x1f\x00\x08\x01\0\0\0\x01\x05", 9));
  EXPECT_THAT(Message(ReadIdx(Temp("magic.idx"))), HasSubstr("at byte 0: not an IDX file"));
  WriteBytes(Temp("type.idx"), std::string("\0\0\x07\x01\0\0\0\x01\x05", 9));
  EXPECT_THAT(Message(ReadIdx(Temp("type.idx"))), HasSubstr("at byte 2: unknown IDX type code 7"));
  WriteBytes(Temp("dims.idx"), std::string("\0\0\x08\x02\0\0\0\x01\0\0", 10));
  EXPECT_THAT(Message(ReadIdx(Temp("dims.idx"))), HasSubstr("at byte 8: truncated in dimension 1"));
  // 2 x 3 bytes promised, 4 present.
  WriteBytes(Temp("data.idx"), std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03\1\2\3\4", 16));
  EXPECT_THAT(Message(ReadIdx(Temp("data.idx"))),
              HasSubstr("at byte 16: truncated: the dimensions call for 6 bytes of unsigned byte "
                        "data, the file holds 4"));
  WriteBytes(Temp("extra.idx"), std::string("\0\0\x08\x01\0\0\0\x01\x05\x06", 10));
  EXPECT_THAT(Message(ReadIdx(Temp("extra.idx"))), HasSubstr("at byte 9: trailing bytes"));
  EXPECT_EQ(ReadIdx(Temp("missing.idx")).status().code(), absl::StatusCode::kNotFound);
  // A header promising 3.6 GB before 2 bytes: refused at the end of the file, nothing
  // that size allocated; and one promising more than a terabyte at once.
  WriteBytes(Temp("huge.idx"), std::string("\0\0\x08\x02\0\0\xEA\x60\0\0\xEA\x60\1\2", 14));
  EXPECT_THAT(Message(ReadIdx(Temp("huge.idx"))),
              HasSubstr("at byte 14: truncated: the dimensions call for 3600000000 bytes of "
                        "unsigned byte data, the file holds 2"));
  WriteBytes(Temp("tera.idx"),
             std::string("\0\0\x08\x03\0\xFF\xFF\xFF\0\xFF\xFF\xFF\0\0\xFF\xFF", 16));
  EXPECT_THAT(Message(ReadIdx(Temp("tera.idx"))),
              HasSubstr("at byte 8: the array would be over 1 TB"));
  // A gzip stream cut short reads as a truncated array.
  ASSERT_TRUE(WriteIdx(Zeros({100, 100}, DType::kU8), Temp("cut.idx.gz")).ok());
  std::ifstream in(Temp("cut.idx.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteBytes(Temp("cut2.idx.gz"), gz.substr(0, gz.size() / 2));
  EXPECT_THAT(Message(ReadIdx(Temp("cut2.idx.gz"))), HasSubstr("truncated"));
}

TEST(IdxTest, MnistFolderChecksTheFiles) {
  const std::string dir = ::testing::TempDir() + "/mnist";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteIdx(FromVector<uint8_t>({0, 255, 51, 0, 0, 0, 0, 102}, {2, 2, 2}),
                       dir + "/t10k-images-idx3-ubyte")
                  .ok());
  ASSERT_TRUE(WriteIdx(FromVector<uint8_t>({7, 3}, {2}), dir + "/t10k-labels-idx1-ubyte.gz").ok());
  const ImageSet set = *LoadMnist(dir, Split::kTest, ImageLayout::kNCHW);
  EXPECT_EQ(set.images.shape(), (Shape{2, 1, 2, 2}));
  EXPECT_EQ(set.images.ToVector<float>(), (std::vector<float>{0, 1, 0.2f, 0, 0, 0, 0, 0.4f}));
  EXPECT_EQ(set.labels.ToVector<int64_t>(), (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(LoadMnist(dir, Split::kTest, ImageLayout::kFlat)->images.shape(), (Shape{2, 4}));
  ASSERT_TRUE(WriteIdx(FromVector<uint8_t>({7, 3, 1}, {3}), dir + "/t10k-labels-idx1-ubyte").ok());
  EXPECT_THAT(
      std::string(LoadMnist(dir, Split::kTest, ImageLayout::kFlat).status().message()),
      HasSubstr("t10k-labels-idx1-ubyte: expected unsigned bytes [2] (one per image), got u8 [3]"));
}

// The real Fashion-MNIST (Debian's dataset-fashion-mnist, installed by setup.sh).
TEST(IdxTest, FashionMnist) {
  const ImageSet train = *LoadMnist(kFashionMnistDir, Split::kTrain, ImageLayout::kNCHW);
  EXPECT_EQ(train.images.shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(train.labels.shape(), (Shape{60000}));
  const std::vector<int64_t> labels = train.labels.ToVector<int64_t>();
  // The dataset's first labels (9: ankle boot, 0: T-shirt/top, 3: dress), and 6000 of each class.
  EXPECT_EQ(std::vector<int64_t>(labels.begin(), labels.begin() + 5),
            (std::vector<int64_t>{9, 0, 0, 3, 0}));
  for (int c = 0; c < 10; ++c) EXPECT_EQ(std::count(labels.begin(), labels.end(), c), 6000) << c;
  const ImageSet test = *LoadMnist(kFashionMnistDir, Split::kTest, ImageLayout::kFlat);
  EXPECT_EQ(test.images.shape(), (Shape{10000, 784}));
  EXPECT_EQ(test.labels.ToVector<int64_t>()[0], 9);
}

}  // namespace
}  // namespace ember::data
