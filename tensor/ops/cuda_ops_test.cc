// The tensor ops on CUDA tensors against the same ops on the CPU: each op checks its
// operands, allocates its result on the GPU and reaches the CUDA kernel through the
// one device switch (internal/backend.h). The kernels themselves are tested against
// the float64 reference in kernels/cuda; this is the path from a Tensor to them.
// Skips, saying why, without a GPU.

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"
#include "tensor/ops/adamw.h"
#include "tensor/ops/attention.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/embedding.h"
#include "tensor/ops/layernorm.h"
#include "tensor/ops/matmul.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/softmax.h"
#include "tensor/ops/unary.h"
#include "tensor/random.h"

namespace ember::ops {
namespace {

const Device kGpu = Device::Cuda(0);

class CudaOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::IsAvailable()) {
      try {
        Empty({1}, DType::kF32, kGpu);
      } catch (const Error& e) {
        GTEST_SKIP() << e.what();
      }
    }
  }
};

// `gpu` is on cuda:0, with cpu's shape and dtype and values within rtol.
void ExpectMatches(const Tensor& cpu, const Tensor& gpu, double rtol, const std::string& what) {
  ASSERT_EQ(gpu.device(), kGpu) << what;
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  const std::vector<double> want = cpu.ToVector<double>(), got = gpu.ToVector<double>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rtol * (std::fabs(want[i]) + 1)) << what << " at " << i;
  }
}

TEST_F(CudaOpsTest, ElementwiseOpsAndReductions) {
  Generator gen(1);
  const Tensor a = Randn({64, 33}, gen), b = Randn({33}, gen);
  const Tensor ga = a.To(kGpu), gb = b.To(kGpu);
  ExpectMatches(Add(a, b), Add(ga, gb), 0, "add, broadcast");
  ExpectMatches(Mul(a.Transpose(0, 1), 2.5), Mul(ga.Transpose(0, 1), 2.5), 0, "mul, strided");
  ExpectMatches(Maximum(a, b), Maximum(ga, gb), 0, "maximum");
  ExpectMatches(Lt(a, b), Lt(ga, gb), 0, "lt");
  ExpectMatches(Where(Gt(a, b), a, b), Where(Gt(ga, gb), ga, gb), 0, "where");
  ExpectMatches(Exp(a), Exp(ga), 1e-6, "exp");
  ExpectMatches(GeluTanh(a), GeluTanh(ga), 1e-5, "gelu");
  ExpectMatches(Sum(a, {1}), Sum(ga, {1}), 1e-5, "sum rows");
  ExpectMatches(Sum(a, {0}), Sum(ga, {0}), 1e-5, "sum columns");
  ExpectMatches(Max(a, {1}), Max(ga, {1}), 0, "max");
  ExpectMatches(ArgMax(a, 1), ArgMax(ga, 1), 0, "argmax");
  ExpectMatches(Var(a, {1}), Var(ga, {1}), 1e-5, "var");
  EXPECT_EQ(SumOfSquares(ga).device(), kGpu);
  EXPECT_NEAR(SumOfSquares(ga).item(), SumOfSquares(a).item(), 1e-5 * SumOfSquares(a).item());
  const Tensor c = a.Clone(), gc = ga.Clone();
  MulInPlace(c, 0.5);
  MulInPlace(gc, 0.5);
  ExpectMatches(c, gc, 0, "mul in place");
}

TEST_F(CudaOpsTest, TheOpsOfAGptStep) {
  Generator gen(2);
  const int64_t rows = 24, c = 48, vocab = 101;
  const Tensor x = Randn({rows, c}, gen), w = Rand({c}, gen), bias = Randn({c}, gen);
  const Tensor gx = x.To(kGpu), gw = w.To(kGpu), gbias = bias.To(kGpu);
  // LayerNorm forward and backward.
  const LayerNormResult ln = LayerNorm(x, w, bias), gln = LayerNorm(gx, gw, gbias);
  ExpectMatches(ln.y, gln.y, 1e-5, "layer_norm");
  const Tensor dy = Randn({rows, c}, gen);
  const LayerNormGrads lg = LayerNormBackward(x, w, true, ln, dy);
  const LayerNormGrads glg = LayerNormBackward(gx, gw, true, gln, dy.To(kGpu));
  ExpectMatches(lg.dx, glg.dx, 1e-5, "layer_norm dx");
  ExpectMatches(lg.dweight, glg.dweight, 1e-5, "layer_norm dweight");
  ExpectMatches(lg.dbias, glg.dbias, 1e-5, "layer_norm dbias");
  // Matmul and Linear.
  const Tensor weight = Randn({vocab, c}, gen), gweight = weight.To(kGpu);
  const Tensor head_bias = Randn({vocab}, gen);
  ExpectMatches(Matmul(x, weight.Transpose(0, 1)), Matmul(gx, gweight.Transpose(0, 1)), 1e-5,
                "matmul");
  const Tensor logits = Linear(x, weight, head_bias);
  const Tensor glogits = Linear(gx, gweight, head_bias.To(kGpu));
  ExpectMatches(logits, glogits, 1e-5, "linear");
  ExpectMatches(Matmul(x.View({4, 6, c}), x.View({4, 6, c}).Transpose(1, 2)),
                Matmul(gx.View({4, 6, c}), gx.View({4, 6, c}).Transpose(1, 2)), 1e-5, "bmm");
  // Softmax and cross entropy.
  ExpectMatches(Softmax(logits), Softmax(glogits), 1e-5, "softmax");
  ExpectMatches(LogSoftmax(logits), LogSoftmax(glogits), 1e-5, "log_softmax");
  const Tensor targets = Arange(0, rows * 4, 4);
  const CrossEntropyResult ce = CrossEntropy(logits, targets);
  const CrossEntropyResult gce = CrossEntropy(glogits, targets.To(kGpu));
  ExpectMatches(ce.loss, gce.loss, 1e-5, "cross_entropy");
  ExpectMatches(CrossEntropyBackward(logits, targets, ce, Full({}, 1.0)),
                CrossEntropyBackward(glogits, targets.To(kGpu), gce, Full({}, 1.0).To(kGpu)), 1e-5,
                "cross_entropy grad");
  // A target out of range does not wait for the GPU to be read back: the loss is NaN.
  EXPECT_TRUE(
      std::isnan(CrossEntropy(glogits, Full({rows}, vocab, DType::kI64).To(kGpu)).loss.item()));
  // Embedding forward and backward; a bad id is caught on the GPU too.
  const Tensor ids = FromVector<int64_t>({3, 7, 3, 0, 100, 3}, {2, 3});
  ExpectMatches(Embedding(weight, ids), Embedding(gweight, ids.To(kGpu)), 0, "embedding");
  const Tensor dout = Randn({2, 3, c}, gen);
  ExpectMatches(EmbeddingBackward(dout, ids, vocab),
                EmbeddingBackward(dout.To(kGpu), ids.To(kGpu), vocab), 1e-6, "embedding grad");
  // An id out of range is not read back from the GPU either: its row is NaN.
  for (float v : Embedding(gweight, FromVector<int64_t>({vocab}).To(kGpu)).ToVector<float>()) {
    EXPECT_TRUE(std::isnan(v));
  }
  // Causal attention on strided heads ([2, 6, 4, 12] seen as [2, 4, 6, 12]), forward
  // and backward.
  const Tensor qkv = Randn({3, 2, 6, 4, 12}, gen), gqkv = qkv.To(kGpu),
               dh = Randn({2, 4, 6, 12}, gen);
  auto head = [](const Tensor& t, int64_t i) { return t.Select(0, i).Transpose(1, 2); };
  const CausalAttentionResult att = CausalAttention(head(qkv, 0), head(qkv, 1), head(qkv, 2));
  const CausalAttentionResult gatt = CausalAttention(head(gqkv, 0), head(gqkv, 1), head(gqkv, 2));
  ExpectMatches(att.y, gatt.y, 1e-5, "causal_attention");
  const CausalAttentionGrads ag =
      CausalAttentionBackward(head(qkv, 0), head(qkv, 1), head(qkv, 2), att, dh);
  const CausalAttentionGrads gag =
      CausalAttentionBackward(head(gqkv, 0), head(gqkv, 1), head(gqkv, 2), gatt, dh.To(kGpu));
  ExpectMatches(ag.dq, gag.dq, 1e-5, "causal_attention dq");
  ExpectMatches(ag.dk, gag.dk, 1e-5, "causal_attention dk");
  ExpectMatches(ag.dv, gag.dv, 1e-5, "causal_attention dv");
  // AdamW, in place on both devices.
  const Tensor p = Randn({1000}, gen), g = Randn({1000}, gen);
  const Tensor m = Zeros({1000}), v = Zeros({1000});
  const Tensor gp = p.To(kGpu), gm = m.To(kGpu), gv = v.To(kGpu), gg = g.To(kGpu);
  const AdamWHyper hyper{1e-3, 0.9, 0.999, 1e-8, 0.01, 1};
  AdamWStep({{p, g, m, v, hyper}});
  AdamWStep({{gp, gg, gm, gv, hyper}});
  ExpectMatches(p, gp, 1e-6, "adamw");
}

TEST_F(CudaOpsTest, MixingDevicesIsAnError) {
  const Tensor a = Ones({3}), ga = a.To(kGpu);
  try {
    Add(a, ga);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu and cuda:0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember::ops
