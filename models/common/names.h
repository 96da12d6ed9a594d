#ifndef EMBER_MODELS_COMMON_NAMES_H_
#define EMBER_MODELS_COMMON_NAMES_H_

// The names dataset as the character models (models/bigram, models/makemore) use it:
// one fixed split that tools/reference/makemore_torch.py reproduces exactly, and
// sampling a name one character at a time.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/datasets.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "tokenizer/char_tokenizer.h"

namespace ember::models {

struct NameSplit {
  std::vector<std::string> names;
  data::CharExamples examples;  // data::NameExamples of the names
};
struct NameSplits {
  NameSplit train, val, test;
  tokenizer::CharTokenizer vocab;  // '.' (id 0) then every character of every split
};

// female.txt and male.txt of `dir` through data::LoadNames (lowercased, merged,
// deduplicated, sorted); name i goes to train when i % 10 < 8, val when 8, test when 9;
// each split's examples have a context of block_size characters.
absl::StatusOr<NameSplits> LoadNameSplits(const std::string& dir, int block_size);

// A name drawn character by character: the context starts as block_size '.'s, each
// next id is drawn from softmax(logits(context)) (context i64 [1, block_size], logits
// [1, vocab]) and shifts in; stops at '.' (not included) or after max_length characters.
std::string SampleName(const std::function<Tensor(const Tensor&)>& logits, int block_size,
                       const tokenizer::CharTokenizer& vocab, Generator& gen, int max_length = 50);

// `count` SampleName draws, each printed on a line of its own as it is drawn.
std::vector<std::string> PrintSampledNames(int64_t count,
                                           const std::function<Tensor(const Tensor&)>& logits,
                                           int block_size, const tokenizer::CharTokenizer& vocab,
                                           Generator& gen);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_NAMES_H_
