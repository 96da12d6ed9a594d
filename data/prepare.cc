#include "data/prepare.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "data/datasets.h"

namespace ember::data {

absl::StatusOr<std::vector<Document>> BrownDocuments(const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, BrownFiles(dir));
  std::vector<Document> docs;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(std::string text, BrownFileText(absl::StrCat(dir, "/", file)));
    docs.push_back({file, std::move(text)});
  }
  return docs;
}

bool IsValidationDocument(size_t i, size_t count, double val_fraction) {
  const int64_t every = std::max<int64_t>(2, std::llround(1 / val_fraction));
  return static_cast<int64_t>(count) >= every && static_cast<int64_t>(i % every) == every - 1;
}

absl::StatusOr<TokenSplit> TokenizeDocuments(const std::vector<Document>& docs,
                                             const EncodeFn& encode,
                                             std::optional<uint16_t> separator, double val_fraction,
                                             const std::function<void(size_t, size_t)>& progress) {
  if (!(val_fraction > 0 && val_fraction <= 0.5)) {
    return absl::InvalidArgumentError(
        absl::StrCat("val_fraction ", val_fraction, " is not in (0, 0.5]"));
  }
  if (docs.empty()) return absl::InvalidArgumentError("no documents");
  size_t total = 0, done = 0;
  for (const Document& d : docs) total += d.text.size();
  const int64_t every = std::max<int64_t>(2, std::llround(1 / val_fraction));
  const bool by_document = static_cast<int64_t>(docs.size()) >= every;
  TokenSplit split;
  for (size_t i = 0; i < docs.size(); ++i) {
    absl::StatusOr<std::vector<tokenizer::Rank>> ids = encode(docs[i].text);
    if (!ids.ok())
      return absl::InvalidArgumentError(absl::StrCat(docs[i].name, ": ", ids.status().message()));
    std::vector<uint16_t>& dest =
        IsValidationDocument(i, docs.size(), val_fraction) ? split.val : split.train;
    if (separator) dest.push_back(*separator);
    for (const tokenizer::Rank id : *ids) {
      if (id > 65535) {
        return absl::InvalidArgumentError(
            absl::StrCat(docs[i].name, ": token id ", id, " does not fit 16 bits"));
      }
      dest.push_back(static_cast<uint16_t>(id));
    }
    done += docs[i].text.size();
    if (progress) progress(done, total);
  }
  if (!by_document) {
    const size_t cut =
        split.train.size() - static_cast<size_t>(std::llround(val_fraction * split.train.size()));
    split.val.assign(split.train.begin() + static_cast<std::ptrdiff_t>(cut), split.train.end());
    split.train.resize(cut);
  }
  return split;
}

std::function<void(size_t, size_t)> ProgressBar() {
  struct State {
    int shown = -1;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  };
  auto state = std::make_shared<State>();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  return [state, terminal](size_t done, size_t total) {
    const double f = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
    if (static_cast<int>(100 * f) == state->shown || (!terminal && done < total))
      return;  // a log: the last line
    state->shown = static_cast<int>(100 * f);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - state->start).count();
    const int width = 30, filled = static_cast<int>(f * width);
    std::fprintf(stderr, "%s[%s%s] %3d%%  %.1f / %.1f MB  %.1f MB/s", terminal ? "\r" : "",
                 std::string(filled, '#').c_str(), std::string(width - filled, '-').c_str(),
                 state->shown, done / 1e6, total / 1e6, seconds > 0 ? done / 1e6 / seconds : 0.0);
    if (done == total) std::fputc('\n', stderr);
  };
}

}  // namespace ember::data
