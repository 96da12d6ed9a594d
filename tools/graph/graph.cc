// Writes the autograd graph of a small model as Graphviz DOT, the picture that shows
// what backward will run through:
//   bazel run //tools/graph -- --model=block --out=/tmp/block.dot
//   dot -Tsvg /tmp/block.dot > block.svg
// Models: `mlp` (two linear layers with GELU and cross entropy) and `block` (a
// pre-LayerNorm transformer block with causal self-attention and an MLP, then a linear
// head and cross entropy, as in GPT-2).

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/main.h"
#include "models/gpt2/block.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "tensor/creation.h"
#include "tensor/random.h"

ABSL_FLAG(std::string, model, "block", "which graph: mlp or block");
ABSL_FLAG(int64_t, batch, 2, "batch size");
ABSL_FLAG(int64_t, seq, 8, "sequence length (block)");
ABSL_FLAG(int64_t, dim, 16, "model width");
ABSL_FLAG(int64_t, heads, 2, "attention heads (block); must divide --dim");
ABSL_FLAG(int64_t, classes, 10, "output classes / vocabulary");
ABSL_FLAG(std::string, out, "", "file to write the DOT to (default: standard output)");

namespace ember {
namespace {

namespace ag = autograd;

Tensor MlpLoss(int64_t batch, int64_t dim, int64_t classes, Generator& gen) {
  nn::Sequential mlp({std::make_shared<nn::Linear>(dim, 4 * dim, true, gen),
                      std::make_shared<nn::Gelu>("tanh"),
                      std::make_shared<nn::Linear>(4 * dim, classes, true, gen)});
  return nn::CrossEntropyLoss(mlp(Randn({batch, dim}, gen)), RandInt(0, classes, {batch}, gen));
}

Tensor BlockLoss(int64_t batch, int64_t seq, int64_t dim, int64_t heads, int64_t classes,
                 Generator& gen) {
  EMBER_CHECK(heads > 0 && dim % heads == 0, "--heads ", heads, " must divide --dim ", dim);
  models::gpt2::Block block(dim, heads, /*dropout=*/0, gen);
  nn::Linear head(dim, classes, /*bias=*/false, gen);
  return nn::CrossEntropyLoss(head(block(Randn({batch, seq, dim}, gen))),
                              RandInt(0, classes, {batch, seq}, gen));
}

absl::Status Run() {
  Generator gen(0);
  const std::string model = absl::GetFlag(FLAGS_model);
  Tensor loss;
  if (model == "mlp") {
    loss = MlpLoss(absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_dim),
                   absl::GetFlag(FLAGS_classes), gen);
  } else if (model == "block") {
    loss = BlockLoss(absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seq), absl::GetFlag(FLAGS_dim),
                     absl::GetFlag(FLAGS_heads), absl::GetFlag(FLAGS_classes), gen);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --model=", model, " (expected mlp or block)"));
  }
  const std::string dot = ag::ToDot(loss);
  const std::string path = absl::GetFlag(FLAGS_out);
  if (path.empty()) {
    std::cout << dot;
    return absl::OkStatus();
  }
  std::ofstream file(path);
  file << dot;
  if (!file.good()) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  std::cerr << "graph: wrote " << path << " (render with: dot -Tsvg " << path << " > graph.svg)\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "graph",
                        "Writes a small model's autograd graph as Graphviz DOT.", ember::Run);
}
