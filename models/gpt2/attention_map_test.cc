// Attention pictures, read back from what is drawn: the tiny GPT's weights over a prompt
// (each row a distribution over the keys up to its own position; the first token looks
// only at itself), and their SVG: one map per layer and head, one cell per visible weight, each
// carrying its weight, rows summing to 1 again.

#include "models/gpt2/attention_map.h"

#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "models/gpt2/model.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {
namespace {

TEST(AttentionMapTest, WeightsAreCausalDistributionsAndTheSvgCarriesThem) {
  Generator gen(4);
  GPT model(*GPTConfig::Preset("tiny"), gen);
  const int64_t t = 6;
  const Tensor ids = FromVector(std::vector<int64_t>{50256, 464, 3290, 318, 257, 1332}, {1, t});
  const std::vector<Tensor> weights = model.AttentionWeights(ids);
  ASSERT_EQ(weights.size(), 2u);  // tiny: 2 layers of 4 heads
  ASSERT_EQ(weights[0].shape(), (Shape{1, 4, t, t}));
  std::vector<Tensor> one;
  for (const Tensor& w : weights) one.push_back(w.Select(0, 0));
  for (const Tensor& w : one) {
    for (int64_t h = 0; h < 4; ++h) {
      EXPECT_FLOAT_EQ(w.at<float>({h, 0, 0}), 1.0f);
      for (int64_t i = 0; i < t; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < t; ++j) {
          const float v = w.at<float>({h, i, j});
          if (j > i) EXPECT_EQ(v, 0.0f) << "above the diagonal";
          sum += v;
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }

  const std::vector<std::string> tokens = {"<|endoftext|>", "The", " cat",
                                           " is",           " a",  " \"test\""};
  const std::string svg = AttentionMapSvg(one, tokens);
  // Every cell: (layer, head, i) -> the sum of its row's data-w.
  const std::regex map(R"re(<g class="map" data-layer="(\d+)" data-head="(\d+)">([\s\S]*?)</g>)re");
  const std::regex cell(R"re(data-i="(\d+)" data-j="(\d+)" data-w="([0-9.]+)")re");
  int maps = 0, cells = 0;
  for (auto m = std::sregex_iterator(svg.begin(), svg.end(), map); m != std::sregex_iterator();
       ++m) {
    ++maps;
    const int layer = std::stoi((*m)[1]), head = std::stoi((*m)[2]);
    std::map<int, double> rows;
    const std::string body = (*m)[3];
    for (auto c = std::sregex_iterator(body.begin(), body.end(), cell); c != std::sregex_iterator();
         ++c) {
      ++cells;
      const int i = std::stoi((*c)[1]), j = std::stoi((*c)[2]);
      const double w = std::stod((*c)[3]);
      EXPECT_LE(j, i);
      EXPECT_NEAR(w, one[layer].at<float>({head, i, j}), 1e-6);
      rows[i] += w;
    }
    ASSERT_EQ(rows.size(), static_cast<size_t>(t));
    for (const auto& [i, sum] : rows)
      EXPECT_NEAR(sum, 1.0, 1e-5) << layer << " " << head << " " << i;
  }
  EXPECT_EQ(maps, 2 * 4);
  EXPECT_EQ(cells, 2 * 4 * t * (t + 1) / 2);
  EXPECT_NE(svg.find("&quot;test&quot; -&gt; The"), std::string::npos);  // escaped labels
  EXPECT_THROW(AttentionMapSvg(one, {"too", "few"}), Error);
}

}  // namespace
}  // namespace ember::models::gpt2
