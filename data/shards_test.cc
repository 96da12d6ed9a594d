#include "data/shards.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/kill_testing.h"
#include "data/windows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/random.h"

namespace ember::data {
namespace {

using ::testing::HasSubstr;

std::string Temp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string Message(const std::string& path, int64_t vocab = 0) {
  return std::string(TokenShard::Open(path, vocab).status().message());
}

TEST(ShardsTest, LlmcLayoutByteForByte) {
  const std::vector<uint16_t> tokens = {50256, 0, 1, 65535};
  ASSERT_TRUE(WriteTokenShard(Temp("a.bin"), tokens).ok());
  const std::string bytes = ReadAll(Temp("a.bin"));
  ASSERT_EQ(bytes.size(), 1024u + 8);
  int32_t header[256];
  std::memcpy(header, bytes.data(), 1024);
  EXPECT_EQ(header[0], 20240520);
  EXPECT_EQ(header[1], 1);
  EXPECT_EQ(header[2], 4);
  for (int i = 3; i < 256; ++i) EXPECT_EQ(header[i], 0);
  // Little-endian uint16: 50256 = 0xC450.
  EXPECT_EQ(bytes.substr(1024, 2), std::string("\x50\xC4", 2));
  const TokenShard shard = *TokenShard::Open(Temp("a.bin"));
  EXPECT_EQ(std::vector<uint16_t>(shard.tokens(), shard.tokens() + shard.size()), tokens);
}

// nanoGPT's train.bin: the uint16 tokens alone, as numpy's tofile writes them.
TEST(ShardsTest, HeaderlessTokensAreReadAsNanoGptWritesThem) {
  const std::vector<uint16_t> tokens = {50256, 15496, 11, 995, 0, 13};
  WriteBytes(Temp("nanogpt.bin"),
             std::string(reinterpret_cast<const char*>(tokens.data()), 2 * tokens.size()));
  const absl::StatusOr<TokenShard> shard = TokenShard::Open(Temp("nanogpt.bin"), 50257);
  ASSERT_TRUE(shard.ok()) << shard.status();
  EXPECT_TRUE(shard->headerless());
  EXPECT_EQ(std::vector<uint16_t>(shard->tokens(), shard->tokens() + shard->size()), tokens);
  EXPECT_THAT(Message(Temp("nanogpt.bin"), 50000),
              HasSubstr("nanogpt.bin: at byte 0: token 50256 (token 0) is beyond the vocabulary"));
  ASSERT_TRUE(WriteTokenShard(Temp("llmc.bin"), tokens).ok());
  EXPECT_FALSE(TokenShard::Open(Temp("llmc.bin"))->headerless());
}

TEST(ShardsTest, MalformedShardsNameTheOffset) {
  ASSERT_TRUE(WriteTokenShard(Temp("good.bin"), std::vector<uint16_t>{1, 2, 3}).ok());
  const std::string good = ReadAll(Temp("good.bin"));
  WriteBytes(Temp("short.bin"), good.substr(0, 100));
  EXPECT_THAT(Message(Temp("short.bin")),
              HasSubstr("short.bin: at byte 100: truncated: the file has 100 bytes"));
  // Without the magic a file is headerless tokens: a broken header reads as tokens
  // (the vocabulary check then finds them, as any reader with a vocabulary does).
  std::string magic = good;
  magic[0] = 1;
  WriteBytes(Temp("magic.bin"), magic);
  EXPECT_TRUE(TokenShard::Open(Temp("magic.bin"))->headerless());
  EXPECT_THAT(Message(Temp("magic.bin"), 50257),
              HasSubstr("at byte 0: token 55297 (token 0) is beyond the vocabulary of 50257"));
  WriteBytes(Temp("odd.bin"), std::string("\x01\x00\x02", 3));
  EXPECT_THAT(Message(Temp("odd.bin")),
              HasSubstr("odd.bin: at byte 2: neither an llm.c shard (no magic number 20240520 at "
                        "its start) nor headerless uint16 tokens (3 bytes, an odd number)"));
  WriteBytes(Temp("text.bin"), "Hello, world.\n");
  EXPECT_THAT(Message(Temp("text.bin")),
              HasSubstr("text.bin: at byte 0: text, not tokens: tokenize it first"));
  WriteBytes(Temp("empty.bin"), "");
  EXPECT_THAT(Message(Temp("empty.bin")), HasSubstr("at byte 0: empty"));
  std::string version = good;
  version[4] = 2;
  WriteBytes(Temp("version.bin"), version);
  EXPECT_THAT(Message(Temp("version.bin")), HasSubstr("at byte 4: version 2, expected 1"));
  WriteBytes(Temp("cut.bin"), good.substr(0, good.size() - 1));
  EXPECT_THAT(
      Message(Temp("cut.bin")),
      HasSubstr(
          "at byte 8: the header counts 3 tokens, but 5 bytes follow it (2 tokens and a half)"));
  std::string promise = good;  // a header that promises 2^31 - 1 tokens (4 GB) of a 1 kB file
  const int32_t many = INT32_MAX;
  std::memcpy(&promise[8], &many, 4);
  WriteBytes(Temp("promise.bin"), promise);
  EXPECT_THAT(Message(Temp("promise.bin")),
              HasSubstr("at byte 8: the header counts 2147483647 tokens, but 6 bytes"));
  WriteBytes(Temp("long.bin"), good + std::string(2, '\0'));
  EXPECT_THAT(Message(Temp("long.bin")),
              HasSubstr("the header counts 3 tokens, but 8 bytes follow it"));
  EXPECT_THAT(Message(Temp("good.bin"), 3),
              HasSubstr("at byte 1028: token 3 (token 2) is beyond the vocabulary of 3"));
  EXPECT_TRUE(TokenShard::Open(Temp("good.bin"), 4).ok());
  EXPECT_EQ(TokenShard::Open(Temp("none.bin")).status().code(), absl::StatusCode::kNotFound);
}

TEST(WindowsTest, RandomWindowsAreShiftedPairsInRange) {
  std::vector<uint16_t> tokens(100);
  for (int i = 0; i < 100; ++i) tokens[i] = static_cast<uint16_t>(i);
  ASSERT_TRUE(WriteTokenShard(Temp("seq.bin"), tokens).ok());
  const TokenShard shard = *TokenShard::Open(Temp("seq.bin"));
  Generator gen(5);
  std::set<int64_t> starts;
  for (int trial = 0; trial < 200; ++trial) {
    const Batch b = *RandomWindows(shard, 4, 8, gen);
    const std::vector<int64_t> x = b.x.ToVector<int64_t>(), y = b.y.ToVector<int64_t>();
    for (int r = 0; r < 4; ++r) {
      starts.insert(x[r * 8]);
      for (int t = 0; t < 8; ++t) {
        EXPECT_EQ(x[r * 8 + t], x[r * 8] + t);  // consecutive tokens
        EXPECT_EQ(y[r * 8 + t], x[r * 8 + t] + 1);
      }
    }
  }
  // Every start in [0, 100 - 8 - 1] is drawn, none past it.
  EXPECT_EQ(*starts.begin(), 0);
  EXPECT_EQ(*starts.rbegin(), 91);
  EXPECT_EQ(starts.size(), 92u);
  Generator a(9), b(9);
  EXPECT_EQ(RandomWindows(shard, 2, 5, a)->x.ToVector<int64_t>(),
            RandomWindows(shard, 2, 5, b)->x.ToVector<int64_t>());
  EXPECT_THAT(std::string(RandomWindows(shard, 1, 100, a).status().message()),
              HasSubstr("holds 100 tokens, fewer than a window of 101"));
}

// llm.c's sequential batches: batch k of B x T reads tokens [k·B·T, (k+1)·B·T + 1).
TEST(WindowsTest, ConsecutiveWindowsAsLlmc) {
  std::vector<uint16_t> tokens(50);
  for (int i = 0; i < 50; ++i) tokens[i] = static_cast<uint16_t>(1000 + i);
  ASSERT_TRUE(WriteTokenShard(Temp("llmc.bin"), tokens).ok());
  const TokenShard shard = *TokenShard::Open(Temp("llmc.bin"));
  EXPECT_EQ(WindowCount(shard, 4), 12);  // (50 - 1) / 4
  const BatchFn fn = WindowBatches(shard, 4);
  const Batch b = fn(std::vector<int64_t>{2, 3});  // batch 1 of B = 2: tokens [8, 17)
  EXPECT_EQ(b.x.ToVector<int64_t>(),
            (std::vector<int64_t>{1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015}));
  EXPECT_EQ(b.y.ToVector<int64_t>(),
            (std::vector<int64_t>{1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016}));
  const Batch same = SequentialBatch(shard, 1, 2, 4);
  EXPECT_EQ(same.x.ToVector<int64_t>(), b.x.ToVector<int64_t>());
  EXPECT_EQ(same.y.ToVector<int64_t>(), b.y.ToVector<int64_t>());
}

// SIGKILLed at 20 random moments while it writes one 8 MB shard after another, the
// writer always leaves a whole shard: version v's token i is (v % 4 + i) mod 65536, so a
// torn or mixed file would show. The tokens are made before the fork.
TEST(ShardsTest, AWriterKilledMidWriteAlwaysLeavesAWholeShard) {
  const std::string dir = Temp("killed");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/train_000000.bin";
  constexpr size_t kTokens = 4 << 20;
  std::vector<std::vector<uint16_t>> versions(4, std::vector<uint16_t>(kTokens));
  for (size_t v = 0; v < versions.size(); ++v) {
    for (size_t i = 0; i < kTokens; ++i) versions[v][i] = static_cast<uint16_t>(v + i);
  }
  auto write = [&](int64_t version) { return WriteTokenShard(path, versions[version % 4]).ok(); };
  ASSERT_TRUE(write(0));
  int torn = 0;
  for (int kill = 0; kill < 20; ++kill) {
    ASSERT_TRUE(WriteUntilKilled(write, kill + 1, 1, 100, kill));
    absl::StatusOr<TokenShard> shard = TokenShard::Open(path);
    ASSERT_TRUE(shard.ok()) << "after kill " << kill << ": " << shard.status();
    ASSERT_EQ(shard->size(), static_cast<int64_t>(kTokens));
    const uint16_t first = shard->tokens()[0];
    for (size_t i = 0; i < kTokens; ++i) {
      ASSERT_EQ(shard->tokens()[i], static_cast<uint16_t>(first + i))
          << "after kill " << kill << ", token " << i;
    }
    torn += RemoveTornTemporaries(dir);
  }
  EXPECT_GE(torn, 1) << "no kill landed inside a write; the test proved nothing";
}

}  // namespace
}  // namespace ember::data
