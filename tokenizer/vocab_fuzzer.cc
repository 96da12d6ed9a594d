// libFuzzer target for the vocabulary readers (ember_fuzzer, base/fuzzer.bzl). The
// first byte picks the format: even, the rest is a .tiktoken file; odd, the rest is
// GPT-2's encoder.json, a NUL byte, then vocab.bpe. For any bytes the reader returns
// ranks or an InvalidArgument and never crashes; ranks it returns make an Encoding (or
// a clear refusal: a missing single byte, an id used twice), and that Encoding's
// tokens decode back to any UTF-8 text they encode.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  namespace t = ember::tokenizer;
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  absl::StatusOr<t::Ranks> ranks;
  absl::flat_hash_map<std::string, t::Rank> specials;
  if (data[0] % 2 == 0) {
    ranks = t::LoadTiktokenRanks(ember::FuzzInputFile("input.tiktoken", rest));
  } else {
    const size_t nul = rest.find('\0');
    const std::string encoder = rest.substr(0, nul),
                      merges = nul == std::string::npos ? "" : rest.substr(nul + 1);
    ranks = t::LoadGpt2Ranks(ember::FuzzInputFile("encoder.json", encoder),
                             ember::FuzzInputFile("vocab.bpe", merges), &specials);
  }
  if (!ranks.ok()) {
    FuzzCheck(
        ranks.status().code() == absl::StatusCode::kInvalidArgument,
        absl::StrCat("a malformed vocabulary is not InvalidArgument: ", ranks.status().ToString()));
    return 0;
  }
  absl::StatusOr<t::Encoding> encoding = t::Encoding::Create(
      "fuzz", R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
      *std::move(ranks), std::move(specials));
  if (!encoding.ok()) {
    FuzzCheck(encoding.status().code() == absl::StatusCode::kInvalidArgument,
              absl::StrCat("a refused vocabulary is not InvalidArgument: ",
                           encoding.status().ToString()));
    return 0;
  }
  for (const std::string& text : {std::string("Hello, world! 123 \xC3\xA9t\xC3\xA9  \n"), rest}) {
    const absl::StatusOr<std::vector<t::Rank>> ids = encoding->EncodeOrdinary(text);
    if (!ids.ok()) continue;  // not UTF-8
    const absl::StatusOr<std::string> back = encoding->DecodeBytes(*ids);
    FuzzCheck(back.ok() && *back == text, "the tokens do not decode to the text");
  }
  return 0;
}
