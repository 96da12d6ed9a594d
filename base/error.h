#ifndef EMBER_BASE_ERROR_H_
#define EMBER_BASE_ERROR_H_

#include <stdexcept>
#include <string>

#include "absl/strings/str_cat.h"

namespace ember {

// The one exception type of the project: tensor math called with wrong shapes,
// dtypes or indices throws it (as PyTorch's c10::Error), with a message that names
// the op and the values involved. Anything that reads the outside world returns
// absl::Status instead.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace internal {
[[noreturn]] void ThrowError(const std::string& message);
}  // namespace internal

}  // namespace ember

// EMBER_CHECK(cond, parts...): if `cond` is false, throws ember::Error whose message
// is absl::StrCat(parts...). The parts are only evaluated on failure.
#define EMBER_CHECK(cond, ...)                                    \
  do {                                                            \
    if (__builtin_expect(!(cond), 0)) {                           \
      ::ember::internal::ThrowError(::absl::StrCat(__VA_ARGS__)); \
    }                                                             \
  } while (0)

// EMBER_THROW(parts...): throws ember::Error unconditionally.
#define EMBER_THROW(...) ::ember::internal::ThrowError(::absl::StrCat(__VA_ARGS__))

#endif  // EMBER_BASE_ERROR_H_
