// RunMain turns every kind of failure into one line and exit code 1.

#include "base/main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"

namespace ember {
namespace {

int RunWith(const std::function<absl::Status(const std::vector<std::string>&)>& run,
            std::vector<std::string> args = {}) {
  std::vector<char*> argv = {const_cast<char*>("prog")};
  for (std::string& a : args) argv.push_back(a.data());
  return RunMain(static_cast<int>(argv.size()), argv.data(), "prog", "usage", run);
}

TEST(RunMainTest, EveryFailureIsOneLineAndExitCodeOne) {
  EXPECT_EQ(RunWith([](const auto&) { return absl::OkStatus(); }), 0);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith([](const auto&) { return absl::NotFoundError("no such file x"); }), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: no such file x\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith([](const auto&) -> absl::Status { EMBER_THROW("add: shapes [2] and [3]"); }),
            1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: add: shapes [2] and [3]\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith([](const auto&) -> absl::Status { throw std::runtime_error("boom"); }), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: internal error: boom\n");
}

TEST(RunMainTest, PositionalArgumentsReachRunOrAreRefused) {
  std::vector<std::string> seen;
  EXPECT_EQ(RunWith(
                [&](const std::vector<std::string>& a) {
                  seen = a;
                  return absl::OkStatus();
                },
                {"encode", "x"}),
            0);
  EXPECT_EQ(seen, (std::vector<std::string>{"encode", "x"}));
  std::string arg = "stray";
  std::vector<char*> argv = {const_cast<char*>("prog"), arg.data()};
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain(
                2, argv.data(), "prog", "usage", +[]() { return absl::OkStatus(); }),
            1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: unexpected argument \"stray\" (flags only; --help lists them)\n");
}

// Under `bazel run`, relative paths are the user's: run() starts in the directory bazel
// was called from; a directory that cannot be entered fails, naming it.
TEST(RunMainTest, MovesToTheDirectoryBazelRunWasCalledFrom) {
  char before[4096];
  ASSERT_NE(getcwd(before, sizeof(before)), nullptr);
  const std::string where = std::string(std::getenv("TEST_TMPDIR")) + "/called_from";
  ASSERT_EQ(mkdir(where.c_str(), 0755), 0);
  setenv("BUILD_WORKING_DIRECTORY", where.c_str(), 1);
  std::string seen;
  EXPECT_EQ(RunWith([&](const auto&) {
              char now[4096];
              seen = getcwd(now, sizeof(now)) ? now : "";
              return absl::OkStatus();
            }),
            0);
  EXPECT_EQ(seen, where);
  ASSERT_EQ(chdir(before), 0);
  setenv("BUILD_WORKING_DIRECTORY", "/no/such/dir", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith([](const auto&) { return absl::OkStatus(); }), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: cannot enter the directory bazel run was called from (/no/such/dir): No such "
            "file or directory\n");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

TEST(WorkspacePathTest, UnderTheWorkspaceWhenBazelRunSetsIt) {
  setenv("BUILD_WORKSPACE_DIRECTORY", "/w", 1);
  EXPECT_EQ(WorkspacePath("runs/x"), "/w/runs/x");
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  EXPECT_EQ(WorkspacePath("runs/x"), "./runs/x");
}

}  // namespace
}  // namespace ember
