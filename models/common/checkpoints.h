#ifndef EMBER_MODELS_COMMON_CHECKPOINTS_H_
#define EMBER_MODELS_COMMON_CHECKPOINTS_H_

// Stopping and resuming a training binary, the same way in each of them (gpt2, mnist,
// makemore):
//   - SIGINT (Ctrl-C) or SIGTERM asks the loop to stop after the step it is in; the
//     trainer then writes a checkpoint and exits with 128 + the signal (130, 143). A
//     second SIGINT exits at once, even mid-write: checkpoints are written to a
//     temporary name and renamed, so the last complete one is never touched.
//   - --checkpoint_every=N writes OUT_DIR/checkpoints/step_<N, 6 digits>.safetensors and
//     keeps the newest --keep_checkpoints of them.
//   - --resume=latest takes the newest of those and OUT_DIR/<final checkpoint>.
//   - A resumed run appends to its metrics files, after dropping the rows past its
//     checkpoint (a run killed between checkpoints had written them).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ember::models {

// Installs the SIGINT and SIGTERM handlers described above.
void CatchStopSignals();
// 0, or the signal that asked the run to stop.
int StopSignal();
// What main returns: `code`, or 128 + the stop signal when the run ended cleanly
// because of one.
int ExitCodeAfterSignal(int code);
// After the checkpoint a stop signal asked for: ends the progress line and says in one
// line where the run stopped and how to continue it.
void ReportStop(int64_t step, const std::string& checkpoint);

// OUT_DIR/checkpoints/step_<step>.safetensors (the folder is created).
std::string StepCheckpointPath(const std::string& out_dir, int64_t step);
// Deletes all but the newest `keep` (at least 1) of OUT_DIR/checkpoints/step_*, and the
// temporary files of writes that a killed run left unfinished.
void PruneStepCheckpoints(const std::string& out_dir, int64_t keep);
// --resume=latest: of OUT_DIR/<final_name> and OUT_DIR/checkpoints/*.safetensors, the
// one written last; NotFound when there is none.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& out_dir,
                                             std::string_view final_name);

// Drops the rows of a metrics file past `last`: CSV rows whose first field (a step, an
// epoch) is a larger number, JSON lines that begin {"step":N with N > last. Other lines
// (the header) stay. A missing file is left missing.
absl::Status DropRowsAfter(const std::string& path, int64_t last);

// A trainer's checkpoint (mnist's, makemore's): the model's state dict, the optimizer's
// under "optimizer.", and string metadata, of which "format" names the trainer.
struct TrainingState {
  std::map<std::string, Tensor> model, optimizer;
  std::map<std::string, std::string> metadata;
};
absl::Status SaveTrainingState(const std::string& path, const TrainingState& state);
// InvalidArgument unless `path` is a checkpoint of this `format`.
absl::StatusOr<TrainingState> LoadTrainingState(const std::string& path, std::string_view format);
// metadata[key] as a number (doubles are written with 17 digits, so they read back
// exactly); InvalidArgument naming the file and the key when it is not one.
absl::StatusOr<int64_t> MetadataInt(const TrainingState& state, const std::string& path,
                                    const std::string& key);
absl::StatusOr<double> MetadataDouble(const TrainingState& state, const std::string& path,
                                      const std::string& key);
std::string ExactDouble(double value);
// A resumed run must be the run that wrote the checkpoint: InvalidArgument unless its
// metadata[flag] is `value` (this run's --flag).
absl::Status CheckSameRun(const TrainingState& state, const std::string& path,
                          const std::string& flag, const std::string& value);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_CHECKPOINTS_H_
