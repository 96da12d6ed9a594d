#include "tokenizer/pretokenizer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
  absl::StatusOr<std::string> translated = SpellOutWhiteSpace(body);
  if (!translated.ok()) return translated.status();
  if (emulate) absl::StrAppend(&*translated, "|([", kWhiteSpace, "]+)");
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingUTF8);
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(*translated, options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RE2 refuses the translated pattern (", re->error(), "): ", *translated));
  }
  return Pretokenizer(std::move(re), emulate);
}

Pretokenizer::Pretokenizer(std::unique_ptr<re2::RE2> re, bool emulate_lookahead)
    : re_(std::move(re)), emulate_lookahead_(emulate_lookahead) {}
Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;
Pretokenizer::~Pretokenizer() = default;

const std::string& Pretokenizer::re2_pattern() const { return re_->pattern(); }

bool Pretokenizer::Next(absl::string_view text, size_t& pos, absl::string_view& piece) const {
  if (pos >= text.size()) return false;
  re2::StringPiece groups[2];
  const int ngroups = emulate_lookahead_ ? 2 : 1;
  const re2::StringPiece input(text.data(), text.size());
  if (!re_->Match(input, pos, text.size(), RE2::UNANCHORED, groups, ngroups) || groups[0].empty()) {
    pos = text.size();
    return false;
  }
  size_t begin = static_cast<size_t>(groups[0].data() - text.data());
  size_t end = begin + groups[0].size();
  if (emulate_lookahead_ && groups[1].data() != nullptr && end < text.size()) {
    // The whitespace run stops before a non-space: `\s+(?!\S)` leaves its last
    // character to the next piece, unless that would leave nothing.
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
