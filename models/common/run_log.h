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

// Rewrites one line on stderr:
//   "<what> <done>/<total> | <fields> | <rate> <unit>/s | <elapsed>, ETA <eta>"
// with the ETA extrapolated from the elapsed time of `done - first` items.
void ShowProgress(std::string_view what, int64_t done, int64_t total, int64_t first,
                  std::string_view fields, double rate, std::string_view unit, double elapsed_seconds);

// Writes `metrics` to `path` as one JSON object on one line (temporary file + rename).
absl::Status WriteMetricsJson(const std::string& path, const nlohmann::json& metrics);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_RUN_LOG_H_
