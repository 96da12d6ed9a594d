// The mean next-token loss of a GPT-2 on a token shard:
//
//   bazel run -c opt //models/gpt2:eval -- --tokens=runs/data/brown_gpt2_val.bin
//   bazel run -c opt //models/gpt2:eval -- --checkpoint=/data/gpt2_124M.bin
//   --tokens=/data/tiny_shakespeare_val.bin
//
// --checkpoint is an ember checkpoint (default: the train binary's), llm.c's .bin or a
// Hugging Face GPT-2 folder; --tokens a shard in llm.c's format. With T = --seq_len
// (default: the model's block_size), window k covers tokens [kT, kT + T]: its first T
// are the inputs, its last T the targets, so consecutive windows share one token and a
// last partial window is dropped. The loss is the mean over every predicted position
// of every window (nats per token), printed with its perplexity and written to
// --metrics_out as "loss" (with "windows", "tokens" predicted and "seconds"). With the
// vocabulary the shard was made with (--vocab: by default the one an ember checkpoint
// names, or GPT-2's for a model of its size), also
// bits per byte ("bpb"), which does not depend on the tokenizer: the summed loss in bits
// over the bytes of the predicted tokens' text (a special token such as <|endoftext|>
// stands for no text and counts no bytes).

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "autograd/autograd.h"
#include "base/status.h"
#include "data/shards.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/gpt2/text_stream.h"
#include "models/gpt2/weights.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"
#include "tokenizer/vocab.h"

ABSL_FLAG(std::string, checkpoint, "",
          "ember, llm.c or Hugging Face GPT-2 weights (default: runs/gpt2/checkpoint.safetensors)");
ABSL_FLAG(std::string, tokens, "", "the token shard to evaluate on (llm.c's format)");
ABSL_FLAG(int64_t, seq_len, 0, "tokens per window (0: the model's block_size)");
ABSL_FLAG(int64_t, batch_size, 4, "windows per forward pass");
ABSL_FLAG(int64_t, max_windows, 0, "evaluate only the first this many windows (0: all)");
ABSL_FLAG(std::string, metrics_out, "", "write the figures here as one JSON object");
ABSL_FLAG(std::string, vocab, "auto",
          "the shard's vocabulary, for bits per byte: gpt2, a .tiktoken file, none, or auto (the "
          "one an ember "
          "checkpoint names, else gpt2 for a model of GPT-2's 50257 tokens or llm.c's padded "
          "50304, else none)");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(std::string, weights, "none",
          "evaluate the products' weights packed for inference as generate, chat and serve "
          "decode with them: f32, bf16, int8, auto or none (the parameters as they are)");

namespace ember::models::gpt2 {
namespace {

absl::Status Run() {
  const std::string path =
      PathOrWorkspace(absl::GetFlag(FLAGS_checkpoint), "runs/gpt2/checkpoint.safetensors");
  if (absl::GetFlag(FLAGS_tokens).empty())
    return absl::InvalidArgumentError("--tokens=FILE is required");
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(const DType dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  ASSIGN_OR_RETURN(Weights weights, ReadWeights(path));
  const auto named = weights.metadata.find("vocab");  // an ember checkpoint's tokenizer
  const std::string recorded = named != weights.metadata.end() ? named->second : "";
  ASSIGN_OR_RETURN(std::unique_ptr<GPT> model, GptFromWeights(std::move(weights), path));
  model->To(device);
  ASSIGN_OR_RETURN(const std::optional<ops::PackedFormat> packed,
                   WeightsFromFlag(absl::GetFlag(FLAGS_weights), dtype, device));
  if (packed) model->PackForInference(*packed);
  const GPTConfig& config = (model)->config();
  ASSIGN_OR_RETURN(data::TokenShard shard,
                   data::TokenShard::Open(absl::GetFlag(FLAGS_tokens), config.vocab_size));
  const int64_t t =
      absl::GetFlag(FLAGS_seq_len) == 0 ? config.block_size : absl::GetFlag(FLAGS_seq_len);
  const int64_t batch = absl::GetFlag(FLAGS_batch_size);
  if (t < 1 || t > config.block_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--seq_len=", t, ": expected 1 to the model's block_size ", config.block_size));
  }
  if (batch < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("--batch_size=", batch, ": expected at least 1"));
  int64_t windows = (shard.size() - 1) / t;
  if (absl::GetFlag(FLAGS_max_windows) > 0)
    windows = std::min(windows, absl::GetFlag(FLAGS_max_windows));
  if (windows < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        shard.path(), " holds ", shard.size(), " tokens, fewer than one window of ", t, " + 1"));
  }
  std::fprintf(stderr, "eval: %s from %s; %lld windows of %lld tokens from %s\n",
               config.ToString().c_str(), path.c_str(), static_cast<long long>(windows),
               static_cast<long long>(t), shard.path().c_str());
  // Bytes of text per token id, when the vocabulary is known and matches the model.
  std::vector<int64_t> token_bytes;
  std::string vocab = absl::GetFlag(FLAGS_vocab);
  if (vocab == "auto") {
    vocab = !recorded.empty()                                          ? recorded
            : config.vocab_size == 50257 || config.vocab_size == 50304 ? "gpt2"
                                                                       : "none";
  }
  if (vocab != "none") {
    absl::StatusOr<tokenizer::Encoding> e = LoadVocab(vocab);
    if (!e.ok()) return MissingInput(e.status());
    if (e->n_vocab() > config.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("--vocab=", vocab, " has ", e->n_vocab(),
                                                     " tokens, the model ", config.vocab_size,
                                                     " (--vocab=none to skip bits per byte)"));
    }
    token_bytes.assign(static_cast<size_t>(config.vocab_size), 0);
    for (tokenizer::Rank id = 0; id < e->n_vocab(); ++id) {
      const absl::StatusOr<std::string> bytes = e->DecodeBytes({id});
      if (bytes.ok() && !e->specials().contains(*bytes))
        token_bytes[id] = static_cast<int64_t>(bytes->size());
    }
  }
  int64_t text_bytes = 0;
  (model)->Eval();
  autograd::NoGradGuard no_grad;
  const autograd::AutocastGuard autocast(dtype);  // every window's products, cast once
  const uint16_t* tokens = shard.tokens();
  double loss_sum = 0;  // of per-window mean losses times their positions: the sum over positions
  const auto start = std::chrono::steady_clock::now();
  for (int64_t first = 0; first < windows; first += batch) {
    const int64_t b = std::min(batch, windows - first);
    std::vector<int64_t> x(static_cast<size_t>(b * t)), y(static_cast<size_t>(b * t));
    for (int64_t w = 0; w < b; ++w) {
      const uint16_t* window = tokens + (first + w) * t;
      for (int64_t i = 0; i < t; ++i) {
        x[static_cast<size_t>(w * t + i)] = window[i];
        y[static_cast<size_t>(w * t + i)] = window[i + 1];
        if (!token_bytes.empty()) text_bytes += token_bytes[window[i + 1]];
      }
    }
    loss_sum += (model)
                    ->Loss(FromVector(x, {b, t}).To(device), FromVector(y, {b, t}).To(device))
                    .item<double>() *
                static_cast<double>(b * t);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ShowProgress("window", first + b, windows, 0,
                 absl::StrFormat("loss %.4f", loss_sum / ((first + b) * t)),
                 (first + b) * t / seconds, "tok", seconds);
  }
  EndProgress();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double loss = loss_sum / static_cast<double>(windows * t);
  nlohmann::json metrics = {{"loss", loss},
                            {"perplexity", std::exp(loss)},
                            {"windows", windows},
                            {"tokens", windows * t},
                            {"seconds", seconds}};
  std::string bpb;
  if (text_bytes > 0) {
    metrics["bpb"] = loss_sum / std::log(2.0) / static_cast<double>(text_bytes);
    metrics["bytes"] = text_bytes;
    bpb = absl::StrFormat(", %.4f bits per byte over %lld bytes", metrics["bpb"].get<double>(),
                          static_cast<long long>(text_bytes));
  }
  std::printf("loss %.6f (perplexity %.2f) over %lld tokens%s\n", loss, std::exp(loss),
              static_cast<long long>(windows * t), bpb.c_str());
  if (const std::string out = absl::GetFlag(FLAGS_metrics_out); !out.empty())
    return WriteMetricsJson(out, metrics);
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  return ember::RunMain(
      argc, argv, "eval",
      "the mean next-token loss of a GPT-2 on a token shard; see models/gpt2/eval.cc's header",
      &ember::models::gpt2::Run);
}
