#include "models/common/loss_plot.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::models {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The points of the n-th polyline, as (x, y) pixel pairs.
std::vector<std::pair<double, double>> Points(const std::string& svg, int n) {
  size_t at = 0;
  for (int i = 0; i <= n; ++i) at = svg.find("points=\"", at) + 8;
  std::istringstream in(svg.substr(at, svg.find('"', at) - at));
  std::vector<std::pair<double, double>> points;
  double x, y;
  char comma;
  while (in >> x >> comma >> y) points.emplace_back(x, y);
  return points;
}

LossCurves Curves() {
  LossCurves c;
  for (int step = 1; step <= 100; ++step) c.train.emplace_back(step, 10.0 / step);
  c.val = {{0, 11.0}, {50, 0.3}, {100, 0.15}};
  c.tokens_per_step = 1024;
  c.title = "test run";
  return c;
}

TEST(LossPlotTest, DrawsBothCurvesInTheirOrder) {
  const std::string svg = LossSvg(Curves(), /*log_scale=*/false);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, "<circle"), 3);  // a marker per validation
  const auto train = Points(svg, 0), val = Points(svg, 1);
  ASSERT_EQ(train.size(), 100u);
  ASSERT_EQ(val.size(), 3u);
  // x grows with the step; y (pixels grow downwards) with a falling loss.
  for (size_t i = 1; i < train.size(); ++i) {
    EXPECT_GT(train[i].first, train[i - 1].first);
    EXPECT_GE(train[i].second, train[i - 1].second);
  }
  EXPECT_EQ(val[0].first, 70);                    // step 0 at the left edge of the plot area
  EXPECT_EQ(val[2].first, train.back().first);    // step 100 at the right
  EXPECT_THAT(svg, HasSubstr(">102.4k</text>"));  // tokens under step 100
  EXPECT_THAT(svg, HasSubstr("train 0.1000"));
  EXPECT_THAT(svg, HasSubstr("validation 0.1500"));
  EXPECT_THAT(svg, HasSubstr("test run</text>"));
}

TEST(LossPlotTest, LogScaleSpreadsTheTail) {
  const auto linear = Points(LossSvg(Curves(), false), 0), log = Points(LossSvg(Curves(), true), 0);
  // From step 50 to 100 the loss halves: nearly flat on a linear axis over 10 to 0.1, a
  // tenth of the height on a log one.
  const double linear_drop = linear[99].second - linear[49].second,
               log_drop = log[99].second - log[49].second;
  EXPECT_LT(linear_drop, 5);
  EXPECT_GT(log_drop, 20);
  EXPECT_THAT(LossSvg(Curves(), true), HasSubstr("(log scale)"));
}

TEST(LossPlotTest, EmptyAndOddValuesStillMakeADocument) {
  EXPECT_THAT(LossSvg(LossCurves{}, false), HasSubstr("no data yet"));
  LossCurves c;
  c.train = {{1, 5.0}, {2, std::nan("")}, {3, -1.0}};
  const std::string svg =
      LossSvg(c, /*log_scale=*/true);  // a loss <= 0 cannot be drawn on a log axis
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_EQ(Points(svg, 0).size(), 1u);
}

TEST(LossPlotTest, ReadsARunsCsvAndWritesWhole) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ofstream(dir + "/metrics.csv")
      << "step,loss,val_loss,lr\n0,,6.2,\n1,5.5,,0.1\n2,5.0,4.9,0.1\n3,4.5,,0.1\n";
  const LossCurves c = ReadLossCurves(dir + "/metrics.csv");
  EXPECT_EQ(c.train, (std::vector<std::pair<double, double>>{{1, 5.5}, {2, 5.0}, {3, 4.5}}));
  EXPECT_EQ(c.val, (std::vector<std::pair<double, double>>{{0, 6.2},
                                                           {2, 4.9}}));  // step 0: validation only
  EXPECT_TRUE(ReadLossCurves(dir + "/none.csv").train.empty());
  ASSERT_TRUE(WriteLossSvg(dir + "/loss.svg", c, false).ok());
  std::stringstream text;
  text << std::ifstream(dir + "/loss.svg").rdbuf();
  EXPECT_EQ(text.str(), LossSvg(c, false));
  EXPECT_FALSE(std::ifstream(dir + "/loss.svg.tmp").good());
  EXPECT_FALSE(WriteLossSvg("/nonexistent/loss.svg", c, false).ok());
}

}  // namespace
}  // namespace ember::models
