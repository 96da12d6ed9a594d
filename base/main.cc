#include "base/main.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/error.h"

namespace ember {
namespace {

int Fail(const char* name, absl::string_view message) {
  std::fprintf(stderr, "%s: %.*s\n", name, static_cast<int>(message.size()), message.data());
  return 1;
}

}  // namespace

int RunMain(int argc, char** argv, const char* name, const char* usage,
            const std::function<absl::Status(const std::vector<std::string>& arguments)>& run) {
  static const bool usage_set =
      (absl::SetProgramUsageMessage(usage), true);  // Abseil allows one call
  (void)usage_set;
  const std::vector<char*> parsed = absl::ParseCommandLine(argc, argv);
  const std::vector<std::string> arguments(parsed.begin() + 1, parsed.end());
  // Under `bazel run` the binary starts in its runfiles, and BUILD_WORKING_DIRECTORY says
  // where the user called it from: it moves there, as Bazel asks of binaries, so that a
  // relative path on the command line means what the user typed. (Workspace defaults go
  // through WorkspacePath, which is absolute there.)
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && *dir != 0) {
    if (chdir(dir) != 0) {
      return Fail(name, absl::StrCat("cannot enter the directory bazel run was called from (", dir,
                                     "): ", std::strerror(errno)));
    }
  }
  try {
    const absl::Status status = run(arguments);
    return status.ok() ? 0 : Fail(name, status.message());
  } catch (const Error& e) {
    return Fail(name, e.what());
  } catch (const std::exception& e) {
    return Fail(name, absl::StrCat("internal error: ", e.what()));
  }
}

int RunMain(int argc, char** argv, const char* name, const char* usage, absl::Status (*run)()) {
  return RunMain(argc, argv, name, usage, [&](const std::vector<std::string>& arguments) {
    if (!arguments.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arguments[0],
                                                     "\" (flags only; --help lists them)"));
    }
    return run();
  });
}

std::string WorkspacePath(std::string_view relative) {
  const char* root = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return absl::StrCat(root != nullptr ? root : ".", "/", std::string(relative));
}

}  // namespace ember
