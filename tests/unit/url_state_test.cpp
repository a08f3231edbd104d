// url_state_test.cpp - the page URL's state (engine/core/url_state.h) against what a browser's
// URLSearchParams gives for the same query (WHATWG URL standard, application/x-www-form-urlencoded
// parsing: '+' is a space, %XX a byte, a bad escape left as written, the first of a repeated key wins).
#include "core/url_state.h"

#include <gtest/gtest.h>

namespace {

TEST(UrlState, AClassLinkOpensItsStep) {
  const mc::UrlState s = mc::parse_url_state("?scenario=gpt3-2020&step=3");
  EXPECT_EQ(s.scenario, "gpt3-2020");
  EXPECT_EQ(s.step, 2);  // 1-based in the URL
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(mc::to_query(s), "?scenario=gpt3-2020&step=3");
}

TEST(UrlState, DecodesAsUrlSearchParams) {
  // new URLSearchParams("a=1+2&b=%41%2f&c=%zz&d&a=x") -> a "1 2", b "A/", c "%zz", d "".
  const auto q = mc::parse_query("a=1+2&b=%41%2f&c=%zz&d&a=x#frag");
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[0], (std::pair<std::string, std::string>{"a", "1 2"}));
  EXPECT_EQ(q[1].second, "A/");
  EXPECT_EQ(q[2].second, "%zz");
  EXPECT_EQ(q[3], (std::pair<std::string, std::string>{"d", ""}));
  EXPECT_EQ(q[4].second, "x");
  EXPECT_EQ(mc::parse_url_state("?panel=perf&panel=sim").panel, "perf");  // the first wins, as get()
}

TEST(UrlState, StepsOutOfRangeOrNotNumbersAreIgnoredAndSaid) {
  // std::atoi("99999999999") is undefined behaviour; "-1", "2.5", " 3" and "1e3" are not step numbers.
  for (const char* bad : {"0", "-1", "2.5", "%203", "1e3", "99999999999", "10001", ""}) {
    const mc::UrlState s = mc::parse_url_state(std::string("?scenario=dgx1-2016&step=") + bad);
    EXPECT_EQ(s.step, -1) << bad;
    ASSERT_EQ(s.problems.size(), 1u) << bad;
    EXPECT_NE(s.problems[0].find("use 1 to 10000"), std::string::npos) << s.problems[0];
  }
  EXPECT_EQ(mc::parse_url_state("?scenario=dgx1-2016&step=10000").step, 9999);
  EXPECT_EQ(mc::parse_url_step("00007"), 6);
}

TEST(UrlState, IdsThatArePathsAreRefused) {
  for (const char* bad : {"../secrets", "a/b", "%2e%2e%2fx", "..", ".hidden"}) {
    const mc::UrlState s = mc::parse_url_state(std::string("?scenario=") + bad);
    EXPECT_EQ(s.scenario, "") << bad;
    ASSERT_EQ(s.problems.size(), 1u) << bad;
    EXPECT_NE(s.problems[0].find("not a scenario id"), std::string::npos) << s.problems[0];
  }
  EXPECT_EQ(mc::parse_url_state("?panel=lab/scaling").panel, "lab/scaling");
  // A step without a scenario is said, not silently dropped.
  const mc::UrlState s = mc::parse_url_state("?step=2");
  EXPECT_EQ(s.step, -1);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("add scenario=ID"), std::string::npos);
}

TEST(UrlState, HugeQueriesAreReadOnlyInPart) {
  const std::string q = "?scenario=gpt3-2020&x=" + std::string(1 << 20, 'y');
  const mc::UrlState s = mc::parse_url_state(q);
  EXPECT_EQ(s.scenario, "gpt3-2020");
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("only the first 4096"), std::string::npos);
  // A problem quotes at most 40 bytes of what it ignored, escaped.
  const mc::UrlState t = mc::parse_url_state("?panel=" + std::string(3000, '\x01'));
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_LT(t.problems[0].size(), 300u);
  EXPECT_NE(t.problems[0].find("%01"), std::string::npos);
}

// What the explorer writes into the address as the class moves is what it reads back: the same panel, tab,
// scenario and step.
mc::UrlState url(const std::string& panel, const std::string& scenario = "", int step = -1) {
  mc::UrlState s;
  s.panel = panel, s.scenario = scenario, s.step = step;
  return s;
}

TEST(UrlState, WhatTheExplorerWritesReadsBack) {
  const mc::UrlState states[] = {url(""),
                                 url("story"),
                                 url("catalog/systems"),
                                 url("capital/waterfall", "openai-lp-2019", 1),
                                 url("lab/scaling", "predictable-scaling", mc::kMaxUrlStep - 1),
                                 url("", "dgx1-2016", 0),
                                 url("", "dgx1-2016")};
  for (const mc::UrlState& st : states) {
    const std::string q = mc::to_query(st);
    EXPECT_EQ(mc::parse_url_state(q), st) << q;
    EXPECT_EQ(mc::to_query(mc::parse_url_state(q)), q);
  }
  EXPECT_EQ(mc::to_query(url("capital/waterfall", "openai-lp-2019", 1)),
            "?panel=capital/waterfall&scenario=openai-lp-2019&step=2");
}

// A scenario= value that is not an id names no made-up id as the fix (it once suggested "gpt3-2020", which
// is no scenario): it keeps the value, and the app names the real ids nearest it.
TEST(UrlState, AMalformedScenarioIdIsKeptForSuggestions) {
  const mc::UrlState s = mc::parse_url_state("?scenario=openai+lp+2019");
  EXPECT_EQ(s.scenario, "");
  EXPECT_EQ(s.rejected_scenario, "openai lp 2019");
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0].find("gpt3-2020"), std::string::npos) << s.problems[0];
  EXPECT_EQ(mc::parse_url_state("?scenario=" + std::string(500, 'x') + "/").rejected_scenario.size(), 64u);
}

TEST(UrlState, TheClosestIdIsNearEnoughOrNone) {
  const std::vector<std::string> ids = {"story", "capital", "catalog", "perf", "openai-lp-2019", "dgx1-2016"};
  EXPECT_EQ(mc::closest_id("Story", ids), "story");  // case is not a spelling mistake
  EXPECT_EQ(mc::closest_id("catalgo", ids), "catalog");
  EXPECT_EQ(mc::closest_id("openai lp 2019", ids), "openai-lp-2019");
  EXPECT_EQ(mc::closest_id("bogus", ids), "");
  EXPECT_EQ(mc::closest_id("", ids), "");  // nothing asked: no suggestion beyond 3 edits of "perf"
  EXPECT_EQ(mc::edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
