// libFuzzer target for encoding and decoding (bazel run --config=fuzz
// //tokenizer:encoding_fuzzer; see .bazelrc). For any input bytes, with the encoding
// chosen by the first byte:
// - UTF-8 input: EncodeOrdinary and Encode (all specials allowed) succeed and decode back
//   to the input, and (for one short input in 1,024) the parallel path gives the same ids
//   as the serial one on the input repeated past the chunk size;
// - other input: both are InvalidArgument;
// - the bytes read as token ids decode without error exactly when every id is a token,
//   and Decode always gives valid UTF-8.
// encoding_fuzzer_seeds_test runs the same checks over seed inputs in every build.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "encoding_fuzzer: %s\n", what);
    std::abort();
  }
}

const Encoding& Pick(uint8_t selector) {
  static const char* const kNames[] = {"gpt2", "cl100k_base", "o200k_base"};
  static auto* loaded = new std::map<int, Encoding>();
  const int which = selector % 3;
  auto it = loaded->find(which);
  if (it == loaded->end()) {
    absl::StatusOr<Encoding> e = LoadEncoding(kNames[which], "downloads/tokenizer");
    if (!e.ok()) {
      std::fprintf(stderr, "encoding_fuzzer: %s (run it from the runfiles, after ./setup.sh)\n",
                   std::string(e.status().message()).c_str());
      std::abort();
    }
    it = loaded->emplace(which, *std::move(e)).first;
  }
  return it->second;
}

}  // namespace
}  // namespace ember::tokenizer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::tokenizer;
  if (size == 0) return 0;
  const Encoding& e = Pick(data[0]);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const absl::StatusOr<std::vector<Rank>> ordinary = e.EncodeOrdinary(text);
  const absl::StatusOr<std::vector<Rank>> special = e.Encode(text, e.AllSpecial());
  if (FirstInvalidUtf8(text) >= 0) {
    Check(ordinary.status().code() == absl::StatusCode::kInvalidArgument, "bad UTF-8 accepted");
    Check(special.status().code() == absl::StatusCode::kInvalidArgument,
          "bad UTF-8 accepted (Encode)");
  } else {
    Check(ordinary.ok() && special.ok(), "valid UTF-8 refused");
    Check(*e.DecodeBytes(*ordinary) == text, "EncodeOrdinary does not round-trip");
    Check(*e.DecodeBytes(*special) == text, "Encode does not round-trip");
    Check(*e.Decode(*ordinary) == text, "Decode differs from DecodeBytes on valid UTF-8");
    // Long enough (past 64 kB chunks) to take the parallel path: the input repeated, a
    // space after each copy (without one, a short input of letters would repeat into a
    // single 128 kB piece, whose BPE takes seconds under the sanitizers). Two encodes of
    // 128 kB are still slow (60 ms for short pieces; seconds for copies of a 4 kB piece,
    // under the comparison tracing of --config=fuzz), so only for inputs of at most 32
    // bytes, one in 1,024 by a hash of the whole input: a mark libFuzzer's mutations keep
    // (as the first byte) let the inputs that reach this check fill the corpus, and it
    // took 80% of a 10-minute run.
    uint32_t hash = 2166136261u;  // FNV-1a
    for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
    if (!text.empty() && text.size() <= 32 && (hash & 1023) == 0) {
      std::string longer;
      while (longer.size() < (1 << 17)) longer += text + " ";
      Check(*e.EncodeOrdinary(longer, 3) == *e.EncodeOrdinary(longer, 1), "threads change the ids");
    }
  }

  std::vector<Rank> ids(text.size() / 4);
  if (!ids.empty()) std::memcpy(ids.data(), text.data(), ids.size() * 4);
  for (Rank& id : ids) id %= e.n_vocab() + 16;  // mostly real ids, some not
  bool all_known = true;
  for (const Rank id : ids) all_known = all_known && e.DecodeBytes({id}).ok();
  const absl::StatusOr<std::string> decoded = e.Decode(ids);
  Check(decoded.ok() == all_known, "DecodeBytes refuses exactly the unknown ids");
  if (decoded.ok()) Check(FirstInvalidUtf8(*decoded) < 0, "Decode gave invalid UTF-8");
  return 0;
}
