// checks.cpp - load-time checks across a scenario's steps (see checks.h).
//
// Sections: locating an error in the file | result references | the configs the engine actions read.
#include "scenario/checks.h"

#include "catalog/catalog.h"
#include "perf/perf.h"
#include "scenario/actions.h"
#include "scenario/player.h"
#include "scenario/scenario.h"
#include "sim/sim_config.h"
#include "train/scaling.h"
#include "train/train.h"

#include <map>
#include <set>

namespace mc::scenario {
namespace {

// ---- locating an error in the file ----

// A located error at `pointer` of the file, labelled with its step as parse_scenario labels the others.
LoadError located(const JsonDoc& doc, const std::string& pointer, const std::string& label, const std::string& msg) {
  try {
    doc.fail(pointer, label.empty() ? msg : label + ": " + msg);
  } catch (const LoadError& e) {
    return e;
  }
  return LoadError(doc.file(), 0, 0, pointer, msg);  // unreachable: fail() throws
}

// "step 3 \"credit\"" for the step at "/steps/2" (the label parse_scenario gives its own errors).
std::string step_label(const Step& st) {
  const std::string n = st.pointer.substr(st.pointer.rfind('/') + 1);
  std::string label = "step " + std::to_string(std::stoi(n.empty() ? "0" : n) + 1);
  if (!st.id.empty()) label += " \"" + st.id + "\"";
  return label;
}

std::string first_part(const std::string& path) { return path.substr(0, path.find('.')); }

std::string names_of(const std::set<std::string>& have) {
  std::string s;
  for (const auto& n : have) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none yet" : s;
}

void add_once(std::vector<LoadError>& errors, LoadError e) {
  for (const auto& x : errors)
    if (std::string(x.what()) == e.what()) return;
  errors.push_back(std::move(e));
}

// ---- result references ----

struct RefChecker {
  const JsonDoc& doc;
  std::vector<LoadError>& errors;
  std::set<std::string> have;  // results stored by the actions so far (the player keeps them all)
  std::string label;

  void check(const std::string& path, const std::string& pointer, const std::string& what) {
    const std::string name = first_part(path);
    if (have.count(name)) return;
    add_once(errors, located(doc, pointer, label,
                             what + " refers to \"" + path + "\", but no action of this step or an earlier one " +
                                 "produces a result \"" + name + "\" (results so far: " + names_of(have) +
                                 "); fix the name, or add an action that stores it (\"as\": \"" + name + "\")"));
  }

  // Every {{path|format}} of a narration, scanned as render_narration scans it.
  void narration(const Step& st) {
    const std::string& text = st.narration;
    const std::string at = st.pointer + "/narration";
    for (size_t i = 0; i < text.size();) {
      const size_t open = text.find("{{", i);
      if (open == std::string::npos) break;
      const size_t close = text.find("}}", open + 2);
      if (close == std::string::npos) {
        add_once(errors, located(doc, at, label, "the narration opens \"{{\" without closing it with \"}}\""));
        break;
      }
      std::string ref = text.substr(open + 2, close - open - 2);
      if (const size_t bar = ref.find('|'); bar != std::string::npos) {
        const std::string how = ref.substr(bar + 1);
        ref = ref.substr(0, bar);
        if (!is_narration_format(how)) {
          std::string known;
          for (const auto& f : narration_formats()) known += (known.empty() ? "" : ", ") + f;
          add_once(errors, located(doc, at, label,
                                   "the narration's \"{{" + ref + "|" + how + "}}\" asks for format \"" + how +
                                       "\"; the formats are: " + known));
        }
      }
      check(ref, at, "the narration's \"{{" + ref + "}}\"");
      i = close + 2;
    }
  }
};

}  // namespace

void check_references(const JsonDoc& doc, const Scenario& s, const ActionRegistry& reg,
                      std::vector<LoadError>& errors) {
  RefChecker c{doc, errors, {}, ""};
  for (const Step& st : s.steps) {
    c.label = step_label(st);
    for (const Action& a : st.actions) {
      const ActionDef* def = reg.find(a.name);
      if (!def) continue;
      for (const std::string& key : def->result_keys) {
        const auto v = a.params.find(key);
        if (v == a.params.end()) continue;
        const std::string what = "\"" + a.name + "\"'s \"" + key + "\"";
        if (v->is_string()) c.check(v->get<std::string>(), a.pointer + "/" + key, what);
        if (v->is_array())
          for (size_t i = 0; i < v->size(); ++i)
            if ((*v)[i].is_string())
              c.check((*v)[i].get<std::string>(), a.pointer + "/" + key + "/" + std::to_string(i), what);
      }
      if (std::string r = produced_result(*def, a.params); !r.empty()) c.have.insert(r);
    }
    c.narration(st);
    for (const Expectation& e : st.expectations) {
      c.check(e.result, e.pointer + "/result", "an expectation");
      if (!e.other.empty()) c.check(e.other, e.pointer + "/" + e.op, "an expectation");
    }
    for (const Question& q : st.questions) {
      if (!q.answer_result.empty()) c.check(q.answer_result, q.pointer + "/answer_result", "question \"" + q.id + "\"");
      for (size_t i = 0; i < q.hides.size(); ++i)
        for (size_t open = q.hides[i].find("{{"); open != std::string::npos; open = q.hides[i].find("{{", open + 2)) {
          const size_t close = q.hides[i].find("}}", open);
          if (close == std::string::npos) break;
          const std::string ref = q.hides[i].substr(open + 2, close - open - 2);
          c.check(ref.substr(0, ref.find('|')), q.pointer + "/hides/" + std::to_string(i),
                  "question \"" + q.id + "\"'s hidden value");
        }
    }
  }
}

// ---- the configs the engine actions read ----

namespace {

bool is_prefix_pointer(const std::string& parent, const std::string& child) {
  return parent.empty() || child == parent || child.rfind(parent + "/", 0) == 0;
}

// The engine's own reading of a config kind, as the action that runs it reads it (engine_actions.cpp).
void engine_parse(const Catalog& cat, const std::string& action, const std::string& kind, const json& config) {
  const std::string what = "scenario config \"" + kind + "\"";
  if (kind == "estimate")
    (void)perf::parse_config(cat, config, what, action != "search");
  else if (kind == "simulate")
    (void)sim::resolve(cat, JsonDoc::parse(config.dump(), what));
  else if (kind == "train")
    (void)train::parse_config(config, what);
  else if (kind == "scaling")
    (void)train::scaling_config_from_json(config, what);
}

struct Write {
  std::string path, label, pointer;  // the "set": its path, step label and place in the file
  bool has_value = false;
};

struct KindState {
  json config;
  std::vector<Write> writes;
  bool unknown = false;  // a "set" from a result: its value exists only when played
};

}  // namespace

void check_configs(const JsonDoc& doc, const Scenario& s, const ActionRegistry& reg, const Catalog* cat,
                   std::vector<LoadError>& errors) {
  if (!cat) return;
  std::map<std::string, KindState> kinds;
  const PlayState initial = initial_state(cat);
  for (const ConfigKind& k : config_kinds()) kinds[k.name].config = initial.configs[k.name];
  for (const Step& st : s.steps) {
    const std::string label = step_label(st);
    for (const Action& a : st.actions) {
      const json& p = a.params;
      if (a.name == "set") {
        const std::string kind = p.value("config", std::string()), path = p.value("path", std::string());
        auto it = kinds.find(kind);
        if (it == kinds.end()) continue;
        KindState& k = it->second;
        json v;
        bool known = true;
        if (p.contains("value"))
          v = p["value"];
        else if (p.contains("preset"))
          v = p["preset"].get<std::string>().substr(p["preset"].get<std::string>().find('/') + 1);
        else
          known = false;  // a result, or a catalog value: known only when played
        if (path.empty()) k.writes.clear(), k.unknown = false;
        k.writes.push_back({path, label, a.pointer, p.contains("value")});
        if (!known) {
          k.unknown = true;
          continue;
        }
        try {
          if (path.empty())
            k.config = v;
          else
            k.config[json::json_pointer(path)] = v;
        } catch (const json::exception& e) {
          add_once(errors, located(doc, a.pointer + "/path", label,
                                   "\"" + path + "\" does not lead into the \"" + kind + "\" config as the steps " +
                                       "before leave it (" + e.what() + "); an array is indexed by a number"));
          k.unknown = true;
        }
        continue;
      }
      const ConfigKind* kind = config_kind_of_action(a.name);
      if (!kind || !reg.find(a.name)) continue;
      KindState& k = kinds[kind->name];
      if (k.unknown || std::string(kind->panel) == "capital") continue;  // capital: checked key by key
      json config = k.config;
      if (a.name == "train" && p.contains("steps")) config["steps"] = p["steps"];
      try {
        engine_parse(*cat, a.name, kind->name, config);
      } catch (const LoadError& e) {
        // At the "set" that wrote the key (the latest one whose path leads to it), inside its value when
        // the key is there; else at the action that reads the config.
        const std::string key = e.key.empty() ? "" : "/" + e.key;
        const Write* w = nullptr;
        for (const Write& x : k.writes)
          if (is_prefix_pointer(x.path, key)) w = &x;
        const std::string msg = "the \"" + std::string(kind->name) + "\" config that \"" + a.name + "\" (" + label +
                                ") reads is refused: " + (e.key.empty() ? "" : "key \"" + e.key + "\": ") + e.message;
        if (w)
          add_once(errors, located(doc, w->has_value ? w->pointer + "/value" + key.substr(w->path.size()) : w->pointer,
                                   w->label, msg + "; fix this \"set\""));
        else
          add_once(errors, located(doc, a.pointer, label, msg));
      } catch (const std::exception& e) {
        const Write* w = k.writes.empty() ? nullptr : &k.writes.back();
        const std::string msg = "the \"" + std::string(kind->name) + "\" config that \"" + a.name + "\" (" + label +
                                ") reads is refused: " + e.what();
        add_once(errors, located(doc, w ? w->pointer : a.pointer, w ? w->label : label, msg));
      }
    }
  }
}

}  // namespace mc::scenario
