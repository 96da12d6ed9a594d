#include "tokenizer/pretokenizer.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "re2/re2.h"

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
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);  // literal ]
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
                       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
                       cp == 0x202F || cp == 0x205F || cp == 0x3000;
    if (!space) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Pretokenizer> Pretokenizer::Create(absl::string_view pattern) {
  absl::string_view body = pattern;
  const bool emulate = absl::EndsWith(body, kLookaheadTail);
  if (emulate) body.remove_suffix(kLookaheadTail.size());
  for (const char* look : {"(?=", "(?!", "(?<=", "(?<!"}) {
    if (absl::StrContains(body, look)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pattern has a lookaround ", look, "...) that RE2 cannot run; only a trailing ",
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
  return Pretokenizer(std::move(re), std::move(body_re));
}

Pretokenizer::Pretokenizer(std::unique_ptr<re2::RE2> re, std::unique_ptr<re2::RE2> body_re)
    : re_(std::move(re)), body_re_(std::move(body_re)) {}

// A match P that is all whitespace came from the body exactly when the body can match
// all of P: if the body matched at P's start, leftmost-first would have returned the
// body's match, so that is P; and if the body can match P, it matches there.
bool Pretokenizer::TailMatched(absl::string_view piece) const {
  return IsAllWhiteSpace(piece) && !RE2::FullMatch(re2::StringPiece(piece.data(), piece.size()), *body_re_);
}

Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;
Pretokenizer::~Pretokenizer() = default;

const std::string& Pretokenizer::re2_pattern() const { return re_->pattern(); }

bool Pretokenizer::Next(absl::string_view text, size_t& pos, absl::string_view& piece) const {
  if (pos >= text.size()) return false;
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
