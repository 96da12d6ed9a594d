// main() of an ember_fuzzer's seeds test (base/fuzzer.bzl): runs the fuzz target's
// LLVMFuzzerTestOneInput, whose checks abort on a failure, over every file in the
// folders it is given, and fails when they hold none.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(argv[i], error))
      inputs.push_back(entry.path());
    if (error) {
      std::fprintf(stderr, "%s: %s\n", argv[i], error.message().c_str());
      return 1;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no seed inputs in the folders given\n");
    return 1;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& path : inputs) {
    std::stringstream bytes;
    bytes << std::ifstream(path, std::ios::binary).rdbuf();
    const std::string input = bytes.str();
    std::fprintf(stderr, "%s (%zu bytes)\n", path.filename().c_str(), input.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  std::fprintf(stderr, "%zu seed inputs passed the fuzz target's checks\n", inputs.size());
  return 0;
}
