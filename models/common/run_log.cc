#include "models/common/run_log.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"

namespace ember::models {

std::string PathOrWorkspace(const std::string& flag, std::string_view fallback) {
  return flag.empty() ? WorkspacePath(fallback) : flag;
}

absl::Status MissingInput(const absl::Status& status) {
  return absl::NotFoundError(absl::StrCat(status.message(), " (run ./setup.sh)"));
}

std::string FormatDuration(double seconds) {
  const int64_t t = std::llround(std::max(0.0, seconds));
  return t >= 60 ? absl::StrCat(t / 60, "m", t % 60 < 10 ? "0" : "", t % 60, "s")
                 : absl::StrCat(t, "s");
}

void ProgressDisplay::Show(std::string_view what, int64_t done, int64_t total, int64_t first,
                           std::string_view fields, double rate, std::string_view unit,
                           double elapsed_seconds) {
  const double eta = done > first ? elapsed_seconds * static_cast<double>(total - done) /
                                        static_cast<double>(done - first)
                                  : 0;
  std::string bar;
  if (terminal_) {
    const double f =
        total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0)
                  : 1.0;
    const int width = 20, filled = static_cast<int>(f * width);
    bar = absl::StrCat(" [", std::string(filled, '#'), std::string(width - filled, '-'), "] ",
                       absl::StrFormat("%3d%%", static_cast<int>(100 * f)));
  } else if (done < total && elapsed_seconds - last_shown_ < interval_) {
    return;
  }
  const std::string line =
      absl::StrFormat("%s %lld/%lld%s | %s | %.0f %s/s | %s, ETA %s", what,
                      static_cast<long long>(done), static_cast<long long>(total), bar, fields,
                      rate, unit, FormatDuration(elapsed_seconds), FormatDuration(eta));
  if (terminal_) {
    std::fprintf(stderr, "\r%s   ", line.c_str());  // the spaces cover a longer line before
    open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
    last_shown_ = elapsed_seconds;
  }
}

void ProgressDisplay::End() {
  if (open_) std::fputc('\n', stderr);
  open_ = false;
}

ProgressDisplay& Progress() {
  static ProgressDisplay* display = [] {
    const char* seconds = std::getenv("EMBER_PROGRESS_SECONDS");
    return new ProgressDisplay(isatty(STDERR_FILENO) != 0,
                               seconds != nullptr ? std::atof(seconds) : 10.0);
  }();
  return *display;
}

absl::Status WriteMetricsJson(const std::string& path, const nlohmann::json& metrics) {
  return WriteFileAtomically(path, metrics.dump() + "\n");
}

}  // namespace ember::models
