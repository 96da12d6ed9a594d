// mfu.h against hand-derived counts and the datasheets' figures.

#include "models/gpt2/mfu.h"

#include "gtest/gtest.h"

namespace ember::models::gpt2 {
namespace {

TEST(MfuTest, FlopsPerTokenIsLlmcsCount) {
  const GPTConfig gpt2 = *GPTConfig::Preset("gpt2");
  // 6 x 124,439,808 + 6 x 12 x 768 x 1024.
  EXPECT_EQ(FlopsPerToken(124439808, gpt2, 1024), 803261952.0);
  EXPECT_EQ(FlopsPerToken(1000, gpt2, 1), 6000.0 + 6.0 * 12 * 768);
}

TEST(MfuTest, PeaksByTheDriversNames) {
  EXPECT_EQ(Bf16PeakFlops("NVIDIA H200"), 989e12);
  EXPECT_EQ(Bf16PeakFlops("NVIDIA H100 80GB HBM3"), 989e12);
  EXPECT_EQ(Bf16PeakFlops("NVIDIA H100 PCIe"), 756e12);
  EXPECT_EQ(Bf16PeakFlops("NVIDIA H100 NVL"), 835e12);
  EXPECT_EQ(Bf16PeakFlops("NVIDIA A100-SXM4-80GB"), 312e12);
  EXPECT_EQ(Bf16PeakFlops("Tesla T4"), 0);
}

}  // namespace
}  // namespace ember::models::gpt2
