#ifndef EMBER_BASE_STATUS_H_
#define EMBER_BASE_STATUS_H_

// Status macros that Abseil 20220623 does not ship.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define EMBER_STATUS_CONCAT_INNER(a, b) a##b
#define EMBER_STATUS_CONCAT(a, b) EMBER_STATUS_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the status of `expr` from the enclosing function
// when it is not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status ember_status_ = (expr);         \
    if (!ember_status_.ok()) return ember_status_; \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; returns its status when
// not OK, otherwise moves its value into `lhs` (which may declare a variable:
// ASSIGN_OR_RETURN(auto x, Parse(text))).
#define ASSIGN_OR_RETURN(lhs, expr) \
  EMBER_ASSIGN_OR_RETURN_IMPL(EMBER_STATUS_CONCAT(ember_statusor_, __LINE__), lhs, expr)

#define EMBER_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // EMBER_BASE_STATUS_H_
