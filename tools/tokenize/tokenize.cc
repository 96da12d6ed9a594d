// The tokenizer from the command line, tiktoken's encodings by name:
//
//   echo "Hello world" | bazel run //tools/tokenize -- encode --encoding=gpt2
//   echo "15496 995" | bazel run //tools/tokenize -- decode
//   bazel run //tools/tokenize -- encode --jsonl < requests.jsonl
//   bazel run -c opt //tools/tokenize -- count --input=big.txt --threads=2 --timing
//   bazel run -c opt //tools/tokenize -- train --input=corpus.txt --vocab_size=16384 --out=/tmp/brown
//
// encode: UTF-8 text in, token ids separated by spaces out (one line), or with
//   --output_format=u16 / u32 the ids as little-endian binary (u16: llm.c's token
//   shards' element type, so every id must be below 65536). Special-token text is an
//   error unless --allowed_special allows it ("all" or a comma-separated list), as
//   tiktoken's encode. --ordinary encodes it as text instead.
// decode: ids (separated by any whitespace) in, the tokens' bytes out.
// --jsonl: one JSON object per input line, one per output line, and a bad line gets
//   {"error": "..."} and the tool goes on:
//   encode {"text": "...", "allowed_special": "all" | ["<|endoftext|>", ...]} -> {"ids": [...]}
//   decode {"ids": [...]} -> {"hex": "<the bytes as lowercase hex>"}
// count: the number of tokens of the input; --timing adds the encoding speed on stderr.
// train: learns a byte-level BPE vocabulary (tokenizer/trainer.h) and writes
//   PREFIX.tiktoken, PREFIX.encoder.json and PREFIX.vocab.bpe.
//
// The vocabulary files come from --vocab_dir, by default the downloads/tokenizer folder
// that ./setup.sh fills (found through the workspace under `bazel run`). Instead of
// --encoding, --tiktoken_file=PATH encodes with any rank file (e.g. one `train` wrote),
// with --pattern (default GPT-2's) and no special tokens but <|endoftext|> after the
// last rank.

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "base/main.h"
#include "nlohmann/json.hpp"
#include "tokenizer/encoding.h"
#include "tokenizer/trainer.h"
#include "tokenizer/vocab.h"

ABSL_FLAG(std::string, encoding, "gpt2",
          "gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base or o200k_base");
ABSL_FLAG(std::string, tiktoken_file, "",
          "encode with this .tiktoken rank file instead of --encoding (with --pattern)");
ABSL_FLAG(std::string, pattern, ember::tokenizer::kGpt2Pattern,
          "pre-tokenization pattern for --tiktoken_file and train (tiktoken's pat_str)");
ABSL_FLAG(std::string, vocab_dir, "",
          "folder with the vocabulary files (default: downloads/tokenizer of the workspace, "
          "which ./setup.sh fills)");
ABSL_FLAG(std::string, allowed_special, "",
          "special tokens that encode to their ids: \"all\" or a comma-separated list");
ABSL_FLAG(bool, ordinary, false, "encode special-token text as ordinary text");
ABSL_FLAG(std::string, output_format, "text",
          "encode: text (ids separated by spaces), u16 or u32 (little-endian binary)");
ABSL_FLAG(bool, jsonl, false, "one JSON request per input line, one JSON answer per output line");
ABSL_FLAG(std::string, input, "", "input file (default: standard input)");
ABSL_FLAG(int, threads, 0, "encoding threads (0: every core); the ids do not depend on it");
ABSL_FLAG(bool, timing, false, "count: also print the encoding speed on stderr");
ABSL_FLAG(int, repeat, 1, "count --timing: encode this many times and report the median");
ABSL_FLAG(int, vocab_size, 0, "train: the vocabulary size, 256 byte tokens included");
ABSL_FLAG(std::string, out, "", "train: write PREFIX.tiktoken, PREFIX.encoder.json, PREFIX.vocab.bpe");

namespace ember::tokenizer {
namespace {

using Allowed = absl::flat_hash_set<std::string>;

// The ids to standard output in `format` (see the top of this file), in one buffer and
// one write: printing must not cost more than encoding.
absl::Status WriteIds(const std::vector<Rank>& ids, const std::string& format) {
  std::string out;
  if (format == "text") {
    out.resize(ids.size() * 11 + 1);  // up to 10 digits and a separator each
    char* p = out.data();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) *p++ = ' ';
      p = std::to_chars(p, out.data() + out.size(), ids[i]).ptr;
    }
    *p++ = '\n';
    out.resize(p - out.data());
  } else if (format == "u16" || format == "u32") {
    const int width = format == "u16" ? 2 : 4;
    out.resize(ids.size() * width);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (width == 2 && ids[i] > 0xffff) {
        return absl::InvalidArgumentError(absl::StrCat("--output_format=u16: token ", i, " is ", ids[i],
                                                       ", which does not fit in 16 bits (use u32)"));
      }
      for (int b = 0; b < width; ++b) out[i * width + b] = static_cast<char>(ids[i] >> (8 * b));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--output_format=", format, ": expected text, u16 or u32"));
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    return absl::UnavailableError("could not write the ids to standard output");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadInput() {
  const std::string path = absl::GetFlag(FLAGS_input);
  std::ostringstream ss;
  if (path.empty()) {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot open --input=", path));
    ss << in.rdbuf();
  }
  return ss.str();
}

int Threads() {
  const int n = absl::GetFlag(FLAGS_threads);
  return n > 0 ? n : std::max(1u, std::thread::hardware_concurrency());
}

std::string VocabDir() {
  std::string dir = absl::GetFlag(FLAGS_vocab_dir);
  if (!dir.empty()) return dir;
  return WorkspacePath("downloads/tokenizer");
}

absl::StatusOr<Encoding> LoadSelected() {
  const std::string file = absl::GetFlag(FLAGS_tiktoken_file);
  if (file.empty()) {
    absl::StatusOr<Encoding> e = LoadEncoding(absl::GetFlag(FLAGS_encoding), VocabDir());
    if (absl::IsNotFound(e.status())) {
      return absl::NotFoundError(absl::StrCat(e.status().message(),
                                              " (run ./setup.sh, or pass --vocab_dir)"));
    }
    return e;
  }
  ASSIGN_OR_RETURN(Ranks ranks, LoadTiktokenRanks(file));
  Rank next = 0;
  for (const auto& [bytes, rank] : ranks) next = std::max(next, rank + 1);
  return Encoding::Create(file, absl::GetFlag(FLAGS_pattern), std::move(ranks),
                          {{"<|endoftext|>", next}});
}

// "all", "" or a comma-separated list, each checked against the encoding's specials.
absl::StatusOr<Allowed> ParseAllowed(const Encoding& e, const nlohmann::json& spec) {
  if (spec.is_string() && spec.get<std::string>() == "all") return e.AllSpecial();
  std::vector<std::string> names;
  if (spec.is_string()) {
    for (absl::string_view s : absl::StrSplit(spec.get<std::string>(), ',', absl::SkipEmpty())) {
      names.emplace_back(s);
    }
  } else if (spec.is_array() && std::all_of(spec.begin(), spec.end(), [](const auto& x) { return x.is_string(); })) {
    names = spec.get<std::vector<std::string>>();
  } else {
    return absl::InvalidArgumentError("allowed_special must be \"all\", a string or a list of strings");
  }
  Allowed allowed;
  for (const std::string& name : names) {
    if (!e.specials().contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is not a special token of ", e.name(), " (it has: ",
          absl::StrJoin(std::vector<std::string>(e.AllSpecial().begin(), e.AllSpecial().end()), ", "), ")"));
    }
    allowed.insert(name);
  }
  return allowed;
}

absl::StatusOr<std::vector<Rank>> EncodeText(const Encoding& e, absl::string_view text,
                                             const Allowed& allowed, int threads) {
  if (absl::GetFlag(FLAGS_ordinary)) return e.EncodeOrdinary(text, threads);
  return e.Encode(text, allowed, threads);
}

std::string Hex(absl::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes.size());
  for (const unsigned char c : bytes) hex.push_back(kDigits[c >> 4]), hex.push_back(kDigits[c & 15]);
  return hex;
}

// One JSON request -> one JSON answer.
nlohmann::json AnswerLine(const Encoding& e, bool encode, const std::string& line, const Allowed& flag_allowed) {
  const nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  auto error = [](absl::string_view message) { return nlohmann::json{{"error", std::string(message)}}; };
  if (!request.is_object()) return error("expected a JSON object");
  if (encode) {
    if (!request.contains("text") || !request["text"].is_string()) return error("expected \"text\": a string");
    Allowed allowed = flag_allowed;
    if (request.contains("allowed_special")) {
      absl::StatusOr<Allowed> a = ParseAllowed(e, request["allowed_special"]);
      if (!a.ok()) return error(a.status().message());
      allowed = *std::move(a);
    }
    absl::StatusOr<std::vector<Rank>> ids = EncodeText(e, request["text"].get<std::string>(), allowed, 1);
    if (!ids.ok()) return error(ids.status().message());
    return nlohmann::json{{"ids", *ids}};
  }
  if (!request.contains("ids") || !request["ids"].is_array()) return error("expected \"ids\": a list of token ids");
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

absl::Status RunJsonl(const Encoding& e, bool encode, const Allowed& allowed) {
  std::istream* in = &std::cin;
  std::ifstream file;
  if (!absl::GetFlag(FLAGS_input).empty()) {
    file.open(absl::GetFlag(FLAGS_input), std::ios::binary);
    if (!file) return absl::NotFoundError(absl::StrCat("cannot open --input=", absl::GetFlag(FLAGS_input)));
    in = &file;
  }
  std::string line;
  while (std::getline(*in, line)) {
    // dump() with replacement: an answer is always valid JSON, whatever bytes came in.
    std::cout << AnswerLine(e, encode, line, allowed).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Rank>> ParseIds(absl::string_view text) {
  std::vector<Rank> ids;
  size_t index = 0;
  for (absl::string_view field : absl::StrSplit(text, absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty())) {
    Rank id;
    if (!absl::SimpleAtoi(field, &id)) {
      return absl::InvalidArgumentError(absl::StrCat("input item ", index, " (\"", field.substr(0, 40),
                                                     "\") is not a token id"));
    }
    ids.push_back(id);
    ++index;
  }
  return ids;
}

absl::Status Train() {
  const int vocab_size = absl::GetFlag(FLAGS_vocab_size);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (absl::GetFlag(FLAGS_input).empty() || out.empty() || vocab_size <= 0) {
    return absl::InvalidArgumentError("train needs --input=FILE, --vocab_size=N and --out=PREFIX");
  }
  ASSIGN_OR_RETURN(std::string text, ReadInput());
  TrainerOptions options;
  options.vocab_size = vocab_size;
  options.pattern = absl::GetFlag(FLAGS_pattern);
  options.progress = [](size_t merges, size_t total) {
    if (merges % 256 == 0 || merges == total) {
      std::fprintf(stderr, "\rtrain: %zu / %zu merges", merges, total);
      if (merges == total) std::fputc('\n', stderr);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Ranks ranks, TrainBpe(text, options));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [suffix, status] :
       {std::pair<const char*, absl::Status>{".tiktoken", WriteTiktokenRanks(ranks, out + ".tiktoken")},
        {".encoder.json / .vocab.bpe", WriteGpt2Files(ranks, out + ".encoder.json", out + ".vocab.bpe")}}) {
    if (!status.ok()) return status;
  }
  std::fprintf(stderr, "train: %zu tokens from %zu bytes in %.2f s; wrote %s.tiktoken, %s.encoder.json, %s.vocab.bpe\n",
               ranks.size(), text.size(), seconds, out.c_str(), out.c_str(), out.c_str());
  return absl::OkStatus();
}

absl::Status Run(const std::string& command) {
  if (command == "train") return Train();
  if (command != "encode" && command != "decode" && command != "count") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown command \"", command, "\": expected encode, decode, count or train"));
  }
  ASSIGN_OR_RETURN(Encoding e, LoadSelected());
  ASSIGN_OR_RETURN(Allowed allowed, ParseAllowed(e, absl::GetFlag(FLAGS_allowed_special)));
  if (absl::GetFlag(FLAGS_jsonl)) {
    if (command == "count") return absl::InvalidArgumentError("--jsonl is for encode and decode");
    return RunJsonl(e, command == "encode", allowed);
  }
  ASSIGN_OR_RETURN(std::string input, ReadInput());
  if (command == "decode") {
    ASSIGN_OR_RETURN(std::vector<Rank> ids, ParseIds(input));
    ASSIGN_OR_RETURN(std::string bytes, e.DecodeBytes(ids));
    std::cout << bytes;
    return absl::OkStatus();
  }
  const int threads = Threads();
  std::vector<double> seconds;
  absl::StatusOr<std::vector<Rank>> ids;
  for (int r = 0; r < std::max(1, absl::GetFlag(FLAGS_repeat)); ++r) {
    const auto start = std::chrono::steady_clock::now();
    ids = EncodeText(e, input, allowed, threads);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    RETURN_IF_ERROR(ids.status());
  }
  if (command == "count") {
    std::cout << ids->size() << '\n';
    if (absl::GetFlag(FLAGS_timing)) {
      std::sort(seconds.begin(), seconds.end());
      const double median = seconds[seconds.size() / 2];
      std::fprintf(stderr, "%s: %zu bytes, %zu tokens, %.3f s (median of %zu), %.2f MB/s, %d threads\n",
                   e.name().c_str(), input.size(), ids->size(), median, seconds.size(),
                   input.size() / median / 1e6, threads);
    }
    return absl::OkStatus();
  }
  return WriteIds(*ids, absl::GetFlag(FLAGS_output_format));
}

}  // namespace
}  // namespace ember::tokenizer

int main(int argc, char** argv) {
  return ember::RunMain(
      argc, argv, "tokenize", "tokenize encode|decode|count|train [flags]  (see tools/tokenize/tokenize.cc's header)",
      [](const std::vector<std::string>& arguments) {
        if (arguments.size() != 1) {
          return absl::InvalidArgumentError(
              "usage: tokenize encode|decode|count|train [flags]; --help lists the flags");
        }
        return ember::tokenizer::Run(arguments[0]);
      });
}
