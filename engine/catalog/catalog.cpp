// catalog.cpp - see catalog.h.
#include "catalog/catalog.h"

#include "core/format.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace mc {

const char* to_string(Confidence c) {
  switch (c) {
    case Confidence::reported: return "reported";
    case Confidence::inferred: return "inferred";
    case Confidence::assumed: return "assumed";
  }
  return "reported";
}

const Sourced* Record::find(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? nullptr : &it->second;
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
    Source src{s["id"].string(), s["title"].string(), s.string_or("publisher", ""), s.string_or("date", ""),
               s.string_or("url", ""), s.string_or("note", "")};
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
    if (auto tx = r.get("text"))
      for (auto& [k, v] : tx->items()) rec.text.emplace_back(k, v.string());
    for (auto& [key, v] : r["values"].items()) {
      if (!t.field(key)) {
        std::string list;
        for (const auto& f : t.fields) list += (list.empty() ? "" : ", ") + f.key;
        v.fail("unknown field (declare it under \"fields\" first): known fields are " + list);
      }
      v.only_keys({"value", "source", "confidence", "note"});
      Sourced s;
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
          v["value"].fail("a \"year\" field holds a whole year; for a month or a day declare the field with unit "
                          "\"date\" and write \"YYYY-MM\" or \"YYYY-MM-DD\" as the source gives it");
      }
      s.source = v["source"].string();
      bool known = false;
      for (const auto& src : sources) known = known || src.id == s.source;
      if (!known) v["source"].fail("unknown source id \"" + s.source + "\": add it to sources.json");
      std::string c = v["confidence"].one_of({"reported", "inferred", "assumed"});
      s.confidence = c == "reported" ? Confidence::reported : c == "inferred" ? Confidence::inferred : Confidence::assumed;
      s.note = v.string_or("note", "");
      if (s.confidence != Confidence::reported && s.note.empty())
        v.fail("an " + c + " value needs a \"note\" saying how it was obtained");
      rec.values.emplace(key, std::move(s));
    }
    t.records.push_back(std::move(rec));
  }
  return t;
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
  return c;
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

json to_json(const Sourced& s) {
  json j = {{"value", s.date.empty() ? json(s.value) : json(s.date)}, {"source", s.source},
            {"confidence", to_string(s.confidence)}};
  if (!s.note.empty()) j["note"] = s.note;
  return j;
}

json to_json(const Catalog& c) {
  json out;
  out["version"] = c.version;
  json srcs = json::array();
  for (const auto& s : c.sources)
    srcs.push_back({{"id", s.id}, {"title", s.title}, {"publisher", s.publisher}, {"date", s.date},
                    {"url", s.url}, {"note", s.note}});
  out["sources"] = srcs;
  json tables = json::object();
  for (const auto& t : c.tables) {
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
      json vals = json::object();
      for (const auto& [k, v] : r.values) vals[k] = to_json(v);
      jr["values"] = vals;
      recs.push_back(jr);
    }
    jt["records"] = recs;
    tables[t.name] = jt;
  }
  out["tables"] = tables;
  return out;
}

}  // namespace mc
