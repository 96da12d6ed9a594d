#include "models/common/names.h"

#include <cstdlib>
#include <fstream>

#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::models {
namespace {

TEST(NamesTest, SplitsByPositionInTheSortedNames) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ofstream(dir + "/female.txt") << "Emma\nAva\nMia\nZoe\nIvy\nAda\n";
  std::ofstream(dir + "/male.txt") << "Leo\nMax\nEli\nOwen\nAva\nJo-Jo\n";
  const NameSplits splits = LoadNameSplits(dir, 2).value();
  // Sorted, deduplicated: ada ava eli emma ivy jo-jo leo max mia owen zoe (11 names).
  EXPECT_EQ(splits.train.names, (std::vector<std::string>{"ada", "ava", "eli", "emma", "ivy",
                                                          "jo-jo", "leo", "max", "zoe"}));
  EXPECT_EQ(splits.val.names, (std::vector<std::string>{"mia"}));
  EXPECT_EQ(splits.test.names, (std::vector<std::string>{"owen"}));
  EXPECT_EQ(splits.vocab.chars().front(), ".");
  EXPECT_EQ(splits.vocab.chars()[1], "-");
  EXPECT_EQ(splits.vocab.size(), 1u + 1 + 14);  // '.', '-', and a d e i j l m n o v w x y z
  // "owen" and its closing '.': 5 examples of 2 characters of context, ". ." first.
  EXPECT_EQ(splits.test.examples.x.shape(), (Shape{5, 2}));
  EXPECT_EQ(splits.test.examples.x.ToVector<int64_t>()[1], 0);
  EXPECT_EQ(splits.test.examples.y.ToVector<int64_t>().back(), 0);
  EXPECT_FALSE(LoadNameSplits(dir + "/missing", 2).ok());
}

TEST(NamesTest, SamplingFollowsTheLogitsAndStopsAtTheDot) {
  const tokenizer::CharTokenizer vocab =
      tokenizer::CharTokenizer::FromChars({".", "a", "b"}).value();
  Generator gen(0);
  // A chain with certainty: after ". ." comes a, after ". a" b, after "a b" the end.
  auto chain = [](const Tensor& context) {
    const std::vector<int64_t> c = context.ToVector<int64_t>();
    const int64_t next = c[1] == 0 ? 1 : c[1] == 1 ? 2 : 0;
    std::vector<float> logits(3, -100.0f);
    logits[static_cast<size_t>(next)] = 100;
    return FromVector(logits, {1, 3});
  };
  EXPECT_EQ(SampleName(chain, 2, vocab, gen), "ab");
  // Never a dot: cut at max_length.
  auto never_ends = [](const Tensor&) {
    return FromVector(std::vector<float>{-100, 100, -100}, {1, 3});
  };
  EXPECT_EQ(SampleName(never_ends, 2, vocab, gen, 5), "aaaaa");
  // Uniform over a and b (never '.'): both letters appear.
  auto uniform = [](const Tensor&) { return FromVector(std::vector<float>{-100, 0, 0}, {1, 3}); };
  const std::string name = SampleName(uniform, 1, vocab, gen, 40);
  EXPECT_NE(name.find('a'), std::string::npos);
  EXPECT_NE(name.find('b'), std::string::npos);
}

}  // namespace
}  // namespace ember::models
