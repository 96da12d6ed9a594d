#include "models/common/run_log.h"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace ember::models {

std::string PathOrWorkspace(const std::string& flag, std::string_view fallback) {
  return flag.empty() ? WorkspacePath(fallback) : flag;
}

absl::Status MissingInput(const absl::Status& status) {
  return absl::NotFoundError(absl::StrCat(status.message(), " (run ./setup.sh)"));
}

std::string FormatDuration(double seconds) {
  const int64_t t = std::llround(std::max(0.0, seconds));
  return t >= 60 ? absl::StrCat(t / 60, "m", t % 60 < 10 ? "0" : "", t % 60, "s") : absl::StrCat(t, "s");
}

void ShowProgress(std::string_view what, int64_t done, int64_t total, int64_t first,
                  std::string_view fields, double rate, std::string_view unit, double elapsed_seconds) {
  const double eta = done > first ? elapsed_seconds * static_cast<double>(total - done) / static_cast<double>(done - first) : 0;
  std::fprintf(stderr, "\r%.*s %lld/%lld | %.*s | %.0f %.*s/s | %s, ETA %s   ", static_cast<int>(what.size()),
               what.data(), static_cast<long long>(done), static_cast<long long>(total), static_cast<int>(fields.size()),
               fields.data(), rate, static_cast<int>(unit.size()), unit.data(), FormatDuration(elapsed_seconds).c_str(),
               FormatDuration(eta).c_str());
}

absl::Status WriteMetricsJson(const std::string& path, const nlohmann::json& metrics) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << metrics.dump() << '\n';
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", error.message()));
  return absl::OkStatus();
}

}  // namespace ember::models
