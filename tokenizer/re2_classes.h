#ifndef EMBER_TOKENIZER_RE2_CLASSES_H_
#define EMBER_TOKENIZER_RE2_CLASSES_H_

// The character classes of tokenizer/unicode_tables.h as RE2 knows them (Debian's RE2:
// Unicode 15.0), for the tests and the fuzzer that compare the hand-written scanners
// with RE2: they agree on text whose every code point RE2 classes as the tables do.

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace ember::tokenizer {

class Re2Classes {
 public:
  // Classes every code point through RE2 (about a second).
  Re2Classes();

  // unicode::Class bits of cp <= U+10FFFF by RE2's tables.
  uint8_t Of(char32_t cp) const { return classes_[cp]; }
  // Whether RE2 knows cp at all (assigned by Unicode 15.0: in a general category
  // other than Cn).
  bool Assigned(char32_t cp) const { return assigned_[cp]; }
  // Whether RE2 and unicode_tables.h class every code point of `text` (UTF-8) alike.
  bool AgreeOn(absl::string_view text) const;

 private:
  std::vector<uint8_t> classes_;
  std::vector<bool> assigned_;
};

// Appends cp as UTF-8.
void AppendUtf8(char32_t cp, std::string& out);

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_RE2_CLASSES_H_
