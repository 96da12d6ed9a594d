#include "data/datasets.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status.h"
#include "data/idx.h"
#include "tensor/creation.h"
#include "tokenizer/encoding.h"

namespace ember::data {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `base` or `base`.gz in dir, whichever exists.
std::string IdxPath(const std::string& dir, const std::string& base) {
  const std::string plain = absl::StrCat(dir, "/", base);
  return std::filesystem::exists(plain) ? plain : plain + ".gz";
}

}  // namespace

absl::StatusOr<std::string> ReadUtf8File(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (const int64_t bad = tokenizer::FirstInvalidUtf8(text); bad >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid UTF-8 at byte ", bad));
  }
  return text;
}

absl::StatusOr<ImageSet> LoadMnist(const std::string& dir, Split split, ImageLayout layout) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string images_path = IdxPath(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = IdxPath(dir, prefix + "-labels-idx1-ubyte");
  ASSIGN_OR_RETURN(Tensor images, ReadIdx(images_path));
  ASSIGN_OR_RETURN(Tensor labels, ReadIdx(labels_path));
  if (images.dtype() != DType::kU8 || images.dim() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(images_path, ": expected unsigned bytes [N, H, W], got ",
                     DTypeName(images.dtype()), " ", ShapeToString(images.shape())));
  }
  if (labels.dtype() != DType::kU8 || labels.dim() != 1 || labels.shape()[0] != images.shape()[0]) {
    return absl::InvalidArgumentError(absl::StrCat(
        labels_path, ": expected unsigned bytes [", images.shape()[0], "] (one per image), got ",
        DTypeName(labels.dtype()), " ", ShapeToString(labels.shape())));
  }
  const int64_t n = images.shape()[0], h = images.shape()[1], w = images.shape()[2];
  ImageSet set;
  set.images = layout == ImageLayout::kNCHW ? Empty({n, 1, h, w}) : Empty({n, h * w});
  const uint8_t* src = images.data<uint8_t>();
  float* dst = set.images.data<float>();
  for (int64_t i = 0; i < images.numel(); ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;
  set.labels = labels.To(DType::kI64);
  return set;
}

absl::StatusOr<std::vector<std::string>> LoadNames(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    size_t line_number = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      line = absl::StripTrailingAsciiWhitespace(line);
      if (line.empty()) continue;
      if (tokenizer::FirstInvalidUtf8(line) >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", line_number, ": not valid UTF-8"));
      }
      names.push_back(absl::AsciiStrToLower(line));
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

absl::StatusOr<tokenizer::CharTokenizer> NamesVocabulary(const std::vector<std::string>& names) {
  ASSIGN_OR_RETURN(tokenizer::CharTokenizer chars,
                   tokenizer::CharTokenizer::FromText(absl::StrJoin(names, "")));
  std::vector<std::string> with_dot = {"."};
  for (const std::string& c : chars.chars()) {
    if (c != ".") with_dot.push_back(c);
  }
  return tokenizer::CharTokenizer::FromChars(std::move(with_dot));
}

absl::StatusOr<CharExamples> NameExamples(const std::vector<std::string>& names,
                                          const tokenizer::CharTokenizer& vocab, int block_size) {
  if (block_size < 1)
    return absl::InvalidArgumentError(absl::StrCat("block_size ", block_size, " < 1"));
  if (vocab.chars().empty() || vocab.chars()[0] != ".") {
    return absl::InvalidArgumentError("the vocabulary must have '.' as id 0 (NamesVocabulary)");
  }
  std::vector<int64_t> xs, ys;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<std::vector<tokenizer::Rank>> ids = vocab.Encode(names[i]);
    if (!ids.ok())
      return absl::InvalidArgumentError(absl::StrCat("name ", i, ": ", ids.status().message()));
    std::vector<int64_t> context(block_size, 0);
    ids->push_back(0);  // the closing '.'
    for (const tokenizer::Rank id : *ids) {
      xs.insert(xs.end(), context.begin(), context.end());
      ys.push_back(id);
      context.erase(context.begin());
      context.push_back(id);
    }
  }
  const int64_t n = static_cast<int64_t>(ys.size());
  return CharExamples{FromVector(xs, {n, block_size}), FromVector(ys, {n})};
}

absl::StatusOr<std::vector<std::string>> BrownFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // c, the genre letter a-r, two digits.
    if (name.size() == 4 && name[0] == 'c' && name[1] >= 'a' && name[1] <= 'r' &&
        absl::ascii_isdigit(name[2]) && absl::ascii_isdigit(name[3])) {
      files.push_back(name);
    }
  }
  if (ec)
    return absl::NotFoundError(
        absl::StrCat("cannot read the Brown corpus folder ", dir, ": ", ec.message()));
  if (files.empty())
    return absl::NotFoundError(absl::StrCat(dir, " holds no Brown corpus files (ca01 ...)"));
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<std::string> BrownFileText(const std::string& path) {
  ASSIGN_OR_RETURN(std::string tagged, ReadUtf8File(path));
  // Paragraphs are separated by blank lines, sentences are lines within them.
  std::string out;
  std::vector<std::string> sentences;
  auto end_paragraph = [&] {
    if (sentences.empty()) return;
    absl::StrAppend(&out, absl::StrJoin(sentences, "\n"), "\n\n");
    sentences.clear();
  };
  for (absl::string_view line : absl::StrSplit(tagged, '\n')) {
    std::vector<std::string> words;
    for (absl::string_view pair : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      const size_t slash = pair.rfind('/');
      words.emplace_back(slash == absl::string_view::npos || slash == 0 ? pair
                                                                        : pair.substr(0, slash));
    }
    if (words.empty()) {
      end_paragraph();
    } else {
      sentences.push_back(absl::StrJoin(words, " "));
    }
  }
  end_paragraph();
  return out;
}

absl::StatusOr<std::string> BrownText(const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, BrownFiles(dir));
  std::string out;
  for (const std::string& name : files) {
    ASSIGN_OR_RETURN(std::string text, BrownFileText(absl::StrCat(dir, "/", name)));
    out += text;
  }
  return out;
}

}  // namespace ember::data
