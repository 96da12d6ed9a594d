#ifndef EMBER_TOKENIZER_ENCODING_H_
#define EMBER_TOKENIZER_ENCODING_H_

// Byte-level BPE exactly as OpenAI's tiktoken: the text is split into pieces by the
// encoding's pattern (tokenizer/pretokenizer.h); a piece that is itself a token is that
// token; otherwise its UTF-8 bytes start as single bytes and the adjacent pair whose
// concatenation has the lowest rank is merged, again and again (the leftmost pair on a
// tie), until no adjacent pair is a token. A token's rank is its id.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/pretokenizer.h"

namespace ember::tokenizer {

using Rank = uint32_t;

// Token bytes -> rank (= id). Every single byte must be a token, so any text encodes.
using Ranks = absl::flat_hash_map<std::string, Rank>;

// Ranks for the merge loop's many lookups. One- and two-byte strings (the merge's
// first pairs) index an array of 65,536 + 256 ranks that stays in cache. Longer ones
// go to an open-addressing table of 16-byte slots (linear probing, at most half full),
// each holding a token's first 8 bytes as one word, its length and its rank. Most
// tokens are at most 8 bytes long, so a lookup hashes one word and compares it in the
// slot it loads, usually the only cache line it touches; a longer token's remaining
// bytes are compared from `tails_`.
class RankTable {
 public:
  static constexpr Rank kMissing = std::numeric_limits<Rank>::max();

  RankTable() = default;
  explicit RankTable(const Ranks& ranks);
  // Adds (or re-ranks) a token of 1 to 2^32 - 1 bytes.
  void Insert(absl::string_view bytes, Rank rank);
  // The rank of `bytes`, or kMissing.
  Rank Find(absl::string_view bytes) const { return Lookup(bytes, /*filtered=*/true); }
  // The same without the filter below, for strings that are probably tokens (a whole
  // piece of text is one 97% of the time): there the filter's load is one more cache
  // miss that answers nothing.
  Rank FindLikely(absl::string_view bytes) const { return Lookup(bytes, /*filtered=*/false); }
  // Starts loading the cache line that FindLikely(bytes) will read.
  void Prefetch(absl::string_view bytes) const {
    if (bytes.size() > 2 && !slots_.empty())
      __builtin_prefetch(&slots_[Hash(Head(bytes), bytes) >> shift_]);
  }
  // The hash the table places `bytes` by; its top bits are well mixed.
  static uint64_t HashOf(absl::string_view bytes) { return Hash(Head(bytes), bytes); }

 private:
  ABSL_ATTRIBUTE_ALWAYS_INLINE Rank Lookup(absl::string_view bytes, bool filtered) const {
    if (bytes.size() <= 2) {
      if (bytes.empty() || short_.empty()) return kMissing;
      return short_[ShortIndex(bytes)];
    }
    if (slots_.empty()) return kMissing;
    const uint64_t head = Head(bytes);
    const uint64_t hash = Hash(head, bytes);
    if (filtered && (filter_[FilterWord(hash)] & FilterBits(hash)) != FilterBits(hash))
      return kMissing;
    for (size_t i = hash >> shift_;; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& slot = slots_[i];
      if (slot.length == 0) return kMissing;
      if (slot.head == head && slot.length == bytes.size() &&
          (bytes.size() <= 8 || TailMatches(slot, bytes))) {
        return slot.rank;
      }
    }
  }
  // A one-byte string b is at 65536 + b, two bytes b0 b1 at b0 + 256 b1.
  static size_t ShortIndex(absl::string_view bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    return bytes.size() == 1 ? 65536 + p[0] : p[0] | size_t{p[1]} << 8;
  }
  struct Slot {
    uint64_t head = 0;  // the first 8 bytes, little-endian, zero-padded
    Rank rank = 0;
    uint32_t length = 0;  // 0: empty
  };

  // The first min(8, size) bytes of `bytes` as a little-endian word, from at most two
  // loads that stay inside the bytes (overlapping when they share bytes).
  static uint64_t Head(absl::string_view bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const size_t n = bytes.size();
    if (n >= 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      return uint64_t{lo} | uint64_t{hi} << (8 * (n - 4));
    }
    return uint64_t{p[0]} | uint64_t{p[n >> 1]} << (8 * (n >> 1)) |
           uint64_t{p[n - 1]} << (8 * (n - 1));
  }
  static uint64_t Hash(uint64_t head, absl::string_view bytes) {
    uint64_t h = head + bytes.size();
    // The rest of a long token, 8 bytes at a time, zero-padded: a last word of r < 8
    // bytes is the top r bytes of the 8 that end the token, shifted down.
    const size_t n = bytes.size();
    for (size_t i = 8; i < n; i += 8) {
      uint64_t word;
      if (i + 8 <= n) {
        std::memcpy(&word, bytes.data() + i, 8);
      } else {
        std::memcpy(&word, bytes.data() + n - 8, 8);
        word >>= 8 * (i + 8 - n);
      }
      h = (h ^ word) * 0xff51afd7ed558ccdULL;
    }
    return (h ^ h >> 29) * 0x9E3779B97F4A7C15ULL;  // the index is its top bits
  }
  bool TailMatches(const Slot& slot, absl::string_view bytes) const;
  void Place(const Slot& slot, absl::string_view bytes);

  // A blocked Bloom filter of the tokens of 3 bytes or more: each sets two bits of one
  // 64-bit word, all three chosen by the hash's top 26 bits (the well-mixed ones); a
  // clear bit answers kMissing without touching the table. 128 KB, so it stays in L2
  // beside the short ranks where the table does not, and the merge loop asks mostly for
  // strings that are not tokens. About 3% false positives for cl100k's 100k tokens
  // ((1 - e^(-2 * 100k / 2^20))^2), 9% for o200k's 200k.
  static constexpr int kFilterWordBits = 14;  // 2^14 words
  static size_t FilterWord(uint64_t hash) { return hash >> (64 - kFilterWordBits); }
  static uint64_t FilterBits(uint64_t hash) {
    return uint64_t{1} << (hash >> (58 - kFilterWordBits) & 63) |
           uint64_t{1} << (hash >> (52 - kFilterWordBits) & 63);
  }
  std::vector<uint64_t> filter_;
  std::vector<Rank> short_;  // by ShortIndex
  std::vector<Slot> slots_;  // a power of two of them
  int shift_ = 64;           // 64 - log2(slots_.size())
  size_t size_ = 0;
  // The bytes after the first 8 of each long token, by rank.
  std::vector<std::string> tails_;
};

// The BPE merge of one piece (at least one byte) by `ranks`: appends its token ids, in
// order, to `out`. Linear scans for short pieces (as tiktoken); a heap for long ones,
// so a 100 kB piece costs O(n log n), not O(n^2).
void BytePairEncode(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);

namespace internal {
// Pieces at least this long merge through a heap instead of linear scans.
inline constexpr size_t kHeapMergeBytes = 256;
// The two merge loops BytePairEncode chooses between (same result; tests check it).
// MergeByScan takes pieces of at most kHeapMergeBytes bytes.
void MergeByScan(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);
void MergeByHeap(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);
}  // namespace internal

class Encoding {
 public:
  // The largest id a vocabulary may use: 2^22 - 1 = 4,194,303 (o200k_base's largest is
  // 200,018). The decode tables are indexed by id, so a file that names the id
  // 4,000,000,000 is refused rather than taking 100 GB.
  static constexpr Rank kMaxId = (Rank{1} << 22) - 1;

  // `pattern` is tiktoken's pat_str; specials map special-token text to ids. Fails on a
  // pattern RE2 cannot run, a missing single byte, an empty token, an id used twice or
  // past kMaxId.
  static absl::StatusOr<Encoding> Create(std::string name, absl::string_view pattern, Ranks ranks,
                                         absl::flat_hash_map<std::string, Rank> specials);

  const std::string& name() const { return name_; }
  // One more than the largest id (tiktoken's n_vocab).
  Rank n_vocab() const { return static_cast<Rank>(token_end_.size() - 1); }

  // Special-token text is ordinary text here. `text` must be UTF-8 (InvalidArgument
  // naming the first bad byte otherwise). With threads > 1 a long text is encoded in
  // parallel chunks, and the ids are the same as with one thread (see encoding.cc).
  absl::StatusOr<std::vector<Rank>> EncodeOrdinary(absl::string_view text, int threads = 1) const;

  // The tiktoken contract: the specials in `allowed` become their ids; the text of any
  // other special token is an InvalidArgument naming it (tiktoken's
  // disallowed_special="all").
  absl::StatusOr<std::vector<Rank>> Encode(absl::string_view text,
                                           const absl::flat_hash_set<std::string>& allowed,
                                           int threads = 1) const;
  // tiktoken's encode(text, allowed_special, disallowed_special): as above, but only the
  // text of a special in `disallowed` (and not in `allowed`) is an error; that of any
  // other special is ordinary text.
  absl::StatusOr<std::vector<Rank>> EncodeDisallowing(
      absl::string_view text, const absl::flat_hash_set<std::string>& allowed,
      const absl::flat_hash_set<std::string>& disallowed, int threads = 1) const;

  // EncodeDisallowing of each text, the texts spread over `threads` threads (tiktoken's
  // encode_batch). An error names the index of the first text that fails.
  absl::StatusOr<std::vector<std::vector<Rank>>> EncodeBatch(
      const std::vector<std::string>& texts, const absl::flat_hash_set<std::string>& allowed,
      const absl::flat_hash_set<std::string>& disallowed, int threads) const;
  // Every special token's text, for Encode(text, AllSpecial()).
  const absl::flat_hash_set<std::string>& AllSpecial() const { return all_special_; }

  // The bytes of the tokens (possibly cut inside a UTF-8 sequence). Unknown ids are an
  // InvalidArgument naming the first.
  absl::StatusOr<std::string> DecodeBytes(const std::vector<Rank>& ids) const;
  // The same, as valid UTF-8: each maximal invalid sequence becomes U+FFFD, as
  // tiktoken's decode(errors="replace").
  absl::StatusOr<std::string> Decode(const std::vector<Rank>& ids) const;

  const Ranks& ranks() const { return ranks_; }
  // tiktoken's pat_str.
  const std::string& pattern() const { return pattern_; }
  const RankTable& rank_table() const { return table_; }
  const absl::flat_hash_map<std::string, Rank>& specials() const { return specials_; }

 private:
  Encoding(std::string name, std::string pattern, Pretokenizer pretokenizer, Ranks ranks,
           absl::flat_hash_map<std::string, Rank> specials);
  // The ids of pieces that took merges (text repeats them: words outside the
  // vocabulary, runs of spaces), kept by one scan of a text (encoding.cc).
  class PieceCache;
  // Appends the ids of a piece that is not a token: from the cache, or merged (and
  // then cached).
  void AppendMerged(absl::string_view piece, std::vector<Rank>& ids, PieceCache& cache) const;
  void AppendOrdinary(absl::string_view text, std::vector<Rank>& ids, int threads) const;
  template <typename Sought>
  size_t AppendScan(const Pretokenizer& pretokenizer, absl::string_view text, size_t from,
                    size_t stop, std::vector<Rank>& ids, PieceCache& cache, Sought&& sought) const;

  std::string name_;
  Pretokenizer pretokenizer_;
  std::string pattern_;  // for the parallel scans' own pretokenizers
  Ranks ranks_;
  RankTable table_;
  absl::flat_hash_map<std::string, Rank> specials_;
  absl::flat_hash_set<std::string> all_special_;
  // For decoding: every token's bytes in id order, followed by kDecodeSlack spare bytes,
  // and where each ends; id i spans [token_end_[i], token_end_[i + 1]), empty for an id
  // that is not a token (every token has a byte).
  static constexpr size_t kDecodeSlack = 16;
  std::string token_bytes_;
  std::vector<uint32_t> token_end_;
};

// Replaces each maximal ill-formed UTF-8 subsequence by U+FFFD (the W3C/WHATWG rule
// that Python's and Rust's decoders follow).
std::string ToValidUtf8(absl::string_view bytes);

// The offset of the first byte that is not valid UTF-8, or -1.
int64_t FirstInvalidUtf8(absl::string_view bytes);

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_ENCODING_H_
