// catalog.h - the historical data of the era (hardware, systems, clusters, models, prices, events),
// loaded from JSON tables under assets/catalog/. Every number carries its source and how sure we are.
//
// Layout of assets/catalog/:
//   index.json    {"version": 1, "sources": "sources.json", "tables": ["gpus.json", ...]}
//   sources.json  {"sources": [{"id", "title", "publisher", "date", "url", "note"}]}
//   <table>.json  {"table", "title", "description", "fields": [{"key","label","unit","description"}],
//                  "records": [{"id", "name", "text": {...}, "values": {KEY: {"value", "source",
//                               "confidence": "reported|inferred|assumed", "note"}}}]}
// A field of unit "date" holds a date as its source gives it: "2019", "2019-07" or "2019-07-22" (never a
// decimal year, which would print rounded: July 2019 as "2020"). A field of unit "year" holds a whole year.
// Field keys carry their unit (hbm_bytes, peak_fp16_tensor_flops, network_Gbps) and the table declares it
// again for display; the engine converts units nowhere else (see engine/core/units.h).
#pragma once

#include "core/json_doc.h"

#include <map>
#include <string>
#include <vector>

namespace mc {

// reported: printed by the source; inferred: derived by us from reported numbers (the note says how);
// assumed: not public, a reasoned guess the user may change.
enum class Confidence { reported, inferred, assumed };
const char* to_string(Confidence c);

struct Source {
  std::string id, title, publisher, date, url, note;
};

struct Sourced {
  // For a "date" field: the decimal year of the middle of the period `date` names (2019-07 -> 2019.54),
  // for ordering and plotting only; what is shown and exported is `date`.
  double value = 0;
  std::string date;    // "date" fields: "YYYY", "YYYY-MM" or "YYYY-MM-DD", as the source gives it; else empty
  std::string source;  // Source::id
  Confidence confidence = Confidence::reported;
  std::string note;
};

struct FieldDef {
  std::string key, label, unit, description;
};

struct Record {
  std::string id, name;
  std::vector<std::pair<std::string, std::string>> text;  // free-text attributes, file order
  std::map<std::string, Sourced> values;
  const Sourced* find(const std::string& key) const;
  // The value of `key`; throws std::out_of_range naming the record and key if it is absent.
  double get(const std::string& key) const;
  double get_or(const std::string& key, double fallback) const;
  std::string text_or(const std::string& key, const std::string& fallback) const;
};

struct Table {
  std::string name, title, description, file;
  std::vector<FieldDef> fields;
  std::vector<Record> records;
  const Record* find(const std::string& id) const;
  const FieldDef* field(const std::string& key) const;
};

struct Catalog {
  int version = 1;
  std::vector<Source> sources;
  std::vector<Table> tables;
  const Table* table(const std::string& name) const;
  const Source* source(const std::string& id) const;
};

// Loads <assets_dir>/catalog/index.json and everything it lists. Throws LoadError naming the file,
// line/column and key of the first problem (syntax, wrong type, unknown field, unknown source id, ...).
Catalog load_catalog(const std::string& assets_dir);

// Loads one table file (used by load_catalog and by tests of malformed files).
Table load_table(const std::string& path, const std::vector<Source>& sources);
std::vector<Source> load_sources(const std::string& path);

// The middle of the period a date names, as a decimal year ("2019-07-22" -> the middle of that day).
// Throws std::invalid_argument saying what is wrong for anything but YYYY, YYYY-MM or YYYY-MM-DD.
double decimal_year_of_date(const std::string& date);

// A value as the catalog shows it: the date as given for "date" fields, else format_quantity.
std::string display_value(const Sourced& v, const std::string& unit);

json to_json(const Catalog& c);
json to_json(const Sourced& s);

}  // namespace mc
