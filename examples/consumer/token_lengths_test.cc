#include "token_lengths.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

std::string Repeated(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

TEST(TokenLengthsTest, TheTokensCoverTheTextByteForByte) {
  const std::string text = Repeated("the cat sat on the mat. ", 40);
  const absl::StatusOr<ember::Tensor> lengths = TokenLengths(text, 300);
  ASSERT_TRUE(lengths.ok()) << lengths.status();
  const std::vector<int64_t> values = lengths->ToVector<int64_t>();
  EXPECT_EQ(std::accumulate(values.begin(), values.end(), int64_t{0}),
            static_cast<int64_t>(text.size()));
  // Learnt merges: " the", " cat", ... are single tokens, so far fewer tokens than bytes.
  EXPECT_LT(lengths->numel(), static_cast<int64_t>(text.size()) / 3);
}

TEST(TokenLengthsTest, SingleBytesOnlyGiveOneByteTokens) {
  const absl::StatusOr<ember::Tensor> lengths = TokenLengths("abc abc", 256);
  ASSERT_TRUE(lengths.ok()) << lengths.status();
  EXPECT_EQ(lengths->ToVector<int64_t>(), (std::vector<int64_t>(7, 1)));
}

TEST(TokenLengthsTest, ARefusedVocabularyIsAnError) {
  const absl::StatusOr<ember::Tensor> lengths = TokenLengths("abc", 10);
  EXPECT_EQ(lengths.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
