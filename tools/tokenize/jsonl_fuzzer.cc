// libFuzzer target for the tokenize tool's --jsonl requests (ember_fuzzer,
// base/fuzzer.bzl), with GPT-2's encoding. The first byte picks encode or decode and
// --ordinary; the rest is one request line. Any line gets one answer, a JSON object
// with exactly one of "ids", "hex" and "error", that prints as JSON whatever bytes
// came in; ids it gives decode back to the request's text.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "tokenizer/vocab.h"
#include "tools/tokenize/requests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  namespace t = ember::tokenizer;
  static const t::Encoding* const gpt2 = [] {
    absl::StatusOr<t::Encoding> e = t::LoadEncoding("gpt2", "downloads/tokenizer");
    FuzzCheck(e.ok(),
              absl::StrCat(e.status().message(), " (run it from the runfiles, after ./setup.sh)"));
    return new t::Encoding(*std::move(e));
  }();
  if (size == 0) return 0;
  const bool encode = data[0] & 1, ordinary = data[0] & 2;
  const std::string line(reinterpret_cast<const char*>(data) + 1, size - 1);
  const nlohmann::json answer = t::AnswerLine(*gpt2, encode, ordinary, line, {});
  FuzzCheck(answer.is_object() && answer.size() == 1, "an answer is an object of one key");
  const std::string key = answer.begin().key();
  FuzzCheck(key == "error" || key == (encode ? "ids" : "hex"), "the answer's key: " + key);
  const std::string printed = answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  FuzzCheck(nlohmann::json::accept(printed), "the printed answer is not JSON");
  if (encode && key == "ids") {
    const std::string text = nlohmann::json::parse(line)["text"];
    const absl::StatusOr<std::string> back =
        gpt2->DecodeBytes(answer["ids"].get<std::vector<t::Rank>>());
    FuzzCheck(back.ok() && *back == text, "the ids do not decode to the text");
  }
  return 0;
}
