// libFuzzer target for the server's request parsing (openai_api.h; ember_fuzzer,
// base/fuzzer.bzl). The first byte picks the endpoint (even: completions, odd: chat), the
// rest is the body. For any bytes ParseRequest returns a request or InvalidArgument
// (never a crash or another error), a request it returns is within the limits, and every
// reply and error writes valid JSON.

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/fuzz_input.h"
#include "models/gpt2/openai_api.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  namespace g = ember::models::gpt2;
  if (size == 0) return 0;
  const bool chat = data[0] % 2 == 1;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const g::ApiLimits limits{64, 3};
  absl::StatusOr<g::ApiRequest> request = g::ParseRequest(body, chat, limits);
  if (!request.ok()) {
    FuzzCheck(request.status().code() == absl::StatusCode::kInvalidArgument,
              "ParseRequest: an error other than InvalidArgument");
    FuzzCheck(nlohmann::json::accept(g::ErrorJson(request.status())), "ErrorJson: not JSON");
    return 0;
  }
  FuzzCheck(request->max_tokens >= 1 && request->max_tokens <= limits.max_tokens,
            "max_tokens outside the limits");
  FuzzCheck(request->n >= 1 && request->n <= limits.max_n, "n outside the limits");
  FuzzCheck(request->temperature >= 0 && request->temperature <= 2, "temperature outside [0, 2]");
  FuzzCheck(request->top_p > 0 && request->top_p <= 1, "top_p outside (0, 1]");
  FuzzCheck(request->chat == chat && (!chat || !request->messages.empty()), "the wrong endpoint");
  const std::vector<g::ApiChoice> choices = {{request->prompt, "stop", 1}};
  FuzzCheck(nlohmann::json::accept(g::ReplyJson(*request, "id", 0, choices, 1)),
            "ReplyJson: not JSON");
  const std::string chunk = g::StreamChunk(*request, "id", 0, 0, request->prompt, "", true);
  FuzzCheck(nlohmann::json::accept(chunk.substr(6)), "StreamChunk: not JSON");
  return 0;
}
