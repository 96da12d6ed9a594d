#ifndef EMBER_DATA_SHARDS_H_
#define EMBER_DATA_SHARDS_H_

// Token shards in llm.c's format, which nanoGPT-style tools read too: a header of 256
// little-endian int32 (magic 20240520, version 1, the token count, then zeros), then
// the tokens as little-endian uint16; or nanoGPT's (and SciCore's) headerless files,
// the uint16 tokens alone. Shards are read memory-mapped.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ember::data {

inline constexpr int32_t kShardMagic = 20240520;
inline constexpr int32_t kShardVersion = 1;
inline constexpr int64_t kShardHeaderBytes = 256 * 4;

// Written to a temporary file beside `path`, then renamed over it.
absl::Status WriteTokenShard(const std::string& path, absl::Span<const uint16_t> tokens);

class TokenShard {
 public:
  // A file that starts with llm.c's magic is an llm.c shard: its header is checked
  // against the file (size, version, and that the count matches the bytes that follow).
  // Any other is read as headerless uint16 tokens, if it can be: an even number of
  // bytes, at least one token, and not text (a start of printable ASCII only: tokenize
  // it first). With vocab_size > 0, every token must be below it. Each failure is an
  // InvalidArgument naming the file and the byte offset.
  static absl::StatusOr<TokenShard> Open(const std::string& path, int64_t vocab_size = 0);

  TokenShard(TokenShard&& other) noexcept;
  TokenShard& operator=(TokenShard&& other) noexcept;
  TokenShard(const TokenShard&) = delete;
  TokenShard& operator=(const TokenShard&) = delete;
  ~TokenShard();

  // InvalidArgument naming the file and byte offset of the first token >= vocab_size.
  absl::Status CheckVocabulary(int64_t vocab_size) const;

  int64_t size() const { return size_; }
  // The tokens, little-endian uint16 in the mapped file (x86 and ARM read them as is).
  const uint16_t* tokens() const { return tokens_; }
  const std::string& path() const { return path_; }
  // Whether the file is headerless (nanoGPT's) rather than llm.c's.
  bool headerless() const { return header_bytes_ == 0; }

 private:
  TokenShard(std::string path, void* map, size_t map_bytes, const uint16_t* tokens, int64_t size);

  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint16_t* tokens_ = nullptr;
  int64_t size_ = 0;
  int64_t header_bytes_ = kShardHeaderBytes;  // where the tokens start in the file
};

}  // namespace ember::data

#endif  // EMBER_DATA_SHARDS_H_
