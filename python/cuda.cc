// ember::cuda (tensor/cuda.h) for the `ember.cuda` and `ember.backends.cuda` modules
// (python/ember/), which give them torch.cuda's names.

#include "tensor/cuda.h"

#include <pybind11/pybind11.h>

#include "python/status.h"

namespace ember::python {

namespace py = pybind11;

void BindCuda(py::module_& m) {
  m.def("_cuda_device_count", &cuda::DeviceCount);
  m.def("_cuda_device_name", &cuda::DeviceName, py::arg("device"));
  m.def(
      "_cuda_synchronize", [](int device) { cuda::Synchronize(device); }, py::arg("device"));
  m.def("_cuda_empty_cache", &cuda::EmptyCache);
  m.def(
      "_cuda_memory_stats",
      [](int device) {
        const cuda::MemoryStats s = cuda::GetMemoryStats(device);
        py::dict stats;
        stats["live_bytes"] = s.live_bytes;
        stats["peak_bytes"] = s.peak_bytes;
        stats["cached_bytes"] = s.cached_bytes;
        stats["allocation_count"] = s.allocation_count;
        stats["fresh_allocation_count"] = s.fresh_allocation_count;
        return stats;
      },
      py::arg("device"));
  m.def(
      "_cuda_reset_peak", [](int device) { cuda::ResetPeak(device); }, py::arg("device"));
  m.def(
      "_cuda_set_device",
      [](int device) {
        cuda::CheckDevice(device);
        cuda::UseDevice(device);
      },
      py::arg("device"));
  m.def("_cuda_allow_tf32", &cuda::AllowTf32);
  m.def("_cuda_set_allow_tf32", &cuda::SetAllowTf32, py::arg("allow"));
}

}  // namespace ember::python
