#include "tokenizer/char_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace ember::tokenizer {
namespace {

// The byte length of the UTF-8 character starting at s[i] (s is valid UTF-8).
size_t CharBytes(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

absl::Status CheckUtf8(absl::string_view text, absl::string_view what) {
  if (const int64_t bad = FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not valid UTF-8 at byte ", bad));
  }
  return absl::OkStatus();
}

}  // namespace

CharTokenizer::CharTokenizer(std::vector<std::string> chars) : chars_(std::move(chars)) {
  for (size_t i = 0; i < chars_.size(); ++i) ids_.emplace(chars_[i], static_cast<Rank>(i));
}

absl::StatusOr<CharTokenizer> CharTokenizer::FromText(absl::string_view text) {
  RETURN_IF_ERROR(CheckUtf8(text, "text"));
  if (text.empty()) return absl::InvalidArgumentError("an empty text has no characters");
  absl::flat_hash_set<absl::string_view> distinct;
  for (size_t i = 0; i < text.size();) {
    const size_t n = CharBytes(text, i);
    distinct.insert(text.substr(i, n));
    i += n;
  }
  // UTF-8 byte order is code point order.
  std::vector<std::string> chars(distinct.begin(), distinct.end());
  std::sort(chars.begin(), chars.end());
  return CharTokenizer(std::move(chars));
}

absl::StatusOr<CharTokenizer> CharTokenizer::FromChars(std::vector<std::string> chars) {
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < chars.size(); ++i) {
    RETURN_IF_ERROR(CheckUtf8(chars[i], absl::StrCat("character ", i)));
    if (chars[i].empty() || CharBytes(chars[i], 0) != chars[i].size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "character ", i, " (\"", absl::CHexEscape(chars[i]), "\") is not one character"));
    }
    if (!seen.insert(chars[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("character \"", chars[i], "\" is given twice"));
    }
  }
  if (chars.empty()) return absl::InvalidArgumentError("a character vocabulary needs a character");
  return CharTokenizer(std::move(chars));
}

absl::StatusOr<std::vector<Rank>> CharTokenizer::Encode(absl::string_view text) const {
  RETURN_IF_ERROR(CheckUtf8(text, "text"));
  std::vector<Rank> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = CharBytes(text, i);
    const auto it = ids_.find(text.substr(i, n));
    if (it == ids_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("character \"", absl::CHexEscape(text.substr(i, n)), "\" at byte ", i,
                       " is not in the vocabulary"));
    }
    ids.push_back(it->second);
    i += n;
  }
  return ids;
}

absl::StatusOr<std::string> CharTokenizer::Decode(const std::vector<Rank>& ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= chars_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "id ", ids[i], " at position ", i, " is not in the vocabulary of ", chars_.size()));
    }
    text += chars_[ids[i]];
  }
  return text;
}

absl::Status CharTokenizer::Save(const std::string& path) const {
  return WriteFileAtomically(path, nlohmann::json(chars_).dump() + "\n");
}

absl::StatusOr<CharTokenizer> CharTokenizer::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open character vocabulary ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_array() ||
      !std::all_of(j.begin(), j.end(), [](const nlohmann::json& c) { return c.is_string(); })) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON array of characters"));
  }
  absl::StatusOr<CharTokenizer> t = FromChars(j.get<std::vector<std::string>>());
  if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", t.status().message()));
  return t;
}

}  // namespace ember::tokenizer
