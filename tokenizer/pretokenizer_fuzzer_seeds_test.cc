// Runs the fuzz target's checks (pretokenizer_fuzzer.cc) over seed inputs in every
// build: the tiktoken test vectors with every pattern, malformed UTF-8 (cut sequences at
// the end of the text, stray continuation bytes, surrogates, overlong forms), long runs,
// and random bytes.

#include <cstdint>
#include <fstream>
#include <random>
#include <string>

#include "base/fuzz_input.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::ember::FeedFuzzTarget;

TEST(PretokenizerFuzzerSeedsTest, VectorsMalformedLongAndRandomInputs) {
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  ASSERT_TRUE(in);
  for (std::string line; std::getline(in, line);) {
    const std::string text = nlohmann::json::parse(line)["text"];
    for (const uint8_t selector : {0, 1, 2}) FeedFuzzTarget(selector, text);
  }
  for (const char* bad :
       {"\xff", "a\xC3", "a \xE3\x80", "x\xF0\x9F\x98", "\x80\x80 a", "\xED\xA0\x80",
        "\xF4\x90\x80\x80", "ok\xC0\xAF", "'\xC5", "A\xCC", " \xE2\x80"}) {
    for (const uint8_t selector : {0, 1, 2}) FeedFuzzTarget(selector, bad);
  }
  for (const char* unit : {" ", "a", "A", "\xCC\x81", "\xE3\x80\x80", "\r\n", "'s", "1", "!/"}) {
    std::string run;
    while (run.size() < 5000) run += unit;
    for (const uint8_t selector : {0, 1, 2}) FeedFuzzTarget(selector, run);
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0x80 | rng() % 0x40 : rng());
    FeedFuzzTarget(static_cast<uint8_t>(trial), bytes);
  }
  FeedFuzzTarget(0, "");
}

}  // namespace
