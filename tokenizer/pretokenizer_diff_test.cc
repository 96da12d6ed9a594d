// The hand-written scanners (Pretokenizer's kAuto engine on tiktoken's patterns)
// against RE2 running the same patterns (kRe2), piece for piece: on every code point in
// a few contexts, on random text over an alphabet of the characters the patterns treat
// differently, and on every string of up to three of those characters. The texts hold
// only code points that RE2's Unicode 15.0 and the tables' 16.0 class alike; the
// tables themselves are checked against RE2's first.

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/re2_classes.h"
#include "tokenizer/unicode_tables.h"

namespace ember::tokenizer {
namespace {

const Re2Classes& Re2() {
  static const Re2Classes* classes = new Re2Classes();
  return *classes;
}

struct Engines {
  const char* name;
  Pretokenizer scanner;
  Pretokenizer re2;
};

std::vector<Engines>& AllEngines() {
  static auto* engines = [] {
    auto* e = new std::vector<Engines>();
    for (const auto& [name, pattern] : {std::pair<const char*, const char*>{"gpt2", kGpt2Pattern},
                                        {"cl100k", kCl100kPattern},
                                        {"o200k", kO200kPattern}}) {
      e->push_back({name, *Pretokenizer::Create(pattern),
                    *Pretokenizer::Create(pattern, Pretokenizer::Engine::kRe2)});
    }
    return e;
  }();
  return *engines;
}

std::string Escaped(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

// Whether both engines split `text` alike; the first few differences are reported.
bool SameSplit(const Engines& e, const std::string& text) {
  static int reported = 0;
  const std::vector<std::string> mine = e.scanner.Split(text), theirs = e.re2.Split(text);
  if (mine == theirs) return true;
  if (reported++ < 10) {
    std::string a, b;
    for (const std::string& p : mine) a += "[" + Escaped(p) + "]";
    for (const std::string& p : theirs) b += "[" + Escaped(p) + "]";
    ADD_FAILURE() << e.name << " splits \"" << Escaped(text) << "\" as " << a << ", RE2 as " << b;
  }
  return false;
}

TEST(UnicodeTablesTest, AreRe2sUnicode15PlusWhatLaterVersionsAssigned) {
  int changed = 0, added = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;
    const uint8_t ours = unicode::ClassesOf(cp), theirs = Re2().Of(cp);
    if (ours == theirs) continue;
    if (Re2().Assigned(cp)) {
      if (++changed <= 10)
        ADD_FAILURE() << "U+" << std::hex << cp << ": tables " << int{ours} << ", RE2 "
                      << int{theirs};
    } else {
      ++added;
    }
  }
  EXPECT_EQ(changed, 0) << "code points RE2 knows that the tables class differently";
  // Unicode 15.1 and 16.0 assigned 627 + 5,185 characters, most of them letters.
  EXPECT_GT(added, 4000);
  EXPECT_LT(added, 5812);
  std::printf("%d code points assigned after Unicode 15.0 are letters, numbers or marks\n", added);
}

// The characters that pick alternatives: ASCII of every kind, the contraction letters
// (and U+017F, which (?i) folds onto s), whitespace of 1-3 bytes, letters of every
// general category, marks, numbers, symbols and format characters, 1-4 bytes long.
const char32_t kAlphabet[] = {
    'a',     'b',     'Z',     's',     'S',     't',    'T',    'r',    'R', 'e',
    'E',     'v',     'm',     'M',     'l',     'L',    'd',    'D',    '0', '7',
    ' ',     ' ',     '\t',    '\n',    '\r',    '\x0B', '\'',   '!',    '/', '.',
    '-',     0x017F,  0x00A0,  0x0085,  0x1680,  0x2003, 0x2028, 0x3000,  // White_Space
    0x00E9,  0x00C9,  0x01C5,  0x02B0,  0x4E2D,  0x05D0,                  // Ll Lu Lt Lm Lo Lo
    0x0301,  0x0903,  0x20DD,                                             // Mn Mc Me
    0x0663,  0x216B,  0x00BD,                                             // Nd Nl No
    0x200B,  0x200D,  0xFEFF,  0x00AD,                                    // Cf
    0x20AC,  0x2211,  0x1F600, 0x1F3FD,                                   // Sc Sm So Sk
    0x1D400, 0x1D41A, 0x20000, 0x1D7CE, 0x1E944,                          // 4-byte Lu Ll Lo Nd Mn
    0x0378,                                                               // unassigned
};

std::string Utf8(std::initializer_list<char32_t> cps) {
  std::string out;
  for (const char32_t cp : cps) AppendUtf8(cp, out);
  return out;
}

TEST(PretokenizerDiffTest, UsesTheScannersForTiktokensPatterns) {
  for (const Engines& e : AllEngines()) {
    EXPECT_EQ(e.scanner.engine_name(), e.name);
    EXPECT_EQ(e.re2.engine_name(), "re2");
  }
  EXPECT_EQ(Pretokenizer::Create("[a-z]+|.")->engine_name(), "re2");
}

TEST(PretokenizerDiffTest, EveryStringOfUpToThreeCharacters) {
  std::vector<std::string> chars;
  for (const char32_t cp : kAlphabet) chars.push_back(Utf8({cp}));
  for (const Engines& e : AllEngines()) {
    int differ = 0;
    for (const std::string& a : chars) {
      differ += !SameSplit(e, a);
      for (const std::string& b : chars) {
        differ += !SameSplit(e, a + b);
        for (const std::string& c : chars) differ += !SameSplit(e, a + b + c);
      }
    }
    EXPECT_EQ(differ, 0) << e.name;
  }
}

TEST(PretokenizerDiffTest, RandomText) {
  std::mt19937 rng(7);
  for (const Engines& e : AllEngines()) {
    int differ = 0;
    for (int i = 0; i < 20000; ++i) {
      // Runs of one character now and then: whitespace runs, letter runs, mark runs.
      std::string text;
      const int length = static_cast<int>(rng() % 40);
      for (int k = 0; k < length; ++k) {
        const std::string c = Utf8({kAlphabet[rng() % std::size(kAlphabet)]});
        for (int r = rng() % 8 == 0 ? 1 + static_cast<int>(rng() % 6) : 1; r > 0; --r) text += c;
      }
      differ += !SameSplit(e, text);
    }
    EXPECT_EQ(differ, 0) << e.name;
  }
}

// The scanners take ASCII letter runs eight bytes at a time: every ASCII byte, and a
// multibyte letter, mark and symbol, at every place in such a run, in both cases.
TEST(PretokenizerDiffTest, EveryAsciiByteAtEveryPlaceInALetterRun) {
  std::vector<std::string> breaks = {Utf8({0x00E9}), Utf8({0x0301}), Utf8({0x20AC})};
  for (int b = 0; b < 0x80; ++b) breaks.push_back(std::string(1, static_cast<char>(b)));
  for (const Engines& e : AllEngines()) {
    int differ = 0;
    for (const std::string& at : breaks) {
      for (int k = 0; k <= 17; ++k) {
        for (const char* letters : {"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                    "aBcDeFgHiJkLmNoPqRsTuVwXyZ"}) {
          const std::string run(letters);
          differ += !SameSplit(e, " " + run.substr(0, k) + at + run.substr(k));
          differ += !SameSplit(e, run.substr(0, k) + at);  // near the end of the text
        }
      }
    }
    EXPECT_EQ(differ, 0) << e.name;
  }
}

TEST(PretokenizerDiffTest, EveryCodePointInContext) {
  for (const Engines& e : AllEngines()) {
    int differ = 0, tried = 0;
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if ((cp >= 0xD800 && cp < 0xE000) || Re2().Of(cp) != unicode::ClassesOf(cp)) continue;
      // Every code point below U+3400, then a sample of the large uniform blocks.
      if (cp >= 0x3400 && cp % 61 != 0) continue;
      ++tried;
      // Before and after a space, a letter, a digit, a contraction, a newline, a
      // mark, upper and lower case.
      differ += !SameSplit(e, Utf8({' ',  cp, cp,    'a', cp, '1', cp,  '\'', 's', ' ', cp,
                                    '\n', cp, 0x301, 'A', cp, 'B', 'c', cp,   ' ', ' ', cp}));
    }
    EXPECT_EQ(differ, 0) << e.name;
    EXPECT_GT(tried, 20000);
  }
}

}  // namespace
}  // namespace ember::tokenizer
