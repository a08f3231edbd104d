// The shipped catalog loads, its values match the published datasheets (../shared/validation), and
// malformed catalog files are refused with the file, line/column and key.
#include "catalog/catalog.h"
#include "core/json_doc.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace {

const std::string kAssets = std::string(MC_SOURCE_DIR) + "/assets";

using mc::test::catalog;


}  // namespace

TEST(Catalog, LoadsEveryTableAndSource) {
  const mc::Catalog& c = catalog();
  ASSERT_NE(c.table("gpus"), nullptr);
  ASSERT_NE(c.table("systems"), nullptr);
  for (const char* id : {"p100-16gb", "v100-16gb", "v100-32gb", "a100-40gb", "a100-80gb", "h100-80gb"})
    EXPECT_NE(c.table("gpus")->find(id), nullptr) << id;
  for (const char* id : {"dgx1-p100", "dgx1-v100", "dgx2", "azure-openai-2020-server"})
    EXPECT_NE(c.table("systems")->find(id), nullptr) << id;
  // Every value names a known source and says how sure we are.
  for (const auto& t : c.tables)
    for (const auto& r : t.records)
      for (const auto& [k, v] : r.values) {
        EXPECT_NE(c.source(v.source), nullptr) << t.name << "/" << r.id << "/" << k;
        EXPECT_TRUE(std::isfinite(v.value)) << r.id << "/" << k;
      }
}

TEST(Catalog, GpuPeaksMatchTheDatasheets) {
  const mc::Table& g = *catalog().table("gpus");
  EXPECT_DOUBLE_EQ(g.find("v100-32gb")->get("peak_fp16_tensor_flops"), mc::test::published_value("hw-v100-sxm2", "fp16_tensor_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("peak_fp32_flops"), mc::test::published_value("hw-v100-sxm2", "fp32_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("hbm_bandwidth_GBps"), mc::test::published_value("hw-v100-sxm2", "hbm2_bandwidth"));
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("nvlink_bandwidth_GBps"), mc::test::published_value("hw-v100-sxm2", "nvlink_total_bidirectional"));
  EXPECT_DOUBLE_EQ(g.find("p100-16gb")->get("peak_fp16_tensor_flops"), mc::test::published_value("hw-p100-sxm2", "fp16_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("p100-16gb")->get("hbm_bandwidth_GBps"), mc::test::published_value("hw-p100-sxm2", "hbm2_bandwidth"));
  EXPECT_DOUBLE_EQ(g.find("a100-80gb")->get("peak_bf16_tensor_flops"), mc::test::published_value("hw-a100", "fp16_bf16_tensor_dense") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("a100-40gb")->get("hbm_bandwidth_GBps"), mc::test::published_value("hw-a100", "hbm_bandwidth_40GB"));
  EXPECT_DOUBLE_EQ(g.find("a100-80gb")->get("hbm_bandwidth_GBps"), mc::test::published_value("hw-a100", "hbm_bandwidth_80GB_SXM"));
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("peak_bf16_tensor_flops"), mc::test::published_value("hw-h100-sxm", "bf16_tensor_dense") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("hbm_bandwidth_GBps"), mc::test::published_value("hw-h100-sxm", "hbm3_bandwidth") * 1000);
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("nvlink_bandwidth_GBps"), mc::test::published_value("hw-h100-sxm", "nvlink_total_bidirectional"));
}

TEST(Catalog, TheAzureSupercomputerAsAnnounced) {
  const mc::Catalog& c = catalog();
  const mc::Record* cl = c.table("clusters")->find("azure-openai-2020");
  ASSERT_NE(cl, nullptr);
  EXPECT_DOUBLE_EQ(cl->get("gpus"), mc::test::published_value("hw-openai-azure-supercomputer-2020", "gpus"));
  EXPECT_DOUBLE_EQ(cl->get("cpu_cores"), mc::test::published_value("hw-openai-azure-supercomputer-2020", "cpu_cores (>)"));
  EXPECT_DOUBLE_EQ(cl->get("network_per_server_Gbps"), mc::test::published_value("hw-openai-azure-supercomputer-2020", "network_per_gpu_server"));
  // GPUs per server is not public: it must be marked assumed, never reported.
  const mc::Record* srv = c.table("systems")->find("azure-openai-2020-server");
  EXPECT_EQ(srv->find("gpus_per_node")->confidence, mc::Confidence::assumed);
  EXPECT_EQ(srv->find("network_Gbps")->confidence, mc::Confidence::reported);
}

// ---- malformed files ---------------------------------------------------------------------------------

static std::vector<mc::Source> sources() { return catalog().sources; }

static mc::LoadError load_bad(const std::string& name) {
  try {
    mc::load_table(std::string(MC_TEST_DATA) + "/bad_catalog/" + name, sources());
  } catch (const mc::LoadError& e) {
    return e;
  }
  ADD_FAILURE() << name << " was accepted";
  return mc::LoadError("", 0, 0, "", "");
}

TEST(CatalogErrors, SyntaxError) {
  mc::LoadError e = load_bad("syntax.json");
  EXPECT_NE(e.file.find("syntax.json"), std::string::npos);
  EXPECT_EQ(e.line, 11);  // the "]" after a trailing comma
  EXPECT_GT(e.column, 0);
}

TEST(CatalogErrors, ValueOfWrongType) {
  mc::LoadError e = load_bad("wrong_type.json");
  EXPECT_EQ(e.key, "records/0/values/hbm_bytes/value");
  EXPECT_EQ(e.line, 9);
  EXPECT_NE(e.message.find("expected a number"), std::string::npos) << e.what();
}

TEST(CatalogErrors, UnknownSource) {
  mc::LoadError e = load_bad("unknown_source.json");
  EXPECT_EQ(e.key, "records/0/values/hbm_bytes/source");
  EXPECT_NE(e.message.find("no-such-datasheet"), std::string::npos);
}

TEST(CatalogErrors, UndeclaredFieldAndBadConfidence) {
  mc::LoadError e = load_bad("undeclared_field.json");
  EXPECT_EQ(e.key, "records/0/values/hbm_gigabytes");
  mc::LoadError e2 = load_bad("bad_confidence.json");
  EXPECT_EQ(e2.key, "records/0/values/hbm_bytes/confidence");
  EXPECT_NE(e2.message.find("reported, inferred, assumed"), std::string::npos);
}

TEST(CatalogErrors, AssumedValueNeedsANote) {
  mc::LoadError e = load_bad("assumed_without_note.json");
  EXPECT_EQ(e.key, "records/0/values/hbm_bytes");
  EXPECT_NE(e.message.find("note"), std::string::npos);
}

// Dates are kept as the source gives them and shown that way: July 2019 never prints as "2020".
TEST(CatalogDates, ShownAsTheSourceGivesThem) {
  const mc::Table& ev = *catalog().table("events");
  const mc::Sourced* d = ev.find("microsoft-1b")->find("date");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->date, "2019-07-22");
  EXPECT_EQ(mc::display_value(*d, "date"), "2019-07-22");
  EXPECT_EQ(mc::to_json(*d)["value"], "2019-07-22");
  EXPECT_EQ(mc::display_value(*ev.find("dgx1-delivered")->find("date"), "date"), "2016-08");
  // The decimal is the middle of the period, for ordering and plotting only.
  EXPECT_NEAR(d->value, 2019 + (181 + 21.5) / 365.0, 1e-9);
  EXPECT_NEAR(mc::decimal_year_of_date("2016-08"), 2016 + (213 + 15.5) / 366.0, 1e-9);
  EXPECT_DOUBLE_EQ(mc::decimal_year_of_date("2020"), 2020.5);
  for (const char* bad : {"2019-13", "2019-02-29", "19-07", "2019/07", "2019-7", "July 2019", ""})
    EXPECT_THROW(mc::decimal_year_of_date(bad), std::invalid_argument) << bad;
  EXPECT_NO_THROW(mc::decimal_year_of_date("2020-02-29"));
  // No table keeps a fractional year: every "year" field is whole, every "date" field a date.
  for (const auto& t : catalog().tables)
    for (const auto& f : t.fields)
      for (const auto& r : t.records)
        if (const mc::Sourced* v = r.find(f.key)) {
          if (f.unit == "year") EXPECT_EQ(v->value, std::floor(v->value)) << t.name << "/" << r.id;
          if (f.unit == "date") EXPECT_FALSE(v->date.empty()) << t.name << "/" << r.id;
        }
}

TEST(CatalogErrors, DecimalYearIsRefusedWithTheFix) {
  mc::LoadError e = load_bad("decimal_year.json");
  EXPECT_EQ(e.line, 9);
  EXPECT_NE(std::string(e.what()).find("YYYY-MM"), std::string::npos) << e.what();
}

TEST(CatalogErrors, ImpossibleDateIsRefused) {
  mc::LoadError e = load_bad("bad_date.json");
  EXPECT_EQ(e.line, 9);
  EXPECT_NE(std::string(e.what()).find("no day 30"), std::string::npos) << e.what();
}
