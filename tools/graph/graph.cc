// Draws the autograd graph of a model, the picture that shows what backward will run
// through, as Graphviz DOT, or as SVG or PNG through Graphviz's dot (./setup.sh
// installs it):
//   bazel run //tools/graph -- --model=block --out=/tmp/block.svg
//   bazel run //tools/graph -- --spec=net.json --input_shape=4,784 --out=/tmp/net.png
//   bazel run //tools/graph -- --checkpoint=runs/gpt2/checkpoint.safetensors --out=/tmp/gpt2.svg
// Models: `mlp` (two linear layers with GELU and cross entropy), `block` (a
// pre-LayerNorm transformer block with causal self-attention and an MLP, then a linear
// head and cross entropy, as in GPT-2), any model spec (nn/network_json.h: a chain or a network
// of named layers; the graph of the sum of its output on random inputs of
// --input_shape, normal floats or, with --input_ids=V, token ids below V:
// --spec=models/gpt2/tiny.json --input_ids=50257 draws GPT-2 written as a spec), or a
// GPT-2 checkpoint (models/gpt2/weights.h: the graph of its loss on
// --batch x --seq random tokens).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "autograd/autograd.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/main.h"
#include "base/status.h"
#include "models/gpt2/block.h"
#include "models/gpt2/weights.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/network_json.h"
#include "tensor/creation.h"
#include "tensor/random.h"

ABSL_FLAG(std::string, model, "block", "which graph: mlp or block");
ABSL_FLAG(int64_t, batch, 2, "batch size");
ABSL_FLAG(int64_t, seq, 8, "sequence length (block)");
ABSL_FLAG(int64_t, dim, 16, "model width");
ABSL_FLAG(int64_t, heads, 2, "attention heads (block); must divide --dim");
ABSL_FLAG(int64_t, classes, 10, "output classes / vocabulary");
ABSL_FLAG(std::string, spec, "",
          "a model spec (JSON, nn/network_json.h) to draw instead of --model");
ABSL_FLAG(std::string, input_shape, "2,16", "--spec's input shape, e.g. 4,1,28,28");
ABSL_FLAG(int64_t, input_ids, 0,
          "--spec's input as token ids below this (a language model's), not N(0, 1) floats");
ABSL_FLAG(std::string, checkpoint, "", "a GPT-2 checkpoint to draw instead of --model");
ABSL_FLAG(std::string, out, "",
          "file to write to (default: DOT on standard output); .svg or .png render through "
          "Graphviz's dot");
ABSL_FLAG(std::string, format, "", "dot, svg or png (default: --out's extension, else dot)");

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

// --input_shape's dimensions.
absl::StatusOr<std::vector<int64_t>> InputShape() {
  std::vector<int64_t> shape;
  for (const absl::string_view d : absl::StrSplit(absl::GetFlag(FLAGS_input_shape), ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(d, &n) || n < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input_shape=", absl::GetFlag(FLAGS_input_shape),
                       ": expected positive sizes, e.g. 4,784"));
    }
    shape.push_back(n);
  }
  return shape;
}

// The DOT rendered by Graphviz's dot into `path` as `format` (svg or png).
absl::Status Render(const std::string& dot, const std::string& format, const std::string& path) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--format=", format,
                     " renders through Graphviz's dot, which is not installed "
                     "(./setup.sh installs graphviz); --format=dot writes the graph as text"));
  }
  const std::string source = path + ".dot.tmp";
  RETURN_IF_ERROR(WriteFileAtomically(source, dot));
  const std::string command =
      absl::StrCat("dot -T", format, " '", source, "' -o '", path, "' 2>&1");
  const int status = std::system(command.c_str());
  std::remove(source.c_str());
  if (status != 0) return absl::InternalError(absl::StrCat("graphviz failed: ", command));
  return absl::OkStatus();
}

absl::Status Run() {
  Generator gen(0);
  const std::string model = absl::GetFlag(FLAGS_model);
  Tensor loss;
  if (!absl::GetFlag(FLAGS_spec).empty()) {
    ASSIGN_OR_RETURN(const std::shared_ptr<nn::Module> net,
                     nn::ModelFromJsonFile(absl::GetFlag(FLAGS_spec), gen));
    ASSIGN_OR_RETURN(const std::vector<int64_t> shape, InputShape());
    const int64_t ids = absl::GetFlag(FLAGS_input_ids);
    if (ids < 0) return absl::InvalidArgumentError("--input_ids must be positive (0: floats)");
    loss = ag::Sum((*net)(ids > 0 ? RandInt(0, ids, shape, gen) : Randn(shape, gen)));
  } else if (!absl::GetFlag(FLAGS_checkpoint).empty()) {
    ASSIGN_OR_RETURN(const std::unique_ptr<models::gpt2::GPT> gpt,
                     models::gpt2::LoadGpt(absl::GetFlag(FLAGS_checkpoint)));
    const int64_t vocab = gpt->config().vocab_size, batch = absl::GetFlag(FLAGS_batch),
                  seq = std::min(absl::GetFlag(FLAGS_seq), gpt->config().block_size);
    loss = gpt->Loss(RandInt(0, vocab, {batch, seq}, gen), RandInt(0, vocab, {batch, seq}, gen));
  } else if (model == "mlp") {
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
  std::string format = absl::GetFlag(FLAGS_format);
  if (format.empty()) {
    format = absl::EndsWith(path, ".svg") ? "svg" : absl::EndsWith(path, ".png") ? "png" : "dot";
  }
  if (format != "dot" && format != "svg" && format != "png") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format, ": expected dot, svg or png"));
  }
  if (path.empty()) {
    if (format != "dot") return absl::InvalidArgumentError("--format=svg or png needs --out");
    std::cout << dot;
    return absl::OkStatus();
  }
  if (format == "dot") {
    RETURN_IF_ERROR(WriteFileAtomically(path, dot));
  } else {
    RETURN_IF_ERROR(Render(dot, format, path));
  }
  std::cerr << "graph: wrote " << path << "\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "graph",
                        "Draws a model's autograd graph (DOT, SVG or PNG); see its header.",
                        ember::Run);
}
