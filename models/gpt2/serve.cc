// Serves a GPT-2 over OpenAI's HTTP API, with a chat page at /:
//
//   bazel run -c opt //models/gpt2:serve -- --checkpoint=runs/school/checkpoint.safetensors
//   curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \
//     -d '{"model": "ember", "messages": [{"role": "user", "content": "Hi!"}]}'
//
// Requests are decoded together (continuous batching, engine.h): up to --max_batch at
// once, --max_queue more waiting, beyond that 429. It listens on 127.0.0.1 unless told
// otherwise, and elsewhere only with --api_key. SIGTERM or Ctrl-C stops taking requests
// (503), finishes those in flight, and exits. --checkpoint: ember, llm.c or Hugging Face
// weights (models/gpt2/weights.h), with their tokenizer.

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/gpt2/engine.h"
#include "models/gpt2/server.h"
#include "models/gpt2/text_stream.h"
#include "tensor/cuda.h"

ABSL_FLAG(std::string, checkpoint, "",
          "ember, llm.c or Hugging Face GPT-2 weights (default: runs/gpt2/checkpoint.safetensors)");
ABSL_FLAG(std::string, host, "127.0.0.1",
          "the address to listen on (0.0.0.0: every interface, which needs --api_key)");
ABSL_FLAG(int32_t, port, 8080, "the port to listen on (0: a free one, printed)");
ABSL_FLAG(std::string, api_key, "",
          "clients must send \"Authorization: Bearer <key>\" (required off 127.0.0.1)");
ABSL_FLAG(std::string, model_name, "ember", "the model's name in requests and replies");
ABSL_FLAG(int64_t, max_batch, 8, "requests decoded together at most");
ABSL_FLAG(int64_t, max_queue, 32, "requests waiting for a place at most (beyond: 429)");
ABSL_FLAG(int64_t, max_tokens, 256, "the most tokens a reply may ask for (and chat's default)");
ABSL_FLAG(int64_t, max_n, 4, "the most choices (n) a request may ask for");
ABSL_FLAG(int64_t, max_prompt_tokens, 0, "the longest prompt in tokens (0: the model's window)");
ABSL_FLAG(int64_t, max_body_bytes, 1 << 20, "the largest request body (beyond: 413)");
ABSL_FLAG(double, timeout_s, 300, "a request's time limit, queued and decoding (beyond: 408)");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(std::string, weights, "auto", ember::models::kWeightsFlagHelp);

namespace ember::models::gpt2 {
namespace {

absl::Status Positive(const char* flag, int64_t value, int64_t least) {
  if (value >= least) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", value, ": expected at least ", least));
}

absl::Status Run() {
  // SIGTERM and SIGINT go to one thread, which drains: blocked here, before any thread
  // starts (each inherits the mask), so that none of them takes the signal instead.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const std::string host = absl::GetFlag(FLAGS_host), key = absl::GetFlag(FLAGS_api_key);
  if (!IsLoopback(host) && key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--host=", host, " lets other machines in: give --api_key too (or keep 127.0.0.1)"));
  }
  const int port = absl::GetFlag(FLAGS_port);
  if (port < 0 || port > 65535)
    return absl::InvalidArgumentError(absl::StrCat("--port=", port, ": expected 0 to 65535"));
  EngineOptions engine_options{absl::GetFlag(FLAGS_max_batch), absl::GetFlag(FLAGS_max_queue)};
  ServerOptions options;
  options.model_name = absl::GetFlag(FLAGS_model_name);
  options.api_key = key;
  options.limits = {absl::GetFlag(FLAGS_max_tokens), absl::GetFlag(FLAGS_max_n)};
  options.max_prompt_tokens = absl::GetFlag(FLAGS_max_prompt_tokens);
  options.max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes);
  RETURN_IF_ERROR(Positive("max_batch", engine_options.max_batch, 1));
  RETURN_IF_ERROR(Positive("max_queue", engine_options.max_queue, 0));
  RETURN_IF_ERROR(Positive("max_tokens", options.limits.max_tokens, 1));
  RETURN_IF_ERROR(Positive("max_n", options.limits.max_n, 1));
  RETURN_IF_ERROR(Positive("max_prompt_tokens", options.max_prompt_tokens, 0));
  RETURN_IF_ERROR(Positive("max_body_bytes", options.max_body_bytes, 1));
  if (options.model_name.empty()) return absl::InvalidArgumentError("--model_name: empty");
  const double timeout = absl::GetFlag(FLAGS_timeout_s);
  if (!(timeout > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("--timeout_s=", timeout, ": expected above 0"));
  }
  options.timeout = absl::Seconds(timeout);

  const std::string path =
      PathOrWorkspace(absl::GetFlag(FLAGS_checkpoint), "runs/gpt2/checkpoint.safetensors");
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(engine_options.dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  ASSIGN_OR_RETURN(TextModel loaded, LoadTextModel(path));
  loaded.model->To(device);
  ASSIGN_OR_RETURN(const std::optional<ops::PackedFormat> weights,
                   WeightsFromFlag(absl::GetFlag(FLAGS_weights), engine_options.dtype, device));
  if (weights) loaded.model->PackForInference(*weights);

  Engine engine(*loaded.model, loaded.encoding, engine_options);
  Server server(engine, loaded.encoding, loaded.model->config().block_size, options);
  ASSIGN_OR_RETURN(const int bound, server.Bind(host, port));
  std::thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    const Engine::Load load = engine.load();
    std::fprintf(stderr, "serve: %s: finishing %lld requests, taking no more\n",
                 signal == SIGTERM ? "SIGTERM" : "SIGINT",
                 static_cast<long long>(load.active + load.queued));
    engine.Drain();
    server.Stop();
  }).detach();
  const std::string url = host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host;
  std::fprintf(stderr,
               "serve: %s (%s, %s, %s weights) from %s\nserve: listening on http://%s:%d/%s\n",
               options.model_name.c_str(), loaded.model->config().ToString().c_str(),
               std::string(DTypeName(engine_options.dtype)).c_str(),
               weights ? kernels::cpu::PackedFormatName(*weights) : "unpacked", path.c_str(),
               url.c_str(), bound, key.empty() ? "" : " (API key required)");
  server.Serve();
  std::fprintf(stderr, "serve: stopped\n");
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "serve",
                        "serves a GPT-2 over OpenAI's HTTP API with a chat page; see "
                        "models/gpt2/serve.cc's header",
                        &ember::models::gpt2::Run);
}
