// Talks with a GPT-2 in the "User: ... / Bot: ..." format (conversations.h's, which
// train --conversations fine-tunes a model on), one line per turn:
//
//   bazel run -c opt //models/gpt2:chat -- --checkpoint=/data/gpt2_124M.bin
//   echo "What is the capital of France?" | bazel run -c opt //models/gpt2:chat
//
// Each line read from stdin becomes "User: <line>\nBot:" after the conversation so far,
// and the model's reply streams out until it starts the next turn ("\nUser:" or
// "\nBot:"), ends the text (<|endoftext|>) or reaches --max_reply_tokens; the reply is
// cut at the turn marker and becomes part of the conversation. When the conversation
// would no longer fit the context window with room for a reply, its oldest turns are
// dropped (--system, if given, is kept as the first line). An empty line or EOF ends
// the chat. --checkpoint: ember, llm.c or Hugging Face weights (models/gpt2/weights.h);
// sampling flags as generate's.

#include <cstdio>
#include <deque>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autograd/autocast.h"
#include "base/error.h"
#include "base/status.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/gpt2/conversations.h"
#include "models/gpt2/sample.h"
#include "models/gpt2/text_stream.h"
#include "tensor/cuda.h"

ABSL_FLAG(std::string, checkpoint, "",
          "ember, llm.c or Hugging Face GPT-2 weights (default: runs/gpt2/checkpoint.safetensors)");
ABSL_FLAG(std::string, system, "",
          "a first line kept at the top of the conversation (e.g. who the bot is)");
ABSL_FLAG(int64_t, max_reply_tokens, 100, "tokens per reply at most");
ABSL_FLAG(double, temperature, 0.7, "sampling temperature (0: always the most likely token)");
ABSL_FLAG(int64_t, top_k, 40, "sample from the k most likely tokens (0: all)");
ABSL_FLAG(double, top_p, 0.9,
          "sample from the smallest set of tokens whose probability reaches this");
ABSL_FLAG(uint64_t, seed, 1337, "seed of the sampling");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(std::string, weights, "auto", ember::models::kWeightsFlagHelp);

namespace ember::models::gpt2 {
namespace {

// Where the reply starts another turn, or npos.
size_t TurnMarker(const std::string& reply) {
  return std::min(reply.find("\nUser:"), reply.find("\nBot:"));
}

absl::Status Run() {
  const std::string path =
      PathOrWorkspace(absl::GetFlag(FLAGS_checkpoint), "runs/gpt2/checkpoint.safetensors");
  const SamplingOptions sampling{absl::GetFlag(FLAGS_temperature), absl::GetFlag(FLAGS_top_k),
                                 absl::GetFlag(FLAGS_top_p)};
  RETURN_IF_ERROR(sampling.Validate());
  if (const int64_t n = absl::GetFlag(FLAGS_max_reply_tokens); n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_reply_tokens=", n, ": expected at least 1"));
  }
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(const DType dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  ASSIGN_OR_RETURN(TextModel loaded, LoadTextModel(path));
  GPT& model = *loaded.model;
  model.To(device);
  ASSIGN_OR_RETURN(const std::optional<ops::PackedFormat> weights,
                   WeightsFromFlag(absl::GetFlag(FLAGS_weights), dtype, device));
  if (weights) model.PackForInference(*weights);
  const tokenizer::Encoding& gpt2 = loaded.encoding;
  const int64_t eot = gpt2.specials().at("<|endoftext|>"), block = model.config().block_size;
  const int64_t max_reply = std::min(absl::GetFlag(FLAGS_max_reply_tokens), block / 2);
  auto encode = [&](const std::string& text) {
    absl::StatusOr<std::vector<tokenizer::Rank>> ids = gpt2.EncodeOrdinary(text);
    EMBER_CHECK(ids.ok(), ids.status().message());
    return std::vector<int64_t>(ids->begin(), ids->end());
  };
  const std::vector<int64_t> system = absl::GetFlag(FLAGS_system).empty()
                                          ? std::vector<int64_t>{eot}
                                          : encode(absl::GetFlag(FLAGS_system) + "\n");
  Generator gen(absl::GetFlag(FLAGS_seed));
  const autograd::AutocastGuard autocast(dtype);  // the weights cast once, for every reply
  Sampler sampler(model, sampling, gen);
  std::deque<std::vector<int64_t>> turns;  // each "User: ...\nBot: ...\n", encoded
  std::fprintf(stderr, "chat: %s from %s; an empty line ends the chat\n",
               model.config().ToString().c_str(), path.c_str());
  std::string line;
  while (std::fputs("User: ", stdout), std::fflush(stdout),
         std::getline(std::cin, line) && !line.empty()) {
    const std::string asked = UserTurn(line);
    // The conversation that fits: the system line, the newest turns, this question,
    // and room for a reply. A question too long by itself keeps its last tokens.
    std::vector<int64_t> question = encode(asked);
    int64_t room = block - max_reply - static_cast<int64_t>(system.size());
    if (static_cast<int64_t>(question.size()) > room)
      question.erase(question.begin(), question.end() - std::max<int64_t>(1, room));
    room -= static_cast<int64_t>(question.size());
    int64_t used = 0;
    size_t keep = 0;
    while (keep < turns.size() &&
           used + static_cast<int64_t>(turns[turns.size() - 1 - keep].size()) <= room) {
      used += static_cast<int64_t>(turns[turns.size() - 1 - keep].size());
      ++keep;
    }
    while (turns.size() > keep) turns.pop_front();
    std::vector<int64_t> context = system;
    for (const auto& turn : turns) context.insert(context.end(), turn.begin(), turn.end());
    context.insert(context.end(), question.begin(), question.end());
    sampler.Reset(context);

    std::printf("Bot:");
    TextStream stream(gpt2);
    std::string reply, shown;
    for (int64_t i = 0; i < max_reply; ++i) {
      const int64_t token = sampler.Next();
      if (token == eot) break;
      reply += stream.Push(static_cast<tokenizer::Rank>(token));
      // Print all but what may still grow into a turn marker (a trailing "\nUs").
      const size_t marker = TurnMarker(reply);
      size_t safe = marker != std::string::npos ? marker : reply.size();
      if (const size_t nl = reply.rfind('\n');
          marker == std::string::npos && nl != std::string::npos) {
        const std::string tail = reply.substr(nl);
        if (std::string("\nUser:").rfind(tail, 0) == 0 || std::string("\nBot:").rfind(tail, 0) == 0)
          safe = nl;
      }
      if (safe > shown.size()) {
        std::fputs(reply.substr(shown.size(), safe - shown.size()).c_str(), stdout);
        std::fflush(stdout);
        shown = reply.substr(0, safe);
      }
      if (marker != std::string::npos) break;
    }
    if (TurnMarker(reply) == std::string::npos) {
      reply += stream.Finish();
      std::fputs(reply.substr(shown.size()).c_str(), stdout);
      shown = reply;
    }
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
    std::printf("\n");
    // What was shown may hold bytes a sampled token left invalid; the history is text.
    // The reply as shown (from the space after "Bot:"), and the turn's "\n" (BotTurn's).
    turns.push_back(encode(asked + tokenizer::ToValidUtf8(shown) + "\n"));
  }
  std::printf("\n");
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "chat", "talks with a GPT-2; see models/gpt2/chat.cc's header",
                        &ember::models::gpt2::Run);
}
