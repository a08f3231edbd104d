// catalog.cpp - see catalog.h.
// Sections: lookups (Record, Table, Catalog) - load_sources - load_table (values, sourced text,
// {"from"} references) - resolve_references - load_catalog and check_text_facts - dates -
// display_value and expand_facts (facts named in prose) - to_json.
#include "catalog/catalog.h"

#include "core/format.h"
#include "core/units.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

namespace mc {

const char* to_string(Confidence c) {
  switch (c) {
    case Confidence::reported:
      return "reported";
    case Confidence::inferred:
      return "inferred";
    case Confidence::assumed:
      return "assumed";
  }
  return "reported";
}

const Sourced* Record::find(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? nullptr : &it->second;
}

const Sourced* Record::text_source(const std::string& key) const {
  auto it = text_sources.find(key);
  return it == text_sources.end() ? nullptr : &it->second;
}

double Record::get(const std::string& key) const {
  if (auto* s = find(key)) return s->value;
  throw std::out_of_range("catalog record \"" + id + "\" has no value \"" + key + "\"");
}

double Record::get_or(const std::string& key, double fallback) const {
  auto* s = find(key);
  return s ? s->value : fallback;
}

std::string Record::text_or(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : text)
    if (k == key) return v;
  return fallback;
}

const Record* Table::find(const std::string& id) const {
  for (const auto& r : records)
    if (r.id == id) return &r;
  return nullptr;
}

const FieldDef* Table::field(const std::string& key) const {
  for (const auto& f : fields)
    if (f.key == key) return &f;
  return nullptr;
}

const Table* Catalog::table(const std::string& name) const {
  for (const auto& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

const Source* Catalog::source(const std::string& id) const {
  for (const auto& s : sources)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<Source> load_sources(const std::string& path) {
  JsonDoc doc = JsonDoc::load(path, kMaxCatalogBytes);
  JsonCursor root = doc.root();
  root.only_keys({"sources"});
  std::vector<Source> out;
  std::set<std::string> seen;
  for (JsonCursor s : root["sources"].elements()) {
    s.only_keys({"id", "title", "publisher", "date", "url", "note"});
    Source src{s["id"].string(),        s["title"].string(),    s.string_or("publisher", ""),
               s.string_or("date", ""), s.string_or("url", ""), s.string_or("note", "")};
    if (!seen.insert(src.id).second) s["id"].fail("duplicate source id \"" + src.id + "\"");
    out.push_back(std::move(src));
  }
  return out;
}

Table load_table(const std::string& path, const std::vector<Source>& sources) {
  JsonDoc doc = JsonDoc::load(path, kMaxCatalogBytes);
  JsonCursor root = doc.root();
  root.only_keys({"table", "title", "description", "fields", "records"});
  Table t;
  t.file = path;
  t.name = root["table"].string();
  t.title = root["title"].string();
  t.description = root.string_or("description", "");
  for (JsonCursor f : root["fields"].elements()) {
    f.only_keys({"key", "label", "unit", "description"});
    t.fields.push_back({f["key"].string(), f["label"].string(), f["unit"].string(), f.string_or("description", "")});
  }
  std::set<std::string> ids;
  for (JsonCursor r : root["records"].elements()) {
    r.only_keys({"id", "name", "text", "values"});
    Record rec;
    rec.id = r["id"].string();
    rec.name = r["name"].string();
    if (!ids.insert(rec.id).second) r["id"].fail("duplicate record id \"" + rec.id + "\" in table " + t.name);
    auto known_source = [&](const JsonCursor& src) {
      const std::string id = src.string();
      for (const auto& x : sources)
        if (x.id == id) return id;
      src.fail("unknown source id \"" + id + "\": add it to sources.json");
    };
    // confidence and note of a value or a sourced text; an unsure one must say how it was obtained.
    auto confidence_and_note = [](const JsonCursor& v, Sourced& s) {
      std::string c = v["confidence"].one_of({"reported", "inferred", "assumed"});
      s.confidence = c == "reported"   ? Confidence::reported
                     : c == "inferred" ? Confidence::inferred
                                       : Confidence::assumed;
      s.note = v.string_or("note", "");
      if (s.confidence != Confidence::reported && s.note.empty())
        v.fail("an " + c + " value needs a \"note\" saying how it was obtained");
    };
    // A {"from": "table/record/key"} reference to a fact another row holds (resolve_references copies it in):
    // its own confidence (at most the origin's) and note when given, and where it is, for the messages.
    auto reference = [&](const JsonCursor& v, const std::string& key, bool text) {
      Sourced s;
      s.from = v["from"].string();
      Table::Reference ref{rec.id, key, v.pointer(), 0, 0, v.has("confidence"), v.has("note"), text};
      std::tie(ref.line, ref.column) = v.doc().where(v.pointer());
      if (ref.confidence_given) {
        std::string c = v["confidence"].one_of({"reported", "inferred", "assumed"});
        s.confidence = c == "reported"   ? Confidence::reported
                       : c == "inferred" ? Confidence::inferred
                                         : Confidence::assumed;
      }
      s.note = v.string_or("note", "");
      t.references.push_back(std::move(ref));
      return s;
    };
    if (auto tx = r.get("text"))
      for (auto& [k, v] : tx->items()) {
        if (!v.is_object()) {
          rec.text.emplace_back(k, v.string());
          continue;
        }
        // A text attribute that is a fact (which GPU a machine had) carries its source and confidence.
        Sourced s;
        if (v.has("from")) {
          v.only_keys({"from", "confidence", "note"});
          rec.text.emplace_back(k, "");
          rec.text_sources.emplace(k, reference(v, k, true));
          continue;
        }
        v.only_keys({"value", "source", "confidence", "note"});
        rec.text.emplace_back(k, v["value"].string());
        s.source = known_source(v["source"]);
        confidence_and_note(v, s);
        rec.text_sources.emplace(k, std::move(s));
      }
    for (auto& [key, v] : r["values"].items()) {
      if (!t.field(key)) {
        std::string list;
        for (const auto& f : t.fields) list += (list.empty() ? "" : ", ") + f.key;
        v.fail("unknown field (declare it under \"fields\" first): known fields are " + list);
      }
      Sourced s;
      if (v.has("from")) {
        // A reference to a value another table holds: one fact, one copy (resolve_references fills it).
        v.only_keys({"from", "scale", "confidence", "note"});
        s = reference(v, key, false);
        s.scale = v.has("scale") ? v["scale"].number() : 1.0;
        if (!(s.scale > 0)) v["scale"].fail("\"scale\" must be positive");
        rec.values.emplace(key, std::move(s));
        continue;
      }
      v.only_keys({"value", "source", "confidence", "note"});
      const std::string& unit = t.field(key)->unit;
      if (unit == "date") {
        s.date = v["value"].string();
        try {
          s.value = decimal_year_of_date(s.date);
        } catch (const std::invalid_argument& e) {
          v["value"].fail(e.what());
        }
      } else {
        s.value = v["value"].number();
        if (unit == "year" && s.value != std::floor(s.value))
          v["value"].fail(
              "a \"year\" field holds a whole year; for a month or a day declare the field with unit "
              "\"date\" and write \"YYYY-MM\" or \"YYYY-MM-DD\" as the source gives it");
      }
      s.source = known_source(v["source"]);
      confidence_and_note(v, s);
      rec.values.emplace(key, std::move(s));
    }
    t.records.push_back(std::move(rec));
  }
  return t;
}

void resolve_references(std::vector<Table>& tables) {
  auto find_table = [&](const std::string& name) -> Table* {
    for (auto& t : tables)
      if (t.name == name) return &t;
    return nullptr;
  };
  for (Table& t : tables)
    for (const Table::Reference& ref : t.references) {
      Record& rec = *const_cast<Record*>(t.find(ref.record));
      Sourced& dst = ref.text ? rec.text_sources.at(ref.key) : rec.values.at(ref.key);
      auto fail = [&](const std::string& msg) {
        const std::string key = ref.pointer.rfind('/', 0) == 0 ? ref.pointer.substr(1) : ref.pointer;
        throw LoadError(t.file, ref.line, ref.column, key, "\"from\": \"" + dst.from + "\" " + msg);
      };
      const size_t a = dst.from.find('/'), b = a == std::string::npos ? a : dst.from.find('/', a + 1);
      if (b == std::string::npos) fail("is not <table>/<record>/<key>");
      const Table* ot = find_table(dst.from.substr(0, a));
      if (!ot) fail("names no table");
      const Record* orec = ot->find(dst.from.substr(a + 1, b - a - 1));
      if (!orec) fail("names no record of table " + ot->name);
      const std::string okey = dst.from.substr(b + 1);
      if (ref.text) {
        // A text attribute: the origin's text and, if it carries them, its source and confidence.
        const Sourced* o = orec->text_source(okey);
        if (orec->text_or(okey, "\x01") == "\x01") fail("names no text attribute of " + ot->name + "/" + orec->id);
        if (!o) fail("names a text attribute without a source: give it one there (\"value\", \"source\", ...)");
        if (!o->from.empty()) fail("is itself a reference (to " + o->from + "): name the value it comes from");
        if (ref.confidence_given && dst.confidence < o->confidence)
          fail("cannot be surer than the value it comes from (" + std::string(to_string(o->confidence)) + ")");
        for (auto& [k, v] : rec.text)
          if (k == ref.key) v = orec->text_or(okey, "");
        dst.source = o->source;
        dst.confidence = ref.confidence_given ? std::max(dst.confidence, o->confidence) : o->confidence;
        if (!ref.note_given) dst.note = o->note;
        continue;
      }
      const Sourced* o = orec->find(okey);
      if (!o) fail("names no value of " + ot->name + "/" + orec->id);
      if (!o->from.empty()) fail("is itself a reference (to " + o->from + "): name the value it comes from");
      if (ot->field(okey)->unit != t.field(ref.key)->unit)
        fail("is in " + ot->field(okey)->unit + ", this field in " + t.field(ref.key)->unit +
             ": a reference copies a quantity, it does not convert units");
      if (ref.confidence_given && dst.confidence < o->confidence)
        fail("cannot be surer than the value it comes from (" + std::string(to_string(o->confidence)) + ")");
      if (dst.scale != 1 && !ref.note_given) fail("has a \"scale\": add a \"note\" saying why");
      Confidence c = std::max(o->confidence, dst.scale != 1 ? Confidence::inferred : Confidence::reported);
      if (ref.confidence_given) c = std::max(c, dst.confidence);
      dst.value = o->value * dst.scale;
      dst.date = o->date;
      dst.source = o->source;
      dst.confidence = c;
      if (!ref.note_given) dst.note = o->note;
    }
}

Catalog load_catalog(const std::string& assets_dir) {
  const std::string dir = assets_dir + "/catalog/";
  JsonDoc idx = JsonDoc::load(dir + "index.json", kMaxCatalogBytes);
  JsonCursor root = idx.root();
  root.only_keys({"version", "sources", "tables"});
  Catalog c;
  c.version = static_cast<int>(root["version"].integer_in(1, 1));
  c.sources = load_sources(dir + root["sources"].string());
  for (JsonCursor f : root["tables"].elements()) {
    Table t = load_table(dir + f.string(), c.sources);
    if (c.table(t.name)) f.fail("table \"" + t.name + "\" is listed twice");
    c.tables.push_back(std::move(t));
  }
  resolve_references(c.tables);
  check_text_facts(c);
  return c;
}

void check_text_facts(const Catalog& c) {
  // Every fact named in prose must exist: a typo would otherwise print an error on the timeline.
  for (const Table& t : c.tables)
    for (size_t i = 0; i < t.records.size(); ++i)
      for (const auto& [k, v] : t.records[i].text) {
        if (v.find('{') == std::string::npos) continue;
        try {
          expand_facts(c, v);
        } catch (const std::invalid_argument& e) {
          throw LoadError(t.file, 0, 0, "records/" + std::to_string(i) + "/text/" + json_pointer_escape(k),
                          std::string(e.what()) +
                              " (write {table/record/key}, or with a format: |PF-days for FLOPs, |words for a count, "
                              "|percent or |times for a ratio)");
        }
      }
}

double decimal_year_of_date(const std::string& d) {
  auto digits = [&](size_t at, size_t n) {
    if (d.size() < at + n) return -1;
    int x = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (d[i] < '0' || d[i] > '9') return -1;
      x = x * 10 + (d[i] - '0');
    }
    return x;
  };
  const std::string want = "a date is \"YYYY\", \"YYYY-MM\" or \"YYYY-MM-DD\", got \"" + d + "\"";
  const int y = digits(0, 4);
  if (y < 0 || !(d.size() == 4 || d.size() == 7 || d.size() == 10)) throw std::invalid_argument(want);
  if (d.size() == 4) return y + 0.5;
  const int m = digits(5, 2);
  if (d[4] != '-' || m < 1 || m > 12) throw std::invalid_argument(want + " (month 01-12)");
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int month_days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int before = 0;  // days of the year before this month
  for (int i = 0; i < m - 1; ++i) before += month_days[i];
  const double year_days = leap ? 366 : 365;
  if (d.size() == 7) return y + (before + month_days[m - 1] / 2.0) / year_days;
  const int day = digits(8, 2);
  if (d[7] != '-' || day < 1 || day > month_days[m - 1])
    throw std::invalid_argument(want + " (no day " + d.substr(8) + " in that month)");
  return y + (before + day - 0.5) / year_days;
}

std::string display_value(const Sourced& v, const std::string& unit) {
  return unit == "date" ? v.date : format_quantity(v.value, unit);
}

ExpandedText expand_facts(const Catalog& c, const std::string& text, bool marks) {
  ExpandedText out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find('{', at);
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) throw std::invalid_argument("\"{\" without \"}\" in \"" + text + "\"");
    out.text += text.substr(at, open - at);
    const std::string inner = text.substr(open + 1, close - open - 1);
    const size_t bar = inner.find('|');
    const std::string path = inner.substr(0, bar), as = bar == std::string::npos ? "" : inner.substr(bar + 1);
    const std::string where = "\"{" + inner + "}\"";
    const size_t a = path.find('/'), b = a == std::string::npos ? a : path.find('/', a + 1);
    if (b == std::string::npos) throw std::invalid_argument(where + " is not {table/record/key}");
    const Table* t = c.table(path.substr(0, a));
    if (!t) throw std::invalid_argument(where + " names no table");
    const Record* r = t->find(path.substr(a + 1, b - a - 1));
    if (!r) throw std::invalid_argument(where + " names no record of table " + t->name);
    const Sourced* v = r->find(path.substr(b + 1));
    if (!v) throw std::invalid_argument(where + " names no value of " + t->name + "/" + r->id);
    const std::string unit = t->field(path.substr(b + 1))->unit;
    if (as.empty())
      out.text += display_value(*v, unit);
    else if (as == "PF-days" && unit == "FLOPs")
      out.text += format_quantity(v->value / kFlopsPerPfDay, "PF-days");
    else if (as == "words" && (unit == "count" || unit == "parameters"))
      out.text += format_in_words(v->value);
    else if (as == "percent" && unit == "ratio")
      out.text += format_count(100 * v->value) + "%";
    else if (as == "times" && unit == "ratio")
      out.text += format_count(v->value) + "x";
    else
      throw std::invalid_argument(where + ": cannot show " + unit + " as \"" + as + "\"");
    if (marks)
      out.text += v->confidence == Confidence::inferred ? " ~" : v->confidence == Confidence::assumed ? " ?" : "";
    out.facts.push_back(v);
    at = close + 1;
  }
  out.text += text.substr(std::min(at, text.size()));
  return out;
}

json to_json(const Sourced& s) {
  json j = {{"value", s.date.empty() ? json(s.value) : json(s.date)},
            {"source", s.source},
            {"confidence", to_string(s.confidence)}};
  if (!s.note.empty()) j["note"] = s.note;
  if (!s.from.empty()) j["from"] = s.from;
  if (s.scale != 1) j["scale"] = s.scale;
  return j;
}

namespace {

json sources_json(const Catalog& c) {
  json srcs = json::array();
  for (const auto& s : c.sources)
    srcs.push_back({{"id", s.id},
                    {"title", s.title},
                    {"publisher", s.publisher},
                    {"date", s.date},
                    {"url", s.url},
                    {"note", s.note}});
  return srcs;
}

json table_json(const Table& t) {
  json jt;
  jt["title"] = t.title;
  jt["description"] = t.description;
  json fields = json::array();
  for (const auto& f : t.fields)
    fields.push_back({{"key", f.key}, {"label", f.label}, {"unit", f.unit}, {"description", f.description}});
  jt["fields"] = fields;
  json recs = json::array();
  for (const auto& r : t.records) {
    json jr = {{"id", r.id}, {"name", r.name}};
    json tx = json::object();
    for (const auto& [k, v] : r.text) tx[k] = v;
    jr["text"] = tx;
    if (!r.text_sources.empty()) {
      json ts = json::object();
      for (const auto& [k, v] : r.text_sources) {
        json j = to_json(v);
        j.erase("value");
        ts[k] = j;
      }
      jr["text_sources"] = ts;
    }
    json vals = json::object();
    for (const auto& [k, v] : r.values) vals[k] = to_json(v);
    jr["values"] = vals;
    recs.push_back(jr);
  }
  jt["records"] = recs;
  return jt;
}

}  // namespace

json to_json(const Catalog& c) {
  json out;
  out["version"] = c.version;
  out["sources"] = sources_json(c);
  json tables = json::object();
  for (const auto& t : c.tables) tables[t.name] = table_json(t);
  out["tables"] = tables;
  return out;
}

json table_export(const Catalog& c, const Table& t) {
  return {{"sources", sources_json(c)}, {"table", t.name}, {"data", table_json(t)}};
}

}  // namespace mc
