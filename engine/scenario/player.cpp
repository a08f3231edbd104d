// player.cpp - deterministic scenario playback, expectations, narration and the digest (see player.h).
#include "scenario/player.h"

#include "core/format.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace mc::scenario {
namespace {

std::string fmt_number(double x, const std::string& how) {
  char buf[64];
  if (how == "usd")
    return format_usd(x);  // as the panels write money
  else if (how == "pct")
    return format_percent(x);  // as the panels write utilisation
  else if (how == "s")
    return format_seconds(x);  // as the panels write durations
  else if (how == "count")
    return format_count(x);  // 3 digits, separators: "1,040,000", as PF-days print
  else if (how == "pct0")
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * x);  // a leaked or rough figure: "34%"
  else if (how == "int")
    return with_thousands(x);  // thousands separators: 300000 -> "300,000"
  else if (how == "n")
    return format_in_words(x);  // counts in words people read: "1.5 billion"
  else if (how == "year")
    std::snprintf(buf, sizeof buf, "%.0f", x);  // 2029, never "2,029"
  else if (how == "sci")
    std::snprintf(buf, sizeof buf, "%.3g", x);
  else if (how == "f1")
    std::snprintf(buf, sizeof buf, "%.1f", x);
  else if (how == "f2")
    std::snprintf(buf, sizeof buf, "%.2f", x);
  else if (how == "f3")
    std::snprintf(buf, sizeof buf, "%.3f", x);
  else if (how == "f4")
    std::snprintf(buf, sizeof buf, "%.4f", x);  // a loss as the lab writes it
  else if (how == "gib")
    return format_gib(x);  // as the panels write memory
  else if (how == "days")
    std::snprintf(buf, sizeof buf, "%.1f days", x);
  else if (how == "x")
    std::snprintf(buf, sizeof buf, "%.3gx", x);
  else
    return format_si(x, 3);
  return buf;
}

std::string value_text(const json& v, const std::string& how) {
  if (v.is_number()) return fmt_number(v.get<double>(), how);
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Rounds every number to 6 significant digits; object keys stay sorted (nlohmann's default map).
json canonical(const json& v) {
  if (v.is_object()) {
    json o = json::object();
    for (const auto& [k, x] : v.items()) o[k] = canonical(x);
    return o;
  }
  if (v.is_array()) {
    json a = json::array();
    for (const auto& x : v) a.push_back(canonical(x));
    return a;
  }
  if (v.is_number_float()) {
    double x = v.get<double>();
    if (!std::isfinite(x)) return nullptr;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return std::string(buf);  // a string, so the digest does not depend on float printing either
  }
  return v;
}

}  // namespace

bool StepOutcome::passed() const {
  if (!errors.empty()) return false;
  for (const auto& e : expectations)
    if (!e.passed) return false;
  return true;
}

const std::vector<std::string>& narration_formats() {
  static const std::vector<std::string> f = {"si", "usd", "pct", "pct0", "int", "year", "sci",   "f1", "f2",
                                             "f3", "f4",  "gib", "days", "x",   "s",    "count", "n"};
  return f;
}

bool is_narration_format(const std::string& how) {
  for (const auto& f : narration_formats())
    if (f == how) return true;
  return false;
}

std::string render_narration(const std::string& text, const json& results, std::vector<std::string>* missing) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find("{{", i);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    out += text.substr(i, open - i);
    std::string ref = text.substr(open + 2, close - open - 2), how = "si";
    if (auto bar = ref.find('|'); bar != std::string::npos) how = ref.substr(bar + 1), ref = ref.substr(0, bar);
    if (const json* v = lookup_result(results, ref))
      out += value_text(*v, how);
    else {
      out += "{{" + ref + "}}";
      if (missing) missing->push_back(ref);
    }
    i = close + 2;
  }
  out += text.substr(i);
  return out;
}

std::string digest_of(const json& value) {
  const std::string s = canonical(value).dump();
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64 offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

Player::Player(Scenario s, const Catalog* catalog, const ActionRegistry& actions)
    : s_(std::move(s)), catalog_(catalog), actions_(&actions) {
  restart();
}

void Player::restart() {
  state_ = initial_state(catalog_);
  outcomes_.assign(s_.steps.size(), StepOutcome{});
  current_ = -1;
  elapsed_s_ = 0;
}

void Player::run_step(int i) {
  const Step& st = s_.steps[size_t(i)];
  StepOutcome o;
  o.index = i, o.id = st.id, o.title = st.title;
  state_.wait_s = 0;
  state_.wait_user = false;
  // An outline belongs to the step that asked for it: carried over, it would point at a panel the next
  // step may have left.
  state_.highlight_widget.clear();
  int k = 0;
  for (const Action& a : st.actions) {
    ActionContext ctx;
    ctx.catalog = catalog_;
    ctx.state = &state_;
    // A per-action seed: the same file always gives the same numbers, and steps do not share a stream.
    ctx.seed = s_.seed * 1000003ull + uint64_t(i) * 101ull + uint64_t(k++);
    ctx.scenario_seed = s_.seed;
    const ActionDef* def = actions_->find(a.name);
    try {
      if (!def) throw std::runtime_error("unknown action \"" + a.name + "\"");
      def->run(a.params, ctx);
    } catch (const std::exception& e) {
      o.errors.push_back("action " + a.pointer + " (\"" + a.name + "\"): " + e.what());
    }
    for (const auto& name : ctx.produced) o.results[name] = state_.results[name];
  }
  for (const Expectation& e : st.expectations) {
    ExpectationOutcome x;
    x.text = e.describe();
    x.pointer = e.pointer;
    const json* v = lookup_result(state_.results, e.result);
    if (!v) {
      x.actual = "no result \"" + e.result + "\"";
    } else if (e.op == "is") {
      x.actual = v->dump();
      x.passed = *v == e.value;
    } else if (!v->is_number()) {
      x.actual = "not a number: " + v->dump();
    } else {
      const double a = v->get<double>();
      x.actual = fmt_number(a, "sci");
      if (e.op == "between")
        x.passed = a >= e.lo && a <= e.hi;
      else if (e.op == "equals")
        x.passed = std::fabs(a - e.lo) <= e.hi * std::max(std::fabs(e.lo), 1e-300);
      else if (e.op == "less_than")
        x.passed = a < e.lo;
      else if (e.op == "greater_than")
        x.passed = a > e.lo;
      else {
        const json* w = lookup_result(state_.results, e.other);
        if (!w || !w->is_number())
          x.actual += " (no numeric result \"" + e.other + "\")";
        else {
          x.actual += " vs " + fmt_number(w->get<double>(), "sci");
          x.passed = e.op == "less_than_result" ? a < w->get<double>() : a > w->get<double>();
        }
      }
    }
    o.expectations.push_back(std::move(x));
  }
  std::vector<std::string> missing;
  o.narration = render_narration(st.narration, state_.results, &missing);
  for (const auto& m : missing) o.errors.push_back("narration refers to \"" + m + "\", which no action produced");
  outcomes_[size_t(i)] = std::move(o);
}

bool Player::next() {
  if (finished()) return false;
  ++current_;
  run_step(current_);
  elapsed_s_ = 0;
  return true;
}

void Player::jump(int step) {
  if (step >= step_count()) step = step_count() - 1;
  restart();
  while (current_ < step) next();
}

void Player::previous() { jump(current_ - 1); }

void Player::tick(double dt_s, double default_step_s) {
  if (advance_time(dt_s, default_step_s)) next();
}

bool Player::advance_time(double dt_s, double default_step_s) {
  if (!playing_) return false;
  if (current_ < 0) return true;
  elapsed_s_ += dt_s;
  if (state_.wait_user) {
    playing_ = false;  // the step asked for the user: Next (or Play) continues
    return false;
  }
  const double dwell = state_.wait_s > 0 ? state_.wait_s : default_step_s;
  if (elapsed_s_ >= dwell) {
    if (finished())
      playing_ = false;
    else
      return true;
  }
  return false;
}

Report Player::report(const std::map<std::string, json>& answers) const {
  Report r;
  r.scenario_id = s_.id, r.title = s_.title, r.file = s_.file;
  json all = json::array();
  for (int i = 0; i <= current_; ++i) {
    const StepOutcome& o = outcomes_[size_t(i)];
    r.steps.push_back(o);
    r.errors += int(o.errors.size());
    for (const auto& e : o.expectations) {
      ++r.expectations_total;
      if (!e.passed) ++r.expectations_failed;
    }
    all.push_back({{"step", o.id}, {"results", o.results}});
  }
  r.digest = digest_of(all);
  for (int i = 0; i <= current_; ++i)
    for (const Question& q : s_.steps[size_t(i)].questions) {
      AnswerOutcome a;
      a.question = q.id;
      double expected = 0;
      bool numeric = q.choices.empty();
      if (!numeric)
        a.expected = std::to_string(q.answer_index) + " (" + q.choices[size_t(q.answer_index)] + ")";
      else if (q.answer_value)
        expected = *q.answer_value;
      else if (const json* v = lookup_result(state_.results, q.answer_result); v && v->is_number())
        expected = v->get<double>();
      if (numeric) a.expected = fmt_number(expected, "sci") + " +/- " + fmt_number(100 * q.tolerance, "f1") + "%";
      auto it = answers.find(q.id);
      if (it != answers.end()) {
        a.answered = true;
        a.given = it->second.dump();
        if (!numeric)
          a.correct = it->second.is_number_integer() && it->second.get<int>() == q.answer_index;
        else
          a.correct = it->second.is_number() &&
                      std::fabs(it->second.get<double>() - expected) <= q.tolerance * std::fabs(expected);
        ++r.answered;
        if (a.correct) ++r.correct;
      }
      r.answers.push_back(a);
    }
  return r;
}

json to_json(const Report& r) {
  json steps = json::array();
  for (const auto& s : r.steps) {
    json ex = json::array();
    for (const auto& e : s.expectations)
      ex.push_back({{"expect", e.text}, {"passed", e.passed}, {"actual", e.actual}, {"at", e.pointer}});
    steps.push_back({{"step", s.id},
                     {"title", s.title},
                     {"narration", s.narration},
                     {"errors", s.errors},
                     {"expectations", ex},
                     {"results", s.results},
                     {"passed", s.passed()}});
  }
  json answers = json::array();
  for (const auto& a : r.answers)
    answers.push_back({{"question", a.question},
                       {"answered", a.answered},
                       {"given", a.given},
                       {"expected", a.expected},
                       {"correct", a.correct}});
  return {{"scenario", r.scenario_id},
          {"title", r.title},
          {"file", r.file},
          {"passed", r.passed()},
          {"expectations", r.expectations_total},
          {"expectations_failed", r.expectations_failed},
          {"errors", r.errors},
          {"answered", r.answered},
          {"correct", r.correct},
          {"digest", r.digest},
          {"steps", steps},
          {"answers", answers}};
}

std::map<std::string, json> load_answers(const std::string& path) {
  JsonDoc d = JsonDoc::load(path, kMaxScenarioBytes);
  if (!d.root().is_object()) d.root().fail("an answers file is an object {\"question_id\": answer, ...}");
  std::map<std::string, json> out;
  for (const auto& [k, v] : d.root().items()) out[k] = v.value();
  return out;
}

}  // namespace mc::scenario
