#include "tokenizer/pretokenizer.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "re2/re2.h"
#include "tokenizer/unicode_tables.h"

namespace ember::tokenizer {
namespace {

constexpr absl::string_view kLookaheadTail = "|\\s+(?!\\S)|\\s+";

// The pattern with `\s` and `\S` spelled out as Unicode White_Space, inside and outside
// character classes.
absl::StatusOr<std::string> SpellOutWhiteSpace(absl::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') {
        absl::StrAppend(&out, in_class ? "" : "[", kWhiteSpace, in_class ? "" : "]");
      } else if (e == 'S') {
        if (in_class) {
          return absl::InvalidArgumentError(
              absl::StrCat("pattern uses \\S inside a character class (at byte ", i - 1, ")"));
        }
        absl::StrAppend(&out, "[^", kWhiteSpace, "]");
      } else {
        out.push_back(c);
        out.push_back(e);
        if ((e == 'p' || e == 'P') && i + 1 < pattern.size() && pattern[i + 1] == '{') {
          while (i + 1 < pattern.size() && pattern[i] != '}') out.push_back(pattern[++i]);  // \p{L}
        }
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out.push_back(c);
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out.push_back(pattern[++i]);  // literal ]
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    if (!in_class && (c == '+' || c == '*' || c == '?' || c == '}') && i + 1 < pattern.size() &&
        pattern[i + 1] == '+') {
      return absl::InvalidArgumentError(
          absl::StrCat("pattern uses a possessive quantifier at byte ", i, ", which RE2 lacks"));
    }
    out.push_back(c);
  }
  return out;
}

// Bytes in the UTF-8 sequence ending text[end - 1] (the last code point before end).
size_t LastCodePointBytes(absl::string_view text, size_t end) {
  size_t n = 1;
  while (n < 4 && n < end && (static_cast<unsigned char>(text[end - n]) & 0xC0) == 0x80) ++n;
  return n;
}

// Whether every code point of `s` (valid UTF-8) is Unicode White_Space (kWhiteSpace).
bool IsAllWhiteSpace(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    if (c < 0x80) {
      cp = c, i += 1;
    } else if (c < 0xE0 && i + 1 < s.size()) {
      cp = (c & 0x1Fu) << 6 | (s[i + 1] & 0x3Fu), i += 2;
    } else if (c < 0xF0 && i + 2 < s.size()) {
      cp = (c & 0x0Fu) << 12 | (s[i + 1] & 0x3Fu) << 6 | (s[i + 2] & 0x3Fu), i += 3;
    } else {
      return false;  // four-byte code points are never White_Space
    }
    const bool space = (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
                       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
                       cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
    if (!space) return false;
  }
  return true;
}

// --- The hand-written scanners ---------------------------------------------------
//
// Each returns the end of the piece that starts at byte i < n of s. Every character
// starts a piece under these patterns (each character is a letter, a number,
// whitespace or "other", and each pattern has an alternative for each), so the scan
// never skips. A byte that does not begin a valid UTF-8 sequence inside the text is a
// one-byte code point of no class, so nothing is read past s[n - 1].

using unicode::kLetter;
using unicode::kLowerOrMark;
using unicode::kNumber;
using unicode::kSpace;
using unicode::kUpperOrMark;

struct Char {
  uint8_t classes;
  uint8_t bytes;
};

// The code point at s[i] >= 0x80, i < n.
ABSL_ATTRIBUTE_NOINLINE Char MultibyteCharAt(const unsigned char* s, size_t n, size_t i) {
  const unsigned c = s[i];
  char32_t cp;
  uint8_t bytes;
  if (c >= 0xC2 && c < 0xE0 && i + 1 < n) {
    cp = (c & 0x1Fu) << 6 | (s[i + 1] & 0x3Fu), bytes = 2;
  } else if (c >= 0xE0 && c < 0xF0 && i + 2 < n) {
    cp = (c & 0x0Fu) << 12 | (s[i + 1] & 0x3Fu) << 6 | (s[i + 2] & 0x3Fu), bytes = 3;
  } else if (c >= 0xF0 && c < 0xF5 && i + 3 < n) {
    cp =
        (c & 0x07u) << 18 | (s[i + 1] & 0x3Fu) << 12 | (s[i + 2] & 0x3Fu) << 6 | (s[i + 3] & 0x3Fu),
    bytes = 4;
  } else {
    return {0, 1};
  }
  if (cp >= 0x110000) return {0, 1};
  return {unicode::ClassesOf(cp), bytes};
}

// The code point at s[i], i < n: ASCII inline, the rest out of line.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Char CharAt(const unsigned char* s, size_t n, size_t i) {
  if (s[i] < 0x80) return {unicode::kBlocks[0][s[i]], 1};
  return MultibyteCharAt(s, n, i);
}

inline bool IsNewline(unsigned char c) { return c == '\r' || c == '\n'; }

// How many of the 8 bytes at p, from the first, are ASCII letters: [A-Za-z], or with
// `lower_only` [a-z]; all 8 at once. A byte b is one when b < 0x80 and b (or b | 0x20,
// which maps 'A'-'Z' onto 'a'-'z' and no other byte into that range) is in 'a'..'z'.
// Each byte's test sets its high bit, and the additions cannot carry into the next byte
// (every sum is below 0x100).
inline size_t LeadingAsciiLetters(const unsigned char* p, bool lower_only) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte k of the word is p[k]");
  constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  uint64_t x;
  std::memcpy(&x, p, 8);
  const uint64_t low7 = (lower_only ? x : x | 0x20 * kOnes) & 0x7F * kOnes;
  const uint64_t at_least_a = low7 + (0x80 - 'a') * kOnes;
  const uint64_t past_z = low7 + (0x80 - 'z' - 1) * kOnes;
  const uint64_t not_letter = ~(at_least_a & ~past_z & ~x) & kHigh;
  return not_letter == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(not_letter)) >> 3;
}

// The end of the run from i of characters that have any of `classes`.
inline size_t RunEnd(const unsigned char* s, size_t n, size_t i, uint8_t classes) {
  while (i < n) {
    if (s[i] < 0x80) {  // ASCII without decoding
      // Eight at a time for the runs of letters (ASCII: [A-Za-z]) and of lowercase or
      // marks (ASCII: [a-z]).
      if ((classes == kLetter || classes == kLowerOrMark) && i + 8 <= n) {
        const size_t k = LeadingAsciiLetters(s + i, /*lower_only=*/classes == kLowerOrMark);
        i += k;
        if (k == 8 || s[i] >= 0x80) continue;
        break;  // an ASCII character that is not a letter
      }
      if (!(unicode::kBlocks[0][s[i]] & classes)) break;
      ++i;
      continue;
    }
    const Char c = CharAt(s, n, i);
    if (!(c.classes & classes)) break;
    i += c.bytes;
  }
  return i;
}

// The end of the run from i of "other" characters: [^\s\p{L}\p{N}].
inline size_t OtherRunEnd(const unsigned char* s, size_t n, size_t i) {
  while (i < n) {
    const Char c = CharAt(s, n, i);
    if (c.classes & (kLetter | kNumber | kSpace)) break;
    i += c.bytes;
  }
  return i;
}

// The end of the contraction 's 't 're 've 'm 'll 'd at i (s[i] == '\''), or i if none.
// `fold`: case-insensitive, as (?i:...), where a letter matches its simple case-fold
// orbit: the ASCII letter in either case, and for s also U+017F LATIN SMALL LETTER LONG S
// (C5 BF); tools/unicode/gen_tables.mjs checks that nothing else folds onto them.
inline size_t ContractionEnd(const unsigned char* s, size_t n, size_t i, bool fold) {
  if (i + 1 >= n) return i;
  // c | 0x20 maps only 'A'-'Z' onto 'a'-'z' among the bytes that can equal a letter.
  const auto lower = [&](size_t k) -> unsigned char { return fold ? s[k] | 0x20 : s[k]; };
  const unsigned char a = lower(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if (fold && s[i + 1] == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) return i + 3;  // 'ſ
  if (i + 2 >= n) return i;
  const unsigned char b = lower(i + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return i;
}

// The whitespace alternatives at i, where s[i] is whitespace. With `newlines` (cl100k,
// o200k) first `\s*[\r\n]+`: \s* takes the whole run and backtracks to its last \r or \n,
// which [\r\n]+ takes (nothing after it in the run is \r or \n), so the piece ends
// after the run's last newline, if it has one. Then `\s+(?!\S)|\s+` as the header
// derives: the whole run at the end of the text, else all but its last character,
// else the single character.
inline size_t WhitespaceEnd(const unsigned char* s, size_t n, size_t i, bool newlines) {
  size_t end = i, last = i, after_newline = i;
  while (end < n) {
    const Char c = CharAt(s, n, end);
    if (!(c.classes & kSpace)) break;
    last = end;
    end += c.bytes;
    if (IsNewline(s[last])) after_newline = end;
  }
  if (newlines && after_newline > i) return after_newline;
  if (end == n || last == i) return end;
  return last;
}

// \p{N}{1,3} at i, where s[i] is a number.
inline size_t NumbersEnd(const unsigned char* s, size_t n, size_t i) {
  size_t end = i + CharAt(s, n, i).bytes;
  for (int k = 1; k < 3 && end < n; ++k) {
    const Char d = CharAt(s, n, end);
    if (!(d.classes & kNumber)) break;
    end += d.bytes;
  }
  return end;
}

// ` ?[^\s\p{L}\p{N}]+[\r\n]*` (cl100k) or `...[\r\n/]*` (o200k, `slash`) at i, or 0 when
// it does not match. The trailing class only extends the run: it follows greedily and
// nothing after it can fail.
inline size_t OtherEnd(const unsigned char* s, size_t n, size_t i, bool slash) {
  constexpr uint8_t kNotOther = kLetter | kNumber | kSpace;
  size_t start = i;
  if (s[i] == ' ' && i + 1 < n && !(CharAt(s, n, i + 1).classes & kNotOther)) start = i + 1;
  if (CharAt(s, n, start).classes & kNotOther) return 0;
  size_t end = OtherRunEnd(s, n, start);
  while (end < n && (IsNewline(s[end]) || (slash && s[end] == '/'))) ++end;
  return end;
}

// gpt2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t Gpt2PieceEnd(const unsigned char* s, size_t n, size_t i) {
  if (s[i] == '\'') {
    const size_t end = ContractionEnd(s, n, i, /*fold=*/false);
    if (end > i) return end;
  }
  // ` ?X+` for X a letter, a number or other: the space is taken when an X follows it
  // (and the three X are disjoint, so whichever follows picks the alternative).
  size_t start = i;
  Char c = CharAt(s, n, i);
  if (s[i] == ' ' && i + 1 < n) {
    const Char next = CharAt(s, n, i + 1);
    if (!(next.classes & kSpace)) start = i + 1, c = next;
  }
  if (c.classes & kLetter) return RunEnd(s, n, start, kLetter);
  if (c.classes & kNumber) return RunEnd(s, n, start, kNumber);
  if (!(c.classes & kSpace)) return OtherRunEnd(s, n, start);
  return WhitespaceEnd(s, n, i, /*newlines=*/false);
}

// cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//         | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t Cl100kPieceEnd(const unsigned char* s, size_t n, size_t i) {
  if (s[i] == '\'') {
    const size_t end = ContractionEnd(s, n, i, /*fold=*/true);
    if (end > i) return end;
  }
  const Char c = CharAt(s, n, i);
  if (c.classes & kLetter) return RunEnd(s, n, i, kLetter);
  // [^\r\n\p{L}\p{N}]\p{L}+ (a prefix that is not a letter: the prefix-less form
  // cannot match here).
  if (!(c.classes & kNumber) && !IsNewline(s[i]) && i + c.bytes < n &&
      (CharAt(s, n, i + c.bytes).classes & kLetter)) {
    return RunEnd(s, n, i + c.bytes, kLetter);
  }
  if (c.classes & kNumber) return NumbersEnd(s, n, i);
  if (const size_t end = OtherEnd(s, n, i, /*slash=*/false)) return end;
  return WhitespaceEnd(s, n, i, /*newlines=*/true);
}

// o200k's letter alternatives from `start`, with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]; 0 when the alternative fails there.
// - `U*W+C?` (upper_first false): U* takes the longest U run, then backs off one
//   character at a time until W+ can start, i.e. to the last position p in the run, or
//   just after it, that holds a W; W+ then takes the W run from p (nothing after it can
//   fail: C? is optional).
// - `U+W*C?`: the U run, if not empty, then the W run after it.
// C? is the optional (?i) contraction.
size_t O200kLettersEnd(const unsigned char* s, size_t n, size_t start, bool upper_first) {
  size_t end = start, w_start = 0;  // 0: no W seen (a W at start gives w_start = start + 1)
  while (end < n) {
    const Char c = CharAt(s, n, end);
    if (!(c.classes & kUpperOrMark)) {
      if (c.classes & kLowerOrMark) w_start = end + 1;
      break;
    }
    if (c.classes & kLowerOrMark) w_start = end + 1;
    end += c.bytes;
  }
  size_t w_from;
  if (upper_first) {
    if (end == start) return 0;
    w_from = end;
  } else {
    if (w_start == 0) return 0;
    w_from = w_start - 1;
  }
  end = RunEnd(s, n, w_from, kLowerOrMark);
  if (end < n && s[end] == '\'') end = ContractionEnd(s, n, end, /*fold=*/true);
  return end;
}

// o200k: [^\r\n\p{L}\p{N}]?U*W+C?|[^\r\n\p{L}\p{N}]?U+W*C?|\p{N}{1,3}
//        | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t O200kPieceEnd(const unsigned char* s, size_t n, size_t i) {
  const Char c = CharAt(s, n, i);
  // Each letter alternative tries its optional prefix first, then goes without.
  const bool prefix = !(c.classes & (kLetter | kNumber)) && !IsNewline(s[i]) && i + c.bytes < n;
  for (const bool upper_first : {false, true}) {
    if (prefix) {
      if (const size_t end = O200kLettersEnd(s, n, i + c.bytes, upper_first)) return end;
    }
    if (const size_t end = O200kLettersEnd(s, n, i, upper_first)) return end;
  }
  if (c.classes & kNumber) return NumbersEnd(s, n, i);
  if (const size_t end = OtherEnd(s, n, i, /*slash=*/true)) return end;
  return WhitespaceEnd(s, n, i, /*newlines=*/true);
}

}  // namespace

absl::StatusOr<Pretokenizer> Pretokenizer::Create(absl::string_view pattern, Engine engine) {
  if (engine == Engine::kAuto) {
    for (const auto& [known, scanner] :
         {std::pair<absl::string_view, Scanner>{kGpt2Pattern, Scanner::kGpt2},
          {kCl100kPattern, Scanner::kCl100k},
          {kO200kPattern, Scanner::kO200k}}) {
      if (pattern == known) return Pretokenizer(scanner, nullptr, nullptr);
    }
  }
  absl::string_view body = pattern;
  const bool emulate = absl::EndsWith(body, kLookaheadTail);
  if (emulate) body.remove_suffix(kLookaheadTail.size());
  for (const char* look : {"(?=", "(?!", "(?<=", "(?<!"}) {
    if (absl::StrContains(body, look)) {
      return absl::InvalidArgumentError(absl::StrCat("pattern has a lookaround ", look,
                                                     "...) that RE2 cannot run; only a trailing ",
                                                     kLookaheadTail, " is emulated: ", pattern));
    }
  }
  ASSIGN_OR_RETURN(std::string translated, SpellOutWhiteSpace(body));
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingUTF8);
  options.set_log_errors(false);
  // The Unicode classes make a large DFA; RE2's default 8 MB budget makes it rebuild its
  // state cache over and over on mixed-script text.
  options.set_max_mem(int64_t{64} << 20);
  auto compile = [&](const std::string& p) -> absl::StatusOr<std::unique_ptr<RE2>> {
    auto re = std::make_unique<RE2>(p, options);
    if (!re->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("RE2 refuses the translated pattern (", re->error(), "): ", p));
    }
    return re;
  };
  std::unique_ptr<RE2> body_re;
  if (emulate) {
    ASSIGN_OR_RETURN(std::unique_ptr<RE2> b, compile(translated));
    body_re = std::move(b);
    absl::StrAppend(&translated, "|[", kWhiteSpace, "]+");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, compile(translated));
  return Pretokenizer(Scanner::kRe2, std::move(re), std::move(body_re));
}

Pretokenizer::Pretokenizer(Scanner scanner, std::unique_ptr<re2::RE2> re,
                           std::unique_ptr<re2::RE2> body_re)
    : scanner_(scanner), re_(std::move(re)), body_re_(std::move(body_re)) {}

// A match P that is all whitespace came from the body exactly when the body can match
// all of P: if the body matched at P's start, leftmost-first would have returned the
// body's match, so that is P; and if the body can match P, it matches there.
bool Pretokenizer::TailMatched(absl::string_view piece) const {
  return IsAllWhiteSpace(piece) &&
         !RE2::FullMatch(re2::StringPiece(piece.data(), piece.size()), *body_re_);
}

Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;
Pretokenizer::~Pretokenizer() = default;

absl::string_view Pretokenizer::engine_name() const {
  switch (scanner_) {
    case Scanner::kGpt2:
      return "gpt2";
    case Scanner::kCl100k:
      return "cl100k";
    case Scanner::kO200k:
      return "o200k";
    case Scanner::kRe2:
      break;
  }
  return "re2";
}

bool Pretokenizer::Next(absl::string_view text, size_t& pos, absl::string_view& piece) const {
  if (pos >= text.size()) return false;
  if (scanner_ != Scanner::kRe2) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    const size_t end = scanner_ == Scanner::kCl100k  ? Cl100kPieceEnd(s, n, pos)
                       : scanner_ == Scanner::kO200k ? O200kPieceEnd(s, n, pos)
                                                     : Gpt2PieceEnd(s, n, pos);
    piece = text.substr(pos, end - pos);
    pos = end;
    return true;
  }
  const re2::StringPiece input(text.data(), text.size());
  re2::StringPiece match;
  // Anchored first: with these patterns every character starts a piece, and an anchored
  // search needs neither RE2's unanchored loop nor its reverse pass for the start.
  if (!re_->Match(input, pos, text.size(), RE2::ANCHOR_START, &match, 1) || match.empty()) {
    if (!re_->Match(input, pos, text.size(), RE2::UNANCHORED, &match, 1) || match.empty()) {
      pos = text.size();
      return false;
    }
  }
  const size_t begin = static_cast<size_t>(match.data() - text.data());
  size_t end = begin + match.size();
  if (body_re_ != nullptr && end < text.size() && TailMatched(text.substr(begin, end - begin))) {
    // `\s+(?!\S)` stops before a non-space leaving its last character to the next
    // piece, unless that would leave nothing.
    const size_t last = LastCodePointBytes(text, end);
    if (end - begin > last) end -= last;
  }
  piece = text.substr(begin, end - begin);
  pos = end;
  return true;
}

std::vector<std::string> Pretokenizer::Split(absl::string_view text) const {
  std::vector<std::string> pieces;
  ForEachPiece(text, [&](absl::string_view p) { pieces.emplace_back(p); });
  return pieces;
}

}  // namespace ember::tokenizer
