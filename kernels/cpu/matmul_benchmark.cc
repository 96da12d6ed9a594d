// ember's Gemm (f32, and bf16 as BM_EmberBf16) against OpenBLAS's cblas_sgemm and
// Eigen's matrix product (built for this CPU, OpenMP threads) at GPT-2's shapes, in the three
// layouts a Linear layer uses, on 1 and 2 threads:
//   bazel run -c opt //kernels/cpu:matmul_benchmark
// Each row reports GFLOP/s (2 M K N per multiply); compare rows of the same shape
// (tools/reference/gemm_ratio.py prints the ratios).

#include <cblas.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <Eigen/Core>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/matmul.h"

namespace ember::kernels::cpu {
namespace {

struct Operands {
  Operands(int64_t m, int64_t k, int64_t n) : a(m * k), b(k * n), c(m * n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
  }
  std::vector<float> a, b, c;
};

void SetFlops(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * k * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// Returns once the library's threads have gone quiet: the process used under 1 ms of
// CPU in 10 ms of the caller's sleep (at most 2 s). Called untimed after each run on
// several threads, so that the next row does not share the cores with them. OpenBLAS's
// workers spin for 2^28 cycles of the time-stamp counter after a call before they
// sleep: on a 2-vCPU Intel Xeon (Emerald Rapids, 2.3 GHz), a whole core for 115 ms
// after each sgemm. Interleaved with them, the next row would share a vCPU with a
// spinning thread for its first 115 ms, and both libraries' multi-threaded rows would
// read low by whatever share of the time that is.
void WaitForIdleThreads() {
  const auto cpu_seconds = [] {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
  };
  for (int i = 0; i < 200; ++i) {
    const double before = cpu_seconds();
    usleep(10000);
    if (cpu_seconds() - before < 1e-3) return;
  }
}

// Operand layouts, GPT-2's three products per Linear: kNN, C = A B; kNT, C = A B^T
// with B stored [N, K] (the forward, x W^T); kTN, C = A^T B with A stored [K, M] (the
// weight gradient, dW = dY^T X).
enum Layout { kNN, kNT, kTN };

struct Problem {
  explicit Problem(const benchmark::State& state)
      : m(state.range(0)),
        k(state.range(1)),
        n(state.range(2)),
        threads(static_cast<int>(state.range(3))),
        layout(static_cast<Layout>(state.range(4))),
        x(m, k, n) {}
  // Strides of A and B in this layout (row, column).
  MatrixIn A() const {
    return layout == kTN ? MatrixIn{x.a.data(), 1, m} : MatrixIn{x.a.data(), k, 1};
  }
  MatrixIn B() const {
    return layout == kNT ? MatrixIn{x.b.data(), 1, k} : MatrixIn{x.b.data(), n, 1};
  }
  int64_t m, k, n;
  int threads;
  Layout layout;
  Operands x;
};

void BM_Ember(benchmark::State& state) {
  Problem p(state);
  SetNumThreads(p.threads);
  for (auto _ : state) {
    Gemm(DType::kF32, p.m, p.k, p.n, p.A(), p.B(), p.x.c.data(), p.n, false);
    benchmark::DoNotOptimize(p.x.c.data());
  }
  state.SetLabel(SimdTarget());
  SetFlops(state, p.m, p.k, p.n);
  if (p.threads > 1) WaitForIdleThreads();
}

// bf16 operands and C (the same values rounded), products summed in f32.
void BM_EmberBf16(benchmark::State& state) {
  Problem p(state);
  SetNumThreads(p.threads);
  auto bf16 = [](const std::vector<float>& v) {
    std::vector<BFloat16> out;
    for (float x : v) out.push_back(BFloat16::FromFloat(x));
    return out;
  };
  const std::vector<BFloat16> a = bf16(p.x.a), b = bf16(p.x.b);
  std::vector<BFloat16> c(p.x.c.size());
  const MatrixIn ma{a.data(), p.A().row_stride, p.A().col_stride};
  const MatrixIn mb{b.data(), p.B().row_stride, p.B().col_stride};
  for (auto _ : state) {
    Gemm(DType::kBF16, p.m, p.k, p.n, ma, mb, c.data(), p.n, false);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(SimdTarget());
  SetFlops(state, p.m, p.k, p.n);
  if (p.threads > 1) WaitForIdleThreads();
}

void BM_OpenBlas(benchmark::State& state) {
  Problem p(state);
  openblas_set_num_threads(p.threads);
  const auto ta = p.layout == kTN ? CblasTrans : CblasNoTrans,
             tb = p.layout == kNT ? CblasTrans : CblasNoTrans;
  const int64_t lda = p.layout == kTN ? p.m : p.k, ldb = p.layout == kNT ? p.k : p.n;
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, ta, tb, p.m, p.n, p.k, 1.0f, p.x.a.data(), lda, p.x.b.data(), ldb,
                0.0f, p.x.c.data(), p.n);
    benchmark::DoNotOptimize(p.x.c.data());
  }
  state.SetLabel(openblas_get_corename());
  SetFlops(state, p.m, p.k, p.n);
  if (p.threads > 1) WaitForIdleThreads();
}

void BM_Eigen(benchmark::State& state) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Problem p(state);
  Eigen::setNbThreads(p.threads);
  const Eigen::Map<const Matrix> a(p.x.a.data(), p.layout == kTN ? p.k : p.m,
                                   p.layout == kTN ? p.m : p.k);
  const Eigen::Map<const Matrix> b(p.x.b.data(), p.layout == kNT ? p.n : p.k,
                                   p.layout == kNT ? p.k : p.n);
  Eigen::Map<Matrix> c(p.x.c.data(), p.m, p.n);
  for (auto _ : state) {
    switch (p.layout) {
      case kNN:
        c.noalias() = a * b;
        break;
      case kNT:
        c.noalias() = a * b.transpose();
        break;
      case kTN:
        c.noalias() = a.transpose() * b;
        break;
    }
    benchmark::DoNotOptimize(p.x.c.data());
  }
  SetFlops(state, p.m, p.k, p.n);
  if (p.threads > 1) WaitForIdleThreads();
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "threads", "layout"});
  for (int threads : {1, 2}) {
    for (auto [m, k, n] :
         {std::tuple{256, 768, 768},
          {256, 768, 3072},
          {256, 3072, 768},
          {256, 768, 50257},
          {256, 50257, 768},
          {1024, 1024, 1024},
          // The main job's model (128 wide, 512 in the MLP, 8,192 tokens), 16 x 128 rows.
          {2048, 128, 512},
          {2048, 512, 128},
          {2048, 8192, 128},
          {8192, 2048, 128}}) {
      for (Layout layout : {kNN, kNT, kTN}) b->Args({m, k, n, threads, layout});
    }
    // GPT-2's weight gradients as its step computes them (B T = 256 rows): dW [out, in]
    // = dY^T X, with dY [256, out] and X [256, in].
    for (auto [out, in] : {std::pair{2304, 768}, {3072, 768}, {768, 3072}, {50257, 768}}) {
      b->Args({out, 256, in, threads, kTN});
    }
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
}

BENCHMARK(BM_Ember)->Apply(Shapes);
BENCHMARK(BM_EmberBf16)->Apply(Shapes);
BENCHMARK(BM_OpenBlas)->Apply(Shapes);
BENCHMARK(BM_Eigen)->Apply(Shapes);

// Debian's OpenBLAS (0.3.21) picks its kernels by CPU model and, on a model newer than
// it knows, falls back to its SSE3 kernels ("Prescott"): it did on an Intel Xeon of model
// 207 (Emerald Rapids, AVX-512). A comparator that slow says nothing, so where OpenBLAS
// chose kernels without AVX2 on a CPU that has it, the benchmark runs itself again with
// OPENBLAS_CORETYPE naming the kernels that fit (OpenBLAS reads it when it loads), as
// tools/reference/openblas_core.py does for the PyTorch references. A choice OpenBLAS
// made knowingly, or an OPENBLAS_CORETYPE already set, stands. With EMBER_SIMD=AVX2
// (ember run as on an AVX2-only machine) OpenBLAS takes its Haswell kernels, as it
// would there, rather than its AVX-512 ones.
void UseOpenBlasKernelsThatFit(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const char* simd = std::getenv("EMBER_SIMD");
  const bool avx2_only = simd != nullptr && strcasecmp(simd, "AVX2") == 0;
  const char* fit = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && !avx2_only) {
    fit = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fit = "Haswell";
  }
  if (fit == nullptr) return;
  std::string chosen = openblas_get_corename();
  for (char& ch : chosen) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (avx2_only) {
    if (chosen == "haswell" || chosen == "zen") return;
  } else {
    for (const char* vector_core : {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"}) {
      if (chosen == vector_core) return;
    }
  }
  std::fprintf(stderr, "matmul_benchmark: %s %s kernels; running again with OPENBLAS_CORETYPE=%s\n",
               avx2_only ? "EMBER_SIMD=AVX2, and OpenBLAS chose its"
                         : "OpenBLAS does not know this CPU and fell back to its",
               openblas_get_corename(), fit);
  setenv("OPENBLAS_CORETYPE", fit, 1);
  execv("/proc/self/exe", argv);
  std::perror("matmul_benchmark: execv /proc/self/exe");  // goes on with OpenBLAS's choice
}

}  // namespace
}  // namespace ember::kernels::cpu

int main(int argc, char** argv) {
  ember::kernels::cpu::UseOpenBlasKernelsThatFit(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
