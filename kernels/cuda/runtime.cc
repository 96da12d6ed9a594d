#include "kernels/cuda/runtime.h"

#include <cuda_runtime.h>

#include "base/error.h"
#include "kernels/cuda/internal/check.h"

namespace ember::kernels::cuda {
namespace {

// cudaGetDeviceCount's answer, asked once: the error says why there are none.
struct Devices {
  int count = 0;
  cudaError_t error = cudaSuccess;
};

const Devices& GetDevices() {
  static const Devices devices = [] {
    Devices d;
    d.error = cudaGetDeviceCount(&d.count);
    if (d.error != cudaSuccess) {
      d.count = 0;
      cudaGetLastError();  // clear it, so that it is not reported again by a later call
    }
    return d;
  }();
  return devices;
}

}  // namespace

int DeviceCount() { return GetDevices().count; }

void CheckDevice(int index) {
  const Devices& d = GetDevices();
  if (index >= 0 && index < d.count) return;
  if (d.count == 0) {
    EMBER_THROW("cuda:", index, ": no CUDA device here (",
                d.error != cudaSuccess ? cudaGetErrorString(d.error) : "0 devices", ")");
  }
  EMBER_THROW("cuda:", index, " does not exist: this machine has ", d.count,
              " CUDA device(s), cuda:0 to cuda:", d.count - 1);
}

void UseDevice(int index) {
  thread_local int current = -1;
  if (index == current) return;
  CheckDevice(index);
  EMBER_CUDA_CHECK(cudaSetDevice(index), "cuda:", index, ": cudaSetDevice");
  current = index;
}

std::string DeviceName(int index) {
  CheckDevice(index);
  cudaDeviceProp properties;
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&properties, index), "cuda:", index, " properties");
  return properties.name;
}

void Synchronize(int index) {
  UseDevice(index);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize(), "cuda:", index, ": synchronize");
}

}  // namespace ember::kernels::cuda
