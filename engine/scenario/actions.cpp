// actions.cpp - the action registry and the actions that need only the capital model and the UI.
//
// Sections: validation of "set" and of result names; the capital defaults from the catalog; the config
// kinds a scenario can set; initial_state; the registry (add, find, lookup_result); the built-in actions
// (plan, gpt3_priced, waterfall, partnership, trend, fit_power_law, facts, ratio).
#include "scenario/actions.h"

#include "capital/compute_cost.h"
#include "capital/trend.h"
#include "capital/waterfall.h"
#include "catalog/catalog.h"
#include "sim/animation_kind.h"
#include "train/scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace mc::scenario {
namespace {

bool is_capital(const std::string& c) { return c == "plan" || c == "waterfall" || c == "partnership"; }

// Checks `path` against the capital config's keys and `value` against the default's type and range.
void check_capital_set(const JsonCursor& a, const std::string& config, const std::string& path, const json* value) {
  if (path.empty()) {
    if (value && !value->is_object()) a["value"].fail("replacing the whole \"" + config + "\" config needs an object");
    return;
  }
  const json defaults = initial_state(nullptr).configs[config];
  // Arrays (holders, profit_usd) may grow: check only the first component for paths into them.
  std::string top = path.substr(1, path.find('/', 1) == std::string::npos ? std::string::npos : path.find('/', 1) - 1);
  if (!defaults.contains(top)) {
    std::string keys;
    for (const auto& [k, v] : defaults.items()) keys += (keys.empty() ? "" : ", ") + k;
    a["path"].fail("\"" + config + "\" has no key \"" + top + "\"; expected one of: " + keys);
  }
  // Follow the path through the defaults as far as they go: an array takes an index, a number or a
  // string holds no keys (the JSON library would throw its own words at run time).
  const json* cur = &defaults;
  for (size_t start = 1; cur && start <= path.size();) {
    const size_t slash = std::min(path.find('/', start), path.size());
    std::string token;  // unescaped: ~1 is '/', ~0 is '~' (check_pointer allows no other '~')
    for (size_t i = start; i < slash; ++i)
      token += path[i] == '~' && i + 1 < slash ? (path[++i] == '1' ? '/' : '~') : path[i];
    const std::string so_far = path.substr(0, start - 1);
    if (cur->is_array()) {
      if (token.empty() || token.find_first_not_of("0123456789") != std::string::npos)
        a["path"].fail("\"" + so_far + "\" is a list: the part after it is an index (0, 1, ...), not \"" + token +
                       "\"");
      const size_t i = std::stoul(token);
      cur = i < cur->size() ? &(*cur)[i] : nullptr;
    } else if (cur->is_object()) {
      const auto it = cur->find(token);
      cur = it != cur->end() ? &*it : nullptr;
    } else {
      a["path"].fail("\"" + so_far + "\" is a single value (" + cur->dump() + "), which holds no \"" + token + "\"");
    }
    start = slash + 1;
  }
  if (!value || !cur) return;
  const json& d = *cur;
  if (d.is_number() && !value->is_number())
    a["value"].fail("wrong type: \"" + path + "\" is a number, got " + value->dump());
  if (d.is_string() && !value->is_string())
    a["value"].fail("wrong type: \"" + path + "\" is a string, got " + value->dump());
  auto range = [&](double lo, double hi) {
    double x = value->get<double>();
    if (!(x >= lo && x <= hi))
      a["value"].fail("out of range: \"" + path + "\" must be in [" + json(lo).dump() + ", " + json(hi).dump() +
                      "], got " + value->dump());
  };
  if (path == "/utilisation") range(1e-6, 1);
  if (path == "/cloud_credit_fraction") range(0, 1);
  if (path == "/installment_years") range(1, 50);
  if (path == "/budget_usd" || path == "/budget_flops" || path == "/total_usd") range(0, 1e40);
  if (path == "/rule" && *value != "kaplan" && *value != "chinchilla")
    a["value"].fail("out of range: \"rule\" must be \"kaplan\" or \"chinchilla\", got " + value->dump());
  if (path == "/pricing" && *value != "rent" && *value != "build")
    a["value"].fail("out of range: \"pricing\" must be \"rent\" or \"build\", got " + value->dump());
}

// A pointer read from a file is checked where it is read, so that the JSON library never meets it at run
// time (its bare "unresolved reference token ''" reached `megacluster play` and the fuzzer).
void check_pointer(const JsonCursor& at, const std::string& path) {
  if (path.empty()) return;
  if (path[0] != '/') at.fail("a JSON pointer starts with '/' (or is \"\" for the whole config)");
  for (size_t start = 1;;) {
    const size_t slash = path.find('/', start);
    const std::string token = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (token.empty())
      at.fail("\"" + path +
              "\" has an empty part (\"//\" or a '/' at the end); each part names a key or an "
              "index, e.g. \"/holders/0/cap_multiple\": remove the extra '/'");
    // An index into an array makes the JSON library grow the array to it: "/holders/99999999" asked for
    // gigabytes. Configs' arrays (holders, profits, stragglers) hold a few entries.
    if (token.find_first_not_of("0123456789") == std::string::npos && (token.size() > 5 || std::stol(token) > 9999))
      at.fail("\"" + path + "\": index " + token + " is past any config's arrays (at most 9999)");
    for (size_t i = 0; i < token.size(); ++i)
      if (token[i] == '~' && (i + 1 == token.size() || (token[i + 1] != '0' && token[i + 1] != '1')))
        at.fail("\"" + path + "\": '~' in a JSON pointer is written ~0, and '/' inside a key ~1");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  try {
    (void)json::json_pointer(path);
  } catch (const std::exception& e) {
    at.fail(std::string("not a JSON pointer: ") + e.what());
  }
}

void validate_set(const JsonCursor& a, const Catalog* cat) {
  std::string config = a["config"].string();
  if (!find_config_kind(config)) {
    std::string names;
    for (const ConfigKind& k : config_kinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
    a["config"].fail("unknown config \"" + config + "\"; expected one of: " + names);
  }
  const std::string path = a["path"].string();
  check_pointer(a["path"], path);
  const bool has_value = a.has("value"), has_preset = a.has("preset");
  const int sources = int(has_value) + int(has_preset) + int(a.has("result")) + int(a.has("catalog"));
  if (sources != 1)
    a.fail(
        "a \"set\" needs exactly one of \"value\", \"preset\" (table/record), \"catalog\" (table/record/field) "
        "and \"result\" (a result path)");
  if (auto r = a.get("result"))
    if (r->string().empty()) r->fail("a result path is not empty");
  if (auto c = a.get("catalog")) {
    // "table/record/field": a sourced number of the catalog, so scenarios never retype historical numbers.
    std::string ref = c->string();
    auto s1 = ref.find('/'), s2 = ref.rfind('/');
    if (s1 == std::string::npos || s1 == s2) c->fail("a catalog reference is \"table/record/field\"");
    if (cat) {
      const Table* t = cat->table(ref.substr(0, s1));
      const Record* rec = t ? t->find(ref.substr(s1 + 1, s2 - s1 - 1)) : nullptr;
      if (!rec || !rec->find(ref.substr(s2 + 1))) c->fail("missing catalog value \"" + ref + "\"");
    }
  }
  if (has_preset) {
    // "table/record": a record of the catalog, e.g. "models/gpt3-175b"; the id is what gets set.
    std::string p = a["preset"].string();
    auto slash = p.find('/');
    if (slash == std::string::npos) a["preset"].fail("a preset is \"table/record\", e.g. \"models/gpt3-175b\"");
    if (cat) {
      const Table* t = cat->table(p.substr(0, slash));
      if (!t) a["preset"].fail("missing preset: the catalog has no table \"" + p.substr(0, slash) + "\"");
      if (!t->find(p.substr(slash + 1))) {
        std::string ids;
        for (const auto& r : t->records) ids += (ids.empty() ? "" : ", ") + r.id;
        a["preset"].fail("missing preset: table \"" + t->name + "\" has no record \"" + p.substr(slash + 1) +
                         "\"; it has: " + ids);
      }
    }
  }
  if (is_capital(config) && !a.has("result") && !a.has("catalog")) {
    json preset_value;
    if (has_preset) {
      std::string p = a["preset"].string();
      preset_value = p.substr(p.find('/') + 1);
    }
    try {
      check_capital_set(a, config, path, has_value ? &a["value"].value() : &preset_value);
    } catch (const json::exception& e) {  // a pointer the default config cannot follow ("/holders/x")
      a["path"].fail("\"" + path + "\" does not lead into the \"" + config + "\" config (" + e.what() +
                     "); an array is indexed by a number: \"/holders/0/cap_multiple\"");
    }
  }
}

void run_set(const json& a, ActionContext& ctx) {
  const std::string config = a.at("config");
  const std::string path = a.at("path");
  json v;
  if (a.contains("value"))
    v = a.at("value");
  else if (a.contains("result")) {
    const json* r = lookup_result(ctx.state->results, a.at("result").get<std::string>());
    if (!r) throw std::runtime_error("no result \"" + a.at("result").get<std::string>() + "\" to set from");
    v = *r;
  } else if (a.contains("catalog")) {
    if (!ctx.catalog) throw std::runtime_error("a catalog reference needs the catalog");
    std::string ref = a.at("catalog");
    auto s1 = ref.find('/'), s2 = ref.rfind('/');
    v = ctx.catalog->table(ref.substr(0, s1))->find(ref.substr(s1 + 1, s2 - s1 - 1))->get(ref.substr(s2 + 1));
  } else {
    std::string p = a.at("preset");
    v = p.substr(p.find('/') + 1);
  }
  json& c = ctx.state->configs[config];
  if (path.empty()) {
    c = v;
    return;
  }
  try {
    c[json::json_pointer(path)] = v;
  } catch (const json::exception& e) {  // e.g. a key where the config has an array; named, not bare
    throw std::runtime_error("cannot set \"" + path + "\" of the \"" + config + "\" config: " + e.what());
  }
}

std::string result_name(const json& a, const char* fallback) { return a.value("as", std::string(fallback)); }

void store(ActionContext& ctx, const std::string& name, json value) {
  ctx.state->results[name] = std::move(value);
  ctx.produced.push_back(name);
}

void validate_as(const JsonCursor& a) {
  if (auto as = a.get("as")) {
    std::string n = as->string();
    bool ok = !n.empty() && n.find('.') == std::string::npos;
    if (!ok) as->fail("a result name is non-empty and has no '.'");
  }
}

capital::PlanConfig plan_defaults(const Catalog* cat) {
  return cat ? capital::default_plan_config(*cat) : capital::PlanConfig{};
}

// The capital models' defaults are catalog rows (assets/catalog/capital.json, prices.json); with no
// catalog (a scenario validated on its own) the configs are empty.
capital::WaterfallConfig waterfall_defaults(const Catalog* cat) {
  return cat ? capital::default_waterfall_config(*cat) : capital::WaterfallConfig{};
}

capital::PartnershipConfig partnership_defaults(const Catalog* cat) {
  const capital::PlanConfig pc = plan_defaults(cat);
  const double rent = pc.rent_usd_per_gpu_hour, flops = pc.gpu_peak_flops_per_s * pc.utilisation;
  if (cat) return capital::default_partnership_config(*cat, rent, flops);
  capital::PartnershipConfig part;
  part.usd_per_gpu_hour = rent;
  part.gpu_flops_per_s = flops;
  return part;
}

}  // namespace

const std::vector<ConfigKind>& config_kinds() {
  static const std::vector<ConfigKind> kinds = [] {
    std::vector<ConfigKind> k = {
        {"plan", "capital", "money -> GPU-hours -> FLOPs -> model and loss (capital::plan)", {"plan"}},
        {"waterfall", "capital", "the capped-profit waterfall (capital::run_waterfall)", {"waterfall"}},
        {"partnership",
         "capital",
         "the 2019 $1B in installments, cash and credit (capital::run_partnership)",
         {"partnership"}},
        {"estimate", "perf", "the analytic model (perf::estimate_json)", {"estimate"}},
        {"simulate", "run", "one iteration event by event and a whole run (sim::simulate_json)", {"simulate"}},
        {"train", "lab/train", "real training steps in the training lab (train::run_json)", {"train"}},
        {"scaling",
         "lab/scaling",
         "the predictable-scaling sweep: small runs, a fit, a prediction (train::ScalingSweep)",
         {"scaling"}},
    };
    // Each animation (sim/animation_kind.h) is a config kind of its name, shown by the panel of its name.
    for (const sim::AnimationKind& a : sim::animation_kinds()) k.push_back({a.kind, a.kind, a.summary, {a.kind}});
    return k;
  }();
  return kinds;
}

const ConfigKind* config_kind_of_action(const std::string& action) {
  for (const ConfigKind& k : config_kinds())
    for (const auto& a : k.actions)
      if (a == action) return &k;
  return nullptr;
}

const ConfigKind* find_config_kind(const std::string& name) {
  for (const ConfigKind& k : config_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

PlayState initial_state(const Catalog* catalog) {
  PlayState s;
  capital::PlanConfig pc = plan_defaults(catalog);
  json plan = capital::to_json(pc);
  s.configs["plan"] = plan;
  s.configs["waterfall"] = capital::to_json(waterfall_defaults(catalog));
  s.configs["partnership"] = capital::to_json(partnership_defaults(catalog));
  for (const ConfigKind& k : config_kinds())
    if (!s.configs.contains(k.name)) s.configs[k.name] = json::object();
  return s;
}

void ActionRegistry::add(ActionDef def) {
  for (auto& d : defs_)
    if (d.name == def.name) {
      d = std::move(def);
      return;
    }
  defs_.push_back(std::move(def));
}

const ActionDef* ActionRegistry::find(const std::string& name) const {
  for (const auto& d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::string> ActionRegistry::names() const {
  std::vector<std::string> n;
  for (const auto& d : defs_) n.push_back(d.name);
  return n;
}

std::string produced_result(const ActionDef& def, const json& action) {
  if (std::find(def.keys.begin(), def.keys.end(), "as") == def.keys.end()) return "";
  const std::string fallback = def.result.empty() ? def.name : def.result;
  const auto as = action.find("as");
  return as != action.end() && as->is_string() ? as->get<std::string>() : fallback;
}

const json* lookup_result(const json& results, const std::string& path) {
  const json* cur = &results;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (cur->is_object()) {
      auto it = cur->find(part);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      char* end = nullptr;
      long idx = std::strtol(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || idx < 0 || size_t(idx) >= cur->size()) return nullptr;
      cur = &(*cur)[size_t(idx)];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

void register_builtin_actions(ActionRegistry& reg) {
  reg.add({"set",
           "set a key of a config (JSON pointer) to a value or a catalog preset",
           {"config", "path", "value", "preset", "result", "catalog"},
           validate_set,
           run_set,
           "",
           {"result"}});

  reg.add({"plan",
           "money -> GPU-hours -> FLOPs -> model and loss (the \"plan\" config)",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             capital::PlanConfig c =
                 capital::plan_config_from_json(ctx.state->configs["plan"], plan_defaults(ctx.catalog));
             store(ctx, result_name(a, "plan"), capital::to_json(capital::plan(c)));
           }});

  reg.add({"gpt3_priced",
           "GPT-3's 3.14e23 FLOPs priced by renting and by building, beside published estimates",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             if (!ctx.catalog) throw std::runtime_error("gpt3_priced needs the catalog (prices and runs tables)");
             capital::PlanConfig c =
                 capital::plan_config_from_json(ctx.state->configs["plan"], plan_defaults(ctx.catalog));
             store(ctx, result_name(a, "gpt3_priced"), capital::gpt3_priced_json(*ctx.catalog, c));
           }});

  reg.add({"waterfall",
           "split a profit stream between investors, employees and the nonprofit",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             capital::WaterfallConfig c =
                 capital::waterfall_config_from_json(ctx.state->configs["waterfall"], waterfall_defaults(ctx.catalog));
             store(ctx, result_name(a, "waterfall"), capital::to_json(c, capital::run_waterfall(c)));
           }});

  reg.add({"partnership",
           "the 2019 $1B: installments, cash and cloud credit, GPU-hours",
           {"as"},
           [](const JsonCursor& a, const Catalog*) { validate_as(a); },
           [](const json& a, ActionContext& ctx) {
             capital::PartnershipConfig c = capital::partnership_config_from_json(ctx.state->configs["partnership"],
                                                                                  partnership_defaults(ctx.catalog));
             store(ctx, result_name(a, "partnership"), capital::to_json(capital::run_partnership(c)));
           }});

  reg.add({"trend",
           "the AI-and-Compute doubling and where each run sits against it",
           {"as", "anchor"},
           [](const JsonCursor& a, const Catalog* cat) {
             validate_as(a);
             if (auto an = a.get("anchor"))
               if (cat && (!cat->table("runs") || !cat->table("runs")->find(an->string())))
                 an->fail("missing preset: the runs table has no run \"" + an->string() + "\"");
           },
           [](const json& a, ActionContext& ctx) {
             if (!ctx.catalog) throw std::runtime_error("trend needs the catalog (runs table)");
             capital::ComputeTrend t =
                 capital::load_trend(*ctx.catalog, a.value("anchor", std::string("openai-five-2019")));
             json runs = json::object();
             for (const auto& p : capital::run_points(*ctx.catalog))
               runs[p.id] = {{"date", p.date},
                             {"year", p.year},
                             {"flops", p.flops},
                             {"pf_days", capital::flops_to_pf_days(p.flops)},
                             {"over_trend", p.flops / t.flops_at(p.year)}};
             store(ctx, result_name(a, "trend"),
                   {{"doubling_months", t.doubling_months},
                    {"growth", t.growth},
                    {"period_years", t.period_years()},
                    {"factor_per_year", t.factor_per_year()},
                    {"anchor_year", t.anchor_year},
                    {"flops_2020", t.flops_at(2020.4)},
                    {"flops_2022", t.flops_at(2022.4)},
                    {"runs", runs}});
           }});

  reg.add({"fit_power_law",
           "fit L(C) = c + a C^b to earlier results (least squares in log space) and predict a bigger one",
           {"as", "points", "x", "y", "floor", "predict"},
           [](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             if (a["points"].elements().size() < 2) a["points"].fail("a fit needs at least 2 results");
             for (const JsonCursor& p : a["points"].elements()) (void)p.string();
             (void)a["x"].string(), (void)a["y"].string();
             if (auto f = a.get("floor")) (void)f->string();
             if (auto p = a.get("predict")) (void)p->string();
           },
           [](const json& a, ActionContext& ctx) {
             // Kaplan et al. 2020 eq. (1.3) form with an irreducible term (as in the GPT-4 report's
             // L(C) = a C^b + c): subtract the floor, then a straight line through (ln C, ln(L - c)).
             auto num_at = [&](const std::string& res, const std::string& key) {
               const json* v = lookup_result(ctx.state->results, res + "." + key);
               if (!v || !v->is_number()) throw std::runtime_error("no number \"" + res + "." + key + "\" to fit");
               return v->get<double>();
             };
             const std::string xk = a.at("x"), yk = a.at("y");
             double floor = 0;
             if (a.contains("floor")) {
               const json* f = lookup_result(ctx.state->results, a.at("floor").get<std::string>());
               if (!f || !f->is_number()) throw std::runtime_error("no number for the fit's floor");
               floor = f->get<double>();
             }
             std::vector<double> xs, ls;
             for (const json& p : a.at("points")) {
               xs.push_back(num_at(p, xk));
               ls.push_back(num_at(p, yk));
               if (!(ls.back() > floor))
                 throw std::runtime_error("loss at or below the floor in \"" + p.get<std::string>() + "\"");
             }
             train::PowerLawFit fit;
             try {
               fit = train::fit_power_law_given_c(xs, ls, floor);  // the training lab's own fit
             } catch (const std::invalid_argument& e) {
               throw std::runtime_error(std::string("fit_power_law: ") + e.what());
             }
             const double b = fit.b, ln_a = std::log(fit.a);
             const int n = int(xs.size());
             json r = {{"a", fit.a}, {"b", b}, {"floor", floor}, {"points", n}};
             if (a.contains("predict")) {
               const std::string big = a.at("predict");
               const double x = num_at(big, xk), actual = num_at(big, yk);
               const double pred = floor + std::exp(ln_a) * std::pow(x, b);
               r["predicted"] = pred;
               r["actual"] = actual;
               r["relative_error"] = (pred - actual) / actual;
               r["abs_relative_error"] = std::fabs(pred - actual) / actual;
               double xmax = 0;
               for (const json& p : a.at("points")) xmax = std::max(xmax, num_at(p, xk));
               r["extrapolation"] = x / xmax;
             }
             store(ctx, result_name(a, "fit"), r);
           },
           "fit",
           {"points", "floor", "predict"}});

  reg.add({"facts",
           "copy sourced catalog values into the results, so narration never retypes a number",
           {"as", "values"},
           [](const JsonCursor& a, const Catalog* cat) {
             validate_as(a);
             for (const auto& [name, ref] : a["values"].items()) {
               std::string r = ref.string();
               auto s1 = r.find('/'), s2 = r.rfind('/');
               if (s1 == std::string::npos || s1 == s2) ref.fail("a catalog reference is \"table/record/field\"");
               if (!cat) continue;
               const Table* t = cat->table(r.substr(0, s1));
               const Record* rec = t ? t->find(r.substr(s1 + 1, s2 - s1 - 1)) : nullptr;
               if (!rec || !rec->find(r.substr(s2 + 1))) ref.fail("missing catalog value \"" + r + "\"");
             }
           },
           [](const json& a, ActionContext& ctx) {
             if (!ctx.catalog) throw std::runtime_error("facts need the catalog");
             json out = json::object();
             for (const auto& [name, ref] : a.at("values").items()) {
               std::string r = ref;
               auto s1 = r.find('/'), s2 = r.rfind('/');
               const Sourced* v =
                   ctx.catalog->table(r.substr(0, s1))->find(r.substr(s1 + 1, s2 - s1 - 1))->find(r.substr(s2 + 1));
               out[name] = v->date.empty() ? json(v->value) : json(v->date);  // a date as the source gives it
               out[name + "_source"] = v->source;
               out[name + "_confidence"] = to_string(v->confidence);
             }
             store(ctx, result_name(a, "facts"), out);
           }});

  reg.add({"ratio",
           "divide one result by another (\"x\" = num / den), e.g. runs per budget",
           {"as", "num", "den"},
           [](const JsonCursor& a, const Catalog*) {
             validate_as(a);
             (void)a["num"].string(), (void)a["den"].string();
           },
           [](const json& a, ActionContext& ctx) {
             const json* n = lookup_result(ctx.state->results, a.at("num").get<std::string>());
             const json* d = lookup_result(ctx.state->results, a.at("den").get<std::string>());
             if (!n || !d || !n->is_number() || !d->is_number() || d->get<double>() == 0)
               throw std::runtime_error("ratio needs two numeric results, the second non-zero");
             store(ctx, result_name(a, "ratio"), {{"x", n->get<double>() / d->get<double>()}});
           },
           "",
           {"num", "den"}});

  reg.add({"focus_panel",
           "show a panel of the explorer",
           {"panel"},
           [](const JsonCursor& a, const Catalog*) {
             if (a["panel"].string().empty()) a["panel"].fail("a panel id is not empty");
           },
           [](const json& a, ActionContext& ctx) { ctx.state->focus_panel = a.at("panel"); }});

  reg.add({"highlight",
           "outline a tracked widget (\"\" clears)",
           {"widget"},
           [](const JsonCursor& a, const Catalog*) { (void)a["widget"].string(); },
           [](const json& a, ActionContext& ctx) { ctx.state->highlight_widget = a.at("widget"); }});

  reg.add({"wait",
           "when playing, wait for the user (\"for\": \"user\") or a number of seconds",
           {"seconds", "for"},
           [](const JsonCursor& a, const Catalog*) {
             if (a.has("seconds") == a.has("for")) a.fail("a \"wait\" needs exactly one of \"seconds\" and \"for\"");
             if (a.has("seconds")) (void)a["seconds"].number_in(0, 600);
             if (a.has("for")) (void)a["for"].one_of({"user"});
           },
           [](const json& a, ActionContext& ctx) {
             if (a.contains("seconds"))
               ctx.state->wait_s = a.at("seconds").get<double>();
             else
               ctx.state->wait_user = true;
           }});

  register_engine_actions(reg);
}

const ActionRegistry& default_actions() {
  static const ActionRegistry reg = [] {
    ActionRegistry r;
    register_builtin_actions(r);
    return r;
  }();
  return reg;
}

}  // namespace mc::scenario
