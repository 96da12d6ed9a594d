#include "models/common/checkpoints.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

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
  for (const auto& entry : fs::directory_iterator(out + "/checkpoints")) left.push_back(entry.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"notes.txt", "step_000300.safetensors", "step_001000.safetensors"}));
  PruneStepCheckpoints(out, 0);  // keeps one all the same
  EXPECT_TRUE(fs::exists(out + "/checkpoints/step_001000.safetensors"));
  EXPECT_FALSE(fs::exists(out + "/checkpoints/step_000300.safetensors"));
}

TEST(Checkpoints, LatestIsTheNewestWritten) {
  const std::string out = Fresh("latest");
  EXPECT_EQ(LatestCheckpoint(out, "model.safetensors").status().code(), absl::StatusCode::kNotFound);
  const auto now = fs::file_time_type::clock::now();
  Write(StepCheckpointPath(out, 500), "x");
  fs::last_write_time(out + "/checkpoints/step_000500.safetensors", now - std::chrono::seconds(10));
  Write(out + "/model.safetensors", "x");
  fs::last_write_time(out + "/model.safetensors", now - std::chrono::seconds(20));
  EXPECT_EQ(*LatestCheckpoint(out, "model.safetensors"), out + "/checkpoints/step_000500.safetensors");
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
  state.metadata = {{"format", "ember-test"}, {"step", "1234"}, {"loss_sum", ExactDouble(loss_sum)},
                    {"model", "mlp"}, {"note", "x"}};
  ASSERT_TRUE(SaveTrainingState(path, state).ok());
  absl::StatusOr<TrainingState> back = LoadTrainingState(path, "ember-test");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->model.size(), 1u);
  EXPECT_EQ(back->model.at("fc.weight").ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(back->optimizer.at("0.exp_avg").ToVector<float>(), (std::vector<float>{0.5f, 0.25f, 0, 1}));
  EXPECT_EQ(*MetadataInt(*back, path, "step"), 1234);
  EXPECT_EQ(*MetadataDouble(*back, path, "loss_sum"), loss_sum);  // bit for bit
  EXPECT_EQ(MetadataInt(*back, path, "note").status().message(), path + ": metadata \"note\" is not an integer: x");
  EXPECT_EQ(MetadataInt(*back, path, "epoch").status().message(),
            path + ": the checkpoint has no \"epoch\" in its metadata");
  EXPECT_TRUE(CheckSameRun(*back, path, "model", "mlp").ok());
  EXPECT_EQ(CheckSameRun(*back, path, "model", "cnn").message(),
            path + " was trained with --model=mlp; this run has --model=cnn (a resumed run keeps its flags)");
  EXPECT_EQ(LoadTrainingState(path, "ember-mnist").status().message(),
            path + " is not a checkpoint of this trainer (its format is \"ember-test\"; expected \"ember-mnist\")");
  EXPECT_EQ(LoadTrainingState(path + ".absent", "ember-test").status().code(), absl::StatusCode::kNotFound);
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

}  // namespace
}  // namespace ember::models
