#include "tokenizer/trainer.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {
namespace {

using ::testing::HasSubstr;

// A training text: the tiktoken test vectors, several languages and scripts.
std::string Corpus() {
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  std::string text;
  for (std::string line; std::getline(in, line);)
    text += nlohmann::json::parse(line)["text"].get<std::string>() + "\n";
  return text;
}

// The textbook algorithm, written independently and slowly: every piece spelt out as
// byte strings, every pair recounted from scratch before each merge, the most frequent
// taken (ties: the smaller (left rank, right rank)), merged everywhere left to right.
Ranks NaiveTrain(const std::string& text, size_t vocab_size) {
  std::map<std::string, int64_t> piece_counts;
  for (const std::string& p : Pretokenizer::Create(kGpt2Pattern)->Split(text)) ++piece_counts[p];
  Ranks ranks;
  std::vector<std::pair<int, unsigned char>> order;
  for (int b = 0; b < 256; ++b) order.emplace_back(0, static_cast<unsigned char>(b));
  std::vector<std::string> bytes_in_order;
  for (int b = 0; b < 256; ++b) bytes_in_order.push_back(std::string(1, static_cast<char>(b)));
  std::sort(bytes_in_order.begin(), bytes_in_order.end(),
            [](const std::string& x, const std::string& y) {
              return ByteToUnicode(static_cast<unsigned char>(x[0])) <
                     ByteToUnicode(static_cast<unsigned char>(y[0]));
            });
  for (const std::string& b : bytes_in_order) ranks.emplace(b, static_cast<Rank>(ranks.size()));
  std::vector<std::pair<std::vector<std::string>, int64_t>> words;
  for (const auto& [p, n] : piece_counts) {
    std::vector<std::string> w;
    for (const char c : p) w.emplace_back(1, c);
    words.emplace_back(w, n);
  }
  Rank next = 256;
  while (next < vocab_size) {
    std::map<std::pair<Rank, Rank>, int64_t> counts;
    for (const auto& [w, n] : words) {
      for (size_t i = 0; i + 1 < w.size(); ++i) counts[{ranks.at(w[i]), ranks.at(w[i + 1])}] += n;
    }
    if (counts.empty()) break;
    std::pair<Rank, Rank> best;
    int64_t best_count = 0;
    for (const auto& [pair, n] : counts) {  // ascending pairs: the first maximum wins ties
      if (n > best_count) best = pair, best_count = n;
    }
    std::string left, right;
    for (const auto& [b, r] : ranks) {
      if (r == best.first) left = b;
      if (r == best.second) right = b;
    }
    if (ranks.emplace(left + right, next).second) ++next;
    for (auto& [w, n] : words) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == left && w[i + 1] == right) {
          merged.push_back(left + right);
          ++i;
        } else {
          merged.push_back(w[i]);
        }
      }
      w = merged;
    }
  }
  return ranks;
}

TEST(TrainerTest, SameAsTheTextbookAlgorithm) {
  const std::string text = Corpus();
  TrainerOptions options;
  options.vocab_size = 600;
  size_t calls = 0;
  options.progress = [&](size_t done, size_t total) {
    EXPECT_EQ(done, ++calls);
    EXPECT_EQ(total, 344u);
  };
  const Ranks ranks = *TrainBpe(text, options);
  EXPECT_EQ(calls, 344u);
  EXPECT_EQ(ranks.size(), 600u);
  EXPECT_EQ(ranks, NaiveTrain(text, 600));
  options.progress = nullptr;
  EXPECT_EQ(*TrainBpe(text, options), ranks);  // deterministic
  // Ranks 0-255: the single bytes in GPT-2's order ('!' first, as in encoder.json).
  EXPECT_EQ(ranks.at("!"), 0u);
  EXPECT_EQ(ranks.at(" "), 220u);
}

TEST(TrainerTest, StopsWhenEveryPieceIsOneToken) {
  TrainerOptions options;
  options.vocab_size = 1000;
  const Ranks ranks = *TrainBpe("abab abab", options);
  // Pieces "abab" and " abab": (a,b) occurs 4 times, then (ab,ab) twice, then
  // (" ",abab) once; then every piece is one token.
  EXPECT_EQ(ranks.size(), 256u + 3);
  EXPECT_EQ(ranks.at("ab"), 256u);
  EXPECT_EQ(ranks.at("abab"), 257u);
  EXPECT_EQ(ranks.at(" abab"), 258u);
}

TEST(TrainerTest, BadInput) {
  TrainerOptions options;
  options.vocab_size = 100;
  EXPECT_THAT(std::string(TrainBpe("x", options).status().message()), HasSubstr("below the 256"));
  options.vocab_size = 300;
  EXPECT_THAT(std::string(TrainBpe("ok \xC3", options).status().message()),
              HasSubstr("not valid UTF-8 at byte 3"));
  options.pattern = "(?=x)";
  EXPECT_FALSE(TrainBpe("x", options).ok());
}

// What it writes reads back as the same ranks, in both formats; and the trained
// vocabulary encodes and decodes.
TEST(TrainerTest, FilesReadBack) {
  TrainerOptions options;
  options.vocab_size = 500;
  const std::string text = Corpus();
  const Ranks ranks = *TrainBpe(text, options);
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(WriteTiktokenRanks(ranks, dir + "/t.tiktoken").ok());
  EXPECT_EQ(*LoadTiktokenRanks(dir + "/t.tiktoken"), ranks);
  ASSERT_TRUE(WriteGpt2Files(ranks, dir + "/encoder.json", dir + "/vocab.bpe").ok());
  absl::flat_hash_map<std::string, Rank> specials;
  EXPECT_EQ(*LoadGpt2Ranks(dir + "/encoder.json", dir + "/vocab.bpe", &specials), ranks);
  EXPECT_EQ(specials, (absl::flat_hash_map<std::string, Rank>{{"<|endoftext|>", 500}}));
  const Encoding e = *Encoding::Create("trained", kGpt2Pattern, ranks, specials);
  const std::vector<Rank> ids = *e.EncodeOrdinary(text);
  EXPECT_LT(ids.size(), text.size() / 2);
  EXPECT_EQ(*e.DecodeBytes(ids), text);
}

// GPT-2's own vocab.bpe is what WriteGpt2Files derives from its ranks alone, byte for
// byte: each token's merge is the one BPE with the lower ranks makes.
TEST(TrainerTest, RewritesGpt2sVocabBpeExactly) {
  const Ranks ranks = *LoadTiktokenRanks("downloads/tokenizer/r50k_base.tiktoken");
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(WriteGpt2Files(ranks, dir + "/encoder.json", dir + "/vocab.bpe").ok());
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_TRUE(read(dir + "/vocab.bpe") == read("downloads/tokenizer/vocab.bpe"));
  EXPECT_EQ(nlohmann::json::parse(read(dir + "/encoder.json")),
            nlohmann::json::parse(read("downloads/tokenizer/encoder.json")));
}

TEST(TrainerTest, Gpt2FilesNeedGpt2sByteOrder) {
  Ranks ranks;
  for (int b = 0; b < 256; ++b)
    ranks.emplace(std::string(1, static_cast<char>(b)), b);  // byte order
  const absl::Status status =
      WriteGpt2Files(ranks, ::testing::TempDir() + "/e.json", ::testing::TempDir() + "/v.bpe");
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 0 is not byte 33"));
}

}  // namespace
}  // namespace ember::tokenizer
