#ifndef EMBER_BASE_FUZZ_INPUT_H_
#define EMBER_BASE_FUZZ_INPUT_H_

// For fuzz targets of readers that take a path: the input written to a file of this
// process's own, and a check that aborts (a finding) with a message; and for a target's
// own tests, an input fed to it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace ember {

// Writes the bytes to <temp dir>/ember_fuzz_<pid>_<name> (rewritten on every call) and
// returns its path; the name's extension is the reader's cue (".gz", ".bin").
std::string FuzzInputFile(const std::string& name, const void* data, size_t size);
inline std::string FuzzInputFile(const std::string& name, const std::string& bytes) {
  return FuzzInputFile(name, bytes.data(), bytes.size());
}

// Aborts, printing "fuzz check failed: <what>", unless ok.
void FuzzCheck(bool ok, const std::string& what);

// Runs the fuzz target linked in (LLVMFuzzerTestOneInput) on the byte `selector`, which
// such a target reads as its choice of mode, followed by `text`.
inline void FeedFuzzTarget(uint8_t selector, std::string_view text) {
  std::string input(1, static_cast<char>(selector));
  input += text;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace ember

#endif  // EMBER_BASE_FUZZ_INPUT_H_
