#include "tokenizer/encoding.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ember::tokenizer {
namespace {

constexpr Rank kNone = std::numeric_limits<Rank>::max();

// Pieces at least this long merge through a heap instead of linear scans.
constexpr size_t kHeapMergeBytes = 256;

Rank RankOf(const Ranks& ranks, absl::string_view bytes) {
  const auto it = ranks.find(bytes);
  return it == ranks.end() ? kNone : it->second;
}

// The length of the well-formed UTF-8 sequence at s[i] (Unicode Table 3-7), or minus
// the length of its maximal ill-formed prefix (at least 1).
int Utf8Sequence(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  int n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c == 0xE0) {
    n = 3, lo = 0xA0;
  } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
    n = 3;
  } else if (c == 0xED) {
    n = 3, hi = 0x9F;  // no UTF-16 surrogates
  } else if (c == 0xF0) {
    n = 4, lo = 0x90;
  } else if (c >= 0xF1 && c <= 0xF3) {
    n = 4;
  } else if (c == 0xF4) {
    n = 4, hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -k;
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if (d < lo || d > hi) return -k;
    lo = 0x80, hi = 0xBF;
  }
  return n;
}

}  // namespace

namespace internal {

// tiktoken's _byte_pair_merge: parts[i] = (start byte, rank of the pair that starts
// there); each round merges the leftmost pair of lowest rank and re-ranks its two
// neighbours. O(n^2) in the worst case, fastest for the short pieces of real text.
void MergeByScan(absl::string_view piece, const Ranks& ranks, std::vector<Rank>& out) {
  const size_t n = piece.size();
  // On the stack for the pieces of ordinary text: no allocation per piece.
  absl::InlinedVector<std::pair<size_t, Rank>, kHeapMergeBytes + 1> parts;
  for (size_t i = 0; i + 1 < n; ++i) parts.emplace_back(i, RankOf(ranks, piece.substr(i, 2)));
  parts.emplace_back(n - 1, kNone);
  parts.emplace_back(n, kNone);
  // The rank of parts i and i+1 merged with the part after them, before parts[i+1] goes.
  auto rank_after_merge = [&](size_t i) {
    if (i + 3 >= parts.size()) return kNone;
    return RankOf(ranks, piece.substr(parts[i].first, parts[i + 3].first - parts[i].first));
  };
  while (true) {
    Rank best = kNone;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i].second < best) best = parts[i].second, at = i;
    }
    if (best == kNone) break;
    if (at > 0) parts[at - 1].second = rank_after_merge(at - 1);
    parts[at].second = rank_after_merge(at);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    out.push_back(RankOf(ranks, piece.substr(parts[i].first, parts[i + 1].first - parts[i].first)));
  }
}

// The same merges in the same order with a min-heap of (rank, start) over a linked
// list of parts: the popped entry is the leftmost lowest-ranked pair, as the scan's.
// Entries go stale when a neighbour merges; a popped entry counts only if its part is
// still alive and still has that rank (a re-pushed equal entry then names the same
// pair, which is the right one to merge).
void MergeByHeap(absl::string_view piece, const Ranks& ranks, std::vector<Rank>& out) {
  const size_t n = piece.size();
  // Part k starts at byte k; next[k] is the start of the part after it (n at the end).
  std::vector<size_t> next(n), prev(n);
  std::vector<Rank> pair_rank(n, kNone);
  std::vector<bool> alive(n, true);
  for (size_t k = 0; k < n; ++k) next[k] = k + 1, prev[k] = k - 1;  // prev[0] unused
  auto rank_of_pair = [&](size_t k) {
    if (next[k] >= n) return kNone;
    return RankOf(ranks, piece.substr(k, next[next[k]] - k));
  };
  using Entry = std::pair<Rank, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t k = 0; k + 1 < n; ++k) {
    pair_rank[k] = rank_of_pair(k);
    if (pair_rank[k] != kNone) heap.emplace(pair_rank[k], k);
  }
  while (!heap.empty()) {
    const auto [rank, k] = heap.top();
    heap.pop();
    if (!alive[k] || pair_rank[k] != rank) continue;
    const size_t gone = next[k];  // merge part `gone` into k
    alive[gone] = false;
    next[k] = next[gone];
    if (next[k] < n) prev[next[k]] = k;
    pair_rank[k] = rank_of_pair(k);
    if (pair_rank[k] != kNone) heap.emplace(pair_rank[k], k);
    if (k > 0) {
      const size_t p = prev[k];
      pair_rank[p] = rank_of_pair(p);
      if (pair_rank[p] != kNone) heap.emplace(pair_rank[p], p);
    }
  }
  for (size_t k = 0; k < n; k = next[k]) out.push_back(RankOf(ranks, piece.substr(k, next[k] - k)));
}

}  // namespace internal

void BytePairEncode(absl::string_view piece, const Ranks& ranks, std::vector<Rank>& out) {
  if (piece.size() == 1) {
    out.push_back(RankOf(ranks, piece));
  } else if (piece.size() < kHeapMergeBytes) {
    internal::MergeByScan(piece, ranks, out);
  } else {
    internal::MergeByHeap(piece, ranks, out);
  }
}

int64_t FirstInvalidUtf8(absl::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const int n = Utf8Sequence(bytes, i);
    if (n < 0) return static_cast<int64_t>(i);
    i += static_cast<size_t>(n);
  }
  return -1;
}

std::string ToValidUtf8(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const int n = Utf8Sequence(bytes, i);
    if (n > 0) {
      out.append(bytes.data() + i, static_cast<size_t>(n));
      i += static_cast<size_t>(n);
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      i += static_cast<size_t>(-n);
    }
  }
  return out;
}

absl::StatusOr<Encoding> Encoding::Create(std::string name, absl::string_view pattern,
                                          Ranks ranks,
                                          absl::flat_hash_map<std::string, Rank> specials) {
  for (int b = 0; b < 256; ++b) {
    if (!ranks.contains(std::string(1, static_cast<char>(b)))) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": byte ", b, " is not a token, so some texts could not be encoded"));
    }
  }
  absl::StatusOr<Pretokenizer> pretokenizer = Pretokenizer::Create(pattern);
  if (!pretokenizer.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", pretokenizer.status().message()));
  }
  std::vector<const std::string*> by_id;
  for (const auto* table : {&ranks, &specials}) {
    for (const auto& [bytes, id] : *table) {
      if (id == kNone) return absl::InvalidArgumentError(absl::StrCat(name, ": id ", id, " is reserved"));
      if (id >= by_id.size()) by_id.resize(static_cast<size_t>(id) + 1, nullptr);
      if (by_id[id] != nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(name, ": id ", id, " is given to two tokens"));
      }
      by_id[id] = &bytes;
    }
  }
  return Encoding(std::move(name), *std::move(pretokenizer), std::move(ranks), std::move(specials));
}

Encoding::Encoding(std::string name, Pretokenizer pretokenizer, Ranks ranks,
                   absl::flat_hash_map<std::string, Rank> specials)
    : name_(std::move(name)),
      pretokenizer_(std::move(pretokenizer)),
      ranks_(std::move(ranks)),
      specials_(std::move(specials)) {
  for (const auto* table : {&ranks_, &specials_}) {
    for (const auto& [bytes, id] : *table) {
      if (id >= decoder_.size()) decoder_.resize(static_cast<size_t>(id) + 1), known_.resize(id + 1);
      decoder_[id] = bytes;
      known_[id] = true;
    }
  }
  for (const auto& [text, id] : specials_) all_special_.insert(text);
}

void Encoding::AppendOrdinary(absl::string_view text, std::vector<Rank>& ids) const {
  pretokenizer_.ForEachPiece(text, [&](absl::string_view piece) {
    const auto it = ranks_.find(piece);
    if (it != ranks_.end()) {
      ids.push_back(it->second);
    } else {
      BytePairEncode(piece, ranks_, ids);
    }
  });
}

absl::StatusOr<std::vector<Rank>> Encoding::EncodeOrdinary(absl::string_view text) const {
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 at byte ", bad));
  }
  std::vector<Rank> ids;
  AppendOrdinary(text, ids);
  return ids;
}

absl::StatusOr<std::vector<Rank>> Encoding::Encode(
    absl::string_view text, const absl::flat_hash_set<std::string>& allowed) const {
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 at byte ", bad));
  }
  // The leftmost special token at or after `from` (the longest there), among all of
  // them or the allowed ones.
  auto next_special = [&](size_t from, bool only_allowed) {
    std::pair<size_t, const std::string*> best{absl::string_view::npos, nullptr};
    for (const auto& [special, id] : specials_) {
      if (only_allowed && !allowed.contains(special)) continue;
      const size_t at = text.find(special, from);
      if (at == absl::string_view::npos) continue;
      if (at < best.first || (at == best.first && special.size() > best.second->size())) {
        best = {at, &special};
      }
    }
    return best;
  };
  for (size_t from = 0;;) {
    const auto [at, special] = next_special(from, false);
    if (special == nullptr) break;
    if (!allowed.contains(*special)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "text contains the special token ", *special, " at byte ", at,
          ", which is not allowed: allow it to get its id, or encode it as ordinary text"));
    }
    from = at + 1;
  }
  std::vector<Rank> ids;
  for (size_t start = 0;;) {
    const auto [at, special] = next_special(start, true);
    if (special == nullptr) {
      AppendOrdinary(text.substr(start), ids);
      return ids;
    }
    AppendOrdinary(text.substr(start, at - start), ids);
    ids.push_back(specials_.at(*special));
    start = at + special->size();
  }
}

absl::StatusOr<std::string> Encoding::DecodeBytes(const std::vector<Rank>& ids) const {
  std::string out;
  for (const Rank id : ids) {
    if (id >= decoder_.size() || !known_[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in ", name_, " (n_vocab ", n_vocab(), ")"));
    }
    out += decoder_[id];
  }
  return out;
}

absl::StatusOr<std::string> Encoding::Decode(const std::vector<Rank>& ids) const {
  absl::StatusOr<std::string> bytes = DecodeBytes(ids);
  if (!bytes.ok()) return bytes.status();
  return ToValidUtf8(*bytes);
}

}  // namespace ember::tokenizer
