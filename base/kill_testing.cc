#include "base/kill_testing.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "base/atomic_file.h"

namespace ember {

bool WriteUntilKilled(const std::function<bool(int64_t version)>& write, int64_t first, int min_ms,
                      int max_ms, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int delay_us = std::uniform_int_distribution<int>(min_ms * 1000, max_ms * 1000)(rng);
  const pid_t child = ::fork();
  if (child == 0) {
    for (int64_t version = first;; ++version) {
      if (!write(version)) ::_exit(1);
    }
  }
  if (child < 0) return false;
  std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
  ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

int RemoveTornTemporaries(const std::string& dir) {
  int removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().find(kAtomicTempInfix) != std::string::npos) {
      std::filesystem::remove(entry.path());
      ++removed;
    }
  }
  return removed;
}

}  // namespace ember
