#include "models/gpt2/attention_map.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/error.h"

namespace ember::models::gpt2 {
namespace {

std::string Escape(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string AttentionMapSvg(const std::vector<Tensor>& weights,
                            const std::vector<std::string>& tokens) {
  EMBER_CHECK(!weights.empty(), "attention map: no layers");
  const int64_t heads = weights.front().size(0), t = weights.front().size(1);
  EMBER_CHECK(static_cast<int64_t>(tokens.size()) == t, "attention map: ", tokens.size(),
              " token labels for ", t, " positions");
  const int64_t cell = std::clamp<int64_t>(320 / std::max<int64_t>(t, 1), 4, 24);
  const int64_t panel = cell * t, gap = 24, label = 96;
  const int64_t width = label + heads * (panel + gap),
                height = gap + weights.size() * (panel + gap);
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" font-size=\"%d\">\n",
      width, height, std::min<int64_t>(cell, 11));
  for (size_t l = 0; l < weights.size(); ++l) {
    const Tensor w = weights[l].To(Device::Cpu()).To(DType::kF64).Contiguous();
    EMBER_CHECK(w.dim() == 3 && w.size(0) == heads && w.size(1) == t && w.size(2) == t,
                "attention map: layer ", l, " is ", ShapeToString(w.shape()), ", not [", heads,
                ", ", t, ", ", t, "]");
    const double* data = w.data<double>();
    const int64_t top = gap + static_cast<int64_t>(l) * (panel + gap);
    for (int64_t i = 0; i < t; ++i) {  // the row labels: each token's text
      absl::StrAppendFormat(
          &svg, "<text class=\"token\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
          label - 4, top + i * cell + cell - 1, Escape(tokens[i]));
    }
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t left = label + h * (panel + gap);
      absl::StrAppendFormat(&svg, "<g class=\"map\" data-layer=\"%d\" data-head=\"%d\">\n", l, h);
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\">layer %d, head %d</text>\n", left,
                            top - 6, l, h);
      absl::StrAppendFormat(&svg,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                            "stroke=\"#999\"/>\n",
                            left, top, panel, panel);
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = 0; j <= i; ++j) {  // above the diagonal the weights are 0
          const double v = data[(h * t + i) * t + j];
          const auto shade = [v](int full, int dark) {
            return static_cast<int>(full - (full - dark) * std::clamp(v, 0.0, 1.0) + 0.5);
          };
          absl::StrAppendFormat(
              &svg,
              "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
              "data-i=\"%d\" data-j=\"%d\" data-w=\"%.6f\"><title>%s -&gt; %s: "
              "%.4f</title></rect>\n",
              left + j * cell, top + i * cell, cell, cell, shade(255, 8), shade(255, 48),
              shade(255, 107), i, j, v, Escape(tokens[i]), Escape(tokens[j]), v);
        }
      }
      svg += "</g>\n";
    }
  }
  svg += "</svg>\n";
  return svg;
}

absl::Status WriteAttentionMapSvg(const std::string& path, const std::vector<Tensor>& weights,
                                  const std::vector<std::string>& tokens) {
  return WriteFileAtomically(path, AttentionMapSvg(weights, tokens));
}

}  // namespace ember::models::gpt2
