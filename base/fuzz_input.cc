#include "base/fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace ember {

std::string FuzzInputFile(const std::string& name, const void* data, size_t size) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ember_fuzz_" + std::to_string(getpid()) + "_" + name))
                               .string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FuzzCheck(f != nullptr && std::fwrite(data, 1, size, f) == size && std::fclose(f) == 0,
            "cannot write " + path);
  return path;
}

void FuzzCheck(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace ember
