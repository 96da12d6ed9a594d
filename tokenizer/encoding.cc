#include "tokenizer/encoding.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <thread>
#include <tuple>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status.h"

namespace ember::tokenizer {
namespace {

constexpr Rank kNone = RankTable::kMissing;

Rank RankOf(const RankTable& ranks, absl::string_view bytes) { return ranks.Find(bytes); }

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

RankTable::RankTable(const Ranks& ranks) {
  for (const auto& [bytes, rank] : ranks) Insert(bytes, rank);
}

bool RankTable::TailMatches(const Slot& slot, absl::string_view bytes) const {
  return tails_[slot.rank] == bytes.substr(8);
}

// Into the first empty slot of its probe sequence, or over the slot of the same token.
void RankTable::Place(const Slot& slot, absl::string_view bytes) {
  for (size_t i = Hash(slot.head, bytes) >> shift_;; i = (i + 1) & (slots_.size() - 1)) {
    Slot& s = slots_[i];
    if (s.length == 0) {
      s = slot;
      ++size_;
      return;
    }
    if (s.head == slot.head && s.length == slot.length &&
        (bytes.size() <= 8 || TailMatches(s, bytes))) {
      if (bytes.size() > 8 && s.rank != slot.rank) tails_[s.rank].clear();
      s.rank = slot.rank;
      break;
    }
  }
}

void RankTable::Insert(absl::string_view bytes, Rank rank) {
  EMBER_CHECK(!bytes.empty() && bytes.size() <= std::numeric_limits<uint32_t>::max(),
              "RankTable: a token of ", bytes.size(), " bytes");
  if (bytes.size() <= 2) {
    if (short_.empty()) short_.assign(65536 + 256, kMissing);
    short_[ShortIndex(bytes)] = rank;
    return;
  }
  if (2 * (size_ + 1) > slots_.size()) {  // grow to keep the table at most half full
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(16, 2 * old.size()), Slot{});
    shift_ = 64 - __builtin_ctzll(slots_.size());
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.length == 0) continue;
      if (slot.length <= 8) {
        Place(slot, absl::string_view(reinterpret_cast<const char*>(&slot.head), slot.length));
      } else {
        std::string whole(reinterpret_cast<const char*>(&slot.head), 8);
        whole += tails_[slot.rank];
        Place(slot, whole);
      }
    }
  }
  if (bytes.size() > 8) {
    if (rank >= tails_.size()) tails_.resize(size_t{rank} + 1);
    tails_[rank] = std::string(bytes.substr(8));
  }
  const uint64_t head = Head(bytes), hash = Hash(head, bytes);
  if (filter_.empty()) filter_.assign(size_t{1} << kFilterWordBits, 0);
  filter_[FilterWord(hash)] |= FilterBits(hash);
  Place(Slot{head, rank, static_cast<uint32_t>(bytes.size())}, bytes);
}

namespace internal {

// tiktoken's _byte_pair_merge: parts[i] = (start byte, rank of the pair that starts
// there, the part's own rank); each round merges the leftmost pair of lowest rank and
// re-ranks its two neighbours. A merged part's rank is the pair's, so only the parts left
// single bytes are looked up at the end. O(n^2) in the worst case, fastest for the short
// pieces of real text.
void MergeByScan(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out) {
  const size_t n = piece.size();
  EMBER_CHECK(n >= 1 && n <= internal::kHeapMergeBytes, "MergeByScan: a piece of ", n, " bytes");
  // Plain arrays on the stack: no allocation and no container bookkeeping per piece
  // (an InlinedVector's out-of-line push_back was a quarter of the merge's time).
  struct Part {
    uint32_t start;
    Rank pair;  // the rank of this part and the next merged
    Rank self;  // kNone while the part is one byte
  };
  Part parts[internal::kHeapMergeBytes + 1];
  size_t count = n + 1;  // the parts, and a sentinel at byte n
  for (size_t i = 0; i + 1 < n; ++i) {
    parts[i] = {static_cast<uint32_t>(i), RankOf(ranks, piece.substr(i, 2)), kNone};
  }
  parts[n - 1] = {static_cast<uint32_t>(n - 1), kNone, kNone};
  parts[n] = {static_cast<uint32_t>(n), kNone, kNone};
  // The rank of parts i and i+1 merged with the part after them, before parts[i+1] goes.
  auto rank_after_merge = [&](size_t i) {
    if (i + 3 >= count) return kNone;
    return RankOf(ranks, piece.substr(parts[i].start, parts[i + 3].start - parts[i].start));
  };
  while (true) {
    // The lowest rank, leftmost on a tie: the least of (rank << 32 | index). Branch-free
    // (the comparison's outcome is a coin toss, and mispredicting it was a fifth of the
    // merge's time).
    uint64_t least = ~uint64_t{0};
    for (size_t i = 0; i + 1 < count; ++i)
      least = std::min(least, uint64_t{parts[i].pair} << 32 | i);
    const Rank best = static_cast<Rank>(least >> 32);
    const size_t at = static_cast<uint32_t>(least);
    if (best == kNone) break;
    if (at > 0) parts[at - 1].pair = rank_after_merge(at - 1);
    parts[at].pair = rank_after_merge(at);
    parts[at].self = best;
    std::memmove(&parts[at + 1], &parts[at + 2], (count - at - 2) * sizeof(Part));
    --count;
  }
  for (size_t i = 0; i + 1 < count; ++i) {
    out.push_back(parts[i].self != kNone ? parts[i].self
                                         : RankOf(ranks, piece.substr(parts[i].start, 1)));
  }
}

// The same merges in the same order with a min-heap of (rank, start) over a linked
// list of parts: the popped entry is the leftmost lowest-ranked pair, as the scan's.
// Entries go stale when a neighbour merges; a popped entry counts only if its part is
// still alive and still has that rank (a re-pushed equal entry then names the same
// pair, which is the right one to merge).
void MergeByHeap(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out) {
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

void BytePairEncode(absl::string_view piece, const RankTable& ranks, std::vector<Rank>& out) {
  if (piece.size() == 1) {
    out.push_back(RankOf(ranks, piece));
  } else if (piece.size() < internal::kHeapMergeBytes) {
    internal::MergeByScan(piece, ranks, out);
  } else {
    internal::MergeByHeap(piece, ranks, out);
  }
}

int64_t FirstInvalidUtf8(absl::string_view bytes) {
  // Whether the n bytes at p (a multiple of 8) are ASCII.
  const auto ascii = [](const char* p, size_t n) {
    uint64_t any = 0;
    for (size_t k = 0; k < n; k += 8) {
      uint64_t word;
      std::memcpy(&word, p + k, 8);
      any |= word;
    }
    return (any & 0x8080808080808080u) == 0;
  };
  for (size_t i = 0; i < bytes.size();) {
    // 32 and then 8 ASCII bytes at a time: most text is mostly ASCII.
    if (i + 32 <= bytes.size() && ascii(bytes.data() + i, 32)) {
      i += 32;
      continue;
    }
    if (i + 8 <= bytes.size() && ascii(bytes.data() + i, 8)) {
      i += 8;
      continue;
    }
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

absl::StatusOr<Encoding> Encoding::Create(std::string name, absl::string_view pattern, Ranks ranks,
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
  std::vector<bool> special_id;  // whether by_id[id] is a special token's text
  for (const auto* table : {&ranks, &specials}) {
    const bool special = table == &specials;
    for (const auto& [bytes, id] : *table) {
      if (id > kMaxId) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": id ", id, " is past the largest id a vocabulary may use, ",
                         kMaxId, " (the decode table is indexed by id)"));
      }
      if (bytes.empty())
        return absl::InvalidArgumentError(absl::StrCat(name, ": id ", id, " has no bytes"));
      if (id >= by_id.size()) {
        by_id.resize(static_cast<size_t>(id) + 1, nullptr);
        special_id.resize(by_id.size(), false);
      }
      // tiktoken lets two special tokens share an id (o200k_harmony gives 200018 to
      // <|endofprompt|> and <|reserved_200018|>), never a special and a mergeable token.
      if (by_id[id] != nullptr && !(special && special_id[id])) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": id ", id, " is given to two tokens"));
      }
      by_id[id] = &bytes;
      special_id[id] = special;
    }
  }
  return Encoding(std::move(name), std::string(pattern), *std::move(pretokenizer), std::move(ranks),
                  std::move(specials));
}

Encoding::Encoding(std::string name, std::string pattern, Pretokenizer pretokenizer, Ranks ranks,
                   absl::flat_hash_map<std::string, Rank> specials)
    : name_(std::move(name)),
      pretokenizer_(std::move(pretokenizer)),
      pattern_(std::move(pattern)),
      ranks_(std::move(ranks)),
      table_(ranks_),
      specials_(std::move(specials)) {
  std::vector<const std::string*> by_id;
  for (const auto* table : {&ranks_, &specials_}) {
    for (const auto& [bytes, id] : *table) {
      if (id >= by_id.size()) by_id.resize(static_cast<size_t>(id) + 1, nullptr);
      // Specials sharing an id decode as the first of their texts in byte order, so that
      // decoding does not depend on the hash map's order.
      if (by_id[id] != nullptr && *by_id[id] < bytes) continue;
      by_id[id] = &bytes;
    }
  }
  token_end_.reserve(by_id.size() + 1);
  token_end_.push_back(0);
  for (const std::string* bytes : by_id) {
    if (bytes != nullptr) token_bytes_ += *bytes;
    token_end_.push_back(static_cast<uint32_t>(token_bytes_.size()));
  }
  token_bytes_.append(kDecodeSlack, '\0');
  for (const auto& [text, id] : specials_) all_special_.insert(text);
}

// A direct-mapped cache: a piece's slot is fixed by its hash and a new piece evicts the
// one there, so it never grows, clears or rehashes. A slot is one cache line holding the
// piece's bytes and its ids, so a lookup touches nothing else (keying a slot by where
// the piece lies in the text instead costs a miss in text long gone from cache). Pieces
// of more than kMaxBytes bytes or kMaxIds ids are not kept. The slots, at most 1 MB, are
// made at the first miss, one per 64 bytes of text, so a short text pays little.
class Encoding::PieceCache {
 public:
  static constexpr size_t kMaxBytes = 26, kMaxIds = 9;
  explicit PieceCache(size_t text_bytes)
      : shift_(64 - std::clamp(64 - __builtin_clzll(text_bytes / 64 | 1), 4, 14)) {}

  // Starts loading the slot of `piece`.
  void Prefetch(absl::string_view piece) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[RankTable::HashOf(piece) >> shift_]);
  }
  // The cached ids of `piece`, or null.
  const Rank* Find(absl::string_view piece, size_t& count) const {
    if (slots_.empty() || piece.size() > kMaxBytes) return nullptr;
    const Slot& slot = slots_[RankTable::HashOf(piece) >> shift_];
    if (slot.size != piece.size() || std::memcmp(slot.bytes, piece.data(), piece.size()) != 0)
      return nullptr;
    count = slot.count;
    return slot.ids;
  }
  void Put(absl::string_view piece, const Rank* ids, size_t count) {
    if (count > kMaxIds || piece.size() > kMaxBytes) return;
    if (slots_.empty()) slots_.resize(size_t{1} << (64 - shift_));
    Slot& slot = slots_[RankTable::HashOf(piece) >> shift_];
    slot.size = static_cast<uint8_t>(piece.size());
    slot.count = static_cast<uint8_t>(count);
    std::memcpy(slot.bytes, piece.data(), piece.size());
    std::copy(ids, ids + count, slot.ids);
  }

 private:
  struct alignas(64) Slot {  // a cache line
    uint8_t size = 0;        // 0: empty (no piece is)
    uint8_t count = 0;
    char bytes[kMaxBytes];
    Rank ids[kMaxIds];
  };
  static_assert(sizeof(Slot) == 64);
  int shift_;  // 64 - log2(the number of slots)
  std::vector<Slot> slots_;
};

void Encoding::AppendMerged(absl::string_view piece, std::vector<Rank>& ids,
                            PieceCache& cache) const {
  size_t count;
  if (const Rank* cached = cache.Find(piece, count)) {
    // One at a time: a few ids, where insert() calls memmove.
    for (size_t i = 0; i < count; ++i) ids.push_back(cached[i]);
    return;
  }
  const size_t before = ids.size();
  BytePairEncode(piece, table_, ids);
  cache.Put(piece, ids.data() + before, ids.size() - before);
}

namespace {

// Texts shorter than this per thread are not split.
constexpr size_t kMinChunkBytes = 1 << 16;

// A place near `at` to start a chunk's scan: a space between two ASCII letters (where
// every pattern ends one piece and starts the next, so the scans agree at once), or
// else the first UTF-8 character boundary.
size_t ChunkStart(absl::string_view text, size_t at) {
  const auto letter = [&](size_t i) {
    return absl::ascii_isalpha(static_cast<unsigned char>(text[i]));
  };
  for (size_t i = std::max<size_t>(at, 1); i + 1 < text.size() && i < at + 4096; ++i) {
    if (text[i] == ' ' && letter(i - 1) && letter(i + 1)) return i;
  }
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return at;
}

}  // namespace

// The scan of `text` from byte `from` while it has not reached `stop`: appends each
// piece's ids, calling sought(p, ids.size()) before appending a piece sought from byte
// p; returns where the scan stopped. Three pieces are in flight, so that each one's
// memory is on its way before it is needed: the newest is found and its whole-token
// slot prefetched; the one before it is looked up, and if it is not a token its cache
// slot is prefetched; the oldest is appended.
template <typename Sought>
size_t Encoding::AppendScan(const Pretokenizer& pretokenizer, absl::string_view text, size_t from,
                            size_t stop, std::vector<Rank>& ids, PieceCache& cache,
                            Sought&& sought) const {
  struct InFlight {
    absl::string_view piece;
    size_t sought_from;
    Rank rank;
  };
  size_t pos = from, unfound = stop;  // unfound: where the seek that found nothing began
  const auto find = [&](InFlight& p) {
    p.sought_from = pos;
    if (pos >= stop || !pretokenizer.Next(text, pos, p.piece)) {
      unfound = p.sought_from;
      return false;
    }
    table_.Prefetch(p.piece);
    return true;
  };
  const auto look_up = [&](InFlight& p) {
    p.rank = table_.FindLikely(p.piece);
    if (p.rank == kNone) cache.Prefetch(p.piece);
  };
  InFlight ring[3];  // the stages rotate through it: no copies between them
  InFlight *oldest = &ring[0], *middle = &ring[1], *newest = &ring[2];
  bool has_middle = find(*oldest), has_newest = has_middle && find(*middle);
  if (has_middle) look_up(*oldest);
  while (has_middle) {
    has_middle = has_newest;
    has_newest = has_middle && find(*newest);
    if (has_middle) look_up(*middle);
    sought(oldest->sought_from, ids.size());
    if (oldest->rank != kNone) {
      ids.push_back(oldest->rank);
    } else {
      AppendMerged(oldest->piece, ids, cache);
    }
    std::tie(oldest, middle, newest) = std::make_tuple(middle, newest, oldest);
  }
  if (unfound < stop) sought(unfound, ids.size());
  return pos;
}

// Parallel encoding, exact: chunk k is scanned from its own start s_k to the first
// piece end at or past s_{k+1}, recording each position it sought a piece from. The
// scans are then joined in order: the scan of the text so far stands at some byte p; the
// pieces found from p on depend only on p (the pattern does not look behind, and every
// scan sees the whole text, so the lookahead rule sees the same end), so if chunk k
// sought a piece from p, its ids from there are what a single scan would give. If not,
// the join scans on one piece at a time until it stands where chunk k stood (the scans
// meet within a piece or two) or has passed chunk k altogether.
//
// The join looks only near a chunk's start, so a chunk records its first kJoinWindow
// positions; if the scans have not met by then, the join encodes the rest of the chunk
// itself (slow, still exact). Equal bytes are not equal work (a file's half of code or
// of another script encodes at half the speed of its English half), so there are
// kChunksPerThread chunks a thread, taken in turn by whichever thread is free.
void Encoding::AppendOrdinary(absl::string_view text, std::vector<Rank>& ids, int threads) const {
  constexpr size_t kChunksPerThread = 8, kJoinWindow = 256;
  const size_t workers = std::min<size_t>(std::max(threads, 1), text.size() / kMinChunkBytes);
  if (workers <= 1) {
    PieceCache cache(text.size());
    AppendScan(pretokenizer_, text, 0, text.size(), ids, cache, [](size_t, size_t) {});
    return;
  }
  const size_t chunks = std::min(workers * kChunksPerThread, text.size() / kMinChunkBytes);
  std::vector<size_t> starts(chunks + 1, text.size());
  for (size_t k = 0; k < chunks; ++k)
    starts[k] = k == 0 ? 0 : ChunkStart(text, text.size() / chunks * k);
  // A cache line each: two threads appending to neighbours' vectors would share one.
  struct alignas(64) Chunk {
    std::vector<Rank> ids;
    std::vector<std::pair<size_t, size_t>>
        scan;        // the first (byte a piece was sought from, ids before it)
    size_t end = 0;  // where its scan stopped
  };
  std::vector<Chunk> parts(chunks);
  {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        // Each scan has its own RE2: threads sharing one contend for its DFA cache lock.
        // pattern_ compiled when this encoding was made, so it compiles again.
        absl::StatusOr<Pretokenizer> compiled = Pretokenizer::Create(pattern_);
        EMBER_CHECK(compiled.ok(), "encode: ", compiled.status().message());
        const Pretokenizer own = *std::move(compiled);
        PieceCache cache(text.size() / workers);
        for (size_t k; (k = next.fetch_add(1)) < chunks;) {
          Chunk& part = parts[k];
          part.ids.reserve((starts[k + 1] - starts[k]) / 3);
          part.scan.reserve(kJoinWindow);
          part.end = AppendScan(own, text, starts[k], starts[k + 1], part.ids, cache,
                                [&](size_t from, size_t before) {
                                  if (part.scan.size() < kJoinWindow)
                                    part.scan.emplace_back(from, before);
                                });
        }
      });
    }
    for (std::thread& t : pool) t.join();
  }
  ids.insert(ids.end(), parts[0].ids.begin(), parts[0].ids.end());
  size_t pos = parts[0].end;
  absl::string_view piece;
  PieceCache cache(kMinChunkBytes);
  for (size_t k = 1; k < chunks; ++k) {
    const Chunk& part = parts[k];
    while (pos < part.end) {
      const auto it =
          std::lower_bound(part.scan.begin(), part.scan.end(), std::make_pair(pos, size_t{0}));
      if (it != part.scan.end() && it->first == pos) {
        ids.insert(ids.end(), part.ids.begin() + static_cast<std::ptrdiff_t>(it->second),
                   part.ids.end());
        pos = part.end;
        break;
      }
      if (!pretokenizer_.Next(text, pos, piece)) break;
      if (const Rank rank = table_.FindLikely(piece); rank != kNone) {
        ids.push_back(rank);
      } else {
        AppendMerged(piece, ids, cache);
      }
    }
  }
}

absl::StatusOr<std::vector<Rank>> Encoding::EncodeOrdinary(absl::string_view text,
                                                           int threads) const {
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 at byte ", bad));
  }
  std::vector<Rank> ids;
  ids.reserve(text.size() / 4);  // about four bytes a token in English
  AppendOrdinary(text, ids, threads);
  return ids;
}

absl::StatusOr<std::vector<std::vector<Rank>>> Encoding::EncodeBatch(
    const std::vector<std::string>& texts, const absl::flat_hash_set<std::string>& allowed,
    const absl::flat_hash_set<std::string>& disallowed, int threads) const {
  std::vector<std::vector<Rank>> out(texts.size());
  std::vector<absl::Status> errors(texts.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < texts.size();) {
      absl::StatusOr<std::vector<Rank>> ids = EncodeDisallowing(texts[i], allowed, disallowed);
      if (ids.ok()) {
        out[i] = *std::move(ids);
      } else {
        errors[i] = ids.status();
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(texts.size())); ++t)
    workers.emplace_back(work);
  work();
  for (std::thread& w : workers) w.join();
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(), absl::StrCat("text ", i, ": ", errors[i].message()));
    }
  }
  return out;
}

absl::StatusOr<std::vector<Rank>> Encoding::Encode(absl::string_view text,
                                                   const absl::flat_hash_set<std::string>& allowed,
                                                   int threads) const {
  return EncodeDisallowing(text, allowed, all_special_, threads);
}

absl::StatusOr<std::vector<Rank>> Encoding::EncodeDisallowing(
    absl::string_view text, const absl::flat_hash_set<std::string>& allowed,
    const absl::flat_hash_set<std::string>& disallowed, int threads) const {
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 at byte ", bad));
  }
  // The leftmost special token at or after `from` (the longest there) of those that
  // `counts` accepts.
  auto next_special = [&](size_t from, auto counts) {
    std::pair<size_t, const std::string*> best{absl::string_view::npos, nullptr};
    for (const auto& [special, id] : specials_) {
      if (!counts(special)) continue;
      const size_t at = text.find(special, from);
      if (at == absl::string_view::npos) continue;
      if (at < best.first || (at == best.first && special.size() > best.second->size())) {
        best = {at, &special};
      }
    }
    return best;
  };
  const auto is_allowed = [&](const std::string& special) { return allowed.contains(special); };
  const auto refused = next_special(0, [&](const std::string& special) {
    return disallowed.contains(special) && !allowed.contains(special);
  });
  if (refused.second != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "text contains the special token ", *refused.second, " at byte ", refused.first,
        ", which is not allowed: allow it to get its id, or encode it as ordinary text"));
  }
  std::vector<Rank> ids;
  ids.reserve(text.size() / 4);
  for (size_t start = 0;;) {
    const auto [at, special] = next_special(start, is_allowed);
    if (special == nullptr) {
      AppendOrdinary(text.substr(start), ids, threads);
      return ids;
    }
    AppendOrdinary(text.substr(start, at - start), ids, threads);
    ids.push_back(specials_.at(*special));
    start = at + special->size();
  }
}

// Two passes: the length (and the first unknown id), then the bytes. A token of at most
// kDecodeSlack bytes is copied as kDecodeSlack bytes at once (the output and
// token_bytes_ have that much to spare), which is most of them and a fixed-size copy.
absl::StatusOr<std::string> Encoding::DecodeBytes(const std::vector<Rank>& ids) const {
  size_t length = 0;
  for (const Rank id : ids) {
    const size_t n = id < n_vocab() ? token_end_[id + 1] - token_end_[id] : 0;
    if (n == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in ", name_, " (n_vocab ", n_vocab(), ")"));
    }
    length += n;
  }
  std::string out(length + kDecodeSlack, '\0');
  char* p = out.data();
  for (const Rank id : ids) {
    const char* bytes = token_bytes_.data() + token_end_[id];
    const size_t n = token_end_[id + 1] - token_end_[id];
    if (n <= kDecodeSlack) {
      std::memcpy(p, bytes, kDecodeSlack);
    } else {
      std::memcpy(p, bytes, n);
    }
    p += n;
  }
  out.resize(length);
  return out;
}

absl::StatusOr<std::string> Encoding::Decode(const std::vector<Rank>& ids) const {
  ASSIGN_OR_RETURN(std::string bytes, DecodeBytes(ids));
  return ToValidUtf8(bytes);
}

}  // namespace ember::tokenizer
