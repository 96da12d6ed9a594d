#include "base/error.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember {
namespace {

std::string Expensive(int* calls) {
  ++*calls;
  return "expensive";
}

TEST(ErrorTest, CheckThrowsTheConcatenatedMessage) {
  try {
    EMBER_CHECK(1 + 1 == 3, "add: expected ", 3, " but got ", 2);
    FAIL() << "EMBER_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "add: expected 3 but got 2");
  }
}

TEST(ErrorTest, CheckEvaluatesTheMessageOnlyOnFailure) {
  int calls = 0;
  EMBER_CHECK(true, Expensive(&calls));
  EXPECT_EQ(calls, 0);
  EXPECT_THROW(EMBER_CHECK(false, Expensive(&calls)), Error);
  EXPECT_EQ(calls, 1);
}

TEST(ErrorTest, ThrowIsAStdException) { EXPECT_THROW(EMBER_THROW("op: bad"), std::runtime_error); }

}  // namespace
}  // namespace ember
