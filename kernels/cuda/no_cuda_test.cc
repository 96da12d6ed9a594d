// The kernels that kernels/cuda does not have (all of them in a build without CUDA)
// refuse with an ember::Error that names the kernel and says what to do, never a
// crash or a link error.

#include <string>

#include "base/error.h"
#include "gtest/gtest.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/kernels.h"

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

#ifdef EMBER_CUDA
constexpr char kExpected[] = "ember's CUDA backend has no kernel for this op yet";
#else
constexpr char kExpected[] = "this build of ember has no CUDA support (build with --config=cuda)";
#endif

#ifndef EMBER_CUDA
TEST(NoCudaTest, KernelsRefuseNamingThemselves) {
  const std::string add = MessageOf([] {
    const Shape shape = {2};
    const Strides strides = {1};
    Add(DType::kF32, shape, {nullptr, strides}, {nullptr, strides}, nullptr);
  });
  EXPECT_NE(add.find("kernels::cuda::Add: "), std::string::npos) << add;
  EXPECT_NE(add.find(kExpected), std::string::npos) << add;
  const std::string gemm = MessageOf([] {
    Gemm(DType::kF32, 1, 1, 1, {nullptr, 1, 1}, {nullptr, 1, 1}, nullptr, 1, false);
  });
  EXPECT_NE(gemm.find("kernels::cuda::Gemm: "), std::string::npos) << gemm;
  const std::string fill = MessageOf([] { Fill({}, DType::kF32, nullptr, {}, 1.0); });
  EXPECT_NE(fill.find(kExpected), std::string::npos) << fill;
}
#else
// With CUDA, a kernel not written yet (until it is) says so.
TEST(NoCudaTest, KernelsNotWrittenYetSaySo) {
  const std::string pool = MessageOf([] {
    MaxPool2dForward(DType::kF32, 1, Window2d{2, 2, 2, 2}, nullptr, nullptr, nullptr);
  });
  EXPECT_NE(pool.find("kernels::cuda::MaxPool2dForward: "), std::string::npos) << pool;
  EXPECT_NE(pool.find(kExpected), std::string::npos) << pool;
}
#endif

}  // namespace
}  // namespace ember::kernels::cuda
