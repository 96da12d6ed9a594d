#include "models/common/names.h"

#include <cstdio>
#include <deque>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "tensor/creation.h"
#include "tensor/ops/sampling.h"
#include "tensor/ops/softmax.h"

namespace ember::models {

absl::StatusOr<NameSplits> LoadNameSplits(const std::string& dir, int block_size) {
  ASSIGN_OR_RETURN(std::vector<std::string> names,
                   data::LoadNames({dir + "/female.txt", dir + "/male.txt"}));
  ASSIGN_OR_RETURN(tokenizer::CharTokenizer vocab, data::NamesVocabulary(names));
  NameSplits splits{{}, {}, {}, std::move(vocab)};
  for (size_t i = 0; i < names.size(); ++i) {
    NameSplit& to = i % 10 < 8 ? splits.train : i % 10 == 8 ? splits.val : splits.test;
    to.names.push_back(std::move((names)[i]));
  }
  for (NameSplit* split : {&splits.train, &splits.val, &splits.test}) {
    ASSIGN_OR_RETURN(data::CharExamples examples,
                     data::NameExamples(split->names, splits.vocab, block_size));
    split->examples = std::move(examples);
  }
  return splits;
}

std::string SampleName(const std::function<Tensor(const Tensor&)>& logits, int block_size,
                       const tokenizer::CharTokenizer& vocab, Generator& gen, int max_length) {
  autograd::NoGradGuard no_grad;
  std::deque<int64_t> context(static_cast<size_t>(block_size), 0);
  std::vector<tokenizer::Rank> ids;
  while (static_cast<int>(ids.size()) < max_length) {
    const Tensor x =
        FromVector(std::vector<int64_t>(context.begin(), context.end()), {1, block_size});
    // Drawn on the host from the CPU generator, wherever the model runs: a seed gives the
    // same names on every device (up to the logits' rounding).
    const int64_t next =
        ops::Multinomial(ops::Softmax(logits(x).To(Device::Cpu())), gen).ToVector<int64_t>()[0];
    if (next == 0) break;
    ids.push_back(static_cast<tokenizer::Rank>(next));
    context.pop_front();
    context.push_back(next);
  }
  absl::StatusOr<std::string> name = vocab.Decode(ids);  // ids drawn from the vocabulary itself
  EMBER_CHECK(name.ok(), "sample: ", name.status().message());
  return *std::move(name);
}

std::vector<std::string> PrintSampledNames(int64_t count,
                                           const std::function<Tensor(const Tensor&)>& logits,
                                           int block_size, const tokenizer::CharTokenizer& vocab,
                                           Generator& gen) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < count; ++i) {
    names.push_back(SampleName(logits, block_size, vocab, gen));
    std::printf("%s\n", names.back().c_str());
  }
  return names;
}

}  // namespace ember::models
