#include "tokenizer/re2_classes.h"

#include <string>

#include "re2/re2.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode_tables.h"

namespace ember::tokenizer {

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | cp >> 6));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | cp >> 12));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | cp >> 18));
    out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Re2Classes::Re2Classes() : classes_(0x110000, 0), assigned_(0x110000, false) {
  const std::string space = std::string("[") + kWhiteSpace + "]";
  const std::pair<uint8_t, RE2*> classes[] = {
      {unicode::kLetter, new RE2("\\p{L}")},
      {unicode::kNumber, new RE2("\\p{N}")},
      {unicode::kSpace, new RE2(space)},
      {unicode::kUpperOrMark, new RE2("[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]")},
      {unicode::kLowerOrMark, new RE2("[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]")},
  };
  const RE2 assigned("[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}\\p{Z}\\p{Cc}\\p{Cf}\\p{Co}]");
  std::string utf8;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;  // surrogates are not text
    utf8.clear();
    AppendUtf8(cp, utf8);
    for (const auto& [bit, re] : classes) {
      if (RE2::FullMatch(utf8, *re)) classes_[cp] |= bit;
    }
    assigned_[cp] = RE2::FullMatch(utf8, assigned);
  }
  for (const auto& [bit, re] : classes) delete re;
}

bool Re2Classes::AgreeOn(absl::string_view text) const {
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (i + n > text.size()) return false;
    char32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    if (cp >= 0x110000 || Of(cp) != unicode::ClassesOf(cp)) return false;
    i += n;
  }
  return true;
}

}  // namespace ember::tokenizer
