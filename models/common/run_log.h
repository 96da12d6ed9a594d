#ifndef EMBER_MODELS_COMMON_RUN_LOG_H_
#define EMBER_MODELS_COMMON_RUN_LOG_H_

// What every model binary shares beyond base/main.h (RunMain, WorkspacePath): path
// flags with workspace defaults, the one-line progress display, and the final figures
// as JSON (--metrics_out).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/main.h"
#include "nlohmann/json.hpp"

namespace ember::models {

// A path flag's value, or WorkspacePath(fallback) when it is empty (its default).
std::string PathOrWorkspace(const std::string& flag, std::string_view fallback);

// An input that could not be read, as NotFound with the hint that ./setup.sh fetches it.
absl::Status MissingInput(const absl::Status& status);

// "42s", "3m05s".
std::string FormatDuration(double seconds);

// Progress of a long loop on stderr, as
//   "<what> <done>/<total> | <fields> | <rate> <unit>/s | <elapsed>, ETA <eta>"
// with the ETA extrapolated from the elapsed time of `done - first` items. On a
// terminal, one line redrawn in place, with a bar after the count
// ("step 10/40 [#####---------------]  25% | ..."). Elsewhere (a file, a pipe) whole
// lines, the first, then at most one per `interval_seconds` of elapsed time, and the
// last, so that a log reads one update per line.
class ProgressDisplay {
 public:
  ProgressDisplay(bool terminal, double interval_seconds)
      : terminal_(terminal), interval_(interval_seconds) {}
  void Show(std::string_view what, int64_t done, int64_t total, int64_t first,
            std::string_view fields, double rate, std::string_view unit, double elapsed_seconds);
  // Ends a line being redrawn, so that what is printed next starts on its own line.
  void End();

 private:
  bool terminal_;
  double interval_;
  bool open_ = false;           // a redrawn line is on the terminal
  double last_shown_ = -1e300;  // elapsed seconds at the last whole line
};

// stderr's display: a terminal when isatty(2); else a line every 10 s
// ($EMBER_PROGRESS_SECONDS to change it).
ProgressDisplay& Progress();
inline void ShowProgress(std::string_view what, int64_t done, int64_t total, int64_t first,
                         std::string_view fields, double rate, std::string_view unit,
                         double elapsed_seconds) {
  Progress().Show(what, done, total, first, fields, rate, unit, elapsed_seconds);
}
inline void EndProgress() { Progress().End(); }

// Writes `metrics` to `path` as one JSON object on one line (temporary file + rename).
absl::Status WriteMetricsJson(const std::string& path, const nlohmann::json& metrics);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_RUN_LOG_H_
