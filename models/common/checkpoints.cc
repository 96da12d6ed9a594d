#include "models/common/checkpoints.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/atomic_file.h"
#include "models/common/run_log.h"
#include "nn/safetensors.h"

namespace ember::models {
namespace {

constexpr char kOptimizerPrefix[] = "optimizer.";

std::atomic<int> stop_signal{0};

void OnStopSignal(int signo) {
  if (stop_signal.load() != 0 && signo == SIGINT) _exit(128 + SIGINT);
  stop_signal.store(signo);
}

// The number a metrics row begins with: "12,..." (CSV) or {"step":12,...} (JSON lines).
bool RowNumber(absl::string_view line, int64_t& step) {
  if (!absl::ConsumePrefix(&line, "{\"step\":") && (line.empty() || line[0] < '0' || line[0] > '9'))
    return false;
  const size_t end = line.find_first_of(",}");
  return end != absl::string_view::npos && absl::SimpleAtoi(line.substr(0, end), &step);
}

absl::StatusOr<std::string> MetadataText(const TrainingState& state, const std::string& path,
                                         const std::string& key) {
  const auto it = state.metadata.find(key);
  if (it == state.metadata.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the checkpoint has no \"", key, "\" in its metadata"));
  }
  return it->second;
}

}  // namespace

void CatchStopSignals() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int StopSignal() { return stop_signal.load(); }

int ExitCodeAfterSignal(int code) {
  return code == 0 && StopSignal() != 0 ? 128 + StopSignal() : code;
}

void ReportStop(int64_t step, const std::string& checkpoint) {
  EndProgress();
  std::fprintf(stderr,
               "train: stopped by signal %d after step %lld; wrote %s (continue with "
               "--resume=latest)\n",
               StopSignal(), static_cast<long long>(step), checkpoint.c_str());
}

std::string StepCheckpointPath(const std::string& out_dir, int64_t step) {
  const std::filesystem::path dir = std::filesystem::path(out_dir) / "checkpoints";
  std::error_code error;
  std::filesystem::create_directories(dir, error);  // if it fails, the write names the folder
  return (dir / absl::StrFormat("step_%06d.safetensors", step)).string();
}

void PruneStepCheckpoints(const std::string& out_dir, int64_t keep) {
  std::vector<std::filesystem::path> saved;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(out_dir) / "checkpoints", error)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "step_")) continue;
    if (absl::EndsWith(name, ".safetensors")) {
      saved.push_back(entry.path());
    } else if (absl::StrContains(name, kAtomicTempInfix)) {
      std::filesystem::remove(entry.path(), error);  // a write that a killed run left unfinished
    }
  }
  std::sort(saved.begin(), saved.end());  // zero-padded steps sort by name
  for (size_t i = 0; i + std::max<int64_t>(keep, 1) < saved.size(); ++i)
    std::filesystem::remove(saved[i], error);
}

absl::StatusOr<std::string> LatestCheckpoint(const std::string& out_dir,
                                             std::string_view final_name) {
  std::vector<std::filesystem::path> candidates = {std::filesystem::path(out_dir) /
                                                   std::string(final_name)};
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(out_dir) / "checkpoints", error)) {
    if (entry.path().extension() == ".safetensors") candidates.push_back(entry.path());
  }
  std::string latest;
  std::filesystem::file_time_type newest;
  for (const auto& path : candidates) {
    const auto time = std::filesystem::last_write_time(path, error);
    if (!error && (latest.empty() || time > newest)) latest = path.string(), newest = time;
  }
  if (latest.empty()) {
    return absl::NotFoundError(
        absl::StrCat("--resume=latest: no checkpoint in ", out_dir, " (nor in its checkpoints/)"));
  }
  return latest;
}

absl::Status DropRowsAfter(const std::string& path, int64_t last) {
  std::ifstream in(path);
  if (!in) return absl::OkStatus();
  std::string kept, line;
  bool dropped = false;
  while (std::getline(in, line)) {
    int64_t row;
    if (RowNumber(line, row) && row > last) {
      dropped = true;
    } else {
      absl::StrAppend(&kept, line, "\n");
    }
  }
  if (!dropped) return absl::OkStatus();
  return WriteFileAtomically(path, kept);
}

absl::Status SaveTrainingState(const std::string& path, const TrainingState& state) {
  std::map<std::string, Tensor> tensors = state.model;
  for (const auto& [key, t] : state.optimizer) tensors[kOptimizerPrefix + key] = t;
  return nn::SaveSafetensors(path, tensors, state.metadata);
}

absl::StatusOr<TrainingState> LoadTrainingState(const std::string& path, std::string_view format) {
  absl::StatusOr<nn::Safetensors> file = nn::LoadSafetensors(path);
  if (!file.ok()) return file.status();
  const auto it = file->metadata.find("format");
  if (it == file->metadata.end() || it->second != format) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not a checkpoint of this trainer (its format is ",
        it == file->metadata.end() ? "not recorded" : absl::StrCat("\"", it->second, "\""),
        "; expected \"", std::string(format), "\")"));
  }
  TrainingState state;
  state.metadata = std::move(file->metadata);
  for (auto& [key, t] : file->tensors) {
    absl::string_view name = key;
    (absl::ConsumePrefix(&name, kOptimizerPrefix) ? state.optimizer
                                                  : state.model)[std::string(name)] = std::move(t);
  }
  return state;
}

absl::StatusOr<int64_t> MetadataInt(const TrainingState& state, const std::string& path,
                                    const std::string& key) {
  absl::StatusOr<std::string> text = MetadataText(state, path, key);
  int64_t value;
  if (text.ok() && !absl::SimpleAtoi(*text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": metadata \"", key, "\" is not an integer: ", *text));
  }
  if (!text.ok()) return text.status();
  return value;
}

absl::StatusOr<double> MetadataDouble(const TrainingState& state, const std::string& path,
                                      const std::string& key) {
  absl::StatusOr<std::string> text = MetadataText(state, path, key);
  double value;
  if (text.ok() && !absl::SimpleAtod(*text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": metadata \"", key, "\" is not a number: ", *text));
  }
  if (!text.ok()) return text.status();
  return value;
}

std::string ExactDouble(double value) { return absl::StrFormat("%.17g", value); }

absl::Status CheckSameRun(const TrainingState& state, const std::string& path,
                          const std::string& flag, const std::string& value) {
  absl::StatusOr<std::string> recorded = MetadataText(state, path, flag);
  if (!recorded.ok()) return recorded.status();
  if (*recorded != value) {
    return absl::InvalidArgumentError(absl::StrCat(path, " was trained with --", flag, "=",
                                                   *recorded, "; this run has --", flag, "=", value,
                                                   " (a resumed run keeps its flags)"));
  }
  return absl::OkStatus();
}

}  // namespace ember::models
