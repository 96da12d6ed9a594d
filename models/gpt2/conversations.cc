#include "models/gpt2/conversations.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace ember::models::gpt2 {

std::string UserTurn(absl::string_view question) {
  return absl::StrCat("User: ", question, "\nBot:");
}

std::string BotTurn(absl::string_view reply) { return absl::StrCat(" ", reply, "\n"); }

absl::StatusOr<std::vector<Conversation>> ReadConversations(const std::string& path,
                                                            const tokenizer::Encoding& encoding) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open conversations ", path));
  const int64_t eot = encoding.specials().at("<|endoftext|>");
  std::vector<Conversation> out;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto bad = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", what));
    };
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return bad("not JSON");
    const nlohmann::json& turns = j.is_object() && j.contains("messages") ? j["messages"] : j;
    if (!turns.is_array() || turns.empty()) {
      return bad(R"(expected {"messages": [{"role": ..., "content": ...}, ...]} or the list)");
    }
    Conversation c;
    auto add = [&](absl::string_view text, bool trained) -> absl::Status {
      absl::StatusOr<std::vector<tokenizer::Rank>> ids = encoding.EncodeOrdinary(text);
      if (!ids.ok()) return bad(ids.status().message());
      c.tokens.insert(c.tokens.end(), ids->begin(), ids->end());
      c.trained.insert(c.trained.end(), ids->size(), trained ? 1 : 0);
      return absl::OkStatus();
    };
    bool replied = false;
    std::string expect = "user";  // the role the next turn must have
    for (size_t t = 0; t < turns.size(); ++t) {
      const nlohmann::json& turn = turns[t];
      if (!turn.is_object() || !turn.contains("role") || !turn.contains("content") ||
          !turn["role"].is_string() || !turn["content"].is_string()) {
        return bad(absl::StrCat("turn ", t + 1, R"( is not {"role": "...", "content": "..."})"));
      }
      std::string role = turn["role"];
      const std::string content = turn["content"];
      if (role == "bot") role = "assistant";
      if (role == "system") {
        if (t != 0) return bad(absl::StrCat("turn ", t + 1, ": a system turn comes first"));
        if (absl::Status s = add(content + "\n", false); !s.ok()) return s;
        continue;
      }
      if (t == 0) c.tokens.push_back(eot), c.trained.push_back(0);
      if (role != "user" && role != "assistant") {
        return bad(absl::StrCat("turn ", t + 1, ": role \"", role,
                                "\" (expected system, user or assistant)"));
      }
      if (role != expect) {
        return bad(absl::StrCat("turn ", t + 1, ": a ", role, " turn where the ", expect,
                                " should speak (turns alternate, from the user's)"));
      }
      if (role == "user") {
        if (absl::Status s = add(UserTurn(content), false); !s.ok()) return s;
        expect = "assistant";
      } else {
        if (absl::Status s = add(BotTurn(content), true); !s.ok()) return s;
        replied = true;
        expect = "user";
      }
    }
    if (!replied) return bad("no reply of the bot's to learn");
    c.tokens.push_back(eot);  // the bot learns to end the conversation
    c.trained.push_back(1);
    out.push_back(std::move(c));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no conversations"));
  return out;
}

}  // namespace ember::models::gpt2
