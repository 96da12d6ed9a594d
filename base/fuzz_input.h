#ifndef EMBER_BASE_FUZZ_INPUT_H_
#define EMBER_BASE_FUZZ_INPUT_H_

// For fuzz targets of readers that take a path: the input written to a file of this
// process's own, and a check that aborts (a finding) with a message.

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {

// Writes the bytes to <temp dir>/ember_fuzz_<pid>_<name> (rewritten on every call) and
// returns its path; the name's extension is the reader's cue (".gz", ".bin").
std::string FuzzInputFile(const std::string& name, const void* data, size_t size);
inline std::string FuzzInputFile(const std::string& name, const std::string& bytes) {
  return FuzzInputFile(name, bytes.data(), bytes.size());
}

// Aborts, printing "fuzz check failed: <what>", unless ok.
void FuzzCheck(bool ok, const std::string& what);

}  // namespace ember

#endif  // EMBER_BASE_FUZZ_INPUT_H_
