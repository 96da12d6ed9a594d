#include "data/shards.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/status.h"

namespace ember::data {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status WriteTokenShard(const std::string& path, absl::Span<const uint16_t> tokens) {
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shard holds at most ", INT32_MAX, " tokens, not ", tokens.size()));
  }
  std::vector<int32_t> header(256, 0);
  header[0] = kShardMagic;
  header[1] = kShardVersion;
  header[2] = static_cast<int32_t>(tokens.size());
  const absl::string_view pieces[] = {
      {reinterpret_cast<const char*>(header.data()), header.size() * sizeof(int32_t)},
      {reinterpret_cast<const char*>(tokens.data()), tokens.size() * sizeof(uint16_t)}};
  return WriteFileAtomically(path, pieces);
}

absl::StatusOr<TokenShard> TokenShard::Open(const std::string& path, int64_t vocab_size) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return absl::NotFoundError(
        absl::StrCat("cannot open token shard ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return Errno("cannot stat", path);
  }
  const size_t bytes = static_cast<size_t>(st.st_size);
  auto bad = [&](int64_t offset, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": at byte ", offset, ": ", what));
  };
  if (bytes == 0) {
    close(fd);
    return bad(0, "empty: neither an llm.c shard nor headerless uint16 tokens");
  }
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return Errno("cannot map", path);
  TokenShard shard(path, map, bytes, nullptr, 0);  // unmaps on every return below
  const auto* data = static_cast<const unsigned char*>(map);
  int32_t magic = 0;
  if (bytes >= sizeof(magic)) std::memcpy(&magic, data, sizeof(magic));
  if (magic != kShardMagic) {
    // Headerless uint16 tokens (nanoGPT's train.bin), unless the bytes say otherwise.
    if (bytes % 2 != 0) {
      return bad(static_cast<int64_t>(bytes) - 1,
                 absl::StrCat("neither an llm.c shard (no magic number ", kShardMagic,
                              " at its start) nor headerless uint16 tokens (", bytes,
                              " bytes, an odd number)"));
    }
    const size_t look = std::min<size_t>(bytes, 512);
    const bool text = std::all_of(data, data + look, [](unsigned char c) {
      return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r';
    });
    if (text) {
      return bad(0,
                 "text, not tokens: tokenize it first (tools/tokenize), or pass it as "
                 "text where a binary takes text");
    }
    shard.tokens_ = reinterpret_cast<const uint16_t*>(data);
    shard.size_ = static_cast<int64_t>(bytes / 2);
    shard.header_bytes_ = 0;
    if (vocab_size > 0) {
      RETURN_IF_ERROR(shard.CheckVocabulary(vocab_size));
    }
    return shard;
  }
  if (bytes < static_cast<size_t>(kShardHeaderBytes)) {
    return bad(static_cast<int64_t>(bytes),
               absl::StrCat("truncated: the file has ", bytes, " bytes, the header alone ",
                            kShardHeaderBytes));
  }
  int32_t header[3];
  std::memcpy(header, map, sizeof(header));
  if (header[1] != kShardVersion) {
    return bad(
        4, absl::StrCat("version ", header[1], ", expected ", kShardVersion, " (uint16 tokens)"));
  }
  const size_t data_bytes = bytes - kShardHeaderBytes;
  if (header[2] < 0 || data_bytes != 2 * static_cast<size_t>(header[2])) {
    return bad(8, absl::StrCat("the header counts ", header[2], " tokens, but ", data_bytes,
                               " bytes follow it (", data_bytes / 2, " tokens",
                               data_bytes % 2 ? " and a half" : "", ")"));
  }
  shard.tokens_ =
      reinterpret_cast<const uint16_t*>(static_cast<const char*>(map) + kShardHeaderBytes);
  shard.size_ = header[2];
  if (vocab_size > 0) {
    RETURN_IF_ERROR(shard.CheckVocabulary(vocab_size));
  }
  return shard;
}

absl::Status TokenShard::CheckVocabulary(int64_t vocab_size) const {
  for (int64_t i = 0; i < size_; ++i) {
    if (tokens_[i] >= vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat(path_, ": at byte ", header_bytes_ + 2 * i,
                                                     ": token ", tokens_[i], " (token ", i,
                                                     ") is beyond the vocabulary of ", vocab_size));
    }
  }
  return absl::OkStatus();
}

TokenShard::TokenShard(std::string path, void* map, size_t map_bytes, const uint16_t* tokens,
                       int64_t size)
    : path_(std::move(path)), map_(map), map_bytes_(map_bytes), tokens_(tokens), size_(size) {}

TokenShard::TokenShard(TokenShard&& other) noexcept { *this = std::move(other); }

TokenShard& TokenShard::operator=(TokenShard&& other) noexcept {
  if (this != &other) {
    if (map_ != nullptr) munmap(map_, map_bytes_);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    tokens_ = std::exchange(other.tokens_, nullptr);
    size_ = std::exchange(other.size_, 0);
    header_bytes_ = other.header_bytes_;
  }
  return *this;
}

TokenShard::~TokenShard() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

}  // namespace ember::data
