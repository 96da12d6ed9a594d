#ifndef EMBER_BASE_MAIN_H_
#define EMBER_BASE_MAIN_H_

// The edge every binary shares (model binaries and tools alike).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace ember {

// A binary's main: sets the usage line, parses the Abseil flags and calls
// run(arguments), the positional arguments after the program name. Under `bazel run` it
// first moves to the directory the user called bazel from (BUILD_WORKING_DIRECTORY), so
// that relative paths in flags and arguments resolve as typed. Whatever goes
// wrong ends as one line on stderr, "<name>: <message>", and exit code 1: a Status
// that is not OK, an ember::Error (a tensor op's failed check), or any other
// std::exception (std::bad_alloc, ...). Never an abort.
int RunMain(int argc, char** argv, const char* name, const char* usage,
            const std::function<absl::Status(const std::vector<std::string>& arguments)>& run);

// The same for a binary that takes flags only: a positional argument is an error that
// names it.
int RunMain(int argc, char** argv, const char* name, const char* usage, absl::Status (*run)());

// `relative` under the workspace root when run by `bazel run` (which sets
// BUILD_WORKSPACE_DIRECTORY and starts the binary in its runfiles), else under the
// current directory.
std::string WorkspacePath(std::string_view relative);

}  // namespace ember

#endif  // EMBER_BASE_MAIN_H_
