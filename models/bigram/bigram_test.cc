#include "models/bigram/bigram.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "models/common/names.h"
#include "nlohmann/json.hpp"
#include "optim/optimizer.h"
#include "tensor/creation.h"

namespace ember::models::bigram {
namespace {

namespace ag = ::ember::autograd;

TEST(BigramTest, CountsByHand) {
  // Pairs (a -> b): 0->1 twice, 0->2 once, 1->0 once; vocabulary 3; add-one smoothing.
  data::CharExamples e{FromVector(std::vector<int64_t>{0, 0, 0, 1}, {4, 1}),
                       FromVector(std::vector<int64_t>{1, 1, 2, 0})};
  const CountingBigram model = CountingBigram::Fit(e, 3, 1);
  // Row 0: counts 1 + {0, 2, 1} = {1, 3, 2} of 6; row 1: {2, 1, 1} of 4; row 2: uniform.
  const std::vector<double> expected = {1 / 6.0, 3 / 6.0, 2 / 6.0, 2 / 4.0, 1 / 4.0,
                                        1 / 4.0, 1 / 3.0, 1 / 3.0, 1 / 3.0};
  const std::vector<float> got = model.log_probs().ToVector<float>();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], std::log(expected[i]), 1e-6) << i;
  // NLL of the four pairs: -(2 log 3/6 + log 2/6 + log 2/4) / 4.
  EXPECT_NEAR(MeanNll(model.Logits(e.x), e.y),
              -(2 * std::log(0.5) + std::log(2 / 6.0) + std::log(0.5)) / 4, 1e-6);
  // Without smoothing an unseen pair is impossible, and a row never seen is uniform.
  const CountingBigram raw = CountingBigram::Fit(e, 3, 0);
  EXPECT_EQ(raw.log_probs().at({1, 2}), -INFINITY);
  EXPECT_NEAR(raw.log_probs().at({2, 2}), -std::log(3.0), 1e-6);
}

// The neural bigram trained by gradient descent reaches the counting model's loss: both
// are the maximum-likelihood bigram (up to the smoothing and the regulariser).
TEST(BigramTest, GradientDescentFindsTheCounts) {
  Generator gen(1);
  std::vector<int64_t> a, b;
  for (int i = 0; i < 600; ++i) {  // a skewed but learnable table over 5 symbols
    a.push_back(i % 5);
    b.push_back((i % 5 + (i % 7 == 0 ? 2 : 1)) % 5);
  }
  data::CharExamples e{FromVector(a, {600, 1}), FromVector(b)};
  const double counted = MeanNll(CountingBigram::Fit(e, 5, 0.01).Logits(e.x), e.y);
  auto model = std::make_shared<NeuralBigram>(5, gen);
  EXPECT_EQ(model->NamedParameters().front().first, "weight");
  auto sgd = optim::Sgd({{model->Parameters(), 10, 0}});
  const double first = MeanNll((*model)(e.x), e.y);
  for (int step = 0; step < 300; ++step) {
    sgd->ZeroGrad();
    ag::Backward(model->Loss(e, 0));
    sgd->Step();
  }
  const double trained = MeanNll((*model)(e.x), e.y);
  EXPECT_GT(first, counted + 0.5);
  EXPECT_NEAR(trained, counted, 0.02);
}

// On the real names, the counting model's losses equal PyTorch's (the same split and
// counts: tools/reference/makemore_torch.py --model=counting, testdata/torch_counting.json).
TEST(BigramTest, NamesLossesEqualPyTorchs) {
  absl::StatusOr<NameSplits> names = LoadNameSplits(data::kNamesDir, 1);
  if (!names.ok()) GTEST_SKIP() << "the names are not downloaded (./setup.sh): " << names.status();
  std::ifstream file("models/bigram/testdata/torch_counting.json");
  const nlohmann::json torch = nlohmann::json::parse(file);
  EXPECT_EQ(names->train.names.size(), torch["names"]["train"].get<size_t>());
  EXPECT_EQ(names->val.names.size(), torch["names"]["val"].get<size_t>());
  std::string vocab;
  for (const std::string& c : names->vocab.chars()) vocab += c;
  EXPECT_EQ(vocab, torch["vocab"].get<std::string>());
  const CountingBigram model =
      CountingBigram::Fit(names->train.examples, static_cast<int64_t>(names->vocab.size()));
  for (const auto& [split, part] :
       {std::pair<std::string, const NameSplit*>{"train", &names->train},
        {"val", &names->val},
        {"test", &names->test}}) {
    const data::CharExamples& examples = part->examples;
    EXPECT_NEAR(MeanNll(model.Logits(examples.x), examples.y), torch[split + "_loss"].get<double>(),
                2e-6)
        << split;
  }
}

}  // namespace
}  // namespace ember::models::bigram
