#ifndef EMBER_MODELS_COMMON_LOSS_PLOT_H_
#define EMBER_MODELS_COMMON_LOSS_PLOT_H_

// The loss curves of a training run as an SVG file a browser shows: training loss
// (every step) and validation loss (at each validation) against the step, with the
// tokens seen under the step axis; the loss axis linear or logarithmic. Written
// through a temporary file and a rename, so a browser reloading it never sees half.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace ember::models {

struct LossCurves {
  std::vector<std::pair<double, double>> train, val;  // (step, loss)
  double tokens_per_step = 0;                         // 0: no tokens axis
  std::string title;
  // The axes' and the second curve's names (a classifier's: epoch, its loss, test).
  std::string x_label = "step", y_label = "loss (nats per token)", val_label = "validation";
};

// The chart as an SVG document (self-contained: no scripts, no external files).
std::string LossSvg(const LossCurves& curves, bool log_scale);

absl::Status WriteLossSvg(const std::string& path, const LossCurves& curves, bool log_scale);

// The curves so far of a run whose metrics.csv (step,loss,val_loss,...; val_loss empty
// between validations, loss empty in step 0's row) is at `path`, for a resumed run to draw the
// whole of it. A file that is not there gives empty curves.
LossCurves ReadLossCurves(const std::string& path);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_LOSS_PLOT_H_
