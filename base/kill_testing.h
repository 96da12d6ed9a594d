#ifndef EMBER_BASE_KILL_TESTING_H_
#define EMBER_BASE_KILL_TESTING_H_

// For crash-safety tests of writers (safetensors checkpoints, token shards, a trainer's
// step checkpoints): a child process writes version after version until it is killed
// with SIGKILL at a random moment, as `kill -9`, the OOM killer or a lost machine would,
// and the test then checks what is on disk.

#include <cstdint>
#include <functional>
#include <string>

namespace ember {

// Forks a child that calls write(first), write(first + 1), ... until it is SIGKILLed after
// a random delay in [min_ms, max_ms] milliseconds (drawn from `seed`), and reaps it.
// The child never returns into the test: it _exits (with 1 if write returns false).
// Returns false if the child ended before the kill (a writer that failed).
bool WriteUntilKilled(const std::function<bool(int64_t version)>& write, int64_t first, int min_ms,
                      int max_ms, uint64_t seed);

// Removes the `<name>.tmp-*` files a killed atomic write left in `dir` (base/atomic_file.h)
// and returns how many there were: the kills that landed in the middle of a write.
int RemoveTornTemporaries(const std::string& dir);

}  // namespace ember

#endif  // EMBER_BASE_KILL_TESTING_H_
