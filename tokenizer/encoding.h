#ifndef EMBER_TOKENIZER_ENCODING_H_
#define EMBER_TOKENIZER_ENCODING_H_

// Byte-level BPE exactly as OpenAI's tiktoken: the text is split into pieces by the
// encoding's pattern (tokenizer/pretokenizer.h); a piece that is itself a token is that
// token; otherwise its UTF-8 bytes start as single bytes and the adjacent pair whose
// concatenation has the lowest rank is merged, again and again (the leftmost pair on a
// tie), until no adjacent pair is a token. A token's rank is its id.

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/pretokenizer.h"

namespace ember::tokenizer {

using Rank = uint32_t;

// Token bytes -> rank (= id). Every single byte must be a token, so any text encodes.
using Ranks = absl::flat_hash_map<std::string, Rank>;

// Ranks for the merge loop's many lookups: a token of up to 7 bytes (most of them) is
// keyed by one integer (its bytes and length), so a lookup hashes a word and compares
// no strings; longer tokens are keyed by their bytes.
class RankTable {
 public:
  static constexpr Rank kMissing = std::numeric_limits<Rank>::max();

  RankTable() = default;
  explicit RankTable(const Ranks& ranks);
  void Insert(absl::string_view bytes, Rank rank);
  // The rank of `bytes`, or kMissing.
  Rank Find(absl::string_view bytes) const {
    if (bytes.size() <= 7) {
      const auto it = short_.find(ShortKey(bytes));
      return it == short_.end() ? kMissing : it->second;
    }
    const auto it = long_.find(bytes);
    return it == long_.end() ? kMissing : it->second;
  }

 private:
  static uint64_t ShortKey(absl::string_view bytes) {
    uint64_t key = 0;
    std::memcpy(&key, bytes.data(), bytes.size());
    return key | static_cast<uint64_t>(bytes.size()) << 56;
  }
  absl::flat_hash_map<uint64_t, Rank> short_;
  absl::flat_hash_map<std::string, Rank> long_;
};

// The BPE merge of one piece (at least one byte) by `ranks`: appends its token ids, in
// order, to `out`. Linear scans for short pieces (as tiktoken); a heap for long ones,
// so a 100 kB piece costs O(n log n), not O(n^2).
void BytePairEncode(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);

namespace internal {
// The two merge loops BytePairEncode chooses between (same result; tests check it).
void MergeByScan(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);
void MergeByHeap(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out);
}  // namespace internal

class Encoding {
 public:
  // `pattern` is tiktoken's pat_str; specials map special-token text to ids. Fails on a
  // pattern RE2 cannot run, a missing single byte, or an id used twice.
  static absl::StatusOr<Encoding> Create(std::string name, absl::string_view pattern, Ranks ranks,
                                         absl::flat_hash_map<std::string, Rank> specials);

  const std::string& name() const { return name_; }
  // One more than the largest id (tiktoken's n_vocab).
  Rank n_vocab() const { return static_cast<Rank>(decoder_.size()); }

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

  // Encode of each text, the texts spread over `threads` threads (tiktoken's
  // encode_batch). An error names the index of the first text that fails.
  absl::StatusOr<std::vector<std::vector<Rank>>> EncodeBatch(
      const std::vector<std::string>& texts, const absl::flat_hash_set<std::string>& allowed,
      int threads) const;
  // Every special token's text, for Encode(text, AllSpecial()).
  const absl::flat_hash_set<std::string>& AllSpecial() const { return all_special_; }

  // The bytes of the tokens (possibly cut inside a UTF-8 sequence). Unknown ids are an
  // InvalidArgument naming the first.
  absl::StatusOr<std::string> DecodeBytes(const std::vector<Rank>& ids) const;
  // The same, as valid UTF-8: each maximal invalid sequence becomes U+FFFD, as
  // tiktoken's decode(errors="replace").
  absl::StatusOr<std::string> Decode(const std::vector<Rank>& ids) const;

  const Ranks& ranks() const { return ranks_; }
  const RankTable& rank_table() const { return table_; }
  const absl::flat_hash_map<std::string, Rank>& specials() const { return specials_; }

 private:
  Encoding(std::string name, std::string pattern, Pretokenizer pretokenizer, Ranks ranks,
           absl::flat_hash_map<std::string, Rank> specials);
  // The ids of pieces that took merges (text repeats them: words outside the
  // vocabulary, runs of spaces), kept by one scan of a text.
  using PieceCache = absl::flat_hash_map<std::string, absl::InlinedVector<Rank, 6>>;
  // Appends the ids of one piece.
  void AppendPiece(absl::string_view piece, std::vector<Rank>& ids, PieceCache& cache) const;
  void AppendOrdinary(absl::string_view text, std::vector<Rank>& ids, int threads) const;

  std::string name_;
  Pretokenizer pretokenizer_;
  std::string pattern_;  // for the parallel scans' own pretokenizers
  Ranks ranks_;
  RankTable table_;
  absl::flat_hash_map<std::string, Rank> specials_;
  absl::flat_hash_set<std::string> all_special_;
  std::vector<std::string> decoder_;  // id -> bytes
  std::vector<bool> known_;           // whether the id is a token
};

// Replaces each maximal ill-formed UTF-8 subsequence by U+FFFD (the W3C/WHATWG rule
// that Python's and Rust's decoders follow).
std::string ToValidUtf8(absl::string_view bytes);

// The offset of the first byte that is not valid UTF-8, or -1.
int64_t FirstInvalidUtf8(absl::string_view bytes);

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_ENCODING_H_
