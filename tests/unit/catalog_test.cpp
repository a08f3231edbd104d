// The shipped catalog loads, its values match the published datasheets (../shared/validation), and
// malformed catalog files are refused with the file, line/column and key.
#include "catalog/catalog.h"
#include "core/format.h"
#include "core/json_doc.h"
#include "test_helpers.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

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
  EXPECT_DOUBLE_EQ(g.find("v100-32gb")->get("peak_fp16_tensor_flops"),
                   mc::test::published_value("hw-v100-sxm2", "fp16_tensor_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("peak_fp32_flops"),
                   mc::test::published_value("hw-v100-sxm2", "fp32_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("hbm_bandwidth_GBps"),
                   mc::test::published_value("hw-v100-sxm2", "hbm2_bandwidth"));
  EXPECT_DOUBLE_EQ(g.find("v100-16gb")->get("nvlink_bandwidth_GBps"),
                   mc::test::published_value("hw-v100-sxm2", "nvlink_total_bidirectional"));
  EXPECT_DOUBLE_EQ(g.find("p100-16gb")->get("peak_fp16_tensor_flops"),
                   mc::test::published_value("hw-p100-sxm2", "fp16_peak") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("p100-16gb")->get("hbm_bandwidth_GBps"),
                   mc::test::published_value("hw-p100-sxm2", "hbm2_bandwidth"));
  EXPECT_DOUBLE_EQ(g.find("a100-80gb")->get("peak_bf16_tensor_flops"),
                   mc::test::published_value("hw-a100", "fp16_bf16_tensor_dense") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("a100-40gb")->get("hbm_bandwidth_GBps"),
                   mc::test::published_value("hw-a100", "hbm_bandwidth_40GB"));
  EXPECT_DOUBLE_EQ(g.find("a100-80gb")->get("hbm_bandwidth_GBps"),
                   mc::test::published_value("hw-a100", "hbm_bandwidth_80GB_SXM"));
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("peak_bf16_tensor_flops"),
                   mc::test::published_value("hw-h100-sxm", "bf16_tensor_dense") * 1e12);
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("hbm_bandwidth_GBps"),
                   mc::test::published_value("hw-h100-sxm", "hbm3_bandwidth") * 1000);
  EXPECT_DOUBLE_EQ(g.find("h100-80gb")->get("nvlink_bandwidth_GBps"),
                   mc::test::published_value("hw-h100-sxm", "nvlink_total_bidirectional"));
}

TEST(Catalog, TheAzureSupercomputerAsAnnounced) {
  const mc::Catalog& c = catalog();
  const mc::Record* cl = c.table("clusters")->find("azure-openai-2020");
  ASSERT_NE(cl, nullptr);
  EXPECT_DOUBLE_EQ(cl->get("gpus"), mc::test::published_value("hw-openai-azure-supercomputer-2020", "gpus"));
  EXPECT_DOUBLE_EQ(cl->get("cpu_cores"),
                   mc::test::published_value("hw-openai-azure-supercomputer-2020", "cpu_cores (>)"));
  EXPECT_DOUBLE_EQ(cl->get("network_per_server_Gbps"),
                   mc::test::published_value("hw-openai-azure-supercomputer-2020", "network_per_gpu_server"));
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
          if (f.unit == "year") {
            EXPECT_EQ(v->value, std::floor(v->value)) << t.name << "/" << r.id;
          }
          if (f.unit == "date") {
            EXPECT_FALSE(v->date.empty()) << t.name << "/" << r.id;
          }
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

// ---- one fact, one copy (review B8, B9, B14, B15, A6) ------------------------------------------------

// The same quantity of the same thing must not be typed into two tables: the copies drift apart and carry
// different confidences (the V100 cloud price was "inferred" on the Train panel and "assumed" on Capital).
// A value another table holds is written {"from": "table/record/key"}. Generic check: any field key with
// the same typed value in records of two different tables (years and dates aside, which coincide freely).
TEST(CatalogOneFact, NoQuantityIsTypedIntoTwoTables) {
  const mc::Catalog& c = catalog();
  std::map<std::pair<std::string, double>, std::vector<std::string>> typed;  // (key, value) -> table/record
  for (const auto& t : c.tables)
    for (const auto& r : t.records)
      for (const auto& [k, v] : r.values) {
        const std::string unit = t.field(k)->unit;
        if (!v.from.empty() || unit == "year" || unit == "date") continue;
        typed[{k, v.value}].push_back(t.name + "/" + r.id);
      }
  for (const auto& [kv, where] : typed) {
    std::set<std::string> tables;
    for (const auto& w : where) tables.insert(w.substr(0, w.find('/')));
    if (tables.size() < 2) continue;
    std::string list;
    for (const auto& w : where) list += " " + w;
    ADD_FAILURE() << kv.first << " = " << kv.second << " is typed in" << list
                  << ": keep one copy and refer to it with {\"from\": \"table/record/" << kv.first << "\"}";
  }
}

// B8: $3.06 per V100-hour is one fact: the Azure NCv3 list price (4 x V100, 12.24 USD/h) per GPU, inferred.
// The cluster the Train panel costs runs on refers to it, so both panels show one value, one confidence.
TEST(CatalogOneFact, TheV100CloudPriceHasOneCopy) {
  const mc::Catalog& c = catalog();
  const mc::Sourced* price = c.table("prices")->find("v100-cloud-on-demand")->find("usd_per_gpu_hour");
  const mc::Sourced* azure = c.table("clusters")->find("azure-openai-2020")->find("usd_per_gpu_hour");
  ASSERT_NE(price, nullptr);
  ASSERT_NE(azure, nullptr);
  EXPECT_DOUBLE_EQ(price->value, 12.24 / 4);
  EXPECT_EQ(price->confidence, mc::Confidence::inferred);
  EXPECT_EQ(price->source, "azure-vm-pricing");
  EXPECT_TRUE(price->from.empty());
  EXPECT_EQ(azure->from, "prices/v100-cloud-on-demand/usd_per_gpu_hour");
  EXPECT_EQ(azure->value, price->value);
  EXPECT_EQ(azure->confidence, price->confidence);
  EXPECT_EQ(azure->source, price->source);
  EXPECT_EQ(azure->note, price->note);
  // An owned machine priced at that rate is an assumption, though the rate itself is inferred.
  const mc::Sourced* dgx = c.table("clusters")->find("dgx2h-2019")->find("usd_per_gpu_hour");
  EXPECT_EQ(dgx->value, price->value);
  EXPECT_EQ(dgx->confidence, mc::Confidence::assumed);
}

// B9: GPT-4's GPU count is one leaked figure (SemiAnalysis: about 25,000 A100s), with one confidence.
TEST(CatalogOneFact, Gpt4GpuCountIsOneFact) {
  const mc::Catalog& c = catalog();
  const mc::Sourced* run = c.table("runs")->find("gpt4-2022")->find("gpus");
  const mc::Sourced* cluster = c.table("clusters")->find("gpt4-2022")->find("gpus");
  EXPECT_EQ(run->value, 25000);
  EXPECT_EQ(cluster->value, run->value);
  EXPECT_EQ(cluster->confidence, run->confidence);
  EXPECT_EQ(cluster->source, run->source);
  EXPECT_EQ(run->source, "semianalysis-gpt4");
}

// B9: one article, one sources.json entry. Two entries are the same article when their URLs name the same
// page (scheme, "www."-style subdomains and a trailing slash aside) or their titles agree once an
// author prefix ("Patel & Wong, ...") is dropped.
TEST(CatalogSources, NoArticleIsListedTwice) {
  auto page = [](std::string u) {
    for (const char* scheme : {"https://", "http://"})
      if (u.rfind(scheme, 0) == 0) u = u.substr(std::string(scheme).size());
    std::string host = u.substr(0, u.find('/')), path = u.find('/') == std::string::npos ? "" : u.substr(u.find('/'));
    // The registrable domain: the last two labels (newsletter.semianalysis.com -> semianalysis.com).
    size_t dot = host.rfind('.');
    if (dot != std::string::npos && dot > 0) dot = host.rfind('.', dot - 1);
    if (dot != std::string::npos) host = host.substr(dot + 1);
    while (!path.empty() && path.back() == '/') path.pop_back();
    std::string out = host + path;
    for (char& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  auto title = [](std::string t) {
    const size_t comma = t.find(", ");
    if (comma != std::string::npos) {
      const std::string who = t.substr(0, comma);
      if (who.find(" et al.") != std::string::npos || who.find(" & ") != std::string::npos ||
          who.find(" and ") != std::string::npos)
        t = t.substr(comma + 2);
    }
    for (char& ch : t) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return t;
  };
  std::map<std::string, std::string> by_page, by_title;
  for (const auto& s : catalog().sources) {
    if (!s.url.empty()) {
      auto [it, fresh] = by_page.emplace(page(s.url), s.id);
      EXPECT_TRUE(fresh) << s.id << " and " << it->second << " are the same page: merge them";
    }
    auto [it, fresh] = by_title.emplace(title(s.title), s.id);
    EXPECT_TRUE(fresh) << s.id << " and " << it->second << " have the same title: merge them";
  }
}

// B10: seed notes give Lambda's estimate as $4.6M and, separately and unattributed, "other estimates range
// $500K-$4.6M". The low end is not Lambda's and not a reported figure of a named source.
TEST(CatalogOneFact, TheLowGpt3CostEstimateIsNotCreditedToLambda) {
  const mc::Table& p = *catalog().table("prices");
  EXPECT_EQ(p.find("gpt3-lambda-estimate")->get("cost_usd"), 4.6e6);
  const mc::Sourced* low = p.find("gpt3-low-estimate")->find("cost_usd");
  EXPECT_EQ(low->value, 5e5);
  EXPECT_NE(low->source, "lambda-gpt3-cost");
  EXPECT_NE(low->confidence, mc::Confidence::reported);
}

// B14: one TPU v3 peak. The per-core price row derives from the per-chip device row (two cores per chip).
TEST(CatalogOneFact, TpuV3PeakPerCoreIsHalfTheChip) {
  const mc::Catalog& c = catalog();
  const mc::Record& chip = *c.table("gpus")->find("tpu-v3");
  const mc::Sourced* core = c.table("prices")->find("tpu-v3-core-hour")->find("peak_flops_per_s");
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->from, "gpus/tpu-v3/peak_bf16_tensor_flops");
  EXPECT_DOUBLE_EQ(core->value, chip.get("peak_bf16_tensor_flops") / chip.get("sm_count"));
  EXPECT_EQ(core->confidence, mc::Confidence::inferred) << "derived by us from the chip's reported peak";
}

// B15: which V100 the 2020 Azure machine had is an assumption (our sources say only "V100"); the cluster
// and its server carry it as one sourced, assumed fact.
TEST(CatalogOneFact, TheAzureMachinesGpuIsMarkedAssumed) {
  const mc::Catalog& c = catalog();
  const mc::Record& cl = *c.table("clusters")->find("azure-openai-2020");
  const mc::Record& srv = *c.table("systems")->find("azure-openai-2020-server");
  EXPECT_EQ(cl.text_or("gpu", ""), "v100-32gb");
  EXPECT_EQ(srv.text_or("gpu", ""), "v100-32gb");
  for (const mc::Record* r : {&cl, &srv}) {
    const mc::Sourced* g = r->text_source("gpu");
    ASSERT_NE(g, nullptr) << r->id;
    EXPECT_EQ(g->confidence, mc::Confidence::assumed) << r->id;
    EXPECT_FALSE(g->note.empty()) << r->id;
  }
  EXPECT_EQ(mc::to_json(c)["tables"]["clusters"]["records"][0]["text_sources"]["gpu"]["confidence"], "assumed");
}

// A6: GPT-3's compute is one fact, Brown et al. 2020 Table D.1: 3.64E+03 PF-days and 3.14E+23 FLOPs. The
// stored value reads as both, and the chart, the panels and the timeline print it the same way.
TEST(CatalogOneFact, Gpt3ComputeReadsAsThePaperPrintsIt) {
  const mc::Catalog& c = catalog();
  const double flops = c.table("runs")->find("gpt3-2020")->get("train_flops");
  mc::test::expect_published(flops, "gpt3-175b-config-and-compute", "total_training_compute");
  mc::test::expect_published(flops / mc::test::published_value("gpt3-pf-day-unit", "pf_day"),
                             "gpt3-175b-config-and-compute", "total_training_compute_pf_days");
  char sci[32];
  std::snprintf(sci, sizeof sci, "%.3g", flops);
  EXPECT_STREQ(sci, "3.14e+23");
  EXPECT_EQ(mc::format_quantity(flops / 8.64e19, "PF-days"), "3,640 PF-days");  // as the chart labels it
  const std::string summary = c.table("events")->find("gpt3")->text_or("summary", "");
  EXPECT_NE(mc::expand_facts(c, summary).text.find("3,640 PF-days"), std::string::npos) << summary;
}

// Prose names facts rather than typing them: the timeline's numbers are the catalog's, with confidences.
TEST(CatalogTextFacts, SummariesPrintTheCatalogsValues) {
  const mc::Catalog& c = catalog();
  const mc::ExpandedText e =
      mc::expand_facts(c, c.table("events")->find("supercomputer")->text_or("summary", ""), true);
  EXPECT_EQ(e.text.substr(0, 50), "More than 285,000 CPU cores, 10,000 GPUs, 400 Gb/s") << e.text;
  ASSERT_EQ(e.facts.size(), 3u);
  EXPECT_EQ(e.facts[1], c.table("clusters")->find("azure-openai-2020")->find("gpus"));
  // A fact that is not reported carries its mark: the first round's cap is reported, employees' assumed.
  EXPECT_EQ(mc::expand_facts(c, "{capital/lp-employees/cap_multiple}", true).text, "100x ?");
  EXPECT_EQ(mc::expand_facts(c, "{prices/openai-lp-2019/cap_multiple}", true).text, "100x");
  EXPECT_EQ(mc::expand_facts(c, "{events/microsoft-1b/date}: {prices/microsoft-2019/investment_usd}").text,
            "2019-07-22: $1B");
  EXPECT_THROW(mc::expand_facts(c, "{runs/gpt3-2020/nope}"), std::invalid_argument);
  EXPECT_THROW(mc::expand_facts(c, "{runs/gpt3-2020/params|PF-days}"), std::invalid_argument) << "a count is no FLOPs";
  EXPECT_THROW(mc::expand_facts(c, "{runs/gpt3-2020"), std::invalid_argument);
  // Formats for prose: a count in words, a ratio as a percentage or a multiple; each only for its unit.
  EXPECT_EQ(mc::expand_facts(c, "{runs/gpt3-2020/params|words}").text, "175 billion");
  EXPECT_EQ(mc::expand_facts(c, "{runs/gpt4-2022/mfu|percent}").text, "34%");
  EXPECT_EQ(mc::expand_facts(c, "{runs/ai-and-compute-trend/growth|times}").text, "300,000x");
  EXPECT_THROW(mc::expand_facts(c, "{runs/gpt4-2022/mfu|words}"), std::invalid_argument) << "a ratio is no count";
  EXPECT_THROW(mc::expand_facts(c, "{runs/gpt3-2020/params|percent}"), std::invalid_argument);
  // No event summary types a digit the catalog holds: every number in one is a named fact (dates in names
  // and the model names' own digits, "GPT-3", "A100s", "V100s", are not quantities).
  for (const auto& r : c.table("events")->records) {
    const std::string summary = r.text_or("summary", "");
    std::string prose;  // the summary without its {references} and without model and GPU names
    for (size_t at = 0; at < summary.size();) {
      const size_t open = summary.find('{', at);
      prose += summary.substr(at, open == std::string::npos ? std::string::npos : open - at);
      if (open == std::string::npos) break;
      at = summary.find('}', open) + 1;
    }
    for (const char* name :
         {"GPT-4", "GPT-3", "GPT-2", "GPT-1", "A100", "V100", "P100", "DGX-1", "TPU v3", "FP16", "H100"})
      for (size_t k = prose.find(name); k != std::string::npos; k = prose.find(name)) prose.erase(k, std::strlen(name));
    EXPECT_EQ(prose.find_first_of("0123456789"), std::string::npos)
        << r.id << ": a number typed into the summary (name it as {table/record/key}): " << summary;
  }
}

// ---- references that cannot be resolved are refused with the file, the place and the fix ---------------

static mc::LoadError resolve_bad(const std::string& name) {
  std::vector<mc::Table> tables = catalog().tables;
  try {
    tables.push_back(mc::load_table(std::string(MC_TEST_DATA) + "/bad_catalog/" + name, sources()));
    mc::resolve_references(tables);
  } catch (const mc::LoadError& e) {
    return e;
  }
  ADD_FAILURE() << name << " was accepted";
  return mc::LoadError("", 0, 0, "", "");
}

TEST(CatalogErrors, ReferenceToNothing) {
  mc::LoadError e = resolve_bad("from_nothing.json");
  EXPECT_NE(e.file.find("from_nothing.json"), std::string::npos);
  EXPECT_EQ(e.key, "records/0/values/usd_per_gpu_hour");
  EXPECT_EQ(e.line, 8);
  EXPECT_NE(e.message.find("names no record of table prices"), std::string::npos) << e.what();
}

TEST(CatalogErrors, ReferenceToAnotherUnit) {
  mc::LoadError e = resolve_bad("from_other_unit.json");
  EXPECT_NE(e.message.find("does not convert units"), std::string::npos) << e.what();
}

TEST(CatalogErrors, ReferenceSurerThanItsOrigin) {
  mc::LoadError e = resolve_bad("from_surer.json");
  EXPECT_NE(e.message.find("cannot be surer"), std::string::npos) << e.what();
}

TEST(CatalogErrors, ScaledReferenceNeedsANote) {
  mc::LoadError e = resolve_bad("from_scaled_without_note.json");
  EXPECT_NE(e.message.find("add a \"note\""), std::string::npos) << e.what();
}

TEST(CatalogErrors, ProseNamingNoFact) {
  mc::Catalog c = catalog();
  c.tables.push_back(
      mc::load_table(std::string(MC_TEST_DATA) + "/bad_catalog/fact_in_text_names_nothing.json", c.sources));
  try {
    mc::check_text_facts(c);
    ADD_FAILURE() << "accepted";
  } catch (const mc::LoadError& e) {
    EXPECT_EQ(e.key, "records/0/text/summary");
    EXPECT_NE(e.message.find("train_flop"), std::string::npos) << e.what();
  }
}
