// JsonDoc: locations of syntax errors and of bad keys, typed access with clear messages.
#include "core/json_doc.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

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

// ---- crafted inputs (issue: every parser fuzzed; clean errors for crafted files) -------------------

namespace {
std::string load_error(const std::string& text, const std::function<void(const mc::JsonDoc&)>& use = {}) {
  try {
    mc::JsonDoc d = mc::JsonDoc::parse(text, "crafted.json");
    if (use) use(d);
  } catch (const mc::LoadError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(JsonDocCrafted, DuplicateKeysAreRefusedWithBothPlaces) {
  const std::string e = load_error("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}");
  EXPECT_NE(e.find("crafted.json:3:2"), std::string::npos) << e;           // the second "a"
  EXPECT_NE(e.find("first at line 1, column 2"), std::string::npos) << e;  // the first
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;
  EXPECT_EQ(load_error("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}"), "");  // same key in two objects is fine
}

// A key written with escapes is the key nlohmann stores: "\u0061" repeats "a" (also as a surrogate pair
// for a character outside the BMP), and an escaped key is located by its decoded name.
TEST(JsonDocCrafted, EscapedSpellingsOfAKeyAreOneKey) {
  const std::string e = load_error("{\"a\": 1,\n \"\\u0061\": 2}");
  EXPECT_NE(e.find("crafted.json:2:2"), std::string::npos) << e;
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;
  EXPECT_NE(load_error("{\"\xF0\x9F\x98\x80\": 1, \"\\ud83d\\ude00\": 2}").find("appears twice"), std::string::npos);
  EXPECT_NE(load_error("{\"t\\tab\": 1, \"t\\u0009ab\": 2}").find("appears twice"), std::string::npos);
  EXPECT_EQ(load_error("{\"a\\u0062\": 1, \"ab \": 2}"), "") << "different keys stay different";
  JsonDoc d = JsonDoc::parse("{\"x\": 0,\n  \"line\\nbreak\": \"seven\"}", "esc.json");
  try {
    d.root()["line\nbreak"].number();
    FAIL();
  } catch (const LoadError& err) {
    EXPECT_EQ(err.line, 2) << err.what();  // found by its decoded name, not at the object's line
    EXPECT_EQ(err.column, 3) << err.what();
  }
}

TEST(JsonDocCrafted, NulBytesAreRefusedWhereTheyAre) {
  const std::string text = std::string("{\"a\": 1}\n") + '\0' + "garbage";
  const std::string e = load_error(text);
  EXPECT_NE(e.find("crafted.json:2:1"), std::string::npos) << e;
  EXPECT_NE(e.find("NUL"), std::string::npos) << e;
}

TEST(JsonDocCrafted, HugeIntegersSayOutOfRange) {
  auto read = [](const mc::JsonDoc& d) { (void)d.root()["n"].integer_in(1, 1000); };
  for (const char* v : {"1e308", "1e20", "18446744073709551615", "-9223372036854775808"}) {
    const std::string e = load_error(std::string("{\"n\": ") + v + "}", read);
    EXPECT_NE(e.find("out of range"), std::string::npos) << v << ": " << e;
  }
  EXPECT_NE(load_error("{\"n\": 2.5}", read).find("expected an integer"), std::string::npos);
  EXPECT_EQ(load_error("{\"n\": 1000}", read), "");
}

// Found by tests/fuzz (train_config): nlohmann throws out_of_range (406), not parse_error, for a number
// beyond a double; it escaped JsonDoc as a bare library exception with no place.
TEST(JsonDocCrafted, NumbersBeyondADoubleAreLocated) {
  const std::string e = load_error("{\"a\": 1,\n \"n\": -5e400}");
  EXPECT_NE(e.find("crafted.json:2:7"), std::string::npos) << e;
  EXPECT_NE(e.find("-5e400"), std::string::npos) << e;
  EXPECT_NE(e.find("beyond the range of a double"), std::string::npos) << e;
}

// Every reader recurses over values (the locator, nlohmann's dump and ==): a million "[" overflowed the
// stack (tests/fuzz, json_doc). Refused at the first bracket too deep, before nlohmann parses it.
TEST(JsonDocCrafted, DeepNestingIsRefusedWhereItGoesTooDeep) {
  const std::string e = load_error(std::string(1000000, '[') + std::string(1000000, ']'));
  EXPECT_NE(e.find("crafted.json:1:" + std::to_string(mc::kMaxJsonDepth + 1)), std::string::npos) << e;
  EXPECT_NE(e.find("nested more than 128"), std::string::npos) << e;
  // Brackets inside strings do not count; 128 levels are fine.
  EXPECT_EQ(load_error("{\"a\": \"" + std::string(5000, '[') + "\"}"), "");
  EXPECT_EQ(load_error(std::string(128, '[') + std::string(128, ']')), "");
}

// A file over its kind's limit is refused naming its size and the limit; load() checks the size before
// reading, so a 200 MB file costs nothing (the file here is sparse: nothing is written to the disk).
TEST(JsonDocCrafted, OversizeInputsAreRefusedBeforeParsing) {
  const std::string e = load_error(std::string(mc::kMaxJsonBytes + 1, ' '));
  EXPECT_NE(e.find(std::to_string(mc::kMaxJsonBytes + 1) + " bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 16777216 bytes (16 MiB)"), std::string::npos) << e;
  const std::string path = (std::filesystem::temp_directory_path() / "mc-json-200mb.json").string();
  { std::ofstream(path) << "{}"; }
  std::filesystem::resize_file(path, 200u << 20);
  try {
    (void)mc::JsonDoc::load(path, mc::kMaxConfigBytes);
    ADD_FAILURE() << "a 200 MB config was accepted";
  } catch (const LoadError& err) {
    EXPECT_EQ(err.file, path);
    EXPECT_NE(err.message.find("209715200 bytes"), std::string::npos) << err.what();
    EXPECT_NE(err.message.find("at most 4194304 bytes (4 MiB)"), std::string::npos) << err.what();
  }
  std::filesystem::remove(path);
  EXPECT_EQ(load_error("{\"small\": true}"), "");
}

// The locator stored a full JSON pointer per value: 100 keys of 100 KB nested, with 50,000 elements under
// them, asked for 10 MB per element (500 GB) from a 10 MB file. Pointers are now bounded (each 4 KB, all
// together 8x the text): the file parses, a deep value's error points at its nearest recorded ancestor, and
// a duplicate key in the unrecorded part is still refused.
TEST(JsonDocCrafted, LongKeysNestedDeepDoNotExhaustMemory) {
  const std::string key(100000, 'k');
  std::string text;
  for (int d = 0; d < 100; ++d) text += "{\"" + key + "\": ";
  text += "[";
  for (int n = 0; n < 50000; ++n) text += n ? ",0" : "0";
  text += "]";
  for (int d = 0; d < 100; ++d) text += "}";
  std::string e = load_error(text, [](const mc::JsonDoc& d) {
    mc::JsonCursor c = d.root();
    while (c.is_object()) c = c.items().front().second;
    c.elements().back().fail("too many");
  });
  EXPECT_NE(e.find("too many"), std::string::npos) << e.substr(0, 300);
  EXPECT_NE(e.find("crafted.json:1:1:"), std::string::npos) << e.substr(0, 300);  // the root: nothing nearer
  // {"kk..": [..], "x": 1, "x": 2} as the innermost object, 100 levels down.
  const std::string dup = text.substr(0, text.size() - 100) + ", \"x\": 1, \"x\": 2" + std::string(100, '}');
  e = load_error(dup);
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e.substr(0, 300);
}

TEST(JsonDocCrafted, MessagesQuoteInputEscapedAndBounded) {
  // A 1 MB id with control bytes and invalid UTF-8 is quoted escaped and cut, not echoed whole.
  std::string id(1 << 20, 'x');
  id[3] = '\x01';
  id[5] = '\xff';
  auto use = [&](const mc::JsonDoc& d) { d.root()["id"].fail("unknown id \"" + d.root()["id"].string() + "\""); };
  const std::string e = load_error("{\"id\": \"" + std::string("xxx\\u0001x") + "\"}", use);
  EXPECT_NE(e.find("\\x01"), std::string::npos) << e;
  try {
    throw mc::LoadError("f.json", 1, 1, "id", "unknown id \"" + id + "\"");
  } catch (const mc::LoadError& err) {
    const std::string w = err.what();
    EXPECT_LT(w.size(), 2200u);
    EXPECT_NE(w.find("\\xff"), std::string::npos);
    EXPECT_NE(w.find("more bytes"), std::string::npos);
  }
  // Valid UTF-8 stays as it is.
  try {
    throw mc::LoadError("f.json", 1, 1, "", "Jean Zay \xc3\xa9t\xc3\xa9");
  } catch (const mc::LoadError& err) {
    EXPECT_NE(std::string(err.what()).find("\xc3\xa9t\xc3\xa9"), std::string::npos);
  }
}

// Columns count code points (what an editor shows), also far into a long line of multi-byte text, where
// the column is counted from per-block tallies rather than byte by byte.
TEST(JsonDocCrafted, ColumnsCountCodePointsOnLongLines) {
  for (const size_t n : {size_t(0), size_t(500), size_t(1023), size_t(1024), size_t(5000)}) {
    std::string text = "{\"note\": \"";
    for (size_t i = 0; i < n; ++i) text += i % 3 ? "\xc3\xa9" : "a";  // 'e' with an acute accent: 2 bytes
    text += "\", \"x\": \"seven\"}";
    size_t code_points_before_x = 0;         // an independent count: bytes that start a code point
    const size_t x_at = text.find("\"x\"");  // a value is located at its key
    for (size_t k = 0; k < x_at; ++k) code_points_before_x += (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80;
    const JsonDoc doc = JsonDoc::parse(text, "long.json");
    try {
      (void)doc.root()["x"].integer();
      FAIL() << "a string read as an integer";
    } catch (const LoadError& e) {
      EXPECT_EQ(e.line, 1);
      EXPECT_EQ(e.column, int(code_points_before_x) + 1) << n << " accented letters before";
    }
  }
}
