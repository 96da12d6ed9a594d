// Runs the fuzz target's checks (encoding_fuzzer.cc) over seed inputs in every build:
// each tiktoken test vector with every encoding, short texts through the parallel check,
// a few malformed byte strings, and random bytes.

#include <cstdint>
#include <fstream>
#include <random>
#include <string>

#include "base/fuzz_input.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::ember::FeedFuzzTarget;

TEST(EncodingFuzzerSeedsTest, VectorsMalformedAndRandomInputs) {
  std::ifstream in("tokenizer/testdata/tiktoken_vectors.jsonl");
  ASSERT_TRUE(in);
  int n = 0;
  for (std::string line; std::getline(in, line) && n < 60; ++n) {
    const std::string text = nlohmann::json::parse(line)["text"];
    for (const uint8_t selector : {0, 1, 2}) FeedFuzzTarget(selector, text);
  }
  // The parallel check: short inputs whose FNV-1a hash is 0 mod 1,024 (a suffix of three
  // letters found for each, so that the three encodings and several scripts go through).
  int parallel = 0;
  for (const char* text : {"Hello world", "x = f(1, 2);\n", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
                           "it's we'll I'd"}) {
    for (const uint8_t selector : {0, 1, 2}) {
      for (int tail = 0; tail < 26 * 26 * 26; ++tail) {
        std::string input(1, static_cast<char>(selector));
        input += text;
        input += {static_cast<char>('a' + tail / 676), static_cast<char>('a' + tail / 26 % 26),
                  static_cast<char>('a' + tail % 26)};
        uint32_t hash = 2166136261u;
        for (const char c : input) hash = (hash ^ static_cast<uint8_t>(c)) * 16777619u;
        if ((hash & 1023) != 0) continue;
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        ++parallel;
        break;
      }
    }
  }
  EXPECT_EQ(parallel, 12) << "a seed did not reach the parallel check";
  for (const char* bad : {"\xff", "a\xC3", "\xED\xA0\x80", "\xF4\x90\x80\x80", "ok\xC0\xAF"})
    FeedFuzzTarget(1, bad);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    std::string bytes(rng() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    FeedFuzzTarget(static_cast<uint8_t>(trial), bytes);
  }
  FeedFuzzTarget(0, "");
}

}  // namespace
