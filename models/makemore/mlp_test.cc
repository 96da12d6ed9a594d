#include "models/makemore/mlp.h"

#include "autograd/autograd.h"
#include "data/loader.h"
#include "gtest/gtest.h"
#include "models/common/names.h"
#include "nn/loss.h"
#include "optim/optimizer.h"
#include "tensor/creation.h"

namespace ember::models::makemore {
namespace {

namespace ag = ::ember::autograd;

TEST(MlpTest, ShapesNamesAndSizes) {
  Generator gen(0);
  Mlp model(MlpConfig{}, gen);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.NamedParameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"wte.weight", "hidden.weight", "hidden.bias",
                                             "head.weight", "head.bias"}));
  EXPECT_EQ(model.NumParameters(), 28 * 10 + (30 * 200 + 200) + (200 * 28 + 28));
  EXPECT_EQ(model(Zeros({7, 3}, DType::kI64)).shape(), (Shape{7, 28}));
  EXPECT_THROW(model(Zeros({7, 4}, DType::kI64)), Error);
}

TEST(MlpTest, LearningRateDropsTenfoldHalfway) {
  EXPECT_EQ(StepDecayLr(0.1, 0, 200000), 0.1);
  EXPECT_EQ(StepDecayLr(0.1, 99999, 200000), 0.1);
  EXPECT_DOUBLE_EQ(StepDecayLr(0.1, 100000, 200000), 0.01);
}

// A few thousand steps on the real names take the model past the bigram models' 2.42
// nats per character on the validation names.
TEST(MlpTest, LearnsNames) {
  absl::StatusOr<NameSplits> names = LoadNameSplits(data::kNamesDir, 3);
  if (!names.ok()) GTEST_SKIP() << "the names are not downloaded (./setup.sh): " << names.status();
  const data::CharExamples &train = names->train.examples, &val = names->val.examples;
  Generator gen(1);
  Mlp model(MlpConfig{}, gen);
  auto sgd = optim::Sgd({{model.Parameters(), 0.1, 0}});
  const data::BatchFn rows = data::RowBatches(train.x, train.y);
  std::vector<int64_t> index(32);
  for (int step = 0; step < 4000; ++step) {
    for (int64_t& i : index)
      i = static_cast<int64_t>(gen.NextBelow(static_cast<uint64_t>(train.y.size(0))));
    const data::Batch batch = rows(index);
    sgd->ZeroGrad();
    ag::Backward(nn::CrossEntropyLoss(model(batch.x), batch.y));
    sgd->Step();
  }
  ag::NoGradGuard no_grad;
  EXPECT_LT(nn::CrossEntropyLoss(model(val.x), val.y).item<double>(), 2.38);
}

}  // namespace
}  // namespace ember::models::makemore
