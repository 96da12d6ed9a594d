// kernels/copy.h on the GPU, and the copies between host and device memory.

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/copy.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

using internal::Cast;
using internal::Strided;
using internal::Vec;

// dst = Cast(src), kVec elements a thread. With kVec > 1 both operands are contiguous
// along layout's innermost dimension, which counts vectors (stride kVec): one offset
// computation (a division per dimension) and two 16-byte accesses move kVec elements.
// Copying one element a thread, the head-split views that attention made contiguous
// ([B, H, T, 64] from rows of a qkv projection) moved ~0.7 TB/s on an H200.
template <int kVec, typename Src, typename Dst>
__global__ void CopyCastKernel(const Src* src, Dst* dst, Strided<2> layout) {
  EMBER_GRID_STRIDE(i, layout.numel) {
    int64_t offset[2];
    layout.Offsets(i, offset);
    if constexpr (kVec == 1) {
      dst[offset[1]] = Cast<Dst>(src[offset[0]]);
    } else {
      const Vec<Src, kVec> x = *reinterpret_cast<const Vec<Src, kVec>*>(src + offset[0]);
      Vec<Dst, kVec> y;
      for (int e = 0; e < kVec; ++e) y.v[e] = Cast<Dst>(x.v[e]);
      *reinterpret_cast<Vec<Dst, kVec>*>(dst + offset[1]) = y;
    }
  }
}

// Whether layout can move in vectors of `vec` elements (CopyCastKernel's kVec > 1):
// both operands contiguous along the innermost dimension, which splits into whole
// vectors, every other stride a multiple of them, and both pointers aligned to them.
bool Vectorizable(const Strided<2>& layout, int vec, const void* src, size_t src_item,
                  const void* dst, size_t dst_item) {
  const int inner = layout.ndim - 1;
  if (vec == 1 || inner < 0 || layout.strides[0][inner] != 1 || layout.strides[1][inner] != 1 ||
      layout.shape[inner] % vec != 0 || reinterpret_cast<uintptr_t>(src) % (src_item * vec) != 0 ||
      reinterpret_cast<uintptr_t>(dst) % (dst_item * vec) != 0) {
    return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (layout.strides[0][d] % vec != 0 || layout.strides[1][d] % vec != 0) return false;
  }
  return true;
}

template <typename T>
__global__ void FillKernel(T* dst, T value, Strided<1> layout) {
  EMBER_GRID_STRIDE(i, layout.numel) {
    int64_t offset[1];
    layout.Offsets(i, offset);
    dst[offset[0]] = value;
  }
}

}  // namespace

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  Strided<2> layout = internal::MakeStrided<2>("copy", shape, {src_strides, dst_strides});
  if (layout.numel == 0) return;
  internal::VisitDeviceType(src_dtype, [&](auto src_tag) {
    using Src = typename decltype(src_tag)::type;
    internal::VisitDeviceType(dst_dtype, [&](auto dst_tag) {
      using Dst = typename decltype(dst_tag)::type;
      constexpr int kVec = 16 / (sizeof(Src) > sizeof(Dst) ? sizeof(Src) : sizeof(Dst));
      if (Vectorizable(layout, kVec, src, sizeof(Src), dst, sizeof(Dst))) {
        const int inner = layout.ndim - 1;  // now counting vectors
        layout.shape[inner] /= kVec;
        layout.strides[0][inner] = layout.strides[1][inner] = kVec;
        layout.numel /= kVec;
        CopyCastKernel<kVec><<<internal::Blocks(layout.numel), internal::kThreads>>>(
            static_cast<const Src*>(src), static_cast<Dst*>(dst), layout);
      } else {
        CopyCastKernel<1><<<internal::Blocks(layout.numel), internal::kThreads>>>(
            static_cast<const Src*>(src), static_cast<Dst*>(dst), layout);
      }
    });
  });
  EMBER_CUDA_CHECK_LAUNCH("copy");
}

void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  const Strided<1> layout = internal::MakeStrided<1>("fill", shape, {strides});
  if (layout.numel == 0) return;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The value converted on the host (Scalar::to), passed as the device type's bits.
    const T converted = value.to<T>();
    internal::DeviceType<T> bits;
    std::memcpy(&bits, &converted, sizeof(T));
    FillKernel<<<internal::Blocks(layout.numel), internal::kThreads>>>(
        static_cast<internal::DeviceType<T>*>(dst), bits, layout);
  });
  EMBER_CUDA_CHECK_LAUNCH("fill");
}

namespace {

// Host -> device copies, and device -> host copies of large buffers, go through two
// pinned chunks per device: the host-side memcpy of one chunk overlaps the DMA of the
// other, and the DMA runs from page-locked memory at full speed. A copy to the device
// then returns without waiting for the kernels queued before it (straight from pageable
// memory, cudaMemcpy would wait for them: a training step's batch and small tensors
// would stall the queue). Smaller copies to the host go straight to pageable memory.
constexpr int64_t kStagingMin = int64_t{1} << 20;
constexpr int64_t kChunkBytes = int64_t{8} << 20;

struct Staging {
  std::mutex mutex;  // one large copy at a time per device
  void* chunk[2] = {nullptr, nullptr};
  cudaEvent_t done[2];  // recorded after the DMA that last used chunk[i]
  int next = 0;         // the chunk a copy to the device fills next (they alternate)
};

// The device's staging chunks, made on its first large copy, kept for the process.
Staging& StagingOf(int device) {
  static std::mutex mutex;
  static auto* const stagings = new std::vector<std::unique_ptr<Staging>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (stagings->size() <= static_cast<size_t>(device)) stagings->resize(device + 1);
  auto& staging = (*stagings)[device];
  if (staging == nullptr) {
    auto made = std::make_unique<Staging>();
    for (int i = 0; i < 2; ++i) {
      EMBER_CUDA_CHECK(cudaMallocHost(&made->chunk[i], kChunkBytes), "pinned staging buffer");
      EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&made->done[i], cudaEventDisableTiming),
                       "staging event");
    }
    staging = std::move(made);
  }
  return *staging;
}

void HostToDevice(int device, void* dst, const void* src, int64_t nbytes) {
  Staging& staging = StagingOf(device);
  std::lock_guard<std::mutex> lock(staging.mutex);
  for (int64_t offset = 0; offset < nbytes; offset += kChunkBytes) {
    const int i = staging.next;
    staging.next ^= 1;
    const int64_t bytes = std::min(kChunkBytes, nbytes - offset);
    // Chunk i is free once its previous DMA is done; the copy queued from it then runs
    // in stream order, and the host may reuse `src` as soon as this returns.
    EMBER_CUDA_CHECK(cudaEventSynchronize(staging.done[i]), "copy to cuda:", device);
    std::memcpy(staging.chunk[i], static_cast<const char*>(src) + offset, bytes);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + offset, staging.chunk[i], bytes,
                                     cudaMemcpyHostToDevice, 0),
                     "copy to cuda:", device);
    EMBER_CUDA_CHECK(cudaEventRecord(staging.done[i], 0), "copy to cuda:", device);
  }
}

void DeviceToHost(int device, void* dst, const void* src, int64_t nbytes) {
  if (nbytes < kStagingMin) {  // waits for the kernels queued before it
    EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToHost),
                     "copy from cuda:", device);
    return;
  }
  Staging& staging = StagingOf(device);
  std::lock_guard<std::mutex> lock(staging.mutex);
  const int64_t chunks = (nbytes + kChunkBytes - 1) / kChunkBytes;
  auto queue = [&](int64_t c) {  // DMA of chunk c into staging chunk c % 2
    const int64_t offset = c * kChunkBytes, bytes = std::min(kChunkBytes, nbytes - offset);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(staging.chunk[c % 2], static_cast<const char*>(src) + offset,
                                     bytes, cudaMemcpyDeviceToHost, 0),
                     "copy from cuda:", device);
    EMBER_CUDA_CHECK(cudaEventRecord(staging.done[c % 2], 0), "copy from cuda:", device);
  };
  queue(0);
  if (chunks > 1) queue(1);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t offset = c * kChunkBytes, bytes = std::min(kChunkBytes, nbytes - offset);
    EMBER_CUDA_CHECK(cudaEventSynchronize(staging.done[c % 2]), "copy from cuda:", device);
    std::memcpy(static_cast<char*>(dst) + offset, staging.chunk[c % 2], bytes);
    if (c + 2 < chunks) queue(c + 2);
  }
}

}  // namespace

void CopyBytes(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes) {
  if (nbytes == 0) return;
  if (src_device == kHost && dst_device == kHost) {
    std::memcpy(dst, src, nbytes);
  } else if (src_device == kHost) {
    UseDevice(dst_device);
    HostToDevice(dst_device, dst, src, nbytes);
  } else if (dst_device == kHost) {
    UseDevice(src_device);
    DeviceToHost(src_device, dst, src, nbytes);
  } else if (src_device == dst_device) {
    UseDevice(dst_device);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, 0),
                     "copy on cuda:", dst_device);
  } else {
    // Two devices' default streams are not ordered with each other: the source's
    // queued work finishes first, then the copy runs on the destination's stream.
    Synchronize(src_device);
    UseDevice(dst_device);
    EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes, 0),
                     "copy from cuda:", src_device, " to cuda:", dst_device);
  }
}

}  // namespace ember::kernels::cuda
