#include "core/device.h"

#include "gtest/gtest.h"

namespace ember {
namespace {

TEST(DeviceTest, NamesAndParses) {
  EXPECT_EQ(Device::Cpu().ToString(), "cpu");
  EXPECT_EQ(Device::Cuda(1).ToString(), "cuda:1");
  EXPECT_EQ(ParseDevice("cpu").value(), Device::Cpu());
  EXPECT_EQ(ParseDevice("cuda").value(), Device::Cuda(0));
  EXPECT_EQ(ParseDevice("cuda:3").value(), Device::Cuda(3));
  EXPECT_EQ(ParseDevice("meta").value(), Device::Meta());
  EXPECT_EQ(Device::Meta().ToString(), "meta");
  EXPECT_NE(Device::Cuda(0), Device::Cuda(1));
  EXPECT_TRUE(Device::Cpu().is_cpu());
  EXPECT_FALSE(Device::Cuda().is_cpu());
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "CPU", ""}) {
    const absl::StatusOr<Device> parsed = ParseDevice(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(),
              std::string("unknown device '") + bad + "' (expected cpu, cuda, cuda:N or meta)");
  }
}

}  // namespace
}  // namespace ember
