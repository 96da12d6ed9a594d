#include "tokenizer/vocab.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::tokenizer {
namespace {

using ::testing::HasSubstr;

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// The 256 single bytes, ranks 0-255, as .tiktoken lines.
std::string ByteLines() {
  std::string text;
  for (int b = 0; b < 256; ++b)
    absl::StrAppend(&text, absl::Base64Escape(std::string(1, static_cast<char>(b))), " ", b, "\n");
  return text;
}

TEST(VocabTest, TiktokenFilesReadAndMalformedLinesNameTheirLine) {
  const std::string good = Write("good.tiktoken", ByteLines() + "aGk= 256\n");
  const absl::StatusOr<Ranks> ranks = LoadTiktokenRanks(good);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  EXPECT_EQ(ranks->size(), 257u);
  EXPECT_EQ(ranks->at("hi"), 256u);
  EXPECT_EQ(LoadTiktokenRanks(Write("bad.tiktoken", ByteLines() + "aGk=256\n")).status().message(),
            ::testing::TempDir() + "/bad.tiktoken:257: expected \"<base64 token bytes> <rank>\"");
  EXPECT_THAT(std::string(LoadTiktokenRanks(Write("twice.tiktoken", ByteLines() + "YQ== 300\n"))
                              .status()
                              .message()),
              HasSubstr("twice.tiktoken:257: token \"YQ==\" appears twice"));
  EXPECT_THAT(std::string(LoadTiktokenRanks(Write("empty.tiktoken", "")).status().message()),
              HasSubstr("empty.tiktoken holds no tokens"));
  EXPECT_EQ(LoadTiktokenRanks(::testing::TempDir() + "/absent.tiktoken").status().code(),
            absl::StatusCode::kNotFound);
}

// Limits before allocation: a file past 256 MiB is refused before it is read (the test's
// file is sparse: no disk is used), and an id past Encoding::kMaxId when the encoding is
// built, before the decode table indexed by id is sized.
TEST(VocabTest, HugeFilesAndHugeIdsAreRefusedBeforeMemoryIsTaken) {
  const std::string huge = Write("huge.tiktoken", ByteLines());
  std::filesystem::resize_file(huge, kMaxVocabFileBytes + 1);
  EXPECT_EQ(
      LoadTiktokenRanks(huge).status().message(),
      absl::StrCat(huge, " has 268435457 bytes; a vocabulary file is at most 268435456 (256 MiB)"));

  const std::string far = Write("far.tiktoken", ByteLines() + "aGk= 4000000000\n");
  absl::StatusOr<Ranks> ranks = LoadTiktokenRanks(far);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  EXPECT_EQ(Encoding::Create("far", "\\S+|\\s+", *std::move(ranks), {}).status().message(),
            "far: id 4000000000 is past the largest id a vocabulary may use, 4194303 (the decode "
            "table is indexed by id)");
}

}  // namespace
}  // namespace ember::tokenizer
