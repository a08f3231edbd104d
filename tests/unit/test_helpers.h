// test_helpers.h - what the unit tests share, once: the shipped catalog (assets/), loaded once, and the
// published cases of tests/data/validation/public-cases.json (stripped from ../shared/validation by
// scripts/strip_validation.py), parsed once, with one way to check a computed number against one.
//
//   const mc::Catalog& cat = mc::test::catalog();
//   EXPECT_PUBLISHED(kaplan_loss_N(1e9), "kaplan-power-laws", "L(N=1e9)");   // within its tolerance
//   double cap = mc::test::published_value("openai-lp-cap", "first_round_return_cap");
//
// A case or quantity that is not in the file is a failure that names it (never a skip): a test written
// against a published number must not pass silently when the number goes missing.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace mc::test {

inline const mc::Catalog& catalog() {
  static const mc::Catalog c = mc::load_catalog(MC_SOURCE_DIR "/assets");
  return c;
}

inline std::string public_cases_path() { return std::string(MC_VALIDATION_DIR) + "/public-cases.json"; }

// The whole file (an array of cases); a missing or malformed file throws LoadError naming it.
inline const nlohmann::json& public_cases() {
  static const nlohmann::json j = mc::JsonDoc::load(public_cases_path()).value();
  return j;
}

// One case by id; throws std::out_of_range naming the id and the file when there is none.
inline const nlohmann::json& public_case(const std::string& id) {
  for (const auto& c : public_cases())
    if (c.value("id", "") == id) return c;
  throw std::out_of_range("no case \"" + id + "\" in " + public_cases_path());
}

struct Published {
  double value = 0, tolerance = 0;
  bool relative = true;
  // The distance allowed from `value`: the case's tolerance, plus 1e-9 relative (1e-12 absolute) so an
  // exact quantity (tolerance 0) survives the last bits of floating point.
  double allowed() const { return relative ? (tolerance + 1e-9) * std::fabs(value) : tolerance + 1e-12; }
};

// One expected quantity of one case; throws std::out_of_range naming both when it is absent.
inline Published published(const std::string& id, const std::string& quantity) {
  for (const auto& e : public_case(id).at("expected"))
    if (e.value("quantity", "") == quantity) {
      Published p;
      p.value = e.at("value").get<double>();
      if (e.contains("tolerance")) {
        p.tolerance = e["tolerance"].value("value", 0.0);
        p.relative = e["tolerance"].value("type", "relative") == "relative";
      }
      return p;
    }
  throw std::out_of_range("case \"" + id + "\" in " + public_cases_path() + " has no quantity \"" + quantity + "\"");
}

inline double published_value(const std::string& id, const std::string& quantity) {
  return published(id, quantity).value;
}

// Checks `got` against the published quantity; a missing case or quantity is a failure naming it.
inline void expect_published(double got, const std::string& id, const std::string& quantity) {
  try {
    const Published p = published(id, quantity);
    EXPECT_NEAR(got, p.value, p.allowed()) << id << " / " << quantity;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

}  // namespace mc::test

// A macro so that a failure points at the test's line, not this header's.
#define EXPECT_PUBLISHED(actual, id, quantity)                \
  do {                                                        \
    SCOPED_TRACE(std::string(id) + " / " + (quantity));       \
    ::mc::test::expect_published((actual), (id), (quantity)); \
  } while (0)
