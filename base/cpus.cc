#include "base/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

namespace ember {
namespace {

// The whole of a small file; nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "/a/b" -> {"/a/b", "/a", ""}: the cgroup and those above it, as suffixes of a mount.
std::vector<std::string> SelfAndAncestors(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::vector<std::string> out;
  while (true) {
    out.push_back(path);
    if (path.empty()) return out;
    path.resize(path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
  }
}

// cgroup v2's cpu.max: "QUOTA PERIOD" or "max PERIOD".
std::optional<double> V2Limit(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  const double q = std::strtod(quota.c_str(), nullptr);
  return q > 0 ? std::optional<double>(q / period) : std::nullopt;
}

// cgroup v1's cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us.
std::optional<double> V1Limit(const std::string& quota_text, const std::string& period_text) {
  const double quota = std::strtod(quota_text.c_str(), nullptr);
  const double period = std::strtod(period_text.c_str(), nullptr);
  return quota > 0 && period > 0 ? std::optional<double>(quota / period) : std::nullopt;
}

void KeepSmaller(std::optional<double> limit, std::optional<double>* smallest) {
  if (limit && (!*smallest || *limit < **smallest)) *smallest = limit;
}

}  // namespace

namespace internal {

std::optional<double> CgroupCpuLimit(const std::string& cgroup_root,
                                     const std::string& self_cgroup) {
  std::optional<double> smallest;
  std::istringstream lines(self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {  // "ID:CONTROLLERS:PATH"
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {  // v2: one hierarchy, mounted at the root
      for (const std::string& dir : SelfAndAncestors(path)) {
        if (std::optional<std::string> max = ReadFile(cgroup_root + dir + "/cpu.max"))
          KeepSmaller(V2Limit(*max), &smallest);
      }
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    bool cpu = false;
    while (std::getline(names, name, ',')) cpu = cpu || name == "cpu";
    if (!cpu) continue;
    // v1: the cpu controller's own mount, named for it alone or with its companions.
    for (const std::string& mount : {cgroup_root + "/cpu", cgroup_root + "/" + controllers}) {
      for (const std::string& dir : SelfAndAncestors(path)) {
        const std::optional<std::string> quota = ReadFile(mount + dir + "/cpu.cfs_quota_us");
        const std::optional<std::string> period = ReadFile(mount + dir + "/cpu.cfs_period_us");
        if (quota && period) KeepSmaller(V1Limit(*quota, *period), &smallest);
      }
    }
  }
  return smallest;
}

int CpusWithin(int affinity_cpus, std::optional<double> limit) {
  int cpus = std::max(1, affinity_cpus);
  if (limit) cpus = std::min(cpus, static_cast<int>(std::ceil(*limit - 1e-9)));
  return std::max(1, cpus);
}

}  // namespace internal

int AvailableCpus() {
  static const int cpus = [] {
    cpu_set_t set;
    const int affinity = sched_getaffinity(0, sizeof(set), &set) == 0
                             ? CPU_COUNT(&set)
                             : static_cast<int>(std::thread::hardware_concurrency());
    const std::optional<std::string> self = ReadFile("/proc/self/cgroup");
    return internal::CpusWithin(
        affinity, self ? internal::CgroupCpuLimit("/sys/fs/cgroup", *self) : std::nullopt);
  }();
  return cpus;
}

}  // namespace ember
