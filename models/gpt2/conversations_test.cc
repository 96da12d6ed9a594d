// Conversations for fine-tuning: the bundled school set parses into chat's template
// exactly (its tokens decode to the text chat would show), with only the bot's replies
// and the closing <|endoftext|> trained; malformed files are errors naming the line; and
// the trainer's loss over a batch of them is the mean over the bot's tokens alone (the
// users' turns are never targets).

#include "models/gpt2/conversations.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/gpt2/text_stream.h"
#include "models/gpt2/trainer.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {
namespace {

using ::testing::HasSubstr;

tokenizer::Encoding Gpt2() {
  absl::StatusOr<tokenizer::Encoding> e = LoadVocab("gpt2");
  EMBER_CHECK(e.ok(), e.status().message());
  return *std::move(e);
}

std::string Decode(const tokenizer::Encoding& e, const std::vector<int64_t>& ids) {
  return *e.Decode(std::vector<tokenizer::Rank>(ids.begin(), ids.end()));
}

std::string Temp(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConversationsTest, TheSchoolSetIsChatsTemplateWithTheRepliesTrained) {
  const tokenizer::Encoding gpt2 = Gpt2();
  const absl::StatusOr<std::vector<Conversation>> set =
      ReadConversations("models/gpt2/school.jsonl", gpt2);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->size(), 38u);
  const Conversation& first = set->front();
  EXPECT_EQ(Decode(gpt2, first.tokens),
            "<|endoftext|>User: What is the name of the school?\nBot: This is Larkspur Hill "
            "School, a day school for pupils aged 11 to 18.\n<|endoftext|>");
  std::vector<int64_t> trained;
  for (size_t i = 0; i < first.tokens.size(); ++i) {
    if (first.trained[i]) trained.push_back(first.tokens[i]);
  }
  EXPECT_EQ(Decode(gpt2, trained),
            " This is Larkspur Hill School, a day school for pupils aged 11 to 18.\n<|endoftext|>");
  // Two turns each: both replies trained, neither question.
  const Conversation& two = (*set)[35];
  trained.clear();
  for (size_t i = 0; i < two.tokens.size(); ++i) {
    if (two.trained[i]) trained.push_back(two.tokens[i]);
  }
  EXPECT_EQ(Decode(gpt2, trained),
            " Hello! I can answer questions about Larkspur Hill School.\n The head teacher is Dr. "
            "Imogen Okafor.\n<|endoftext|>");
}

TEST(ConversationsTest, MistakesNameTheLine) {
  const tokenizer::Encoding gpt2 = Gpt2();
  auto error = [&](const std::string& text) {
    return std::string(ReadConversations(Temp("bad.jsonl", text), gpt2).status().message());
  };
  const std::string ok =
      R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]})";
  EXPECT_THAT(error(ok + "\n{not json\n"), HasSubstr("bad.jsonl:2: not JSON"));
  EXPECT_THAT(error(R"([{"role": "teacher", "content": "x"}])"),
              HasSubstr(":1: turn 1: role \"teacher\" (expected system, user or assistant)"));
  EXPECT_THAT(error(R"([{"role": "assistant", "content": "x"}])"),
              HasSubstr("turn 1: a assistant turn where the user should speak"));
  EXPECT_THAT(error(R"([{"role": "user", "content": "x"}])"),
              HasSubstr(":1: no reply of the bot's to learn"));
  EXPECT_THAT(error("\n"), HasSubstr("no conversations"));
  EXPECT_EQ(ReadConversations("missing.jsonl", gpt2).status().code(), absl::StatusCode::kNotFound);
  // A system line is context, as chat's --system.
  const absl::StatusOr<std::vector<Conversation>> system = ReadConversations(
      Temp(
          "system.jsonl",
          R"([{"role": "system", "content": "You are a school's assistant."}, {"role": "user", "content": "Hi"}, {"role": "bot", "content": "Hello"}])"),
      gpt2);
  ASSERT_TRUE(system.ok()) << system.status();
  EXPECT_EQ(Decode(gpt2, system->front().tokens),
            "You are a school's assistant.\nUser: Hi\nBot: Hello\n<|endoftext|>");
  EXPECT_EQ(system->front().trained.front(), 0);
}

// The loss a step reports is the cross entropy over the bot's tokens only: computed here
// from the same model on the same conversation with every other target ignored, and
// different from the loss over every token.
TEST(ConversationsTest, TheLossIgnoresTheUsersTurns) {
  const tokenizer::Encoding gpt2 = Gpt2();
  const std::vector<Conversation> set = *ReadConversations("models/gpt2/school.jsonl", gpt2);
  TrainOptions options;
  options.batch_size = 1;
  options.seq_len = 32;
  options.steps = 2;
  options.warmup_steps = 0;
  options.sequential = true;  // the file's first conversation first
  const GPTConfig tiny = *GPTConfig::Preset("tiny");
  std::unique_ptr<Trainer> trainer = *Trainer::Create(tiny, options, {}, nullptr, "", false, &set);
  const Conversation& c = set.front();
  std::vector<int64_t> x(32), bot(32), all(32);
  for (int64_t i = 0; i < 32; ++i) {
    const bool in = i + 1 < static_cast<int64_t>(c.tokens.size());
    x[i] = i < static_cast<int64_t>(c.tokens.size()) ? c.tokens[i] : c.tokens.back();
    bot[i] = in && c.trained[i + 1] ? c.tokens[i + 1] : -100;
    all[i] = in ? c.tokens[i + 1] : -100;
  }
  double want_bot, want_all;
  {
    const autograd::NoGradGuard no_grad;
    const Tensor ids = FromVector(x, {1, 32});
    want_bot = trainer->gpt()->Loss(ids, FromVector(bot, {1, 32})).item<double>();
    want_all = trainer->gpt()->Loss(ids, FromVector(all, {1, 32})).item<double>();
  }
  const StepResult step = trainer->Step();
  EXPECT_NEAR(step.loss, want_bot, 1e-6);
  EXPECT_GT(std::fabs(want_all - want_bot), 1e-3);
}

}  // namespace
}  // namespace ember::models::gpt2
