#include "tokenizer/vocab.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace ember::tokenizer {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open vocabulary file ", path));
  std::error_code error;
  if (const auto bytes = std::filesystem::file_size(path, error);
      !error && bytes > kMaxVocabFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, " has ", bytes,
                                                   " bytes; a vocabulary file is at most ",
                                                   kMaxVocabFileBytes, " (256 MiB)"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status Malformed(const std::string& path, size_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", what));
}

// GPT-2's bytes_to_unicode order: the printable bytes stand for themselves, the 68
// others (0x00-0x20, 0x7F-0xA0, 0xAD) become U+0100.. in increasing order. Returns the
// code point of each byte.
std::vector<int> ByteCodePoints() {
  std::vector<int> code(256, -1);
  for (int b = 0; b < 256; ++b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))
      code[b] = b;
  }
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    if (code[b] < 0) code[b] = 256 + extra++;
  }
  return code;
}

std::string Utf8(int cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {  // the map only reaches U+0143: two bytes
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// Mapped text -> bytes; false if a character is not in the map.
bool UnmapBytes(absl::string_view text, const absl::flat_hash_map<std::string, char>& unmap,
                std::string& bytes) {
  bytes.clear();
  for (size_t i = 0; i < text.size();) {
    const size_t n = (static_cast<unsigned char>(text[i]) < 0x80) ? 1 : 2;
    const auto it = unmap.find(text.substr(i, n));
    if (it == unmap.end()) return false;
    bytes.push_back(it->second);
    i += n;
  }
  return true;
}

}  // namespace

std::string ByteToUnicode(unsigned char byte) {
  static const std::vector<int>* code = new std::vector<int>(ByteCodePoints());
  return Utf8((*code)[byte]);
}

absl::StatusOr<Ranks> LoadTiktokenRanks(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Ranks ranks;
  size_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    std::string bytes;
    uint32_t rank;
    if (fields.size() != 2 || !absl::Base64Unescape(fields[0], &bytes) ||
        !absl::SimpleAtoi(fields[1], &rank)) {
      return Malformed(path, line_number, "expected \"<base64 token bytes> <rank>\"");
    }
    if (!ranks.emplace(std::move(bytes), rank).second) {
      return Malformed(path, line_number, absl::StrCat("token \"", fields[0], "\" appears twice"));
    }
  }
  if (ranks.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " holds no tokens"));
  return ranks;
}

absl::StatusOr<Ranks> LoadGpt2Ranks(const std::string& encoder_json_path,
                                    const std::string& vocab_bpe_path,
                                    absl::flat_hash_map<std::string, Rank>* specials) {
  absl::flat_hash_map<std::string, char> unmap;
  const std::vector<int> code = ByteCodePoints();
  std::vector<int> order(256);  // bytes in the map's order: single-byte ranks
  for (int b = 0; b < 256; ++b) unmap[Utf8(code[b])] = static_cast<char>(b);
  {
    std::vector<std::pair<int, int>> by_code;
    for (int b = 0; b < 256; ++b) by_code.emplace_back(code[b], b);
    std::sort(by_code.begin(), by_code.end());
    for (int i = 0; i < 256; ++i) order[i] = by_code[i].second;
  }
  Ranks ranks;
  for (int i = 0; i < 256; ++i) ranks[std::string(1, static_cast<char>(order[i]))] = i;

  ASSIGN_OR_RETURN(std::string merges, ReadFile(vocab_bpe_path));
  size_t line_number = 0;
  Rank next = 256;
  std::string first, second;
  for (absl::string_view line : absl::StrSplit(merges, '\n')) {
    ++line_number;
    if (line_number == 1) {
      if (line.substr(0, 9) != "#version:") {
        return Malformed(vocab_bpe_path, 1, "expected the header \"#version: ...\"");
      }
      continue;
    }
    if (line.empty()) continue;
    const std::vector<absl::string_view> pair = absl::StrSplit(line, ' ');
    if (pair.size() != 2 || !UnmapBytes(pair[0], unmap, first) ||
        !UnmapBytes(pair[1], unmap, second) || first.empty() || second.empty()) {
      return Malformed(
          vocab_bpe_path, line_number,
          "expected a merge \"A B\" of two tokens in GPT-2's byte-to-unicode alphabet");
    }
    if (!ranks.contains(first) || !ranks.contains(second)) {
      return Malformed(vocab_bpe_path, line_number, "merges a token that no earlier line makes");
    }
    if (!ranks.emplace(first + second, next).second) {
      return Malformed(vocab_bpe_path, line_number, "makes a token an earlier line made");
    }
    ++next;
  }

  ASSIGN_OR_RETURN(std::string encoder_text, ReadFile(encoder_json_path));
  nlohmann::json encoder;
  try {
    encoder = nlohmann::json::parse(encoder_text);
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(encoder_json_path, ": not valid JSON: ", e.what()));
  }
  if (!encoder.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(encoder_json_path, ": expected a JSON object"));
  }
  size_t matched = 0;
  std::string bytes;
  for (const auto& [token, id] : encoder.items()) {
    if (!id.is_number_unsigned()) {
      return absl::InvalidArgumentError(absl::StrCat(encoder_json_path, ": the id of \"", token,
                                                     "\" is ", id.dump(), ", not an id"));
    }
    const Rank rank = id.get<Rank>();
    if (UnmapBytes(token, unmap, bytes) && ranks.contains(bytes)) {
      if (ranks.at(bytes) != rank) {
        return absl::InvalidArgumentError(
            absl::StrCat(encoder_json_path, ": \"", token, "\" has id ", rank,
                         " but vocab.bpe gives it ", ranks.at(bytes)));
      }
      ++matched;
    } else if (specials != nullptr) {
      (*specials)[token] = rank;
    }
  }
  if (matched != ranks.size()) {
    return absl::InvalidArgumentError(absl::StrCat(encoder_json_path, " lists ", matched,
                                                   " of the ", ranks.size(), " tokens that ",
                                                   vocab_bpe_path, " makes"));
  }
  return ranks;
}

absl::StatusOr<Encoding> Gpt2Encoding(const std::string& dir) {
  absl::flat_hash_map<std::string, Rank> specials;
  ASSIGN_OR_RETURN(Ranks ranks,
                   LoadGpt2Ranks(dir + "/encoder.json", dir + "/vocab.bpe", &specials));
  return Encoding::Create("gpt2", kGpt2Pattern, std::move(ranks), std::move(specials));
}

namespace {

struct Definition {
  const char* name;
  const char* rank_file;  // in the vocabulary folder
  const char* pattern;
  std::vector<std::pair<std::string, Rank>> specials;
};

// o200k_harmony's specials (gpt-oss): o200k_base's, its chat format's markers, and
// <|reserved_N|> for every other id from 200000 to 201087.
std::vector<std::pair<std::string, Rank>> HarmonySpecials() {
  std::vector<std::pair<std::string, Rank>> specials = {
      {"<|endofprompt|>", 200018}, {"<|startoftext|>", 199998}, {"<|endoftext|>", 199999},
      {"<|return|>", 200002},      {"<|constrain|>", 200003},   {"<|channel|>", 200005},
      {"<|start|>", 200006},       {"<|end|>", 200007},         {"<|message|>", 200008},
      {"<|call|>", 200012}};
  for (Rank id : {200000, 200001, 200004, 200009, 200010, 200011}) {
    specials.emplace_back(absl::StrCat("<|reserved_", id, "|>"), id);
  }
  for (Rank id = 200013; id < 201088; ++id) {
    specials.emplace_back(absl::StrCat("<|reserved_", id, "|>"), id);
  }
  return specials;
}

const std::vector<Definition>& Definitions() {
  static const auto* defs = new std::vector<Definition>{
      {"r50k_base", "r50k_base.tiktoken", kGpt2Pattern, {{"<|endoftext|>", 50256}}},
      {"p50k_base", "p50k_base.tiktoken", kGpt2Pattern, {{"<|endoftext|>", 50256}}},
      {"p50k_edit",
       "p50k_base.tiktoken",
       kGpt2Pattern,
       {{"<|endoftext|>", 50256},
        {"<|fim_prefix|>", 50281},
        {"<|fim_middle|>", 50282},
        {"<|fim_suffix|>", 50283}}},
      {"cl100k_base",
       "cl100k_base.tiktoken",
       kCl100kPattern,
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}}},
      {"o200k_base",
       "o200k_base.tiktoken",
       kO200kPattern,
       {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}},
      {"o200k_harmony", "o200k_base.tiktoken", kO200kPattern, HarmonySpecials()},
  };
  return *defs;
}

}  // namespace

const std::vector<std::string>& EncodingNames() {
  static const auto* names = [] {
    auto* n = new std::vector<std::string>{"gpt2"};
    for (const Definition& d : Definitions()) n->push_back(d.name);
    return n;
  }();
  return *names;
}

absl::StatusOr<Encoding> LoadEncoding(absl::string_view name, const std::string& dir) {
  if (name == "gpt2") return Gpt2Encoding(dir);
  for (const Definition& d : Definitions()) {
    if (name != d.name) continue;
    ASSIGN_OR_RETURN(Ranks ranks, LoadTiktokenRanks(absl::StrCat(dir, "/", d.rank_file)));
    absl::flat_hash_map<std::string, Rank> specials(d.specials.begin(), d.specials.end());
    return Encoding::Create(d.name, d.pattern, std::move(ranks), std::move(specials));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown encoding \"", name, "\"; known: ", absl::StrJoin(EncodingNames(), ", ")));
}

}  // namespace ember::tokenizer
