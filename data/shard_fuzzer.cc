// libFuzzer target for the token shard reader (ember_fuzzer, base/fuzzer.bzl). For any
// bytes, TokenShard::Open accepts exactly the files whose 1,024-byte header has
// llm.c's magic and version and a token count that the bytes after it hold exactly, and
// the headerless ones (no magic, an even number of bytes, not printable ASCII text),
// and refuses the rest with InvalidArgument; CheckVocabulary refuses exactly the shards
// with a token at or above the vocabulary size.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "data/shards.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  namespace d = ember::data;
  int32_t header[3] = {0, 0, -1};
  if (size >= sizeof(header)) std::memcpy(header, data, sizeof(header));
  int32_t magic = 0;
  if (size >= sizeof(magic)) std::memcpy(&magic, data, sizeof(magic));
  const bool llmc = size >= sizeof(magic) && magic == d::kShardMagic;
  const bool text = std::all_of(data, data + std::min<size_t>(size, 512), [](uint8_t c) {
    return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r';
  });
  const bool valid =
      llmc ? size >= static_cast<size_t>(d::kShardHeaderBytes) && header[1] == d::kShardVersion &&
                 header[2] >= 0 &&
                 static_cast<uint64_t>(size) ==
                     static_cast<uint64_t>(d::kShardHeaderBytes) + 2 * uint64_t(header[2])
           : size > 0 && size % 2 == 0 && !text;
  const absl::StatusOr<d::TokenShard> shard =
      d::TokenShard::Open(ember::FuzzInputFile("input.bin", data, size));
  FuzzCheck(shard.ok() == valid,
            absl::StrCat("Open disagrees with the format: ", shard.status().ToString()));
  if (!shard.ok()) {
    FuzzCheck(shard.status().code() == absl::StatusCode::kInvalidArgument,
              "a malformed shard is not InvalidArgument");
    return 0;
  }
  FuzzCheck(shard->size() == (llmc ? header[2] : static_cast<int64_t>(size / 2)),
            "the token count");
  uint16_t largest = 0;
  for (int64_t i = 0; i < shard->size(); ++i) largest = std::max(largest, shard->tokens()[i]);
  for (const int64_t vocab : {int64_t{256}, int64_t{50257}}) {
    FuzzCheck(shard->CheckVocabulary(vocab).ok() == (shard->size() == 0 || largest < vocab),
              "CheckVocabulary");
  }
  return 0;
}
