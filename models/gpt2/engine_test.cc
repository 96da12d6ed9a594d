// The serving engine (engine.h) on a tiny GPT with GPT-2's tokenizer: requests decoded
// together give what each gives alone, stop strings cut and are never streamed, a
// client that goes away cancels, the queue has a limit, and draining finishes the work.

#include "models/gpt2/engine.h"

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "models/gpt2/text_stream.h"

namespace ember::models::gpt2 {
namespace {

struct Fixture {
  Fixture() : model(*GPTConfig::Preset("tiny"), init), encoding(*LoadVocab("gpt2")) {}
  Generator init{5};
  GPT model;  // 2 layers, 4 heads, 64 wide, 32 positions, GPT-2's 50,257 tokens
  tokenizer::Encoding encoding;

  std::vector<int64_t> Encode(const std::string& text) {
    const std::vector<tokenizer::Rank> ids = *encoding.EncodeOrdinary(text);
    return {ids.begin(), ids.end()};
  }
  // The text `prompt` goes on to alone (Sampler, batch 1), greedy, up to n tokens or
  // <|endoftext|>.
  std::string Alone(const std::vector<int64_t>& prompt, int64_t n) {
    Generator gen(0);
    const int64_t eot = encoding.specials().at("<|endoftext|>");
    std::vector<int64_t> all = Generate(model, prompt, n, SamplingOptions{0, 0, 1}, gen, eot);
    std::vector<tokenizer::Rank> generated(all.begin() + static_cast<int64_t>(prompt.size()),
                                           all.end());
    if (!generated.empty() && generated.back() == eot) generated.pop_back();
    return tokenizer::ToValidUtf8(*encoding.DecodeBytes(generated));
  }
};

// What a request streamed and how it ended, filled on the engine's thread.
struct Outcome {
  std::string streamed;
  CompletionResult result;
  absl::Notification done;
};

CompletionRequest Request(std::vector<int64_t> prompt, int64_t max_tokens, Outcome& out) {
  CompletionRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling = SamplingOptions{0, 0, 1};
  r.on_text = [&out](const std::string& text) {
    out.streamed += text;
    return true;
  };
  r.on_done = [&out](const CompletionResult& result) {
    out.result = result;
    out.done.Notify();
  };
  return r;
}

TEST(EngineTest, RequestsDecodedTogetherGiveWhatEachGivesAlone) {
  Fixture f;
  const std::vector<std::string> prompts = {"Hello", "The capital of France is a city",
                                            "Once upon a time, in a land far away"};
  Engine engine(f.model, f.encoding, EngineOptions{4, 8});
  std::vector<Outcome> outcomes(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(engine.Submit(Request(f.Encode(prompts[i]), 12, outcomes[i])).ok());
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    outcomes[i].done.WaitForNotification();
    const CompletionResult& r = outcomes[i].result;
    EXPECT_EQ(r.text, f.Alone(f.Encode(prompts[i]), 12)) << prompts[i];
    EXPECT_EQ(outcomes[i].streamed, r.text);
    EXPECT_EQ(r.prompt_tokens, static_cast<int64_t>(f.Encode(prompts[i]).size()));
    EXPECT_LE(r.completion_tokens, 12);
    EXPECT_TRUE(r.finish_reason == "length" || r.finish_reason == "stop") << r.finish_reason;
  }
}

TEST(EngineTest, WindowAndMaxTokensEndWithLength) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{2, 2});
  // 30 prompt tokens of a 32-position window: two more fit, and the window's last
  // position predicts a third, which ends it (it would need a 33rd position to go on).
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 30; ++i) prompt.push_back(100 + i);
  Outcome window, one;
  ASSERT_TRUE(engine.Submit(Request(prompt, 100, window)).ok());
  ASSERT_TRUE(engine.Submit(Request(f.Encode("Hi"), 1, one)).ok());
  window.done.WaitForNotification();
  one.done.WaitForNotification();
  EXPECT_LE(window.result.completion_tokens, 3);
  EXPECT_LE(one.result.completion_tokens, 1);
  if (window.result.finish_reason == "length") EXPECT_EQ(window.result.completion_tokens, 3);
  if (one.result.finish_reason == "length") EXPECT_EQ(one.result.completion_tokens, 1);
}

TEST(EngineTest, AStopStringEndsTheTextAndIsNeverStreamed) {
  Fixture f;
  const std::vector<int64_t> prompt = f.Encode("The capital of France is a city");
  const std::string alone = f.Alone(prompt, 24);
  ASSERT_GE(alone.size(), 8u) << "the tiny model's greedy text is too short for this test";
  const std::string stop = alone.substr(4, 3);  // cut where it first occurs
  Engine engine(f.model, f.encoding, EngineOptions{});
  Outcome out;
  CompletionRequest r = Request(prompt, 24, out);
  r.stop = {"never in this text \x01", stop};
  ASSERT_TRUE(engine.Submit(std::move(r)).ok());
  out.done.WaitForNotification();
  EXPECT_EQ(out.result.finish_reason, "stop");
  EXPECT_EQ(out.result.text, alone.substr(0, alone.find(stop)));
  EXPECT_EQ(out.streamed, out.result.text);
}

TEST(EngineTest, AClientThatGoesAwayCancels) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{});
  Outcome out;
  CompletionRequest r = Request(f.Encode("Hello there"), 30, out);
  int calls = 0;
  r.on_text = [&](const std::string&) { return ++calls < 2; };
  ASSERT_TRUE(engine.Submit(std::move(r)).ok());
  out.done.WaitForNotification();
  EXPECT_EQ(out.result.finish_reason, "cancelled");
  EXPECT_EQ(calls, 2);
  EXPECT_LT(out.result.completion_tokens, 30);
}

TEST(EngineTest, TheQueueHasALimitAndDrainingFinishesTheWork) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{1, 1});
  absl::Notification started, release;
  Outcome first, second, third;
  CompletionRequest r = Request(f.Encode("Hello"), 3, first);
  r.on_text = [&](const std::string&) {
    if (!started.HasBeenNotified()) started.Notify();
    release.WaitForNotification();  // the engine's thread waits here: one running
    return true;
  };
  ASSERT_TRUE(engine.Submit(std::move(r)).ok());
  started.WaitForNotification();
  ASSERT_TRUE(engine.Submit(Request(f.Encode("Hi"), 3, second)).ok());  // waits in the queue
  const absl::Status full = engine.Submit(Request(f.Encode("Hey"), 3, third));
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  // n choices are queued all together or not at all.
  Outcome n1, n2;
  std::vector<CompletionRequest> pair;
  pair.push_back(Request(f.Encode("Yo"), 3, n1));
  pair.push_back(Request(f.Encode("Yo"), 3, n2));
  EXPECT_TRUE(absl::IsResourceExhausted(engine.Submit(std::move(pair))));
  EXPECT_EQ(engine.load().active, 1);
  EXPECT_EQ(engine.load().queued, 1);
  release.Notify();
  engine.Drain();
  EXPECT_TRUE(first.done.HasBeenNotified());
  EXPECT_TRUE(second.done.HasBeenNotified());
  EXPECT_FALSE(third.done.HasBeenNotified());
  EXPECT_FALSE(n1.done.HasBeenNotified());
  EXPECT_TRUE(absl::IsUnavailable(engine.Submit(Request(f.Encode("Hey"), 3, third))));
}

TEST(EngineTest, RequestsOutsideTheLimitsAreRefused) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{});
  Outcome out;
  std::vector<int64_t> long_prompt(32, 11);
  const std::map<std::string, CompletionRequest> bad = {
      {"empty prompt", Request({}, 4, out)},
      {"prompt fills the window", Request(long_prompt, 4, out)},
      {"token outside the vocabulary", Request({50257}, 4, out)},
      {"negative token", Request({-1}, 4, out)},
      {"max_tokens 0", Request({1}, 0, out)},
  };
  for (const auto& [name, request] : bad) {
    EXPECT_TRUE(absl::IsInvalidArgument(engine.Submit(request))) << name;
  }
  CompletionRequest empty_stop = Request({1}, 4, out), hot = Request({1}, 4, out);
  empty_stop.stop = {""};
  hot.sampling.temperature = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(engine.Submit(empty_stop)));
  EXPECT_TRUE(absl::IsInvalidArgument(engine.Submit(hot)));
}

TEST(EngineTest, ADeadlineEndsTheRequest) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{1, 1});
  // Past its deadline in the queue: never started. While decoding: ended at a step.
  Outcome late, slow;
  CompletionRequest r = Request(f.Encode("Hello"), 3, late);
  r.deadline = absl::Now() - absl::Seconds(1);
  ASSERT_TRUE(engine.Submit(std::move(r)).ok());
  late.done.WaitForNotification();
  EXPECT_EQ(late.result.finish_reason, "timeout");
  EXPECT_EQ(late.result.completion_tokens, 0);
  EXPECT_EQ(late.result.prompt_tokens, 1);
  CompletionRequest s = Request(f.Encode("Hello"), 25, slow);
  s.deadline = absl::Now() + absl::Milliseconds(300);
  s.on_text = [&slow](const std::string& text) {
    slow.streamed += text;
    absl::SleepFor(absl::Milliseconds(100));  // a slow step
    return true;
  };
  ASSERT_TRUE(engine.Submit(std::move(s)).ok());
  slow.done.WaitForNotification();
  EXPECT_EQ(slow.result.finish_reason, "timeout");
  EXPECT_LT(slow.result.completion_tokens, 25);
  EXPECT_EQ(slow.result.text, slow.streamed);
}

TEST(EngineTest, TheSameSeedGivesTheSameText) {
  Fixture f;
  Engine engine(f.model, f.encoding, EngineOptions{});
  Outcome a, b;
  for (Outcome* out : {&a, &b}) {
    CompletionRequest r = Request(f.Encode("Hello"), 10, *out);
    r.sampling = SamplingOptions{1.0, 0, 1.0};
    r.seed = 42;
    ASSERT_TRUE(engine.Submit(std::move(r)).ok());
  }
  a.done.WaitForNotification();
  b.done.WaitForNotification();
  EXPECT_EQ(a.result.text, b.result.text);
}

}  // namespace
}  // namespace ember::models::gpt2
