#include "models/common/checkpoints.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/kill_testing.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::models {
namespace {

namespace fs = std::filesystem;

std::string Fresh(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::string Read(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

TEST(Checkpoints, StepPathsArePaddedAndPruningKeepsTheNewest) {
  const std::string out = Fresh("prune");
  EXPECT_EQ(StepCheckpointPath(out, 42), out + "/checkpoints/step_000042.safetensors");
  for (int step : {100, 300, 200, 1000}) Write(StepCheckpointPath(out, step), "x");
  Write(out + "/checkpoints/step_000400.safetensors.tmp-AbC123", "torn");
  Write(out + "/checkpoints/notes.txt", "mine");
  PruneStepCheckpoints(out, 2);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(out + "/checkpoints"))
    left.push_back(entry.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"notes.txt", "step_000300.safetensors",
                                            "step_001000.safetensors"}));
  PruneStepCheckpoints(out, 0);  // keeps one all the same
  EXPECT_TRUE(fs::exists(out + "/checkpoints/step_001000.safetensors"));
  EXPECT_FALSE(fs::exists(out + "/checkpoints/step_000300.safetensors"));
}

TEST(Checkpoints, LatestIsTheNewestWritten) {
  const std::string out = Fresh("latest");
  EXPECT_EQ(LatestCheckpoint(out, "model.safetensors").status().code(),
            absl::StatusCode::kNotFound);
  const auto now = fs::file_time_type::clock::now();
  Write(StepCheckpointPath(out, 500), "x");
  fs::last_write_time(out + "/checkpoints/step_000500.safetensors", now - std::chrono::seconds(10));
  Write(out + "/model.safetensors", "x");
  fs::last_write_time(out + "/model.safetensors", now - std::chrono::seconds(20));
  EXPECT_EQ(*LatestCheckpoint(out, "model.safetensors"),
            out + "/checkpoints/step_000500.safetensors");
  fs::last_write_time(out + "/model.safetensors", now);
  EXPECT_EQ(*LatestCheckpoint(out, "model.safetensors"), out + "/model.safetensors");
}

TEST(Checkpoints, DropRowsAfterKeepsTheHeaderAndEarlierRows) {
  const std::string out = Fresh("rows");
  Write(out + "/m.csv", "step,loss\n0,,9\n1,8.5\n2,8.1\n3,7.9\n");
  ASSERT_TRUE(DropRowsAfter(out + "/m.csv", 2).ok());
  EXPECT_EQ(Read(out + "/m.csv"), "step,loss\n0,,9\n1,8.5\n2,8.1\n");
  Write(out + "/m.jsonl", "{\"step\":9,\"loss\":1}\n{\"step\":10,\"loss\":2}\n{\"step\":11}\n");
  ASSERT_TRUE(DropRowsAfter(out + "/m.jsonl", 10).ok());
  EXPECT_EQ(Read(out + "/m.jsonl"), "{\"step\":9,\"loss\":1}\n{\"step\":10,\"loss\":2}\n");
  ASSERT_TRUE(DropRowsAfter(out + "/absent.csv", 1).ok());
  EXPECT_FALSE(fs::exists(out + "/absent.csv"));
}

TEST(Checkpoints, TrainingStateRoundTripsAndChecksItsRun) {
  const std::string path = Fresh("state") + "/run.safetensors";
  TrainingState state;
  state.model["fc.weight"] = FromVector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  state.optimizer["0.exp_avg"] = FromVector(std::vector<float>{0.5f, 0.25f, 0, 1}, {2, 2});
  const double loss_sum = 0.1 + 0.2;  // not a short decimal
  state.metadata = {{"format", "ember-test"},
                    {"step", "1234"},
                    {"loss_sum", ExactDouble(loss_sum)},
                    {"model", "mlp"},
                    {"note", "x"}};
  ASSERT_TRUE(SaveTrainingState(path, state).ok());
  absl::StatusOr<TrainingState> back = LoadTrainingState(path, "ember-test");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->model.size(), 1u);
  EXPECT_EQ(back->model.at("fc.weight").ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(back->optimizer.at("0.exp_avg").ToVector<float>(),
            (std::vector<float>{0.5f, 0.25f, 0, 1}));
  EXPECT_EQ(*MetadataInt(*back, path, "step"), 1234);
  EXPECT_EQ(*MetadataDouble(*back, path, "loss_sum"), loss_sum);  // bit for bit
  EXPECT_EQ(MetadataInt(*back, path, "note").status().message(),
            path + ": metadata \"note\" is not an integer: x");
  EXPECT_EQ(MetadataInt(*back, path, "epoch").status().message(),
            path + ": the checkpoint has no \"epoch\" in its metadata");
  EXPECT_TRUE(CheckSameRun(*back, path, "model", "mlp").ok());
  EXPECT_EQ(CheckSameRun(*back, path, "model", "cnn").message(),
            path +
                " was trained with --model=mlp; this run has --model=cnn (a resumed run keeps its "
                "flags)");
  EXPECT_EQ(LoadTrainingState(path, "ember-mnist").status().message(),
            path +
                " is not a checkpoint of this trainer (its format is \"ember-test\"; expected "
                "\"ember-mnist\")");
  EXPECT_EQ(LoadTrainingState(path + ".absent", "ember-test").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(Checkpoints, SigtermIsRecordedAndBecomesTheExitCode) {
  EXPECT_EQ(StopSignal(), 0);
  EXPECT_EQ(ExitCodeAfterSignal(0), 0);
  CatchStopSignals();
  ASSERT_EQ(raise(SIGTERM), 0);  // handled: the test goes on
  EXPECT_EQ(StopSignal(), SIGTERM);
  EXPECT_EQ(ExitCodeAfterSignal(0), 128 + SIGTERM);
  EXPECT_EQ(ExitCodeAfterSignal(1), 1);  // an error keeps its code
}

// A trainer SIGKILLed at 20 random moments while it writes step checkpoints (4 MB of
// weights, 8 MB of optimizer state, --keep_checkpoints=2) always leaves a newest
// checkpoint that --resume=latest loads whole, and that is never older than the one
// before the kill. Step s holds s % 4 (weights) and -(s % 4) (optimizer); the tensors are
// made before the fork, so that the child spends its life checkpointing and pruning.
TEST(Checkpoints, ARunKilledWhileCheckpointingAlwaysResumesFromAWholeCheckpoint) {
  const std::string out = Fresh("killed");
  constexpr int64_t kElements = 1 << 20;
  std::vector<Tensor> weights, moments;
  for (int v = 0; v < 4; ++v) {
    weights.push_back(Full({kElements}, static_cast<float>(v)));
    moments.push_back(Full({2 * kElements}, static_cast<float>(-v)));
  }
  auto checkpoint = [&](int64_t step) {
    TrainingState state;
    state.model["w"] = weights[step % 4];
    state.optimizer["0.exp_avg"] = moments[step % 4];
    state.metadata = {{"format", "ember-test"}, {"step", std::to_string(step)}};
    if (!SaveTrainingState(StepCheckpointPath(out, step), state).ok()) return false;
    PruneStepCheckpoints(out, 2);
    return true;
  };
  ASSERT_TRUE(checkpoint(0));
  int64_t last = 0;
  int torn = 0;
  for (int kill = 0; kill < 20; ++kill) {
    ASSERT_TRUE(WriteUntilKilled(checkpoint, last + 1, 1, 100, kill));
    torn += RemoveTornTemporaries(out + "/checkpoints");
    const absl::StatusOr<std::string> latest = LatestCheckpoint(out, "final.safetensors");
    ASSERT_TRUE(latest.ok()) << latest.status();
    absl::StatusOr<TrainingState> state = LoadTrainingState(*latest, "ember-test");
    ASSERT_TRUE(state.ok()) << "after kill " << kill << ": " << state.status();
    const int64_t step = *MetadataInt(*state, *latest, "step");
    ASSERT_GE(step, last) << "after kill " << kill;
    const float* w = state->model.at("w").data<float>();
    const float* m = state->optimizer.at("0.exp_avg").data<float>();
    ASSERT_EQ(std::count(w, w + kElements, static_cast<float>(step % 4)), kElements);
    ASSERT_EQ(std::count(m, m + 2 * kElements, static_cast<float>(-(step % 4))), 2 * kElements);
    last = step;
  }
  EXPECT_GE(torn, 1) << "no kill landed inside a write; the test proved nothing";
}

}  // namespace
}  // namespace ember::models
