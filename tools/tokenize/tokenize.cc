// The tokenizer from the command line, tiktoken's encodings by name:
//
//   echo "Hello world" | bazel run //tools/tokenize -- encode --encoding=gpt2
//   echo "15496 995" | bazel run //tools/tokenize -- decode
//   bazel run //tools/tokenize -- encode --jsonl < requests.jsonl
//   bazel run -c opt //tools/tokenize -- count --input=big.txt --threads=2 --timing
//   bazel run -c opt //tools/tokenize -- train --input=corpus.txt --vocab_size=16384
//   --out=/tmp/brown
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
// count: the number of tokens of the input.
// --timing adds the speed on stderr (median and best of --repeat runs): of encoding for count
//   and encode (and the time writing the ids took), of decoding for decode.
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
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/cpus.h"
#include "base/main.h"
#include "base/status.h"
#include "nlohmann/json.hpp"
#include "tokenizer/encoding.h"
#include "tokenizer/trainer.h"
#include "tokenizer/vocab.h"
#include "tools/tokenize/requests.h"

ABSL_FLAG(std::string, encoding, "gpt2",
          "gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base or o200k_harmony");
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
ABSL_FLAG(bool, timing, false,
          "also print the speed on stderr: of encoding (count, encode) or decoding (decode)");
ABSL_FLAG(int, repeat, 1,
          "--timing: encode or decode this many times and report the median and the best");
ABSL_FLAG(int, vocab_size, 0, "train: the vocabulary size, 256 byte tokens included");
ABSL_FLAG(std::string, out, "",
          "train: write PREFIX.tiktoken, PREFIX.encoder.json, PREFIX.vocab.bpe");

namespace ember::tokenizer {
namespace {

// `v` in decimal at p, returning the end. Below 10^8 (every vocabulary): the eight
// digits of v, zero-padded, from two lookups of four, as one little-endian word; its
// leading '0's are the word's low zero bytes after subtracting '0' from each, so
// shifting them out leaves the digits at p. A third of to_chars' time.
char* AppendDecimal(char* p, uint32_t v) {
  static const std::array<uint32_t, 10000> kQuads = [] {
    std::array<uint32_t, 10000> quads;
    for (uint32_t i = 0; i < 10000; ++i) {
      const char c[4] = {char('0' + i / 1000), char('0' + i / 100 % 10), char('0' + i / 10 % 10),
                         char('0' + i % 10)};
      std::memcpy(&quads[i], c, 4);
    }
    return quads;
  }();
  if (v >= 100000000) return std::to_chars(p, p + 10, v).ptr;
  const uint64_t digits = kQuads[v / 10000] | uint64_t{kQuads[v % 10000]} << 32;
  const uint64_t values = digits - 0x3030303030303030ull;  // each byte 0-9, none borrows
  const int zeros =
      values == 0 ? 7 : std::min(7, __builtin_ctzll(values) / 8);  // 0 prints one digit
  const uint64_t shifted = digits >> (8 * zeros);
  std::memcpy(p, &shifted, 8);  // the caller leaves room for 8
  return p + 8 - zeros;
}

// The ids to standard output in `format` (see the top of this file), formatted into a
// 1 MB buffer that is written whenever it fills: printing must not cost more than
// encoding, and a buffer for all of it (11 bytes an id, zeroed) cost more than the
// digits themselves.
absl::Status WriteIds(const std::vector<Rank>& ids, const std::string& format) {
  if (format != "text" && format != "u16" && format != "u32") {
    return absl::InvalidArgumentError(
        absl::StrCat("--output_format=", format, ": expected text, u16 or u32"));
  }
  const bool text = format == "text";
  const int width = format == "u16" ? 2 : 4;
  if (width == 2 && !text) {  // checked before anything is written
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] > 0xffff) {
        return absl::InvalidArgumentError(
            absl::StrCat("--output_format=u16: token ", i, " is ", ids[i],
                         ", which does not fit in 16 bits (use u32)"));
      }
    }
  }
  constexpr size_t kBuffer = 1 << 20,
                   kMaxId = 12;  // a separator, up to 10 digits, the last newline
  std::vector<char> buffer(kBuffer);
  char* p = buffer.data();
  auto flush = [&] {
    const size_t n = p - buffer.data();
    p = buffer.data();
    return std::fwrite(buffer.data(), 1, n, stdout) == n;
  };
  bool ok = true;
  for (size_t i = 0; i < ids.size() && ok; ++i) {
    if (p + kMaxId > buffer.data() + kBuffer) ok = flush();
    if (text) {
      if (i > 0) *p++ = ' ';
      p = AppendDecimal(p, ids[i]);
    } else {
      for (int b = 0; b < width; ++b) *p++ = static_cast<char>(ids[i] >> (8 * b));
    }
  }
  if (text) *p++ = '\n';
  if (!ok || !flush() || std::fflush(stdout) != 0) {
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
    if (!in)
      return absl::NotFoundError(
          absl::StrCat("cannot open --input=", path, ": ", std::strerror(errno)));
    ss << in.rdbuf();
  }
  return ss.str();
}

int Threads() {
  const int n = absl::GetFlag(FLAGS_threads);
  return n > 0 ? n : AvailableCpus();
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
      return absl::NotFoundError(
          absl::StrCat(e.status().message(), " (run ./setup.sh, or pass --vocab_dir)"));
    }
    return e;
  }
  ASSIGN_OR_RETURN(Ranks ranks, LoadTiktokenRanks(file));
  Rank next = 0;
  for (const auto& [bytes, rank] : ranks) next = std::max(next, rank + 1);
  return Encoding::Create(file, absl::GetFlag(FLAGS_pattern), std::move(ranks),
                          {{"<|endoftext|>", next}});
}

absl::Status RunJsonl(const Encoding& e, bool encode, const Allowed& allowed) {
  std::istream* in = &std::cin;
  std::ifstream file;
  if (!absl::GetFlag(FLAGS_input).empty()) {
    file.open(absl::GetFlag(FLAGS_input), std::ios::binary);
    if (!file) {
      return absl::NotFoundError(absl::StrCat("cannot open --input=", absl::GetFlag(FLAGS_input),
                                              ": ", std::strerror(errno)));
    }
    in = &file;
  }
  std::string line;
  while (std::getline(*in, line)) {
    // dump() with replacement: an answer is always valid JSON, whatever bytes came in.
    std::cout << AnswerLine(e, encode, absl::GetFlag(FLAGS_ordinary), line, allowed)
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Rank>> ParseIds(absl::string_view text) {
  std::vector<Rank> ids;
  size_t index = 0;
  for (absl::string_view field :
       absl::StrSplit(text, absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty())) {
    Rank id;
    if (!absl::SimpleAtoi(field, &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input item ", index, " (\"", field.substr(0, 40), "\") is not a token id"));
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
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [suffix, status] :
       {std::pair<const char*, absl::Status>{".tiktoken",
                                             WriteTiktokenRanks(ranks, out + ".tiktoken")},
        {".encoder.json / .vocab.bpe",
         WriteGpt2Files(ranks, out + ".encoder.json", out + ".vocab.bpe")}}) {
    if (!status.ok()) return status;
  }
  std::fprintf(stderr,
               "train: %zu tokens from %zu bytes in %.2f s; wrote %s.tiktoken, %s.encoder.json, "
               "%s.vocab.bpe\n",
               ranks.size(), text.size(), seconds, out.c_str(), out.c_str(), out.c_str());
  return absl::OkStatus();
}

// How long f() took over --repeat runs, in seconds.
struct Times {
  double median = 0;
  double best = 0;  // the least: on a shared machine, the run least slowed by others
};

// f() `repeat` times: the last result (the first error, if any) and its times.
template <typename F>
auto Repeated(int repeat, Times& times, F&& f) -> decltype(f()) {
  std::vector<double> seconds;
  decltype(f()) result;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    result = f();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!result.ok()) return result;
  }
  std::sort(seconds.begin(), seconds.end());
  times.median = seconds[seconds.size() / 2];
  times.best = seconds.front();
  return result;
}

absl::Status Run(const std::string& command) {
  if (const int n = absl::GetFlag(FLAGS_threads); n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads=", n, ": expected 0 (every core) or more"));
  }
  if (const int n = absl::GetFlag(FLAGS_repeat); n < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--repeat=", n, ": expected 1 or more"));
  }
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
  const bool timing = absl::GetFlag(FLAGS_timing);
  const int repeat = absl::GetFlag(FLAGS_repeat);
  if (command == "decode") {
    ASSIGN_OR_RETURN(std::vector<Rank> ids, ParseIds(input));
    Times times;
    ASSIGN_OR_RETURN(std::string bytes,
                     Repeated(repeat, times, [&] { return e.DecodeBytes(ids); }));
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0) {
      return absl::UnavailableError("could not write the bytes to standard output");
    }
    if (timing) {
      std::fprintf(stderr,
                   "%s: decoded %zu tokens to %zu bytes, %.4f s (median of %d), %.2f MB/s (best "
                   "%.4f s, %.2f MB/s)\n",
                   e.name().c_str(), ids.size(), bytes.size(), times.median, repeat,
                   bytes.size() / times.median / 1e6, times.best, bytes.size() / times.best / 1e6);
    }
    return absl::OkStatus();
  }
  const int threads = Threads();
  Times times;
  ASSIGN_OR_RETURN(std::vector<Rank> ids, Repeated(repeat, times, [&] {
                     return EncodeText(e, input, absl::GetFlag(FLAGS_ordinary), allowed, threads);
                   }));
  auto report = [&](absl::string_view extra) {
    if (!timing) return;
    std::fprintf(stderr,
                 "%s: %zu bytes, %zu tokens, %.3f s (median of %d), %.2f MB/s (best %.3f s, %.2f "
                 "MB/s), %d threads%s\n",
                 e.name().c_str(), input.size(), ids.size(), times.median, repeat,
                 input.size() / times.median / 1e6, times.best, input.size() / times.best / 1e6,
                 threads, std::string(extra).c_str());
  };
  if (command == "count") {
    std::cout << ids.size() << '\n';
    report("");
    return absl::OkStatus();
  }
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(WriteIds(ids, absl::GetFlag(FLAGS_output_format)));
  report(absl::StrFormat(
      "; writing the ids %.3f s",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::tokenizer

int main(int argc, char** argv) {
  return ember::RunMain(
      argc, argv, "tokenize",
      "tokenize encode|decode|count|train [flags]  (see tools/tokenize/tokenize.cc's header)",
      [](const std::vector<std::string>& arguments) {
        if (arguments.size() != 1) {
          return absl::InvalidArgumentError(
              "usage: tokenize encode|decode|count|train [flags]; --help lists the flags");
        }
        return ember::tokenizer::Run(arguments[0]);
      });
}
