// test_helpers_test.cpp - the shared check against published numbers fails, naming what is missing, when a
// case or quantity is not in the validation file (it used to skip, so a renamed case passed silently).
#include "test_helpers.h"
#include "core/units.h"

#include <gtest/gtest-spi.h>

TEST(TestHelpers, ExpectPublishedFailsWhenTheCaseOrQuantityIsMissing) {
  EXPECT_NONFATAL_FAILURE(EXPECT_PUBLISHED(1.0, "no-such-case", "pf_day"), "no case \"no-such-case\"");
  EXPECT_NONFATAL_FAILURE(EXPECT_PUBLISHED(mc::kFlopsPerPfDay, "gpt3-pf-day-unit", "no-such-quantity"),
                          "has no quantity \"no-such-quantity\"");
}

TEST(TestHelpers, ExpectPublishedHoldsANumberToItsTolerance) {
  EXPECT_PUBLISHED(mc::kFlopsPerPfDay, "gpt3-pf-day-unit", "pf_day");
  EXPECT_NONFATAL_FAILURE(EXPECT_PUBLISHED(mc::kFlopsPerPfDay * 1.01, "gpt3-pf-day-unit", "pf_day"), "pf_day");
  EXPECT_THROW(mc::test::published_value("no-such-case", "x"), std::out_of_range);
}
