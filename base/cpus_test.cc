#include "base/cpus.h"

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using internal::CgroupCpuLimit;
using internal::CpusWithin;

// A fake /sys/fs/cgroup under the test's temporary directory.
class CgroupTree {
 public:
  explicit CgroupTree(const std::string& name) : root_(fs::path(::testing::TempDir()) / name) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void Write(const std::string& relative, const std::string& text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(CpusTest, CgroupV2TakesTheSmallestQuotaOnThePath) {
  const CgroupTree tree("v2");
  tree.Write("cpu.max", "max 100000\n");
  tree.Write("system.slice/cpu.max", "300000 100000\n");
  tree.Write("system.slice/app.service/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "0::/system.slice/app.service\n"), 3.0);
  tree.Write("system.slice/app.service/cpu.max", "150000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "0::/system.slice/app.service\n"), 1.5);
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "0::/\n"), std::nullopt);  // "max" at the root
}

TEST(CpusTest, CgroupV1ReadsTheCpuControllersQuotaOverPeriod) {
  const CgroupTree tree("v1");
  tree.Write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  tree.Write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  tree.Write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "50000\n");
  tree.Write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const std::string self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  EXPECT_EQ(CgroupCpuLimit(tree.root(), self), 0.5);
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "4:cpu,cpuacct:/\n"), std::nullopt);        // -1: no quota
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "12:memory:/docker/abc\n"), std::nullopt);  // no cpu line
}

// In a cgroup namespace /proc/self/cgroup may name a path the mount does not have:
// the walk up ends at the mount's root, which is the process's own cgroup.
TEST(CpusTest, ANamespacedCgroupIsReadAtTheMountsRoot) {
  const CgroupTree tree("namespaced");
  tree.Write("cpu.max", "200000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(tree.root(), "0::/kubepods/pod1/container\n"), 2.0);
}

TEST(CpusTest, NothingReadableIsNoLimit) {
  EXPECT_EQ(CgroupCpuLimit("/nonexistent", "0::/a\n4:cpu:/b\n"), std::nullopt);
  EXPECT_EQ(CgroupCpuLimit("/nonexistent", "garbage"), std::nullopt);
}

TEST(CpusTest, TheQuotaRoundsUpAndCapsTheAffinity) {
  EXPECT_EQ(CpusWithin(2, std::nullopt), 2);
  EXPECT_EQ(CpusWithin(2, 1.0), 1);
  EXPECT_EQ(CpusWithin(8, 1.5), 2);
  EXPECT_EQ(CpusWithin(2, 0.25), 1);
  EXPECT_EQ(CpusWithin(2, 16.0), 2);
  EXPECT_EQ(CpusWithin(0, std::nullopt), 1);
}

TEST(CpusTest, ThisProcessHasAtLeastOneCpuAndNoMoreThanItsMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_GE(AvailableCpus(), 1);
  EXPECT_LE(AvailableCpus(), CPU_COUNT(&set));
}

}  // namespace
}  // namespace ember
