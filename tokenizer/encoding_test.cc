#include "tokenizer/encoding.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {
namespace {

using ::testing::HasSubstr;

// setup.sh fetches the vocabulary files into downloads/tokenizer.
constexpr char kVocabDir[] = "downloads/tokenizer";

// Each encoding is loaded once per test binary.
const Encoding& Load(const std::string& name) {
  static auto* loaded = new std::map<std::string, Encoding>();
  auto it = loaded->find(name);
  if (it == loaded->end()) {
    absl::StatusOr<Encoding> e = LoadEncoding(name, kVocabDir);
    EXPECT_TRUE(e.ok()) << e.status() << " (run ./setup.sh to fetch the vocabulary files)";
    if (!e.ok()) std::abort();
    it = loaded->emplace(name, *std::move(e)).first;
  }
  return it->second;
}

const Encoding& Gpt2() { return Load("gpt2"); }

std::vector<Rank> Ids(const nlohmann::json& j) { return j.get<std::vector<Rank>>(); }

// Several hundred texts with the ids tiktoken itself gives
// (tools/reference/tiktoken_vectors.js), for every encoding the vectors hold. Every
// one must match, and round-trip.
class TiktokenVectorsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TiktokenVectorsTest, EveryIdMatches) {
  const std::string& name = GetParam();
  const Encoding& e = Load(name);
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  ASSERT_TRUE(in) << "missing vectors";
  std::string line;
  int cases = 0, special_cases = 0;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    const std::string text = row["text"];
    SCOPED_TRACE(line.substr(0, 200));
    absl::StatusOr<std::vector<Rank>> ids = e.EncodeOrdinary(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, Ids(row[name]));
    EXPECT_EQ(*e.DecodeBytes(*ids), text);
    if (row.contains(name + ".all_special")) {
      absl::StatusOr<std::vector<Rank>> with = e.Encode(text, e.AllSpecial());
      ASSERT_TRUE(with.ok()) << with.status();
      EXPECT_EQ(*with, Ids(row[name + ".all_special"]));
      ++special_cases;
    }
    ++cases;
  }
  EXPECT_GE(cases, 300);
  EXPECT_GE(special_cases, 5);
}

INSTANTIATE_TEST_SUITE_P(Encodings, TiktokenVectorsTest,
                         ::testing::Values("gpt2", "r50k_base", "p50k_base", "cl100k_base",
                                           "o200k_base"));

// tiktoken's n_vocab and special ids, and p50k_edit's extra specials on p50k_base's ranks.
// The rank table against a std::map on strings of 1 to 40 random bytes (zero bytes
// included, many sharing their first 8 bytes), inserted one at a time so that the table
// grows, some re-ranked; and strings that are not in it.
TEST(RankTableTest, FindsWhatAMapFinds) {
  std::mt19937 rng(11);
  std::map<std::string, Rank> reference;
  RankTable table;
  const std::string stem = "prefix\0ab";
  for (Rank rank = 0; rank < 20000; ++rank) {
    std::string bytes = rng() % 3 == 0 ? stem.substr(0, 1 + rng() % stem.size()) : "";
    bytes.resize(bytes.size() + 1 + rng() % 30);
    for (size_t k = bytes.size() - 1; k < bytes.size() && rng() % 8; --k)
      bytes[k] = static_cast<char>(rng() % 4);
    reference[bytes] = rank;
    table.Insert(bytes, rank);
  }
  for (const auto& [bytes, rank] : reference)
    ASSERT_EQ(table.Find(bytes), rank) << absl::CEscape(bytes);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes(1 + rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 3);
    const auto it = reference.find(bytes);
    EXPECT_EQ(table.Find(bytes), it == reference.end() ? RankTable::kMissing : it->second);
  }
  EXPECT_EQ(table.Find(""), RankTable::kMissing);
}

TEST(EncodingTest, EncodingsAsTiktokenDefinesThem) {
  EXPECT_EQ(Load("r50k_base").n_vocab(), 50257u);
  EXPECT_EQ(Load("p50k_base").n_vocab(), 50281u);
  EXPECT_EQ(Load("cl100k_base").n_vocab(), 100277u);
  EXPECT_EQ(Load("o200k_base").n_vocab(), 200019u);
  // gpt-oss's: o200k_base's ranks and pattern, specials up to 201087, two of which share
  // 200018 (as tiktoken defines it); a shared id decodes as the first text in byte order.
  const Encoding& harmony = Load("o200k_harmony");
  EXPECT_EQ(harmony.n_vocab(), 201088u);
  EXPECT_EQ(harmony.ranks(), Load("o200k_base").ranks());
  EXPECT_EQ(*harmony.Encode("<|start|>assistant<|channel|>final<|message|>", harmony.AllSpecial()),
            (std::vector<Rank>{200006, 173781, 200005, 17196, 200008}));
  EXPECT_EQ(*harmony.Encode("<|reserved_200018|><|endofprompt|><|reserved_201087|>",
                            harmony.AllSpecial()),
            (std::vector<Rank>{200018, 200018, 201087}));
  EXPECT_EQ(*harmony.Decode({200018, 199998}), "<|endofprompt|><|startoftext|>");
  const Encoding& edit = Load("p50k_edit");
  EXPECT_EQ(edit.n_vocab(), 50284u);
  EXPECT_EQ(*edit.Encode("x<|fim_middle|>", edit.AllSpecial()), (std::vector<Rank>{87, 50282}));
  EXPECT_EQ(Load("gpt2").ranks(), Load("r50k_base").ranks());
  const absl::Status unknown = LoadEncoding("p50k", kVocabDir).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.message()),
              HasSubstr("unknown encoding \"p50k\"; known: gpt2, r50k_base"));
}

TEST(EncodingTest, SpecialTokensFollowTiktokensContract) {
  const Encoding& e = Gpt2();
  // Ordinary: special-token text is text (ids from tiktoken).
  EXPECT_EQ(*e.EncodeOrdinary("<|endoftext|>"),
            (std::vector<Rank>{27, 91, 437, 1659, 5239, 91, 29}));
  // Allowed: its id.
  EXPECT_EQ(*e.Encode("a<|endoftext|>b", e.AllSpecial()), (std::vector<Rank>{64, 50256, 65}));
  // Not allowed (the default): an error naming it.
  const absl::Status status = e.Encode("hi <|endoftext|>", {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("special token <|endoftext|> at byte 3"));
  EXPECT_EQ(*e.Encode("no specials here", {}), *e.EncodeOrdinary("no specials here"));
  EXPECT_EQ(e.n_vocab(), 50257u);
  // tiktoken's disallowed_special: () makes special text ordinary; allowed wins over it.
  EXPECT_EQ(*e.EncodeDisallowing("a<|endoftext|>", {}, {}), *e.EncodeOrdinary("a<|endoftext|>"));
  EXPECT_EQ(*e.EncodeDisallowing("a<|endoftext|>", e.AllSpecial(), e.AllSpecial()),
            (std::vector<Rank>{64, 50256}));
  const absl::Status refused =
      Load("cl100k_base")
          .EncodeDisallowing("<|fim_prefix|> <|endoftext|>", {}, {"<|endoftext|>"})
          .status();
  EXPECT_THAT(std::string(refused.message()), HasSubstr("special token <|endoftext|> at byte 15"));
}

TEST(EncodingTest, BadInputIsAStatus) {
  const Encoding& e = Gpt2();
  EXPECT_THAT(std::string(e.EncodeOrdinary("ok\xff").status().message()),
              HasSubstr("not valid UTF-8 at byte 2"));
  EXPECT_THAT(std::string(e.DecodeBytes({1, 50257}).status().message()),
              HasSubstr("token id 50257 is not in gpt2 (n_vocab 50257)"));
  // Below n_vocab but no token: cl100k_base has no 100256 (its specials start at 100257).
  EXPECT_THAT(std::string(Load("cl100k_base").DecodeBytes({100, 100256}).status().message()),
              HasSubstr("token id 100256 is not in cl100k_base (n_vocab 100277)"));
  EXPECT_EQ(*Load("cl100k_base").DecodeBytes({100257, 9906}), "<|endoftext|>Hello");
}

TEST(EncodingTest, CreateRefusesBadVocabularies) {
  Ranks bytes;
  for (int b = 0; b < 256; ++b) bytes[std::string(1, static_cast<char>(b))] = b;
  auto message = [&](Ranks ranks, absl::flat_hash_map<std::string, Rank> specials) {
    return std::string(Encoding::Create("v", kGpt2Pattern, std::move(ranks), std::move(specials))
                           .status()
                           .message());
  };
  Ranks without_z = bytes;
  without_z.erase("z");
  EXPECT_EQ(message(without_z, {}),
            "v: byte 122 is not a token, so some texts could not be encoded");
  Ranks empty = bytes;
  empty[""] = 256;
  EXPECT_EQ(message(empty, {}), "v: id 256 has no bytes");
  EXPECT_EQ(message(bytes, {{"<|end|>", 97}}), "v: id 97 is given to two tokens");
  Ranks twice = bytes;
  twice["ab"] = 97;
  EXPECT_EQ(message(twice, {}), "v: id 97 is given to two tokens");
  EXPECT_EQ(message(bytes, {{"<|a|>", 300}, {"<|b|>", 300}}), "");  // specials may share
  EXPECT_EQ(message(bytes, {{"<|end|>", RankTable::kMissing}}),
            absl::StrCat("v: id ", RankTable::kMissing,
                         " is past the largest id a vocabulary may use, 4194303 (the decode table "
                         "is indexed by id)"));
  Ranks far = bytes;
  far["ab"] = Encoding::kMaxId;  // the limit itself is fine
  EXPECT_EQ(Encoding::Create("v", kGpt2Pattern, far, {})->n_vocab(), Encoding::kMaxId + 1);
}

TEST(EncodingTest, DecodeReplacesCutSequencesAsTiktoken) {
  const Encoding& e = Gpt2();
  const std::vector<Rank> ids = *e.EncodeOrdinary("\xF0\x9F\x98\x80");  // U+1F600: 47249 222
  ASSERT_EQ(ids, (std::vector<Rank>{47249, 222}));
  EXPECT_EQ(*e.DecodeBytes({ids[0]}), "\xF0\x9F\x98");
  EXPECT_EQ(*e.Decode({ids[0]}), "\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("a\xE2\x82z\xF0\x9F\x98\x80\xC0\xAF"),
            "a\xEF\xBF\xBDz\xF0\x9F\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");  // maximal subparts
  EXPECT_EQ(FirstInvalidUtf8("\xED\xA0\x80"), 0);                       // a surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80"), 0);                   // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("caf\xC3\xA9"), -1);
}

TEST(EncodingTest, HeapAndScanMergeAlike) {
  std::mt19937 rng(1);
  const std::string alphabet = "aab ,.e\xC3\xA9t1";
  for (int trial = 0; trial < 300; ++trial) {
    std::string piece;
    const int n = 2 + static_cast<int>(rng() % (internal::kHeapMergeBytes - 1));  // 2 to 256
    for (int i = 0; i < n; ++i) piece.push_back(alphabet[rng() % alphabet.size()]);
    std::vector<Rank> by_heap, by_scan;
    internal::MergeByHeap(piece, Gpt2().rank_table(), by_heap);
    internal::MergeByScan(piece, Gpt2().rank_table(), by_scan);
    ASSERT_EQ(by_heap, by_scan) << piece;
  }
}

TEST(EncodingTest, ALongPieceIsNotQuadratic) {
  // One 100 kB piece (no spaces): tiktoken's npm build takes over a second for 32 kB;
  // quadratic merging would take minutes here, the heap a second even unoptimised.
  const std::string text(100000, 'a');
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Rank> ids = *Gpt2().EncodeOrdinary(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(*Gpt2().DecodeBytes(ids), text);
  EXPECT_LT(seconds, 20.0);
}

// A long text from the vectors with separators that cut every kind of piece, and one
// with no "letter space letter" anywhere (so the chunks start at arbitrary characters
// and the join has to scan until the scans meet).
std::string LongText(bool letters) {
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  std::vector<std::string> texts;
  for (std::string line; std::getline(in, line);)
    texts.push_back(nlohmann::json::parse(line)["text"]);
  const std::vector<std::string> junk = {
      "   ",     "\t\t", "\r\n",         "\n\n\n", "  \u00a0 ",
      "1234567", "!!??", "\u3000\u3000", "'s",     "\xF0\x9F\x91\x8D"};
  std::mt19937 rng(7);
  std::string text;
  while (text.size() < 300000) {  // several 64 kB chunks
    if (letters) text += texts[rng() % texts.size()];
    text += junk[rng() % junk.size()];
    if (rng() % 5 == 0) text += std::string(rng() % 300, ' ');
  }
  return text;
}

TEST(EncodingTest, ThreadsGiveTheSameIds) {
  for (const char* name : {"gpt2", "o200k_base"}) {
    const Encoding& e = Load(name);
    for (const bool letters : {true, false}) {
      const std::string text = LongText(letters);
      const std::vector<Rank> one = *e.EncodeOrdinary(text, 1);
      for (const int threads : {2, 3, 5}) {
        SCOPED_TRACE(absl::StrCat(name, " letters=", letters, " threads=", threads));
        EXPECT_EQ(*e.EncodeOrdinary(text, threads), one);
      }
      EXPECT_EQ(*e.DecodeBytes(one), text);
    }
  }
  // With special tokens between long stretches of text.
  const Encoding& e = Gpt2();
  const std::string text = LongText(true) + "<|endoftext|>" + LongText(false);
  EXPECT_EQ(*e.Encode(text, e.AllSpecial(), 4), *e.Encode(text, e.AllSpecial(), 1));
}

// Pieces of two characters: a chunk that starts at an odd byte of "abab..." scans
// "ba ba ...", which never meets the single scan's "ab ab ...", so the join must encode
// that chunk itself. 300,004 bytes make four chunks starting at bytes 0, 75001 (odd),
// 150002 and 225003 (odd).
TEST(EncodingTest, ThreadsGiveTheSameIdsWhenTheScansNeverMeet) {
  Ranks ranks;
  for (int b = 0; b < 256; ++b) ranks[std::string(1, static_cast<char>(b))] = b;
  ranks["ab"] = 256;
  ranks["ba"] = 257;
  const absl::StatusOr<Encoding> e = Encoding::Create("pairs", "(?s)..", ranks, {});
  ASSERT_TRUE(e.ok()) << e.status();
  std::string text;
  for (int i = 0; i < 150002; ++i) text += "ab";
  const std::vector<Rank> one = *e->EncodeOrdinary(text, 1);
  EXPECT_EQ(one, std::vector<Rank>(150002, 256));
  for (const int threads : {2, 4}) EXPECT_EQ(*e->EncodeOrdinary(text, threads), one) << threads;
}

// The encoder keeps the ids of pieces that took merges in a small cache keyed by the
// piece. 20,000 different made-up words (few are tokens), each used five times in an
// order that makes them evict one another, and pieces of up to 60 ids: every piece's ids
// must be what encoding it alone gives.
TEST(EncodingTest, RepeatedPiecesGetTheirOwnIds) {
  const Encoding& e = Load("cl100k_base");
  std::mt19937 rng(7);
  std::vector<std::string> words;
  for (int i = 0; i < 20000; ++i) {
    std::string word = " ";
    const size_t length = i % 100 == 0 ? 120 : 3 + rng() % 12;
    for (size_t k = 0; k < length; ++k) word.push_back("qxzjkvwbyfe"[rng() % 11]);
    words.push_back(word);
  }
  std::string text;
  std::vector<Rank> expected;
  for (int round = 0; round < 5; ++round) {
    std::shuffle(words.begin(), words.end(), rng);
    for (const std::string& word : words) {
      text += word;
      const std::vector<Rank> alone = *e.EncodeOrdinary(word);
      expected.insert(expected.end(), alone.begin(), alone.end());
    }
  }
  EXPECT_EQ(*e.EncodeOrdinary(text), expected);
  EXPECT_EQ(*e.EncodeOrdinary(text, 2), expected);
}

TEST(EncodingTest, BatchIsEachTextEncoded) {
  const Encoding& e = Gpt2();
  const std::vector<std::string> texts = {"Hello world", "", "a<|endoftext|>b",
                                          std::string(5000, 'x'), "caf\xC3\xA9"};
  const std::vector<std::vector<Rank>> batch =
      *e.EncodeBatch(texts, e.AllSpecial(), e.AllSpecial(), 3);
  ASSERT_EQ(batch.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(batch[i], *e.Encode(texts[i], e.AllSpecial())) << i;
  const absl::Status bad =
      e.EncodeBatch({"fine", "also fine", "<|endoftext|>"}, {}, e.AllSpecial(), 2).status();
  EXPECT_THAT(std::string(bad.message()),
              HasSubstr("text 2: text contains the special token <|endoftext|>"));
}

}  // namespace
}  // namespace ember::tokenizer
