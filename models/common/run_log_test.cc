#include "models/common/run_log.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace ember::models {
namespace {

TEST(RunLogTest, FormatsDurations) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(60), "1m00s");
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(-3), "0s");
}

TEST(RunLogTest, PathOrWorkspaceDefaultsUnderTheWorkspace) {
  setenv("BUILD_WORKSPACE_DIRECTORY", "/src/ember", 1);
  EXPECT_EQ(PathOrWorkspace("", "runs/x"), "/src/ember/runs/x");
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  EXPECT_EQ(PathOrWorkspace("", "runs/x"), "./runs/x");
  EXPECT_EQ(PathOrWorkspace("/tmp/out", "runs/x"), "/tmp/out");
}

TEST(RunLogTest, MissingInputSaysToRunSetup) {
  const absl::Status s =
      MissingInput(absl::InvalidArgumentError("cannot open downloads/names/female.txt"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "cannot open downloads/names/female.txt (run ./setup.sh)");
}

TEST(RunLogTest, ProgressOnATerminalRedrawsOneLineWithABar) {
  ProgressDisplay display(/*terminal=*/true, 10);
  testing::internal::CaptureStderr();
  // 10 of 40 steps done in 20 s, 5 of them before this run: 4 s a step, 30 to go: 2 minutes.
  display.Show("step", 10, 40, 5, "loss 1.2345", 123.4, "tok", 20);
  display.Show("step", 11, 40, 5, "loss 1.2", 123.4, "tok", 24);
  display.End();
  display.End();  // nothing open: nothing printed
  EXPECT_EQ(
      testing::internal::GetCapturedStderr(),
      "\rstep 10/40 [#####---------------]  25% | loss 1.2345 | 123 tok/s | 20s, ETA 2m00s   "
      "\rstep 11/40 [#####---------------]  27% | loss 1.2 | 123 tok/s | 24s, ETA 1m56s   \n");
}

TEST(RunLogTest, ProgressInAFileIsALinePerInterval) {
  ProgressDisplay display(/*terminal=*/false, 10);
  testing::internal::CaptureStderr();
  for (int step = 1; step <= 30; ++step)
    display.Show("step", step, 30, 0, "loss 1", 1, "step", step);
  display.End();
  // The first, then every 10 s of elapsed time, and the last.
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "step 1/30 | loss 1 | 1 step/s | 1s, ETA 29s\n"
            "step 11/30 | loss 1 | 1 step/s | 11s, ETA 19s\n"
            "step 21/30 | loss 1 | 1 step/s | 21s, ETA 9s\n"
            "step 30/30 | loss 1 | 1 step/s | 30s, ETA 0s\n");
}

TEST(RunLogTest, WritesOneJsonLine) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/m.json";
  ASSERT_TRUE(WriteMetricsJson(path, {{"loss", 1.5}, {"steps", 3}}).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"loss\":1.5,\"steps\":3}\n");
  EXPECT_FALSE(WriteMetricsJson("/nonexistent/dir/m.json", {}).ok());
}

}  // namespace
}  // namespace ember::models
