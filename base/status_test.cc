#include "base/status.h"

#include <string>

#include "gtest/gtest.h"

namespace ember {
namespace {

absl::StatusOr<int> ParsePositive(int x) {
  if (x <= 0) return absl::InvalidArgumentError("not positive");
  return x;
}

absl::Status Check(int x, int* seen) {
  RETURN_IF_ERROR(ParsePositive(x).status());
  ++*seen;
  return absl::OkStatus();
}

absl::StatusOr<int> Twice(int x) {
  ASSIGN_OR_RETURN(int value, ParsePositive(x));
  ASSIGN_OR_RETURN(const int again, ParsePositive(value));  // two on nearby lines
  return value + again;
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  int seen = 0;
  EXPECT_TRUE(Check(1, &seen).ok());
  EXPECT_EQ(seen, 1);
  absl::Status status = Check(-1, &seen);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "not positive");
  EXPECT_EQ(seen, 1);
}

TEST(StatusTest, AssignOrReturnMovesTheValueOrReturnsTheStatus) {
  EXPECT_EQ(Twice(4).value(), 8);
  EXPECT_EQ(Twice(0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ember
