// Causal attention forward and backward on every compiled SIMD target against the
// float64 reference (the backward through softmax's full Jacobian).

#include "kernels/attention.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/attention.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;

struct Shape {
  int64_t batch, tq, tk, d;
};

template <typename T>
struct Outputs {
  std::vector<T> q, k, v, dy, y, lse, dq, dk, dv;
};

template <typename T>
Outputs<T> Attend(const Shape& s, double spread, std::mt19937& rng) {
  Outputs<T> r;
  r.q = RandomVector<T>(s.batch * s.tq * s.d, -spread, spread, rng);
  r.k = RandomVector<T>(s.batch * s.tk * s.d, -spread, spread, rng);
  r.v = RandomVector<T>(s.batch * s.tk * s.d, -1, 1, rng);
  r.dy = RandomVector<T>(s.batch * s.tq * s.d, -1, 1, rng);
  r.y.resize(r.q.size());
  r.lse.resize(s.batch * s.tq);
  r.dq.resize(r.q.size());
  r.dk.resize(r.k.size());
  r.dv.resize(r.v.size());
  CausalAttentionForward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, r.q.data(), r.k.data(), r.v.data(),
                         r.y.data(), r.lse.data());
  CausalAttentionBackward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, r.q.data(), r.k.data(), r.v.data(),
                          r.y.data(), r.lse.data(), r.dy.data(), r.dq.data(), r.dk.data(),
                          r.dv.data());
  return r;
}

template <typename T>
void Check(const std::string& target, const Shape& s, double spread, std::mt19937& rng) {
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  const Outputs<T> r = Attend<T>(s, spread, rng);
  for (int64_t b = 0; b < s.batch; ++b) {
    auto head = [&](const std::vector<T>& x, int64_t t) {
      return std::vector<double>(x.begin() + b * t * s.d, x.begin() + (b + 1) * t * s.d);
    };
    const ref::AttentionHead h{s.tq, s.tk, s.d, head(r.q, s.tq), head(r.k, s.tk), head(r.v, s.tk)};
    const ref::AttentionOutput want = ref::CausalAttention(h, head(r.dy, s.tq));
    const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + target +
                              ", tq=" + std::to_string(s.tq) + " tk=" + std::to_string(s.tk) +
                              " d=" + std::to_string(s.d) + ", head " + std::to_string(b);
    auto expect_near = [&](const char* name, const std::vector<T>& got, int64_t offset,
                           const std::vector<double>& expected) {
      for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_NEAR(got[offset + i], expected[i], tol * (1 + std::fabs(expected[i])))
            << where << " " << name << "[" << i << "]";
      }
    };
    expect_near("y", r.y, b * s.tq * s.d, want.y);
    expect_near("lse", r.lse, b * s.tq, want.lse);
    expect_near("dq", r.dq, b * s.tq * s.d, want.dq);
    expect_near("dk", r.dk, b * s.tk * s.d, want.dk);
    expect_near("dv", r.dv, b * s.tk * s.d, want.dv);
  }
}

TEST(CausalAttentionTest, MatchesTheReferenceOnEveryTarget) {
  std::mt19937 rng(51);
  // One position; odd widths (vector tails); a cache of earlier keys (tk > tq); one
  // generated token against 40 keys; blocks of query rows (48) and their edges.
  const std::vector<Shape> shapes = {{2, 1, 1, 1},     {3, 5, 5, 3},    {2, 7, 12, 8},
                                     {2, 1, 40, 64},   {2, 50, 50, 16}, {1, 97, 130, 33},
                                     {2, 128, 128, 32}};
  ForEachTarget([&](const std::string& target) {
    for (const Shape& s : shapes) {
      Check<float>(target, s, 1.0, rng);
      Check<double>(target, s, 1.0, rng);
    }
  });
}

TEST(CausalAttentionTest, LargeScoresStayAccurate) {
  // Scores in the hundreds: softmax must subtract each row's maximum (exp(300)
  // overflows float), and the backward's exp(S - lse) must not overflow either.
  std::mt19937 rng(52);
  Check<float>("best", {2, 20, 20, 16}, 6.0, rng);
  Check<double>("best", {2, 20, 20, 16}, 6.0, rng);
}

TEST(CausalAttentionTest, ResultsDoNotDependOnTheThreadCount) {
  const Shape s{6, 100, 100, 24};
  const int threads = NumThreads();
  SetNumThreads(1);
  std::mt19937 rng1(53);
  const Outputs<float> one = Attend<float>(s, 1.0, rng1);
  SetNumThreads(3);
  std::mt19937 rng3(53);
  const Outputs<float> three = Attend<float>(s, 1.0, rng3);
  SetNumThreads(threads);
  EXPECT_EQ(one.y, three.y);
  EXPECT_EQ(one.lse, three.lse);
  EXPECT_EQ(one.dq, three.dq);
  EXPECT_EQ(one.dk, three.dk);
  EXPECT_EQ(one.dv, three.dv);
}

}  // namespace
}  // namespace ember::kernels::cpu
