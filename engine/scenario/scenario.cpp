// scenario.cpp - reading and validating scenario files (format in scenario.h).
#include "scenario/scenario.h"

#include "catalog/catalog.h"
#include "scenario/actions.h"
#include "scenario/checks.h"

#include <set>
#include <sstream>

namespace mc::scenario {
namespace {

// Runs `f`, turning a LoadError into a collected error prefixed with the step it belongs to.
template <class F>
void collect(std::vector<LoadError>& errors, const std::string& step_label, F&& f) {
  try {
    f();
  } catch (const LoadError& e) {
    errors.emplace_back(e.file, e.line, e.column, e.key,
                        step_label.empty() ? e.message : step_label + ": " + e.message);
  }
}

std::vector<std::string> strings(const JsonCursor& c) {
  std::vector<std::string> out;
  for (const JsonCursor& e : c.elements()) out.push_back(e.string());
  return out;
}

void check_sources_one(const JsonCursor& e, const Catalog* cat) {
  if (!e.value().is_string()) return;  // the list's own check reports the wrong type
  std::string id = e.string();
  if (cat && !cat->source(id))
    e.fail("unknown source \"" + id + "\"; add it to assets/catalog/sources.json or fix the id");
}

Question parse_question(const JsonCursor& q) {
  q.only_keys({"id", "prompt", "choices", "answer", "answer_result", "tolerance", "explanation", "hides"});
  Question out;
  out.pointer = q.pointer();
  out.id = q["id"].string();
  out.prompt = q["prompt"].string();
  out.explanation = q.string_or("explanation", "");
  if (auto h = q.get("hides")) {
    // Engine results only: a typed-in number would mask a value the panels need not draw at all.
    for (const JsonCursor& e : h->elements())
      if (out.hides.push_back(e.string()); out.hides.back().find("{{") == std::string::npos)
        e.fail(
            "a hidden value is a result reference written as in the narration (\"{{estimate.training_days|days}}\")");
  }
  if (auto ch = q.get("choices")) {
    out.choices = strings(*ch);
    if (out.choices.size() < 2) ch->fail("a multiple-choice question needs at least 2 choices");
    if (q.has("answer_result")) q["answer_result"].fail("a multiple-choice question takes \"answer\" (an index)");
    out.answer_index = int(q["answer"].integer_in(0, (long long)out.choices.size() - 1));
  } else {
    if (q.has("answer") == q.has("answer_result"))
      q.fail("a number question needs exactly one of \"answer\" (a number) and \"answer_result\" (a result path)");
    if (q.has("answer"))
      out.answer_value = q["answer"].number();
    else
      out.answer_result = q["answer_result"].string();
    out.tolerance = q.get("tolerance") ? q["tolerance"].number_in(0, 10) : 0.05;
  }
  return out;
}

Expectation parse_expectation(const JsonCursor& e) {
  e.only_keys({"result", "between", "equals", "tolerance", "less_than", "greater_than", "less_than_result",
               "greater_than_result", "is"});
  Expectation x;
  x.pointer = e.pointer();
  x.result = e["result"].string();
  int ops = 0;
  if (auto b = e.get("between")) {
    auto el = b->elements();
    if (el.size() != 2) b->fail("\"between\" is [low, high]");
    x.op = "between", x.lo = el[0].number(), x.hi = el[1].number(), ++ops;
    if (x.lo > x.hi) b->fail("out of range: low is above high");
  }
  if (auto v = e.get("equals"))
    x.op = "equals", x.lo = v->number(), x.hi = e.get("tolerance") ? e["tolerance"].number_in(0, 10) : 1e-6, ++ops;
  if (auto v = e.get("less_than")) x.op = "less_than", x.lo = v->number(), ++ops;
  if (auto v = e.get("greater_than")) x.op = "greater_than", x.lo = v->number(), ++ops;
  if (auto v = e.get("less_than_result")) x.op = "less_than_result", x.other = v->string(), ++ops;
  if (auto v = e.get("greater_than_result")) x.op = "greater_than_result", x.other = v->string(), ++ops;
  if (auto v = e.get("is")) {
    if (!v->value().is_boolean() && !v->value().is_string())
      v->fail("wrong type: \"is\" takes true, false or a string");
    x.op = "is", x.value = v->value(), ++ops;
  }
  if (ops != 1)
    e.fail(
        "an expectation needs exactly one of between, equals, less_than, greater_than, less_than_result, "
        "greater_than_result, is");
  if (e.has("tolerance") && x.op != "equals") e["tolerance"].fail("\"tolerance\" goes with \"equals\"");
  return x;
}

Action parse_action(const JsonCursor& a, const ActionRegistry& reg, const Catalog* cat) {
  if (!a.is_object()) a.fail("wrong type: an action is an object like {\"do\": \"plan\"}");
  std::string name = a["do"].string();
  const ActionDef* def = reg.find(name);
  if (!def) {
    std::string names;
    for (const auto& n : reg.names()) names += (names.empty() ? "" : ", ") + n;
    a["do"].fail("unknown action \"" + name + "\"; expected one of: " + names);
  }
  std::vector<std::string> keys = def->keys;
  keys.push_back("do");
  a.only_keys(keys);
  if (def->validate) def->validate(a, cat);
  return Action{name, a.value(), a.pointer()};
}

}  // namespace

std::string Expectation::describe() const {
  std::ostringstream os;
  os << result << ' ';
  if (op == "between")
    os << "between " << lo << " and " << hi;
  else if (op == "equals")
    os << "equals " << lo << " (relative tolerance " << hi << ")";
  else if (op == "less_than")
    os << "< " << lo;
  else if (op == "greater_than")
    os << "> " << lo;
  else if (op == "less_than_result")
    os << "< " << other;
  else if (op == "greater_than_result")
    os << "> " << other;
  else
    os << "is " << value.dump();
  return os.str();
}

std::string ParseResult::message() const {
  std::string m;
  for (const auto& e : errors) m += std::string(e.what()) + "\n";
  return m;
}

ParseResult parse_scenario(const JsonDoc& doc, const ActionRegistry& reg, const Catalog* cat) {
  ParseResult out;
  Scenario s;
  s.file = doc.file();
  JsonCursor root = doc.root();
  if (!root.is_object()) {
    collect(out.errors, "", [&] { root.fail("a scenario is a JSON object"); });
    return out;
  }
  // Every problem is reported at once, each located: one check per key, and the steps are checked even
  // when the header has problems (a class fixing a file should not meet its errors one run at a time).
  collect(out.errors, "", [&] {
    root.only_keys(
        {"format", "version", "id", "title", "audience", "minutes", "summary", "topics", "sources", "seed", "steps"});
  });
  collect(out.errors, "", [&] {
    if (!root.has("format"))  // a file dropped without it was taken for something else and named nothing
      root.doc().fail(root.pointer() + "/format",
                      std::string("missing required key \"format\": a scenario starts {\"format\": \"") + kFormatName +
                          "\", \"version\": " + std::to_string(kFormatVersion) + ", ...");
    if (root["format"].string() != kFormatName) root["format"].fail(std::string("expected \"") + kFormatName + "\"");
  });
  collect(out.errors, "", [&] {
    s.version = int(root["version"].integer());
    if (s.version != kFormatVersion)
      root["version"].fail("this explorer reads scenario format version " + std::to_string(kFormatVersion) +
                           "; the file is version " + std::to_string(s.version));
  });
  collect(out.errors, "", [&] { s.id = root["id"].string(); });
  collect(out.errors, "", [&] { s.title = root["title"].string(); });
  collect(out.errors, "", [&] { s.audience = root["audience"].string(); });
  collect(out.errors, "", [&] { s.summary = root.string_or("summary", ""); });
  collect(out.errors, "", [&] { s.minutes = root["minutes"].number_in(1, 120); });
  collect(out.errors, "", [&] { s.topics = strings(root["topics"]); });
  collect(out.errors, "", [&] { s.sources = strings(root["sources"]); });
  if (root.has("sources") && root["sources"].is_array())
    for (const JsonCursor& e : root["sources"].elements()) collect(out.errors, "", [&] { check_sources_one(e, cat); });
  collect(out.errors, "", [&] { s.seed = (unsigned long long)root.integer_or("seed", 1); });
  bool steps_ok = false;
  collect(out.errors, "", [&] {
    if (root["steps"].elements().empty()) root["steps"].fail("a scenario needs at least one step");
    steps_ok = true;
  });
  if (!steps_ok) return out;

  std::set<std::string> step_ids, question_ids;
  int index = 0;
  for (const JsonCursor& st : root["steps"].elements()) {
    ++index;
    Step step;
    step.pointer = st.pointer();
    std::string label = "step " + std::to_string(index);
    if (!st.is_object()) {
      collect(out.errors, label, [&] { st.fail("wrong type: a step is an object"); });
      continue;
    }
    collect(out.errors, label, [&] {
      st.only_keys({"id", "title", "narration", "sources", "actions", "questions", "expect"});
    });
    collect(out.errors, label, [&] {
      step.id = st["id"].string();
      if (!step_ids.insert(step.id).second) st["id"].fail("duplicate step id \"" + step.id + "\"");
    });
    if (!step.id.empty()) label += " \"" + step.id + "\"";
    collect(out.errors, label, [&] { step.title = st["title"].string(); });
    collect(out.errors, label, [&] { step.narration = st["narration"].string(); });
    if (auto src = st.get("sources")) {
      collect(out.errors, label, [&] { step.sources = strings(*src); });
      if (src->is_array())
        for (const JsonCursor& e : src->elements()) collect(out.errors, label, [&] { check_sources_one(e, cat); });
    }
    if (auto acts = st.is_object() ? st.get("actions") : std::nullopt) {
      collect(out.errors, label, [&] { (void)acts->elements(); });
      if (acts->is_array())
        for (const JsonCursor& a : acts->elements())
          collect(out.errors, label, [&] { step.actions.push_back(parse_action(a, reg, cat)); });
    }
    if (auto qs = st.is_object() ? st.get("questions") : std::nullopt) {
      collect(out.errors, label, [&] { (void)qs->elements(); });
      if (qs->is_array())
        for (const JsonCursor& q : qs->elements())
          collect(out.errors, label, [&] {
            Question parsed = parse_question(q);
            if (!question_ids.insert(parsed.id).second) q["id"].fail("duplicate question id \"" + parsed.id + "\"");
            step.questions.push_back(std::move(parsed));
          });
    }
    if (auto ex = st.is_object() ? st.get("expect") : std::nullopt) {
      collect(out.errors, label, [&] { (void)ex->elements(); });
      if (ex->is_array())
        for (const JsonCursor& e : ex->elements())
          collect(out.errors, label, [&] { step.expectations.push_back(parse_expectation(e)); });
    }
    s.steps.push_back(std::move(step));
  }
  check_references(doc, s, reg, out.errors);
  check_configs(doc, s, reg, cat, out.errors);
  if (out.errors.empty()) out.scenario = std::move(s);
  return out;
}

ParseResult parse_scenario_text(const std::string& text, const std::string& file, const ActionRegistry& reg,
                                const Catalog* cat) {
  try {
    return parse_scenario(JsonDoc::parse(text, file, kMaxScenarioBytes), reg, cat);
  } catch (const LoadError& e) {
    ParseResult r;
    r.errors.push_back(e);
    return r;
  }
}

bool looks_like_scenario(const std::string& name, const std::string& text) {
  if (text.find(kFormatName) != std::string::npos) return true;
  if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0) return false;
  try {
    const JsonDoc d = JsonDoc::parse(text, name, kMaxScenarioBytes);
    return d.root().is_object() && d.root().has("steps");
  } catch (const LoadError&) {
    return text.find("\"steps\"") != std::string::npos;  // a scenario with a syntax error: list it
  }
}

ParseResult load_scenario(const std::string& path, const ActionRegistry& reg, const Catalog* cat) {
  try {
    return parse_scenario(JsonDoc::load(path, kMaxScenarioBytes), reg, cat);
  } catch (const LoadError& e) {
    ParseResult r;
    r.errors.push_back(e);
    return r;
  }
}

std::vector<IndexEntry> load_index(const std::string& dir, const ActionRegistry& reg, const Catalog* cat) {
  std::vector<IndexEntry> out;
  JsonDoc idx = JsonDoc::load(dir + "/index.json");  // LoadError propagates: the index itself is broken
  JsonCursor root = idx.root();
  root.only_keys({"version", "scenarios"});
  for (const JsonCursor& f : root["scenarios"].elements()) {
    IndexEntry e;
    e.file = f.string();
    e.path = dir + "/" + e.file;
    ParseResult r = load_scenario(e.path, reg, cat);
    if (r.ok()) {
      const Scenario& s = *r.scenario;
      e.id = s.id, e.title = s.title, e.audience = s.audience, e.summary = s.summary, e.minutes = s.minutes;
      e.topics = s.topics;
    } else {
      e.title = e.file;
      e.error = r.message();
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string highlighted_widget(const Action& a) {
  // load_scenario validated the key (actions.cpp's "highlight": a string), so it is there.
  return a.name == "highlight" ? a.params.value("widget", std::string()) : std::string();
}

}  // namespace mc::scenario
