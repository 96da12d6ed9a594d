#include "base/error.h"

namespace ember::internal {

// Out of line so that the throw does not bloat every EMBER_CHECK site.
void ThrowError(const std::string& message) { throw Error(message); }

}  // namespace ember::internal
