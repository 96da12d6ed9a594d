#include "tokenizer/trainer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "nlohmann/json.hpp"
#include "tokenizer/pretokenizer.h"

namespace ember::tokenizer {
namespace {

using Id = uint32_t;
using PairKey = uint64_t;  // left id << 32 | right id

PairKey Key(Id left, Id right) { return static_cast<PairKey>(left) << 32 | right; }

// The 256 bytes in GPT-2's byte-to-unicode order (by the code point that stands for
// each): byte order for ranks 0-255.
std::vector<unsigned char> Gpt2ByteOrder() {
  std::vector<unsigned char> order(256);
  for (int b = 0; b < 256; ++b) order[b] = static_cast<unsigned char>(b);
  // UTF-8 strings compare as their code points do.
  std::sort(order.begin(), order.end(),
            [](unsigned char x, unsigned char y) { return ByteToUnicode(x) < ByteToUnicode(y); });
  return order;
}

// Heap entries: the largest count first, then the smallest pair (left id, right id).
struct Candidate {
  int64_t count;
  PairKey key;
  bool operator<(const Candidate& o) const {
    return count < o.count || (count == o.count && key > o.key);
  }
};

}  // namespace

absl::StatusOr<Ranks> TrainBpe(absl::string_view text, const TrainerOptions& options) {
  if (options.vocab_size < 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("vocab_size ", options.vocab_size, " is below the 256 single-byte tokens"));
  }
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("training text is not valid UTF-8 at byte ", bad));
  }
  ASSIGN_OR_RETURN(Pretokenizer pretokenizer, Pretokenizer::Create(options.pattern));

  // Distinct pieces with their counts, in byte order (so nothing depends on hashing).
  absl::flat_hash_map<absl::string_view, int64_t> piece_counts;
  pretokenizer.ForEachPiece(text, [&](absl::string_view piece) { ++piece_counts[piece]; });
  std::vector<std::pair<absl::string_view, int64_t>> pieces(piece_counts.begin(),
                                                            piece_counts.end());
  std::sort(pieces.begin(), pieces.end());
  piece_counts.clear();

  std::vector<std::string> tokens;  // id -> bytes
  Ranks ranks;
  Id byte_id[256];
  for (const unsigned char b : Gpt2ByteOrder()) {
    byte_id[b] = static_cast<Id>(tokens.size());
    ranks.emplace(std::string(1, static_cast<char>(b)), byte_id[b]);
    tokens.emplace_back(1, static_cast<char>(b));
  }

  // Each distinct piece as its current tokens; pair counts weighted by piece counts, and
  // for each pair the pieces that (may) hold it.
  std::vector<std::vector<Id>> words(pieces.size());
  std::vector<int64_t> freq(pieces.size());
  absl::flat_hash_map<PairKey, int64_t> counts;
  absl::flat_hash_map<PairKey, std::vector<uint32_t>> where;
  for (size_t w = 0; w < pieces.size(); ++w) {
    freq[w] = pieces[w].second;
    for (const unsigned char c : pieces[w].first) words[w].push_back(byte_id[c]);
    for (size_t i = 0; i + 1 < words[w].size(); ++i) {
      const PairKey k = Key(words[w][i], words[w][i + 1]);
      counts[k] += freq[w];
      where[k].push_back(static_cast<uint32_t>(w));
    }
  }
  std::priority_queue<Candidate> heap;
  for (const auto& [k, n] : counts) heap.push({n, k});

  const size_t wanted = options.vocab_size - 256;
  std::vector<uint64_t> visited(words.size(), 0);  // the merge that last rewrote each piece
  absl::flat_hash_set<PairKey> changed;
  std::vector<Id> merged_word;
  for (uint64_t merge = 1; tokens.size() < options.vocab_size && !heap.empty(); ++merge) {
    const Candidate top = heap.top();
    heap.pop();
    const auto it = counts.find(top.key);
    if (it == counts.end() || it->second != top.count) continue;  // stale entry
    const Id left = static_cast<Id>(top.key >> 32), right = static_cast<Id>(top.key);
    std::string bytes = tokens[left] + tokens[right];
    // Two different pairs can spell one token ("a"+"bc", "ab"+"c"): it keeps its id.
    const auto [token_it, is_new] = ranks.emplace(bytes, static_cast<Id>(tokens.size()));
    const Id id = token_it->second;
    if (is_new) tokens.push_back(std::move(bytes));

    changed.clear();
    std::vector<uint32_t> holders = std::move(where[top.key]);
    where.erase(top.key);
    for (const uint32_t w : holders) {
      if (visited[w] == merge) continue;
      visited[w] = merge;
      std::vector<Id>& word = words[w];
      // Recount the whole piece: take its pairs out, merge left to right, put them back.
      for (size_t i = 0; i + 1 < word.size(); ++i) {
        const PairKey k = Key(word[i], word[i + 1]);
        if ((counts[k] -= freq[w]) == 0) counts.erase(k);
        changed.insert(k);
      }
      merged_word.clear();
      for (size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
          merged_word.push_back(id);
          ++i;
        } else {
          merged_word.push_back(word[i]);
        }
      }
      word.swap(merged_word);
      for (size_t i = 0; i + 1 < word.size(); ++i) {
        const PairKey k = Key(word[i], word[i + 1]);
        counts[k] += freq[w];
        changed.insert(k);
        if (word[i] == id || word[i + 1] == id) where[k].push_back(w);
      }
    }
    for (const PairKey k : changed) {
      const auto c = counts.find(k);
      if (c != counts.end()) heap.push({c->second, k});
    }
    if (is_new && options.progress) options.progress(tokens.size() - 256, wanted);
  }
  return ranks;
}

absl::Status WriteTiktokenRanks(const Ranks& ranks, const std::string& path) {
  std::vector<std::pair<Rank, const std::string*>> by_rank;
  for (const auto& [bytes, rank] : ranks) by_rank.emplace_back(rank, &bytes);
  std::sort(by_rank.begin(), by_rank.end());
  std::string out;
  for (const auto& [rank, bytes] : by_rank)
    absl::StrAppend(&out, absl::Base64Escape(*bytes), " ", rank, "\n");
  return WriteFileAtomically(path, out);
}

absl::Status WriteGpt2Files(const Ranks& ranks, const std::string& encoder_json_path,
                            const std::string& vocab_bpe_path) {
  std::vector<const std::string*> by_rank(ranks.size(), nullptr);
  for (const auto& [bytes, rank] : ranks) {
    if (rank >= ranks.size()) {
      return absl::InvalidArgumentError(absl::StrCat("ranks are not consecutive from 0: ", rank,
                                                     " of ", ranks.size(), " tokens"));
    }
    by_rank[rank] = &bytes;
  }
  const std::vector<unsigned char> order = Gpt2ByteOrder();
  for (int r = 0; r < 256 && r < static_cast<int>(by_rank.size()); ++r) {
    if (by_rank[r]->size() != 1 || static_cast<unsigned char>((*by_rank[r])[0]) != order[r]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank ", r, " is not byte ", static_cast<int>(order[r]),
          ": GPT-2's files give the single bytes ranks 0-255 in the byte-to-unicode order"));
    }
  }
  auto mapped = [](absl::string_view bytes) {
    std::string s;
    for (const unsigned char c : bytes) s += ByteToUnicode(c);
    return s;
  };
  // encoder.json in rank order, written by hand: JSON objects look keys up linearly.
  std::string encoder = "{";
  auto add_entry = [&](const std::string& key, size_t id) {
    absl::StrAppend(&encoder, encoder.size() > 1 ? ", " : "",
                    nlohmann::json(key).dump(-1, ' ', /*ensure_ascii=*/true), ": ", id);
  };
  std::string merges = "#version: 0.2\n";
  RankTable lower;  // the tokens of rank < r
  std::vector<Rank> parts;
  for (Rank r = 0; r < by_rank.size(); ++r) {
    const std::string& bytes = *by_rank[r];
    add_entry(mapped(bytes), r);
    if (r >= 256) {
      parts.clear();
      BytePairEncode(bytes, lower, parts);
      if (parts.size() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("token of rank ", r, " (\"", absl::CHexEscape(bytes),
                         "\") is not the merge of two tokens of lower rank"));
      }
      absl::StrAppend(&merges, mapped(*by_rank[parts[0]]), " ", mapped(*by_rank[parts[1]]), "\n");
    }
    lower.Insert(bytes, r);
  }
  add_entry("<|endoftext|>", by_rank.size());
  encoder += "}";
  RETURN_IF_ERROR(WriteFileAtomically(encoder_json_path, encoder));
  return WriteFileAtomically(vocab_bpe_path, merges);
}

}  // namespace ember::tokenizer
