// fuzz_json_doc.cpp - libFuzzer harness of JsonDoc (engine/core/json_doc.h), the reader under every input
// file. Invariants: JsonDoc accepts only what nlohmann::json accepts, with the same value (it adds
// refusals: duplicate keys, NUL bytes, but never accepts more); every key and element it can reach has a
// location inside the text; typed reads either succeed or refuse with a LoadError.
#include "fuzz_common.h"

#include <cmath>

namespace {

void walk(const mc::JsonDoc& doc, const mc::JsonCursor& c, int depth, size_t lines, int* budget) {
  if (--*budget < 0) return;
  const auto [line, col] = doc.where(c.pointer());
  if (line < 0 || col < 0 || size_t(line) > lines + 1) mc::fuzz::finding("where() out of the text: " + c.pointer());
  mc::fuzz::expect_refusal_or_success("typed read", [&] {
    const mc::json& v = c.value();
    if (v.is_number()) {
      if (!std::isfinite(c.number())) mc::fuzz::finding("a JSON number read as non-finite");
      (void)c.integer_in(-1000000, 1000000);
    } else if (v.is_string()) {
      (void)c.string();
      (void)c.one_of({"a", "b"});
    } else if (v.is_boolean()) {
      (void)c.boolean();
    }
  });
  if (depth > 64) return;
  if (c.is_object()) {
    mc::fuzz::expect_refusal_or_success("only_keys", [&] { c.only_keys({"model", "cluster"}); });
    for (const auto& [k, child] : c.items()) {
      if (!c.has(k)) mc::fuzz::finding("items() lists a key has() does not find");
      walk(doc, child, depth + 1, lines, budget);
    }
    mc::fuzz::expect_refusal_or_success("missing key", [&] { (void)c["\x01no such key"]; });
  } else if (c.is_array()) {
    for (const auto& e : c.elements()) walk(doc, e, depth + 1, lines, budget);
  }
}

}  // namespace

MC_FUZZ_TARGET(json_doc) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mc::fuzz::expect_refusal_or_success("JsonDoc::parse", [&] {
    const mc::JsonDoc doc = mc::JsonDoc::parse(text, "fuzz.json");
    // Differential: nlohmann's own parser must accept it too, with an equal value.
    mc::json ref;
    try {
      ref = mc::json::parse(text);
    } catch (const std::exception& e) {
      mc::fuzz::finding(std::string("JsonDoc accepted what nlohmann refuses: ") + e.what());
    }
    if (ref != doc.value()) mc::fuzz::finding("JsonDoc's value differs from nlohmann's");
    size_t lines = 1;
    for (char ch : text) lines += ch == '\n';
    int budget = 20000;  // values visited per input: keeps one execution fast on a large input
    walk(doc, doc.root(), 0, lines, &budget);
  });
  return 0;
}
