#include "tools/tokenize/requests.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ember::tokenizer {

absl::StatusOr<Allowed> ParseAllowed(const Encoding& e, const nlohmann::json& spec) {
  if (spec.is_string() && spec.get<std::string>() == "all") return e.AllSpecial();
  std::vector<std::string> names;
  if (spec.is_string()) {
    for (absl::string_view s : absl::StrSplit(spec.get<std::string>(), ',', absl::SkipEmpty())) {
      names.emplace_back(s);
    }
  } else if (spec.is_array() &&
             std::all_of(spec.begin(), spec.end(), [](const auto& x) { return x.is_string(); })) {
    names = spec.get<std::vector<std::string>>();
  } else {
    return absl::InvalidArgumentError(
        "allowed_special must be \"all\", a string or a list of strings");
  }
  Allowed allowed;
  for (const std::string& name : names) {
    if (!e.specials().contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is not a special token of ", e.name(), " (it has: ",
          absl::StrJoin(std::vector<std::string>(e.AllSpecial().begin(), e.AllSpecial().end()),
                        ", "),
          ")"));
    }
    allowed.insert(name);
  }
  return allowed;
}

absl::StatusOr<std::vector<Rank>> EncodeText(const Encoding& e, absl::string_view text,
                                             bool ordinary, const Allowed& allowed, int threads) {
  if (ordinary) return e.EncodeOrdinary(text, threads);
  return e.Encode(text, allowed, threads);
}

std::string Hex(absl::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (const unsigned char c : bytes)
    hex.push_back(kDigits[c >> 4]), hex.push_back(kDigits[c & 15]);
  return hex;
}

nlohmann::json AnswerLine(const Encoding& e, bool encode, bool ordinary, const std::string& line,
                          const Allowed& flag_allowed) {
  const nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  auto error = [](absl::string_view message) {
    return nlohmann::json{{"error", std::string(message)}};
  };
  if (!request.is_object()) return error("expected a JSON object");
  if (encode) {
    if (!request.contains("text") || !request["text"].is_string())
      return error("expected \"text\": a string");
    Allowed allowed = flag_allowed;
    if (request.contains("allowed_special")) {
      absl::StatusOr<Allowed> a = ParseAllowed(e, request["allowed_special"]);
      if (!a.ok()) return error(a.status().message());
      allowed = *std::move(a);
    }
    absl::StatusOr<std::vector<Rank>> ids =
        EncodeText(e, request["text"].get<std::string>(), ordinary, allowed, 1);
    if (!ids.ok()) return error(ids.status().message());
    return nlohmann::json{{"ids", *ids}};
  }
  if (!request.contains("ids") || !request["ids"].is_array())
    return error("expected \"ids\": a list of token ids");
  std::vector<Rank> ids;
  for (const nlohmann::json& id : request["ids"]) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > UINT32_MAX) {
      return error(absl::StrCat("expected token ids, got ", id.dump()));
    }
    ids.push_back(id.get<Rank>());
  }
  absl::StatusOr<std::string> bytes = e.DecodeBytes(ids);
  if (!bytes.ok()) return error(bytes.status().message());
  return nlohmann::json{{"hex", Hex(*bytes)}};
}

}  // namespace ember::tokenizer
