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

// An edited config travels as its differences from the panel's default, readable in the link, and reads
// back to the same config (hand-written expectations: the encoding is the contract a shared link relies on).
TEST(UrlState, AnEditedConfigIsItsDifferencesAndReadsBack) {
  const nlohmann::json base = {{"model", {{"preset", "gpt3-175b"}}},
                               {"cluster", {{"preset", "azure-openai-2020"}, {"gpus", 1024}}},
                               {"parallel", {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"schedule", "1f1b"}}}};
  nlohmann::json edited = base;
  edited["parallel"]["tp"] = 4;
  edited["parallel"]["dp"] = 16;
  edited["parallel"].erase("schedule");
  edited["cluster"]["price_per_gpu_hour_usd"] = 2.5;
  edited["software"] = "deepspeed-2020";
  edited["training"] = {{"precision", "bf16"}, {"note", "a b,c"}, {"layers_per_stage", {3, 5}}};
  edited["empty"] = nlohmann::json::object();  // a panel's empty section: the same as absent
  const std::string e = mc::encode_config_edits(base, edited);
  EXPECT_EQ(e,
            "cluster.price_per_gpu_hour_usd:2.5,parallel.dp:16,parallel.tp:4,~parallel.schedule,"
            "software:deepspeed-2020,training:{\"layers_per_stage\":[3,5],\"note\":\"a b,c\","
            "\"precision\":\"bf16\"}");
  nlohmann::json expected = edited;
  expected.erase("empty");
  EXPECT_EQ(mc::apply_config_edits(base, e), expected);
  EXPECT_EQ(mc::encode_config_edits(base, base), "") << "the default config adds nothing to a link";
  // A word JSON would read as something else stays a string.
  nlohmann::json words = base;
  words["software"] = "true";
  words["cluster"]["preset"] = "1e3";
  EXPECT_EQ(mc::apply_config_edits(base, mc::encode_config_edits(base, words)), words);
  // A whole number a typed config holds as a double is written as typed, and reads back equal.
  nlohmann::json gbps = base;
  gbps["cluster"]["node_network_Gbps"] = 100.0;
  EXPECT_EQ(mc::encode_config_edits(base, gbps), "cluster.node_network_Gbps:100");
  EXPECT_EQ(mc::apply_config_edits(base, "cluster.node_network_Gbps:100"), gbps);

  // In the address: written with ',' and ':' as they are, and read back to the same state.
  mc::UrlState s;
  s.panel = "perf";
  s.present = true;
  s.edits = {{"estimate", e}};
  const std::string q = mc::to_query(s);
  EXPECT_EQ(q.find("?panel=perf&present=1&edits.estimate=cluster.price_per_gpu_hour_usd:2.5,parallel.dp:16"), 0u) << q;
  const mc::UrlState back = mc::parse_url_state(q);
  EXPECT_TRUE(back.problems.empty()) << back.problems.front();
  EXPECT_EQ(back, s);
}

// A malformed edits list is refused whole, with what is wrong and what to do; the rest of the link opens.
TEST(UrlState, MalformedEditsAreRefusedWithAReason) {
  struct Case {
    const char* query;
    const char* says;
  };
  const Case cases[] = {
      {"?panel=perf&edits=parallel.tp", "has no value"},
      {"?panel=perf&edits=parallel..tp:4", "has no path of keys"},
      {"?panel=perf&edits=parallel.tp:4,", "end with ','"},
      {"?panel=perf&edits=parallel.tp:[1,2", "unclosed quote or bracket"},
      {"?panel=perf&edits=parallel.tp:4,parallel.tp.x:1", "is not a section"},
      {"?panel=perf&edits=parallel.tp:a%20b", "neither a word nor JSON"},
      {"?panel=perf&edits=~parallel.tp:4", "cannot also give it a value"},
      {"?panel=perf&edits=x:\"a\"b", "is not followed by ','"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.query);
    const mc::UrlState s = mc::parse_url_state(c.query);
    EXPECT_EQ(s.panel, "perf");
    EXPECT_TRUE(s.edits.empty());
    ASSERT_EQ(s.problems.size(), 1u);
    EXPECT_NE(s.problems[0].find(c.says), std::string::npos) << s.problems[0];
    EXPECT_NE(s.problems[0].find("copy the link again"), std::string::npos) << s.problems[0];
    EXPECT_THROW(mc::apply_config_edits(nlohmann::json::object(), mc::url_decode(std::string(c.query).substr(18))),
                 std::invalid_argument);
  }
  EXPECT_THROW(mc::apply_config_edits(nlohmann::json::object(), std::string(mc::kMaxEditsBytes + 1, 'a')),
               std::invalid_argument);
}

// Every part of the explorer's state travels under its own edits.PART parameter, in the order given; a bare
// edits= (the links of before) is the "estimate" part's; a part named twice keeps the first; a part name that
// is not a plain word is refused with the fix, and the rest of the link opens.
TEST(UrlState, EachPartOfTheStateHasItsOwnEdits) {
  const mc::UrlState s = mc::parse_url_state(
      "?panel=run&edits.simulate=cluster.nic_gbps:100&edits.run=days:60&edits=parallel.tp:4"
      "&edits.run=days:5&edits.simulate.x=a:1&edits.zero=");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"simulate", "cluster.nic_gbps:100"}, {"run", "days:60"}, {"estimate", "parallel.tp:4"}};
  EXPECT_EQ(s.edits, want);
  ASSERT_EQ(s.problems.size(), 1u) << "edits.zero= is empty: nothing changed, nothing to say";
  EXPECT_NE(s.problems[0].find("edits.\"simulate.x\" was ignored"), std::string::npos) << s.problems[0];
  EXPECT_NE(s.problems[0].find("copy the link again"), std::string::npos) << s.problems[0];
  // Written back in the same order, each under its own name, and read back the same.
  const std::string q = mc::to_query(s);
  EXPECT_EQ(q, "?panel=run&edits.simulate=cluster.nic_gbps:100&edits.run=days:60&edits.estimate=parallel.tp:4");
  EXPECT_EQ(mc::parse_url_state(q).edits, want);
}
