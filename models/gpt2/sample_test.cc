#include "models/gpt2/sample.h"

#include <cmath>
#include <map>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {
namespace {

GPTConfig Tiny() {
  GPTConfig c = GPTConfig::Preset("tiny").value();  // 2 layers, 4 heads, 64 wide, 32 positions
  c.vocab_size = 300;
  return c;
}

std::vector<int64_t> Sequence(int64_t n) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back((i * 37 + 11) % 300);
  return ids;
}

TEST(SampleTest, CachedLogitsEqualTheFullForwardPass) {
  Generator gen(0);
  GPT model(Tiny(), gen);
  model.Eval();
  autograd::NoGradGuard no_grad;
  const std::vector<int64_t> ids = Sequence(32);
  const Tensor full = model(FromVector(ids, {1, 32}));
  // The prompt's 5 positions at once, then one at a time, to the end of the window.
  KVCache cache = model.NewCache();
  int64_t at = 0;
  for (const int64_t piece : {5, 1, 1, 7, 1, 17}) {
    const std::vector<int64_t> chunk(ids.begin() + at, ids.begin() + at + piece);
    const Tensor part = model.Forward(FromVector(chunk, {1, piece}), &cache);
    ASSERT_EQ(cache.length(), at + piece);
    for (int64_t t = 0; t < piece; ++t) {
      for (int64_t v = 0; v < 300; v += 13) {
        ASSERT_NEAR(part.at({0, t, v}), full.at({0, at + t, v}), 1e-5) << "position " << at + t;
      }
    }
    at += piece;
  }
  EXPECT_THROW(model.Forward(FromVector(std::vector<int64_t>{1}, {1, 1}), &cache),
               Error);  // the window is full
}

// A server's batch: three sequences at different lengths (prompts of 3, 9 and 1 tokens,
// each run alone into its own cache), then decoded together a token at a time, each
// row's logits those of its sequence's whole forward pass.
TEST(SampleTest, SequencesAtDifferentLengthsDecodeTogether) {
  Generator gen(2);
  GPT model(Tiny(), gen);
  model.Eval();
  autograd::NoGradGuard no_grad;
  const std::vector<int64_t> lengths = {3, 9, 1};
  std::vector<std::vector<int64_t>> sequences;
  std::vector<KVCache> caches;
  for (size_t s = 0; s < lengths.size(); ++s) {
    std::vector<int64_t> ids = Sequence(lengths[s] + 6);
    for (int64_t& id : ids) id = (id + 17 * static_cast<int64_t>(s)) % 300;
    sequences.push_back(ids);
    caches.push_back(model.NewCache());
    model.Forward(
        FromVector(std::vector<int64_t>(ids.begin(), ids.begin() + lengths[s]), {1, lengths[s]}),
        &caches.back());
  }
  std::vector<KVCache*> batch;
  for (KVCache& cache : caches) batch.push_back(&cache);
  for (int64_t step = 0; step < 6; ++step) {
    std::vector<int64_t> next;
    for (size_t s = 0; s < sequences.size(); ++s) next.push_back(sequences[s][lengths[s] + step]);
    const Tensor logits = model.Forward(FromVector(next, {3, 1}), batch);
    ASSERT_EQ(logits.shape(), (Shape{3, 1, 300}));
    for (size_t s = 0; s < sequences.size(); ++s) {
      const int64_t at = lengths[s] + step;
      ASSERT_EQ(caches[s].length(), at + 1);
      const std::vector<int64_t> whole(sequences[s].begin(), sequences[s].begin() + at + 1);
      const Tensor full = model(FromVector(whole, {1, at + 1}));
      for (int64_t v = 0; v < 300; v += 7) {
        ASSERT_NEAR(logits.at({static_cast<int64_t>(s), 0, v}), full.at({0, at, v}), 1e-5)
            << "sequence " << s << ", position " << at;
      }
    }
  }
  EXPECT_THROW(model.Forward(FromVector(std::vector<int64_t>{1, 2}, {2, 1}), batch), Error);
}

TEST(SampleTest, TheCacheChangesNoToken) {
  Generator init(1);
  GPT model(Tiny(), init);
  for (const SamplingOptions options :
       {SamplingOptions{1.0, 0, 1.0}, SamplingOptions{0.8, 20, 0.9}, SamplingOptions{0, 0, 1}}) {
    Generator a(7), b(7);
    const std::vector<int64_t> cached = Generate(model, {3, 1, 4, 1}, 28, options, a, -1, true);
    const std::vector<int64_t> uncached = Generate(model, {3, 1, 4, 1}, 28, options, b, -1, false);
    EXPECT_EQ(cached.size(), 32u);
    EXPECT_EQ(cached, uncached);
  }
  EXPECT_TRUE(model.is_training());  // restored
}

TEST(SampleTest, PastTheWindowTheCacheRestartsFromTheLastHalf) {
  Generator init(2);
  GPT model(Tiny(), init);
  Generator gen(3);
  Sampler sampler(model, SamplingOptions{1.0, 0, 1.0}, gen);
  sampler.Append(Sequence(40));  // longer than the 32-token window
  for (int i = 0; i < 30; ++i) {
    const int64_t t = sampler.Next();
    ASSERT_TRUE(t >= 0 && t < 300);
  }
  EXPECT_EQ(sampler.tokens().size(), 70u);
  EXPECT_THROW(sampler.Append({300}), Error);
  sampler.Reset({5});
  EXPECT_EQ(sampler.tokens(), std::vector<int64_t>{5});
}

TEST(SampleTest, TopKTopPAndTemperature) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(3.0f),
                                     std::log(4.0f)};  // p = 1, 2, 3, 4 / 10
  Generator gen(4);
  auto counts = [&](const SamplingOptions& o) {
    std::map<int64_t, int> n;
    for (int i = 0; i < 4000; ++i) ++n[SampleToken(logits, o, gen)];
    return n;
  };
  EXPECT_EQ(SampleToken(logits, SamplingOptions{0, 0, 1}, gen), 3);  // greedy
  // Greedy ties go to the first largest; the largest first is found too.
  EXPECT_EQ(SampleToken({1.0f, 5.0f, 5.0f, 2.0f}, SamplingOptions{0, 0, 1}, gen), 1);
  EXPECT_EQ(SampleToken({9.0f, 5.0f, 5.0f, 2.0f}, SamplingOptions{0, 0, 1}, gen), 0);
  auto all = counts({1, 0, 1});
  EXPECT_NEAR(all[0], 400, 80);
  EXPECT_NEAR(all[3], 1600, 120);
  auto top2 = counts({1, 2, 1});  // 3 : 4 between ids 2 and 3
  EXPECT_EQ(top2.count(0) + top2.count(1), 0u);
  EXPECT_NEAR(top2[3], 4000 * 4 / 7.0, 130);
  auto nucleus = counts({1, 0, 0.6});  // 0.4 + 0.3 reaches 0.6: ids 3 and 2
  EXPECT_EQ(nucleus.count(0) + nucleus.count(1), 0u);
  auto cold = counts({0.25, 0, 1});  // p^4: 256 / (1 + 16 + 81 + 256) = 72%
  EXPECT_NEAR(cold[3], 4000 * 256 / 354.0, 130);
}

}  // namespace
}  // namespace ember::models::gpt2
