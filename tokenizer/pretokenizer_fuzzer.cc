// libFuzzer target for the hand-written pre-tokenizers (bazel run --config=fuzz
// //tokenizer:pretokenizer_fuzzer; see .bazelrc). The first byte picks the pattern
// (gpt2, cl100k, o200k); the rest is the text, any bytes:
// - the pieces are non-empty and tile the text, and nothing past it is read (the fuzz
//   build runs under ASan), valid UTF-8 or not;
// - on valid UTF-8 whose code points RE2's Unicode 15.0 tables class as the scanners'
//   16.0 tables do, the pieces are RE2's (the kRe2 engine on the same pattern).
// pretokenizer_fuzzer_seeds_test runs the same checks over seed inputs in every build.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tokenizer/encoding.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/re2_classes.h"

namespace ember::tokenizer {
namespace {

void Check(bool ok, const char* what, const std::string& text) {
  if (!ok) {
    std::fprintf(stderr, "pretokenizer_fuzzer: %s on %zu bytes\n", what, text.size());
    std::abort();
  }
}

struct Pair {
  Pretokenizer scanner, re2;
};

const Pair& Pick(uint8_t selector) {
  static const auto* pairs = [] {
    auto* p = new std::vector<Pair>();
    for (const char* pattern : {kGpt2Pattern, kCl100kPattern, kO200kPattern}) {
      p->push_back({*Pretokenizer::Create(pattern),
                    *Pretokenizer::Create(pattern, Pretokenizer::Engine::kRe2)});
    }
    return p;
  }();
  return (*pairs)[selector % 3];
}

}  // namespace
}  // namespace ember::tokenizer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::tokenizer;
  static const Re2Classes* re2_classes = new Re2Classes();
  if (size == 0) return 0;
  const Pair& pair = Pick(data[0]);
  // A copy of exactly the text's bytes, so that ASan sees a read past its end.
  const std::vector<char> bytes(data + 1, data + size);
  const absl::string_view text(bytes.data(), bytes.size());
  const std::string copy(text);

  std::vector<std::string> pieces;
  size_t covered = 0;
  pair.scanner.ForEachPiece(text, [&](absl::string_view piece) {
    Check(!piece.empty(), "an empty piece", copy);
    Check(piece.data() == text.data() + covered, "a gap or overlap between pieces", copy);
    covered += piece.size();
    pieces.emplace_back(piece);
  });
  Check(covered == text.size(), "the pieces do not cover the text", copy);

  if (FirstInvalidUtf8(text) < 0 && re2_classes->AgreeOn(text)) {
    Check(pair.re2.Split(copy) == pieces, "the pieces differ from RE2's", copy);
  }
  return 0;
}
