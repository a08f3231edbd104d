// perf_request_test.cpp - the estimate config's codec (perf/perf_request.h): every config the project ships
// or publishes survives parse_request -> to_json unchanged (presets stay presets), the model resolved from the
// request is the one resolved from the file, and a refused key is named where it is, with its range.
#include "core/json_doc.h"
#include "perf/perf.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using mc::test::catalog;
using nlohmann::json;

// Every object in the project's configs, scenarios and published runs that is an estimate config (it has a
// "model" and a "cluster"), with only the estimate's keys (a simulate config adds its own sections).
void collect(const json& j, std::vector<json>& out) {
  if (j.is_object() && j.contains("model") && j.contains("cluster") && j["model"].is_object()) {
    json c = json::object();
    for (const std::string& k : mc::perf::request_keys(""))
      if (j.contains(k)) c[k] = j[k];
    out.push_back(c);
  }
  if (j.is_structured())
    for (const auto& v : j) collect(v, out);
}

std::vector<json> shipped_configs() {
  std::vector<json> out;
  namespace fs = std::filesystem;
  for (const char* dir : {"/assets/configs", "/scenarios", "/tests/data/validation"})
    for (const auto& e : fs::directory_iterator(std::string(MC_SOURCE_DIR) + dir))
      if (e.path().extension() == ".json") collect(mc::JsonDoc::load(e.path().string()).value(), out);
  return out;
}

std::string refusal(const json& config) {
  try {
    (void)mc::perf::parse_request(config, "t.json");
  } catch (const mc::LoadError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PerfRequest, EveryShippedConfigSurvivesTheCodec) {
  int read = 0;
  for (const json& c : shipped_configs()) {
    mc::perf::Request r;
    try {
      r = mc::perf::parse_request(c, "shipped");
    } catch (const mc::LoadError&) {
      continue;  // a config a test or scenario ships to be refused
    }
    ++read;
    EXPECT_EQ(mc::perf::to_json(r), c) << c.dump();
  }
  EXPECT_GE(read, 15) << "the shipped configs and scenarios hold a score of estimate configs";
}

TEST(PerfRequest, TheRequestResolvesAsTheFileDoes) {
  int compared = 0;
  for (const json& c : shipped_configs()) {
    mc::perf::Config from_file, from_request;
    const bool layout = c.contains("parallel");  // a search config has none
    try {
      from_file = mc::perf::parse_config(catalog(), c, "file", layout);
    } catch (const mc::LoadError&) {
      continue;
    }
    from_request = mc::perf::parse_config(catalog(), mc::perf::parse_request(c, "shipped"), "request", layout);
    if (!layout) {  // the search's config: the machine and the model it searches over
      EXPECT_EQ(from_file.cluster.gpus(), from_request.cluster.gpus());
      EXPECT_EQ(from_file.model.layers * 1LL * from_file.model.hidden,
                from_request.model.layers * 1LL * from_request.model.hidden);
    } else {
      const mc::perf::Estimate a = mc::perf::estimate(from_file), b = mc::perf::estimate(from_request);
      EXPECT_EQ(mc::perf::to_json(a, from_file), mc::perf::to_json(b, from_request)) << c.dump();
    }
    ++compared;
  }
  EXPECT_GE(compared, 10) << "the shipped configs and the scenarios' estimate and search configs";
}

TEST(PerfRequest, OnlyTheKeysSetAreWritten) {
  mc::perf::Request r;
  EXPECT_EQ(mc::perf::to_json(r), json({{"model", json::object()}, {"cluster", json::object()}}));
  r.model.preset = "gpt3-175b";
  r.cluster.gpus = 1024;
  r.parallel.emplace().tp = 8;
  EXPECT_EQ(mc::perf::to_json(r), json::parse(R"({"model": {"preset": "gpt3-175b"}, "cluster": {"gpus": 1024},
                                                  "parallel": {"tp": 8}})"));
}

TEST(PerfRequest, ARefusedKeyIsNamedWithItsRange) {
  const json base = json::parse(R"({"model": {"preset": "gpt3-175b"}, "cluster": {"preset": "azure-openai-2020"}})");
  json c = base;
  c["model"]["layers"] = 0;
  EXPECT_NE(refusal(c).find("model/layers"), std::string::npos) << refusal(c);
  EXPECT_NE(refusal(c).find("between 1 and 100000"), std::string::npos) << refusal(c);
  c = base;
  c["parallel"] = {{"schedule", "zigzag"}};
  EXPECT_NE(refusal(c).find("expected one of gpipe, 1f1b, interleaved"), std::string::npos) << refusal(c);
  c = base;
  c["cluster"]["gpu_count"] = 8;
  EXPECT_NE(refusal(c).find("gpu_count"), std::string::npos) << refusal(c);
  c = base;
  c["parallel"] = {{"layers_per_stage", 4}};
  EXPECT_NE(refusal(c).find("a list of layer counts"), std::string::npos) << refusal(c);
  c = base;
  c["training"] = {{"tokens", "many"}};
  EXPECT_NE(refusal(c).find("training/tokens"), std::string::npos) << refusal(c);
  EXPECT_EQ(refusal(base), "") << "a preset alone is a request";
}
