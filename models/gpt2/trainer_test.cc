#include "models/gpt2/trainer.h"

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "data/shards.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/cuda.h"
#include "tensor/storage.h"

namespace ember::models::gpt2 {
namespace {

using ::testing::HasSubstr;

GPTConfig Small() {
  GPTConfig c;
  c.vocab_size = 64, c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 32, c.dropout = 0.1;
  return c;
}

data::TokenShard ShardOf(const std::string& name, const std::vector<uint16_t>& tokens) {
  const std::string path = ::testing::TempDir() + "/" + name;
  EXPECT_TRUE(data::WriteTokenShard(path, tokens).ok());
  return *data::TokenShard::Open(path);
}

// A learnable stream: a repeating 10-token phrase with one noisy token in five.
std::vector<uint16_t> Stream(int64_t n) {
  std::vector<uint16_t> tokens;
  for (int64_t i = 0; i < n; ++i)
    tokens.push_back(static_cast<uint16_t>(i % 5 == 4 ? (i * 37) % 64 : (i % 10) * 3));
  return tokens;
}

data::TokenShard Shard(const std::string& name, int64_t n) { return ShardOf(name, Stream(n)); }

TrainOptions Options() {
  TrainOptions o;
  o.batch_size = 4, o.seq_len = 16, o.grad_accum = 2, o.steps = 6, o.warmup_steps = 2;
  o.lr = 3e-3, o.min_lr = 3e-4;
  return o;
}

std::vector<std::vector<float>> Weights(Trainer& t) {
  std::vector<std::vector<float>> w;
  for (const Tensor& p : t.model().Parameters()) w.push_back(p.ToVector<float>());
  return w;
}

// The same step on a GPU: the model, its gradients and AdamW's state on cuda:0, the
// batches moved there; the loss within 1e-5 relative and every gradient within 1e-4
// of the CPU's (cuBLAS and the GPU's reductions sum in other orders), and after two
// steps a third takes all its memory from the device cache.
TEST(TrainerTest, ACudaStepMatchesTheCpuStep) {
  if (!cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here";
  const data::TokenShard shard = Shard("cuda.bin", 4096);
  TrainOptions on_gpu = Options();
  on_gpu.device = Device::Cuda(0);
  auto cpu = *Trainer::Create(Small(), Options(), {&shard}, nullptr);
  auto gpu = *Trainer::Create(Small(), on_gpu, {&shard}, nullptr);
  for (const Tensor& p : gpu->model().Parameters()) ASSERT_EQ(p.device(), Device::Cuda(0));
  const StepResult a = cpu->Step(), b = gpu->Step();
  EXPECT_NEAR(b.loss, a.loss, 1e-5 * std::fabs(a.loss));
  EXPECT_NEAR(b.grad_norm, a.grad_norm, 1e-4 * a.grad_norm);
  const auto named_cpu = cpu->model().NamedParameters(), named_gpu = gpu->model().NamedParameters();
  for (size_t i = 0; i < named_cpu.size(); ++i) {
    const std::vector<float> want = autograd::Grad(named_cpu[i].second).ToVector<float>();
    const std::vector<float> got = autograd::Grad(named_gpu[i].second).ToVector<float>();
    ASSERT_EQ(got.size(), want.size());
    float scale = 0;
    for (float w : want) scale = std::max(scale, std::fabs(w));
    for (size_t j = 0; j < want.size(); ++j) {
      ASSERT_NEAR(got[j], want[j], 1e-4 * scale) << named_cpu[i].first << "[" << j << "]";
    }
  }
  gpu->Step();
  const int64_t fresh = cuda::GetMemoryStats(0).fresh_allocation_count;
  gpu->Step();
  EXPECT_EQ(cuda::GetMemoryStats(0).fresh_allocation_count, fresh);
}

// Memory for a step is planned: after the first steps, every tensor a step makes
// comes from the allocator's cache (the same sizes every step), none from the system.
TEST(TrainerTest, ASteadyStepAllocatesNothingNew) {
  if (CpuAllocator::kCacheMaxBytes == 0) GTEST_SKIP() << "no cache under AddressSanitizer";
  const data::TokenShard shard = Shard("steady.bin", 4096);
  auto t = *Trainer::Create(Small(), Options(), {&shard}, nullptr);
  t->Step();
  t->Step();
  const int64_t fresh = GetCpuAllocator().fresh_allocation_count();
  for (int step = 0; step < 3; ++step) t->Step();
  EXPECT_EQ(GetCpuAllocator().fresh_allocation_count(), fresh);
}

// Two shards in the sequential order are read as llm.c reads them: the first's batches,
// then the second's. Cut from one stream so that batch k of the whole equals batch k of
// the pair (the second starts at the first's last target), the runs are identical.
TEST(TrainerTest, SequentialShardsFollowOneAnother) {
  TrainOptions options = Options();
  options.sequential = true;
  options.grad_accum = 1;
  const int64_t bt = options.batch_size * options.seq_len;
  const std::vector<uint16_t> all = Stream(3 * bt + 1);
  const data::TokenShard whole = ShardOf("whole.bin", all);
  const data::TokenShard first = ShardOf("first.bin", {all.begin(), all.begin() + 2 * bt + 1});
  const data::TokenShard second = ShardOf("second.bin", {all.begin() + 2 * bt, all.end()});
  auto one = *Trainer::Create(Small(), options, {&whole}, nullptr);
  auto two = *Trainer::Create(Small(), options, {&first, &second}, nullptr);
  for (int step = 0; step < 5; ++step) {  // 3 batches in all, then the first shard again
    EXPECT_EQ(one->Step().loss, two->Step().loss) << step;
  }
  // In the random order both shards are drawn from.
  options.sequential = false;
  auto mixed = *Trainer::Create(Small(), options, {&first, &second}, nullptr);
  EXPECT_TRUE(std::isfinite(mixed->Step().loss));
}

// Stopping after 3 steps, saving, and resuming gives the same losses and the same
// weights, to the bit, as 6 steps straight: optimizer state, schedule position, data
// order and dropout's random numbers all come back.
TEST(TrainerTest, ResumesBitForBit) {
  const data::TokenShard train = Shard("train.bin", 4000), val = Shard("val.bin", 500);
  for (const bool sequential : {false, true}) {
    TrainOptions options = Options();
    options.sequential = sequential;
    auto straight = *Trainer::Create(Small(), options, {&train}, &val);
    std::vector<double> losses;
    for (int i = 0; i < 6; ++i) losses.push_back(straight->Step().loss);

    auto first = *Trainer::Create(Small(), options, {&train}, &val);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(first->Step().loss, losses[i]);
    const std::string path = ::testing::TempDir() + "/ckpt.safetensors";
    ASSERT_TRUE(first->SaveCheckpoint(path).ok());
    auto resumed = *Trainer::Create(GPTConfig(), options, {&train}, &val, path, /*resume=*/true);
    EXPECT_EQ(resumed->step(), 3);
    EXPECT_EQ(resumed->gpt()->config().n_embd, 32);  // the checkpoint's config wins
    for (int i = 3; i < 6; ++i) EXPECT_EQ(resumed->Step().loss, losses[i]) << "step " << i;
    EXPECT_EQ(Weights(*resumed), Weights(*straight)) << "sequential=" << sequential;

    // Without resume: the weights only, from step 0.
    auto tuned = *Trainer::Create(GPTConfig(), options, {&train}, &val, path, /*resume=*/false);
    EXPECT_EQ(tuned->step(), 0);
    EXPECT_EQ(Weights(*tuned), Weights(*first));
  }
}

TEST(TrainerTest, LearnsThePattern) {
  const data::TokenShard train = Shard("train2.bin", 4000), val = Shard("val2.bin", 500);
  TrainOptions options = Options();
  options.steps = 60;
  auto trainer = *Trainer::Create(Small(), options, {&train}, &val);
  const double before = trainer->ValidationLoss();
  EXPECT_NEAR(before, std::log(64.0), 0.5);  // about uniform at the start
  for (int i = 0; i < 60; ++i) trainer->Step();
  EXPECT_LT(trainer->ValidationLoss(), before - 1.5);
}

// 200 steps under bf16 autocast stay within 1% of f32's losses (the last 20 steps'
// mean, and validation), with the parameters and AdamW's moments f32 throughout.
TEST(TrainerTest, Bf16AutocastFollowsF32) {
  const data::TokenShard train = Shard("train_bf16.bin", 20000), val = Shard("val_bf16.bin", 500);
  TrainOptions options = Options();
  options.steps = 200, options.grad_accum = 1, options.warmup_steps = 10;
  double last[2] = {0, 0}, validation[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    options.dtype = run == 0 ? DType::kF32 : DType::kBF16;
    auto trainer = *Trainer::Create(Small(), options, {&train}, &val);
    for (int i = 0; i < 200; ++i) {
      const double loss = trainer->Step().loss;
      if (i >= 180) last[run] += loss / 20;
    }
    validation[run] = trainer->ValidationLoss();
    for (const Tensor& p : trainer->model().Parameters()) ASSERT_EQ(p.dtype(), DType::kF32);
  }
  std::cout << "200 steps, mean of the last 20 losses: f32 " << last[0] << ", bf16 " << last[1]
            << "; validation loss: f32 " << validation[0] << ", bf16 " << validation[1] << "\n";
  EXPECT_NEAR(last[1], last[0], 0.01 * last[0]);
  EXPECT_NEAR(validation[1], validation[0], 0.01 * validation[0]);
  EXPECT_NE(last[1], last[0]) << "the bf16 run computed in f32";
}

TEST(TrainerTest, BadSetups) {
  const data::TokenShard train = Shard("train3.bin", 4000);
  TrainOptions options = Options();
  options.seq_len = 32;
  EXPECT_THAT(std::string(Trainer::Create(Small(), options, {&train}, nullptr).status().message()),
              HasSubstr("seq_len 32 is longer than the model's block_size 16"));
  GPTConfig tiny_vocab = Small();
  tiny_vocab.vocab_size = 10;
  EXPECT_THAT(
      std::string(Trainer::Create(tiny_vocab, Options(), {&train}, nullptr).status().message()),
      HasSubstr("train3.bin: at byte 1032: token 20 (token 4) is beyond the vocabulary of 10"));
  const data::TokenShard little = Shard("little.bin", 20);
  EXPECT_THAT(
      std::string(Trainer::Create(Small(), Options(), {&little}, nullptr).status().message()),
      HasSubstr("holds 20 tokens, fewer than one batch of 4 x 16 needs"));
  EXPECT_FALSE(
      Trainer::Create(Small(), Options(), {&train}, nullptr, "/nonexistent.safetensors").ok());
  options = Options();
  options.dtype = DType::kF16;
  EXPECT_THAT(std::string(Trainer::Create(Small(), options, {&train}, nullptr).status().message()),
              HasSubstr("Trainer: dtype f16 is not supported (f32 or bf16)"));
  options = Options();
  options.warmup_steps = 6;
  EXPECT_THAT(std::string(Trainer::Create(Small(), options, {&train}, nullptr).status().message()),
              HasSubstr("--warmup_steps=6: expected at least 0 and below --steps=6"));
}

}  // namespace
}  // namespace ember::models::gpt2
