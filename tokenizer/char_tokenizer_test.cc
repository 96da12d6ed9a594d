#include "tokenizer/char_tokenizer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::tokenizer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CharTokenizerTest, DistinctCharactersInCodePointOrder) {
  // sorted(set("hello, wörld é")) in Python: ' ', ',', 'd', 'e', 'h', 'l', 'o', 'r', 'w', 'é', 'ö'
  const CharTokenizer t = *CharTokenizer::FromText("hello, w\xC3\xB6rld \xC3\xA9");
  EXPECT_THAT(t.chars(),
              ElementsAre(" ", ",", "d", "e", "h", "l", "o", "r", "w", "\xC3\xA9", "\xC3\xB6"));
  const std::vector<Rank> ids = *t.Encode("w\xC3\xB6rld");
  EXPECT_THAT(ids, ElementsAre(8, 10, 7, 5, 2));
  EXPECT_EQ(*t.Decode(ids), "w\xC3\xB6rld");
  // Four-byte characters are one token each.
  const CharTokenizer emoji = *CharTokenizer::FromText("\xF0\x9F\x98\x80x\xF0\x9F\x98\x80");
  EXPECT_THAT(emoji.chars(), ElementsAre("x", "\xF0\x9F\x98\x80"));
}

TEST(CharTokenizerTest, ExplicitOrderAndFiles) {
  const CharTokenizer t = *CharTokenizer::FromChars({".", "a", "b"});
  EXPECT_THAT(*t.Encode(".ab."), ElementsAre(0, 1, 2, 0));
  const std::string path = ::testing::TempDir() + "/chars.json";
  ASSERT_TRUE(t.Save(path).ok());
  EXPECT_EQ(CharTokenizer::Load(path)->chars(), t.chars());
}

TEST(CharTokenizerTest, BadInput) {
  const CharTokenizer t = *CharTokenizer::FromText("abc");
  EXPECT_THAT(std::string(t.Encode("abz").status().message()),
              HasSubstr("character \"z\" at byte 2 is not in"));
  EXPECT_THAT(std::string(t.Decode({0, 3}).status().message()), HasSubstr("id 3 at position 1"));
  EXPECT_THAT(std::string(t.Encode("a\xFF").status().message()),
              HasSubstr("not valid UTF-8 at byte 1"));
  EXPECT_FALSE(CharTokenizer::FromText("").ok());
  EXPECT_THAT(std::string(CharTokenizer::FromChars({"a", "bc"}).status().message()),
              HasSubstr("not one character"));
  EXPECT_THAT(std::string(CharTokenizer::FromChars({"a", "a"}).status().message()),
              HasSubstr("given twice"));
  EXPECT_EQ(CharTokenizer::Load("/nonexistent/chars.json").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ember::tokenizer
