// JsonDoc: locations of syntax errors and of bad keys, typed access with clear messages.
#include "core/json_doc.h"

#include <gtest/gtest.h>

using mc::JsonDoc;
using mc::LoadError;

TEST(JsonDoc, SyntaxErrorNamesFileLineAndColumn) {
  const std::string text = "{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}\n";
  try {
    JsonDoc::parse(text, "x.json");
    FAIL() << "expected a LoadError";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, "x.json");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.column, 14);  // the second comma
    EXPECT_NE(std::string(e.what()).find("x.json:3:14"), std::string::npos) << e.what();
  }
}

TEST(JsonDoc, WrongTypeNamesTheKeyAndItsPlace) {
  JsonDoc d = JsonDoc::parse("{\"records\": [\n  {\"id\": \"a\"},\n  {\"id\": 7}\n]}", "t.json");
  auto recs = d.root()["records"].elements();
  EXPECT_EQ(recs[0]["id"].string(), "a");
  try {
    recs[1]["id"].string();
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_EQ(e.key, "records/1/id");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.column, 4);
    EXPECT_NE(e.message.find("expected a string"), std::string::npos);
    EXPECT_NE(e.message.find("7"), std::string::npos);
  }
}

TEST(JsonDoc, MissingKeyIsReportedAtItsParent) {
  JsonDoc d = JsonDoc::parse("{\n \"outer\": {\n   \"x\": 1 }\n}", "m.json");
  try {
    d.root()["outer"]["y"];
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_EQ(e.key, "outer/y");
    EXPECT_EQ(e.line, 2);
    EXPECT_NE(e.message.find("missing required key \"y\""), std::string::npos);
  }
}

TEST(JsonDoc, UnknownKeysAreRejectedWithTheAllowedList) {
  JsonDoc d = JsonDoc::parse("{\"layers\": 2, \"hiden\": 3}", "c.json");
  try {
    d.root().only_keys({"layers", "hidden"});
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_EQ(e.key, "hiden");
    EXPECT_NE(e.message.find("layers, hidden"), std::string::npos);
  }
}

TEST(JsonDoc, RangesAndChoices) {
  JsonDoc d = JsonDoc::parse("{\"n\": 5, \"f\": 2.5, \"s\": \"ring\"}", "r.json");
  EXPECT_EQ(d.root()["n"].integer_in(1, 8), 5);
  EXPECT_THROW(d.root()["n"].integer_in(6, 8), LoadError);
  EXPECT_THROW(d.root()["f"].integer(), LoadError);
  EXPECT_EQ(d.root()["s"].one_of({"ring", "tree"}), "ring");
  EXPECT_THROW(d.root()["s"].one_of({"tree"}), LoadError);
  EXPECT_DOUBLE_EQ(d.root().number_or("missing", 4.0), 4.0);
}

TEST(JsonDoc, ItemsKeepFileOrder) {
  JsonDoc d = JsonDoc::parse("{\"zeta\": 1, \"alpha\": 2, \"mid\": 3}", "o.json");
  auto items = d.root().items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].first, "zeta");
  EXPECT_EQ(items[1].first, "alpha");
  EXPECT_EQ(items[2].first, "mid");
}

TEST(JsonDoc, UnreadableFileSaysSo) {
  try {
    JsonDoc::load("/nonexistent/file.json");
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, "/nonexistent/file.json");
    EXPECT_NE(e.message.find("cannot open"), std::string::npos);
  }
}
