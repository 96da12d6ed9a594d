#include "tokenizer/encoding.h"

#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {
namespace {

using ::testing::HasSubstr;

const Encoding& Gpt2() {
  static const Encoding* gpt2 = [] {
    absl::StatusOr<Encoding> e = Gpt2Encoding("third_party/gpt2");
    EXPECT_TRUE(e.ok()) << e.status();
    return new Encoding(*std::move(e));
  }();
  return *gpt2;
}

std::vector<Rank> Ids(const nlohmann::json& j) { return j.get<std::vector<Rank>>(); }

// Several hundred texts with the ids tiktoken itself gives
// (tools/reference/tiktoken_vectors.js); gpt2, r50k_base and p50k_base (its extra
// whitespace tokens aside) share the pattern. Every one must match, and round-trip.
TEST(EncodingTest, MatchesTiktokenOnEveryVector) {
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  ASSERT_TRUE(in) << "missing vectors";
  std::string line;
  int cases = 0, special_cases = 0;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    const std::string text = row["text"];
    SCOPED_TRACE(line.substr(0, 200));
    absl::StatusOr<std::vector<Rank>> ids = Gpt2().EncodeOrdinary(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, Ids(row["gpt2"]));
    EXPECT_EQ(*Gpt2().DecodeBytes(*ids), text);
    if (row.contains("gpt2.all_special")) {
      absl::StatusOr<std::vector<Rank>> with = Gpt2().Encode(text, Gpt2().AllSpecial());
      ASSERT_TRUE(with.ok()) << with.status();
      EXPECT_EQ(*with, Ids(row["gpt2.all_special"]));
      ++special_cases;
    }
    ++cases;
  }
  EXPECT_GE(cases, 300);
  EXPECT_GE(special_cases, 5);
}

TEST(EncodingTest, SpecialTokensFollowTiktokensContract) {
  const Encoding& e = Gpt2();
  // Ordinary: special-token text is text (ids from tiktoken).
  EXPECT_EQ(*e.EncodeOrdinary("<|endoftext|>"), (std::vector<Rank>{27, 91, 437, 1659, 5239, 91, 29}));
  // Allowed: its id.
  EXPECT_EQ(*e.Encode("a<|endoftext|>b", e.AllSpecial()), (std::vector<Rank>{64, 50256, 65}));
  // Not allowed (the default): an error naming it.
  const absl::Status status = e.Encode("hi <|endoftext|>", {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("special token <|endoftext|> at byte 3"));
  EXPECT_EQ(*e.Encode("no specials here", {}), *e.EncodeOrdinary("no specials here"));
  EXPECT_EQ(e.n_vocab(), 50257u);
}

TEST(EncodingTest, BadInputIsAStatus) {
  const Encoding& e = Gpt2();
  EXPECT_THAT(std::string(e.EncodeOrdinary("ok\xff").status().message()),
              HasSubstr("not valid UTF-8 at byte 2"));
  EXPECT_THAT(std::string(e.DecodeBytes({1, 50257}).status().message()),
              HasSubstr("token id 50257 is not in gpt2 (n_vocab 50257)"));
}

TEST(EncodingTest, DecodeReplacesCutSequencesAsTiktoken) {
  const Encoding& e = Gpt2();
  const std::vector<Rank> ids = *e.EncodeOrdinary("\xF0\x9F\x98\x80");  // U+1F600: 47249 222
  ASSERT_EQ(ids, (std::vector<Rank>{47249, 222}));
  EXPECT_EQ(*e.DecodeBytes({ids[0]}), "\xF0\x9F\x98");
  EXPECT_EQ(*e.Decode({ids[0]}), "\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("a\xE2\x82z\xF0\x9F\x98\x80\xC0\xAF"),
            "a\xEF\xBF\xBDz\xF0\x9F\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");  // maximal subparts
  EXPECT_EQ(FirstInvalidUtf8("\xED\xA0\x80"), 0);  // a surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80"), 0);  // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("caf\xC3\xA9"), -1);
}

TEST(EncodingTest, HeapAndScanMergeAlike) {
  std::mt19937 rng(1);
  const std::string alphabet = "aab ,.e\xC3\xA9t1";
  for (int trial = 0; trial < 300; ++trial) {
    std::string piece;
    const int n = 2 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) piece.push_back(alphabet[rng() % alphabet.size()]);
    std::vector<Rank> by_heap, by_scan;
    internal::MergeByHeap(piece, Gpt2().ranks(), by_heap);
    internal::MergeByScan(piece, Gpt2().ranks(), by_scan);
    ASSERT_EQ(by_heap, by_scan) << piece;
  }
}

TEST(EncodingTest, ALongPieceIsNotQuadratic) {
  // One 100 kB piece (no spaces): tiktoken's npm build takes over a second for 32 kB;
  // quadratic merging would take minutes here, the heap a second even unoptimised.
  const std::string text(100000, 'a');
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Rank> ids = *Gpt2().EncodeOrdinary(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(*Gpt2().DecodeBytes(ids), text);
  EXPECT_LT(seconds, 20.0);
}

}  // namespace
}  // namespace ember::tokenizer
