// In a build without CUDA, every kernels/cuda entry point refuses with an ember::Error
// that names the kernel and says how to get CUDA support, never a crash or a link
// error; the runtime sees no devices. (A CUDA build has the kernels: the test skips.)

#include <string>

#include "base/error.h"
#include "gtest/gtest.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

std::string MessageOf(void (*call)()) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr char kExpected[] = "this build of ember has no CUDA support (build with --config=cuda)";

TEST(NoCudaTest, KernelsRefuseNamingThemselves) {
#ifdef EMBER_CUDA
  GTEST_SKIP() << "this build has the CUDA kernels";
#endif
  EXPECT_EQ(DeviceCount(), 0);
  const std::string add = MessageOf([] {
    const Shape shape = {2};
    const Strides strides = {1};
    Add(DType::kF32, shape, {nullptr, strides}, {nullptr, strides}, nullptr);
  });
  EXPECT_EQ(add, std::string("kernels::cuda::Add: ") + kExpected);
  const std::string gemm = MessageOf([] {
    Gemm(DType::kF32, 1, 1, 1, {nullptr, 1, 1}, {nullptr, 1, 1}, nullptr, 1, false);
  });
  EXPECT_EQ(gemm, std::string("kernels::cuda::Gemm: ") + kExpected);
  const std::string fill = MessageOf([] { Fill({}, DType::kF32, nullptr, {}, 1.0); });
  EXPECT_EQ(fill, std::string("kernels::cuda::Fill: ") + kExpected);
  const std::string sync = MessageOf([] { Synchronize(0); });
  EXPECT_NE(sync.find(kExpected), std::string::npos) << sync;
}

}  // namespace
}  // namespace ember::kernels::cuda
