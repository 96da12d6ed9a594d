#include "data/datasets.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "data/prepare.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Write(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(DatasetsTest, NamesAreMergedLowercasedAndDeduplicated) {
  const std::string a = Write("a.txt", "Emma\nOlivia\n\nAva\n");
  const std::string b = Write("b.txt", "emma\r\nNoah\n");
  EXPECT_THAT(*LoadNames({a, b}), ElementsAre("ava", "emma", "noah", "olivia"));
  const std::string bad = Write("bad.txt", "ok\nbad\xff\n");
  EXPECT_THAT(std::string(LoadNames({bad}).status().message()),
              HasSubstr("bad.txt:2: not valid UTF-8"));
}

// makemore's examples, by hand: "emma" with block 3 gives ... -> e, ..e -> m, .em -> m,
// emm -> a, mma -> . (ids: . 0, a 1, e 2, m 3).
TEST(DatasetsTest, NameExamplesSlideAWindow) {
  const tokenizer::CharTokenizer vocab = *NamesVocabulary({"emma"});
  EXPECT_THAT(vocab.chars(), ElementsAre(".", "a", "e", "m"));
  const CharExamples ex = *NameExamples({"emma"}, vocab, 3);
  EXPECT_EQ(ex.x.shape(), (Shape{5, 3}));
  EXPECT_EQ(ex.x.ToVector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 2, 3, 2, 3, 3, 3, 3, 1}));
  EXPECT_EQ(ex.y.ToVector<int64_t>(), (std::vector<int64_t>{2, 3, 3, 1, 0}));
  EXPECT_THAT(std::string(NameExamples({"emma", "zoe"}, vocab, 3).status().message()),
              HasSubstr("name 1: character \"z\" at byte 0 is not in the vocabulary"));
  EXPECT_FALSE(NameExamples({"emma"}, vocab, 0).ok());
}

// The real names (setup.sh: the @stdlib female and male English first names).
TEST(DatasetsTest, RealNames) {
  const std::vector<std::string> names =
      *LoadNames({"downloads/names/female.txt", "downloads/names/male.txt"});
  EXPECT_EQ(names.size(), 8422u);  // 4951 + 3898 lines, 427 in both
  EXPECT_EQ(names.front(), "aaren");
  EXPECT_EQ(names.back(), "zuzana");
  const tokenizer::CharTokenizer vocab = *NamesVocabulary(names);
  EXPECT_EQ(absl::StrJoin(vocab.chars(), ""), ".-abcdefghijklmnopqrstuvwxyz");  // "Ann-Marie"
  EXPECT_EQ(NameExamples(names, vocab, 3)->y.numel(), 59167);  // letters + one '.' each
}

// The real Brown corpus: 500 files, 6,142,741 bytes of text once the tags are gone
// (figures and the first sentence from an independent Python reading of the files).
TEST(DatasetsTest, BrownCorpusAsText) {
  const std::string text = *BrownText("downloads/brown");
  EXPECT_EQ(text.size(), 6142741u);
  EXPECT_EQ(text.substr(0, 80),
            "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent pr");
  size_t paragraphs = 0;
  for (size_t at = text.find("\n\n"); at != std::string::npos; at = text.find("\n\n", at + 2))
    ++paragraphs;
  EXPECT_EQ(paragraphs, 15667u);
  EXPECT_EQ(BrownText(::testing::TempDir()).status().code(), absl::StatusCode::kNotFound);
}

// Every k-th document to validation (k = 1 / val_fraction), each after the separator;
// with fewer documents than k, the last share of the tokens.
TEST(DatasetsTest, TokenizeDocumentsSplits) {
  const EncodeFn bytes = [](const std::string& text) {
    return absl::StatusOr<std::vector<tokenizer::Rank>>(
        std::vector<tokenizer::Rank>(text.begin(), text.end()));
  };
  const std::vector<Document> docs = {{"a", "ab"}, {"b", "c"}, {"c", "de"}, {"d", "f"}};
  const TokenSplit split = *TokenizeDocuments(docs, bytes, uint16_t{0}, 0.5);
  EXPECT_EQ(split.train, (std::vector<uint16_t>{0, 'a', 'b', 0, 'd', 'e'}));
  EXPECT_EQ(split.val, (std::vector<uint16_t>{0, 'c', 0, 'f'}));
  const TokenSplit one = *TokenizeDocuments({{"x", "abcdefghij"}}, bytes, std::nullopt, 0.2);
  EXPECT_EQ(one.train.size(), 8u);
  EXPECT_EQ(one.val, (std::vector<uint16_t>{'i', 'j'}));
  const EncodeFn big = [](const std::string&) {
    return absl::StatusOr<std::vector<tokenizer::Rank>>(std::vector<tokenizer::Rank>{70000});
  };
  EXPECT_THAT(
      std::string(TokenizeDocuments({{"x", "a"}}, big, std::nullopt, 0.1).status().message()),
      HasSubstr("x: token id 70000 does not fit 16 bits"));
  EXPECT_FALSE(TokenizeDocuments(docs, bytes, std::nullopt, 0.9).ok());
}

TEST(DatasetsTest, Utf8Files) {
  EXPECT_EQ(*ReadUtf8File(Write("ok.txt", "caf\xC3\xA9\n")), "caf\xC3\xA9\n");
  EXPECT_THAT(std::string(ReadUtf8File(Write("latin1.txt", "caf\xE9\n")).status().message()),
              HasSubstr("latin1.txt: not valid UTF-8 at byte 3"));
  EXPECT_EQ(ReadUtf8File("/nonexistent").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ember::data
