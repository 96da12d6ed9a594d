#ifndef EMBER_KERNELS_TWINS_H_
#define EMBER_KERNELS_TWINS_H_

// How an op family's contract (kernels/<family>.h) names its kernels once for both
// backends. The header declares each CPU kernel in namespace kernels::cpu, with the
// equations, and lists the family's kernels:
//
//   #define EMBER_LAYERNORM_KERNELS(X) X(LayerNormForward) X(LayerNormBackward)
//
// From that one list come the CUDA twins' declarations, each typed from its CPU twin so
// the two cannot drift apart (EMBER_CUDA_TWINS(EMBER_LAYERNORM_KERNELS) after the CPU
// declarations), the test backends' table
// (kernels/cuda/internal/backends.h), and, through EMBER_CUDA_KERNEL, the pair that
// tensor/ops picks from by device. kernels/cpu/<family>.cc and kernels/cuda/<family>.cu
// define them.
//
// A build without CUDA has no CUDA kernels at all: EMBER_CUDA (defined by
// //kernels:twins under --config=cuda) is unset, and EMBER_CUDA_KERNEL(name) is a null
// pointer of the kernel's type. Nothing calls it, since such a build refuses to make a
// CUDA tensor (kernels/cuda/runtime.h: UseDevice says "this build of ember has no CUDA
// support").

#define EMBER_CUDA_TWIN(name) decltype(::ember::kernels::cpu::name) name;
#define EMBER_CUDA_TWINS(family_kernels) \
  namespace ember::kernels::cuda {       \
  family_kernels(EMBER_CUDA_TWIN)        \
  }

#ifdef EMBER_CUDA
#define EMBER_CUDA_KERNEL(name) (&::ember::kernels::cuda::name)
#else
#define EMBER_CUDA_KERNEL(name) (static_cast<decltype(&::ember::kernels::cpu::name)>(nullptr))
#endif

#endif  // EMBER_KERNELS_TWINS_H_
