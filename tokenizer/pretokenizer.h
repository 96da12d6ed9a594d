#ifndef EMBER_TOKENIZER_PRETOKENIZER_H_
#define EMBER_TOKENIZER_PRETOKENIZER_H_

// Splits text into the pieces that BPE then encodes, with a tiktoken pattern (pat_str),
// matching what tiktoken's Rust regex (fancy-regex) finds, piece for piece.
//
// Two engines:
// - Hand-written scanners for the patterns of tiktoken's encodings (kGpt2Pattern for
//   gpt2/r50k/p50k, kCl100kPattern, kO200kPattern), chosen when the pattern is one of
//   them. Each follows its pattern's alternatives in order with the backtracking the
//   regex would do, tests characters in Unicode 16.0 tables (unicode_tables.h, as
//   tiktoken's regex), and never reads past the text, valid UTF-8 or not.
// - RE2 for any other pattern, and as the scanners' oracle (pretokenizer_diff_test and
//   the pretokenizer fuzzer compare the two).
//
// RE2 differs from that engine in two ways that change pieces, both handled here:
// - `\s` in RE2 is ASCII ([\t\n\f\r ]); tiktoken's is Unicode White_Space. Every `\s`
//   and `\S` of the pattern is spelled out as the White_Space class (kWhiteSpace).
// - RE2 has no lookahead. The patterns use one, in the alternatives `\s+(?!\S)|\s+`
//   that end them. Derivation: at a position where the earlier alternatives fail,
//   `\s+(?!\S)` takes the longest whitespace run s[p, p+k) that is followed by
//   whitespace or the end of the text. With n the length of the whole run starting at
//   p: if the run reaches the end, k = n; otherwise the character after it is not
//   whitespace, so k = n - 1 (the character at p+n-1 is whitespace, which (?!\S)
//   accepts), provided n - 1 >= 1. When n = 1 and a non-space follows, the lookahead
//   fails and `\s+` takes the single character. So: replace the two by one `\s+`, and
//   when that is what matched, a run longer than one character that is not at the end
//   of the text gives back its last character (one code point). It is what matched when
//   the piece is all whitespace and the pattern without the tail (the "body") cannot
//   match the whole piece (see TailMatched).
//
// Unicode tables: Debian's RE2 (2022-06-01) has Unicode 15.0 classes (it knows U+11F04,
// new in 15, as a letter); tiktoken's Rust regex has Unicode 16.0, so with RE2 text
// using characters assigned in 15.1 or 16.0 can split differently. The scanners' tables
// are 16.0.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace re2 {
class RE2;
}

namespace ember::tokenizer {

// The pre-tokenization patterns of tiktoken's encodings (the pat_str of its
// openai_public.py, as the tiktoken npm package ships them).
// gpt2, r50k_base, p50k_base:
inline constexpr char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// cl100k_base:
inline constexpr char kCl100kPattern[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// o200k_base:
inline constexpr char kO200kPattern[] =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Unicode White_Space (what tiktoken's `\s` means), as the body of an RE2 class.
inline constexpr char kWhiteSpace[] =
    "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

class Pretokenizer {
 public:
  enum class Engine {
    kAuto,  // a hand-written scanner for a pattern it knows, RE2 for any other
    kRe2,   // RE2 whatever the pattern
  };

  // For a tiktoken pat_str. With RE2, lookarounds other than the trailing
  // `\s+(?!\S)|\s+`, and possessive quantifiers, are refused (InvalidArgument).
  static absl::StatusOr<Pretokenizer> Create(absl::string_view pattern,
                                             Engine engine = Engine::kAuto);

  Pretokenizer(Pretokenizer&&) noexcept;
  Pretokenizer& operator=(Pretokenizer&&) noexcept;
  ~Pretokenizer();

  // Calls fn(piece) for each piece of `text` (valid UTF-8), in order. Characters that
  // no alternative matches are skipped, as tiktoken skips them.
  template <typename Fn>
  void ForEachPiece(absl::string_view text, Fn&& fn) const {
    size_t pos = 0;
    absl::string_view piece;
    while (Next(text, pos, piece)) fn(piece);
  }

  std::vector<std::string> Split(absl::string_view text) const;

  // The next piece of `text` at or after byte `pos` (a scan of the whole text that has
  // reached pos); advances pos past it. False, with pos at the end, when none is left.
  bool Next(absl::string_view text, size_t& pos, absl::string_view& piece) const;

  // "gpt2", "cl100k" or "o200k" for a hand-written scanner, else "re2".
  absl::string_view engine_name() const;

 private:
  enum class Scanner { kRe2, kGpt2, kCl100k, kO200k };
  Pretokenizer(Scanner scanner, std::unique_ptr<re2::RE2> re, std::unique_ptr<re2::RE2> body_re);

  Scanner scanner_;
  std::unique_ptr<re2::RE2> re_;       // the pattern, the lookahead tail as `[\s]+`
  std::unique_ptr<re2::RE2> body_re_;  // without that tail (null: no tail to emulate)
  // Whether an overall match `piece` came from the emulated tail.
  bool TailMatched(absl::string_view piece) const;
};

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_PRETOKENIZER_H_
