#include "tokenizer/pretokenizer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Gpt2(const std::string& text) {
  static const Pretokenizer* p = new Pretokenizer(*Pretokenizer::Create(kGpt2Pattern));
  EXPECT_EQ(p->engine_name(), "gpt2");
  return p->Split(text);
}

// Hand-derived from the pattern (and the same as tiktoken: encoding_test checks the
// ids of several hundred texts).
TEST(PretokenizerTest, WordsNumbersPunctuationAndContractions) {
  EXPECT_THAT(Gpt2("Hello, world!"), ElementsAre("Hello", ",", " world", "!"));
  EXPECT_THAT(Gpt2("I'll go's"), ElementsAre("I", "'ll", " go", "'s"));
  EXPECT_THAT(Gpt2("I'LL"), ElementsAre("I", "'", "LL"));  // contractions are lower-case only
  EXPECT_THAT(Gpt2("x 123abc"), ElementsAre("x", " 123", "abc"));
}

TEST(PretokenizerTest, AWhitespaceRunLeavesItsLastCharacterToTheNextPiece) {
  // "  b": \s+(?!\S) takes one space, " b" goes to ` ?\p{L}+`.
  EXPECT_THAT(Gpt2("a  b"), ElementsAre("a", " ", " b"));
  EXPECT_THAT(Gpt2("a   1"), ElementsAre("a", "  ", " 1"));
  // The last character is a tab: not ` ?`, so it stands alone via \s+.
  EXPECT_THAT(Gpt2("a \tb"), ElementsAre("a", " ", "\t", "b"));
  // One whitespace character before a non-space: the lookahead fails, \s+ takes it.
  EXPECT_THAT(Gpt2("a\nb"), ElementsAre("a", "\n", "b"));
  // At the end of the text the whole run is one piece.
  EXPECT_THAT(Gpt2("a   "), ElementsAre("a", "   "));
  EXPECT_THAT(Gpt2("\n\n\n"), ElementsAre("\n\n\n"));
}

TEST(PretokenizerTest, WhiteSpaceIsUnicodes) {
  // U+3000 (3 bytes) and U+00A0 are White_Space: they split like spaces, and the run
  // gives back a whole code point, never a byte of one.
  EXPECT_THAT(Gpt2("a\u3000\u3000b"), ElementsAre("a", "\u3000", "\u3000", "b"));
  EXPECT_THAT(Gpt2("a \u00a0x"), ElementsAre("a", " ", "\u00a0", "x"));
  EXPECT_THAT(Gpt2("a\u0085"), ElementsAre("a", "\u0085"));
  // U+200B (zero width space) is not White_Space: it is punctuation-like here.
  EXPECT_THAT(Gpt2("a \u200b"), ElementsAre("a", " \u200b"));
}

// Characters new in Unicode 16.0: Garay digits (U+10D40-10D49, Nd) and CYRILLIC CAPITAL
// LETTER TJE (U+1C89, Lu). The scanners know them as tiktoken's regex does; RE2's
// Unicode 15.0 tables do not know them at all ("other", like punctuation).
TEST(PretokenizerTest, KnowsUnicode16LikeTiktoken) {
  const std::string garay = "x\U00010D40\U00010D41\U00010D42\U00010D43";
  const Pretokenizer cl100k = *Pretokenizer::Create(kCl100kPattern);
  const Pretokenizer cl100k_re2 = *Pretokenizer::Create(kCl100kPattern, Pretokenizer::Engine::kRe2);
  EXPECT_THAT(cl100k.Split(garay),
              ElementsAre("x", "\U00010D40\U00010D41\U00010D42", "\U00010D43"));
  EXPECT_THAT(cl100k_re2.Split(garay),
              ElementsAre("x", "\U00010D40\U00010D41\U00010D42\U00010D43"));
  const Pretokenizer o200k = *Pretokenizer::Create(kO200kPattern);
  EXPECT_THAT(o200k.Split("!\u1C89ab's"), ElementsAre("!\u1C89ab's"));
  EXPECT_THAT(Pretokenizer::Create(kO200kPattern, Pretokenizer::Engine::kRe2)->Split("!\u1C89ab's"),
              ElementsAre("!\u1C89", "ab's"));
}

TEST(PretokenizerTest, RefusesWhatRe2CannotRun) {
  EXPECT_THAT(std::string(Pretokenizer::Create("a(?=b)").status().message()),
              HasSubstr("lookaround (?="));
  EXPECT_THAT(std::string(Pretokenizer::Create(R"(\p{L}++|\s+(?!\S)|\s+)").status().message()),
              HasSubstr("possessive quantifier"));
  EXPECT_THAT(std::string(Pretokenizer::Create("(unclosed").status().message()),
              HasSubstr("RE2 refuses"));
}

}  // namespace
}  // namespace ember::tokenizer
