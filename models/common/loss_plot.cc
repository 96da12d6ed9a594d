#include "models/common/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/atomic_file.h"

namespace ember::models {
namespace {

constexpr double kWidth = 760, kHeight = 420;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 70;  // margins around the plot area

// Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, about
// `count` of them.
std::vector<double> Ticks(double lo, double hi, int count) {
  const double raw = (hi - lo) / count;
  if (!(raw > 0)) return {lo};
  const double power = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / power < 1.5   ? power
                      : raw / power < 3.5 ? 2 * power
                      : raw / power < 7.5 ? 5 * power
                                          : 10 * power;
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

std::string Number(double v) {
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) return absl::StrFormat("%.0e", v);
  return absl::StrFormat("%g", v);
}

// Tokens as 12k, 3.4M.
std::string Tokens(double v) {
  if (v >= 1e9) return absl::StrFormat("%gB", std::round(v / 1e8) / 10);
  if (v >= 1e6) return absl::StrFormat("%gM", std::round(v / 1e5) / 10);
  if (v >= 1e3) return absl::StrFormat("%gk", std::round(v / 1e2) / 10);
  return absl::StrFormat("%g", v);
}

}  // namespace

std::string LossSvg(const LossCurves& curves, bool log_scale) {
  // The data's extent; a loss at or below 0 cannot be drawn on a log axis and is left out.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  auto drawable = [&](double loss) { return std::isfinite(loss) && (!log_scale || loss > 0); };
  for (const auto* curve : {&curves.train, &curves.val}) {
    for (const auto& [step, loss] : *curve) {
      if (!drawable(loss)) continue;
      x_lo = std::min(x_lo, step), x_hi = std::max(x_hi, step);
      y_lo = std::min(y_lo, loss), y_hi = std::max(y_hi, loss);
    }
  }
  const bool empty = !(x_lo <= x_hi);
  if (empty) x_lo = 0, x_hi = 1, y_lo = 1, y_hi = 2;
  if (x_hi == x_lo) x_hi = x_lo + 1;
  auto scale = [&](double y) { return log_scale ? std::log10(y) : y; };
  double lo = scale(y_lo), hi = scale(y_hi);
  if (hi == lo) hi = lo + 1;
  const double pad = 0.05 * (hi - lo);
  lo -= pad, hi += pad;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto px = [&](double step) { return kLeft + (step - x_lo) / (x_hi - x_lo) * w; };
  auto py = [&](double loss) { return kTop + (hi - scale(loss)) / (hi - lo) * h; };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(&svg, "<text x=\"", kLeft, "\" y=\"24\" font-size=\"15\">",
                  curves.title.empty() ? "loss" : curves.title, log_scale ? " (log scale)" : "",
                  "</text>\n");
  // Grid and ticks: steps (and tokens) along the bottom, the loss up the side.
  for (const double step : Ticks(x_lo, x_hi, 8)) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#e4e4e4\"/>"
                          "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n",
                          px(step), kTop, px(step), kTop + h, px(step), kTop + h + 16,
                          Number(step));
    if (curves.tokens_per_step > 0) {
      absl::StrAppendFormat(
          &svg, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\" fill=\"#777\">%s</text>\n",
          px(step), kTop + h + 32, Tokens(step * curves.tokens_per_step));
    }
  }
  std::vector<double> y_ticks;
  if (log_scale) {  // 1, 2 and 5 times each power of ten in range, else the scale's own ticks
    for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e) {
      for (const double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10, e);
        if (std::log10(v) >= lo && std::log10(v) <= hi) y_ticks.push_back(v);
      }
    }
    if (y_ticks.size() < 3) {  // less than a decade: round values, at their log positions
      y_ticks = Ticks(std::pow(10, lo), std::pow(10, hi), 6);
    }
  } else {
    y_ticks = Ticks(lo, hi, 6);
  }
  for (const double v : y_ticks) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
                          "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          kLeft, py(v), kLeft + w, py(v), kLeft - 6, py(v) + 4, Number(v));
  }
  absl::StrAppendFormat(
      &svg, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#444\"/>\n",
      kLeft, kTop, w, h);
  absl::StrAppendFormat(&svg, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s%s</text>\n",
                        kLeft + w / 2, kHeight - 12, curves.x_label,
                        curves.tokens_per_step > 0 ? " (tokens seen, grey)" : "");
  absl::StrAppendFormat(
      &svg,
      "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" text-anchor=\"middle\">"
      "%s</text>\n",
      kTop + h / 2, kTop + h / 2, curves.y_label);

  auto polyline = [&](const std::vector<std::pair<double, double>>& curve, const char* color,
                      double width) {
    std::string points;
    for (const auto& [step, loss] : curve) {
      if (drawable(loss)) absl::StrAppendFormat(&points, "%.1f,%.1f ", px(step), py(loss));
    }
    if (!points.empty()) {
      absl::StrAppendFormat(
          &svg, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\" points=\"%s\"/>\n",
          color, width, points);
    }
  };
  polyline(curves.train, "#4c78a8", 1.2);
  polyline(curves.val, "#e45756", 2);
  for (const auto& [step, loss] : curves.val) {
    if (drawable(loss))
      absl::StrAppendFormat(&svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#e45756\"/>\n",
                            px(step), py(loss));
  }
  // The legend, with the latest values, in the plot's top right corner (where falling
  // curves leave room).
  auto last = [](const std::vector<std::pair<double, double>>& c) {
    return c.empty() ? std::string("-") : absl::StrFormat("%.4f", c.back().second);
  };
  const double lx = kLeft + w - 170, ly = kTop + 10;
  absl::StrAppendFormat(
      &svg,
      "<rect x=\"%g\" y=\"%g\" width=\"162\" height=\"40\" fill=\"white\" stroke=\"#ccc\"/>\n"
      "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#4c78a8\" stroke-width=\"2\"/>"
      "<text x=\"%g\" y=\"%g\">train %s</text>\n"
      "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#e45756\" stroke-width=\"2\"/>"
      "<text x=\"%g\" y=\"%g\">%s %s</text>\n",
      lx, ly, lx + 8, ly + 13, lx + 28, ly + 13, lx + 34, ly + 17, last(curves.train), lx + 8,
      ly + 29, lx + 28, ly + 29, lx + 34, ly + 33, curves.val_label, last(curves.val));
  if (empty)
    absl::StrAppendFormat(&svg, "<text x=\"%g\" y=\"%g\">no data yet</text>\n", kLeft + 10,
                          kTop + 20);
  return svg + "</svg>\n";
}

absl::Status WriteLossSvg(const std::string& path, const LossCurves& curves, bool log_scale) {
  return WriteFileAtomically(path,
                             LossSvg(curves, log_scale));  // a browser reloading it never sees half
}

LossCurves ReadLossCurves(const std::string& path) {
  LossCurves curves;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ',');
    double step, loss, val;
    if (fields.size() < 3 || !absl::SimpleAtod(fields[0], &step)) continue;
    if (absl::SimpleAtod(fields[1], &loss))
      curves.train.emplace_back(step, loss);  // step 0 has none
    if (absl::SimpleAtod(fields[2], &val)) curves.val.emplace_back(step, val);
  }
  return curves;
}

}  // namespace ember::models
