// In a build without CUDA there are no devices and no CUDA kernels: the runtime's entry
// points refuse with an ember::Error that says how to get CUDA support, never a crash
// or a link error, and every kernel's CUDA half is null (kernels/twins.h), which
// tensor/ops never reaches because UseDevice refuses first. (A CUDA build has the
// kernels: the test skips.)

#include <string>

#include "base/error.h"
#include "gtest/gtest.h"
#include "kernels/binary.h"
#include "kernels/copy.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"
#include "kernels/matmul.h"
#include "kernels/twins.h"

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

TEST(NoCudaTest, TheRuntimeRefusesAndTheKernelsAreAbsent) {
#ifdef EMBER_CUDA
  GTEST_SKIP() << "this build has the CUDA kernels";
#endif
  EXPECT_EQ(DeviceCount(), 0);
  for (const std::string& message :
       {MessageOf([] { UseDevice(0); }), MessageOf([] { Synchronize(0); }), MessageOf([] {
          char byte = 0;
          CopyBytes(&byte, kHost, &byte, 0, 1);
        })}) {
    EXPECT_NE(message.find(kExpected), std::string::npos) << message;
  }
  EXPECT_EQ(EMBER_CUDA_KERNEL(Add), nullptr);
  EXPECT_EQ(EMBER_CUDA_KERNEL(Gemm), nullptr);
  EXPECT_EQ(EMBER_CUDA_KERNEL(Fill), nullptr);
}

}  // namespace
}  // namespace ember::kernels::cuda
