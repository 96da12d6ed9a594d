// Continues a prompt with a GPT-2 and prints the text as it comes:
//
//   bazel run -c opt //models/gpt2:generate -- --prompt="The jury said"  # train's model
//   bazel run -c opt //models/gpt2:generate -- --checkpoint=/data/gpt2_124M.bin \
//       --prompt="Hello, I'm a language model," --weights=int8
//   bazel run -c opt //models/gpt2:generate -- --checkpoint=/data/gpt2 --temperature=0.7 \
//       --top_p=0.9 --max_tokens=300
//
// --checkpoint is an ember checkpoint, llm.c's gpt2_124M.bin or a Hugging Face GPT-2
// folder (models/gpt2/weights.h). The text is GPT-2's BPE (downloads/tokenizer, from
// ./setup.sh); an empty prompt starts from <|endoftext|>. Sampling: --temperature (0:
// the most likely token), --top_k, --top_p, --seed. A key/value cache makes each new
// token cost one position (--kv_cache=false runs the whole window every token, for
// comparison: the same tokens while the text fits the context window). Stops after
// --max_tokens or at <|endoftext|>; the speed goes to stderr, with the bytes of weights a
// token reads (--weights: packed once in f32, bf16 or int8; model.h's PackForInference).
// --attention_svg=FILE draws the prompt's attention weights first, a heat map per layer and head
// (attention_map.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autograd/autocast.h"
#include "base/status.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/gpt2/attention_map.h"
#include "models/gpt2/sample.h"
#include "models/gpt2/text_stream.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"

ABSL_FLAG(std::string, checkpoint, "",
          "ember, llm.c or Hugging Face GPT-2 weights (default: runs/gpt2/checkpoint.safetensors)");
ABSL_FLAG(std::string, prompt, "", "text to continue (empty: start from <|endoftext|>)");
ABSL_FLAG(int64_t, max_tokens, 200, "tokens to generate at most");
ABSL_FLAG(double, temperature, 0.8, "sampling temperature (0: always the most likely token)");
ABSL_FLAG(int64_t, top_k, 40, "sample from the k most likely tokens (0: all)");
ABSL_FLAG(double, top_p, 1.0,
          "sample from the smallest set of tokens whose probability reaches this");
ABSL_FLAG(uint64_t, seed, 1337, "seed of the sampling");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(std::string, weights, "auto", ember::models::kWeightsFlagHelp);
ABSL_FLAG(bool, kv_cache, true,
          "keep keys and values of past positions (false: rerun the window every token)");
ABSL_FLAG(bool, stop_at_eot, true, "stop at <|endoftext|>");
ABSL_FLAG(std::string, attention_svg, "",
          "write the prompt's attention weights here as SVG heat maps, one per layer and head "
          "(its last block_size tokens)");

namespace ember::models::gpt2 {
namespace {

absl::Status Run() {
  const std::string path =
      PathOrWorkspace(absl::GetFlag(FLAGS_checkpoint), "runs/gpt2/checkpoint.safetensors");
  SamplingOptions sampling{absl::GetFlag(FLAGS_temperature), absl::GetFlag(FLAGS_top_k),
                           absl::GetFlag(FLAGS_top_p)};
  RETURN_IF_ERROR(sampling.Validate());
  if (const int64_t n = absl::GetFlag(FLAGS_max_tokens); n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--max_tokens=", n, ": expected 0 or more"));
  }
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(const DType dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  ASSIGN_OR_RETURN(TextModel loaded, LoadTextModel(path));
  GPT& model = *loaded.model;
  model.To(device);
  ASSIGN_OR_RETURN(const std::optional<ops::PackedFormat> weights,
                   WeightsFromFlag(absl::GetFlag(FLAGS_weights), dtype, device));
  if (weights) model.PackForInference(*weights);
  const double token_bytes = static_cast<double>(model.DecodeWeightBytes());
  const tokenizer::Encoding& gpt2 = loaded.encoding;
  const int64_t eot = gpt2.specials().at("<|endoftext|>");
  std::vector<int64_t> prompt = {eot};
  if (const std::string text = absl::GetFlag(FLAGS_prompt); !text.empty()) {
    ASSIGN_OR_RETURN(std::vector<tokenizer::Rank> ids, gpt2.EncodeOrdinary(text));
    prompt.assign(ids.begin(), ids.end());
  }
  std::fprintf(stderr,
               "generate: %s (%.1fM parameters) from %s; %s weights (%.1f MB a token); a prompt "
               "of %zu tokens\n",
               model.config().ToString().c_str(), model.NumParameters() / 1e6, path.c_str(),
               weights ? kernels::cpu::PackedFormatName(*weights) : "unpacked", token_bytes / 1e6,
               prompt.size());
  if (const std::string svg = absl::GetFlag(FLAGS_attention_svg); !svg.empty()) {
    const int64_t t =
        std::min<int64_t>(static_cast<int64_t>(prompt.size()), model.config().block_size);
    const std::vector<int64_t> window(prompt.end() - t, prompt.end());
    std::vector<Tensor> weights = model.AttentionWeights(FromVector(window, {1, t}).To(device));
    for (Tensor& w : weights) w = w.Select(0, 0);
    std::vector<std::string> labels;
    for (const int64_t id : window) {
      absl::StatusOr<std::string> text = gpt2.Decode({static_cast<tokenizer::Rank>(id)});
      labels.push_back(text.ok() ? *text : "?");
    }
    RETURN_IF_ERROR(WriteAttentionMapSvg(svg, weights, labels));
    std::fprintf(stderr,
                 "generate: wrote the attention of %lld tokens (%zu layers x %lld heads) to %s\n",
                 static_cast<long long>(t), weights.size(),
                 static_cast<long long>(weights.front().size(0)), svg.c_str());
  }
  const autograd::AutocastGuard autocast(dtype);  // the weights cast once, for every token
  Generator gen(absl::GetFlag(FLAGS_seed));
  Sampler sampler(model, sampling, gen, absl::GetFlag(FLAGS_kv_cache));
  sampler.Append(prompt);
  std::fputs(absl::GetFlag(FLAGS_prompt).c_str(), stdout);
  TextStream stream(gpt2);
  const auto start = std::chrono::steady_clock::now();
  int64_t made = 0;
  for (; made < absl::GetFlag(FLAGS_max_tokens); ++made) {
    const int64_t token = sampler.Next();
    if (token == eot && absl::GetFlag(FLAGS_stop_at_eot)) break;
    std::fputs(stream.Push(static_cast<tokenizer::Rank>(token)).c_str(), stdout);
    std::fflush(stdout);
  }
  std::printf("%s\n", stream.Finish().c_str());
  std::fflush(stdout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "generate: %lld tokens in %.2f s (%.1f tokens/s, %.1f GB/s of weights%s)\n",
               static_cast<long long>(made), seconds, made / seconds,
               made * token_bytes / seconds / 1e9,
               absl::GetFlag(FLAGS_kv_cache) ? "" : ", without the key/value cache");
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "generate",
                        "continues a prompt with a GPT-2; see models/gpt2/generate.cc's header",
                        &ember::models::gpt2::Run);
}
