// catalog.h - the historical data of the era (hardware, systems, clusters, models, prices, events),
// loaded from JSON tables under assets/catalog/. Every number carries its source and how sure we are.
//
// Layout of assets/catalog/:
//   index.json    {"version": 1, "sources": "sources.json", "tables": ["gpus.json", ...]}
//   sources.json  {"sources": [{"id", "title", "publisher", "date", "url", "note"}]}
//   <table>.json  {"table", "title", "description", "fields": [{"key","label","unit","description"}],
//                  "records": [{"id", "name", "text": {...}, "values": {KEY: {"value", "source",
//                               "confidence": "reported|inferred|assumed", "note"}}}]}
// One fact lives in one place. A value that another table already holds is written as a reference,
//   KEY: {"from": "<table>/<record>/<key>", "scale": 0.5, "confidence": "...", "note": "..."}
// and load_catalog copies the value, source, confidence and note from there ("scale" multiplies the value
// and makes it at least inferred: a derived number, whose own note must say how). "confidence" may only
// weaken the origin's (an owned machine priced at a cloud rate is assumed, though the rate is inferred).
// A text attribute may carry its source the same way as a value, when it is a fact rather than prose:
//   "text": {"gpu": {"value": "v100-32gb", "source": "...", "confidence": "assumed", "note": "..."}}
// and may be a reference too: "text": {"gpu": {"from": "systems/azure-openai-2020-server/gpu"}}.
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
  std::string from;  // "<table>/<record>/<key>" when this value is a reference to that one; else empty
  double scale = 1;  // the referenced value times this
};

struct FieldDef {
  std::string key, label, unit, description;
};

struct Record {
  std::string id, name;
  std::vector<std::pair<std::string, std::string>> text;  // free-text attributes, file order
  std::map<std::string, Sourced> values;
  // Source and confidence of those text attributes that carry one (value, date unused).
  std::map<std::string, Sourced> text_sources;
  const Sourced* text_source(const std::string& key) const;
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
  // Values written as {"from": ...}, where they sit in the file, resolved by load_catalog.
  struct Reference {
    std::string record, key, pointer;
    int line = 0, column = 0;
    bool confidence_given = false, note_given = false;
    bool text = false;  // a text attribute (key names one of Record::text), not a value
  };
  std::vector<Reference> references;
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
// line/column and key of the first problem (syntax, wrong type, unknown field, unknown source id, a
// "from" that names nothing or a field of another unit, ...).
Catalog load_catalog(const std::string& assets_dir);

// Loads one table file (used by load_catalog and by tests of malformed files).
Table load_table(const std::string& path, const std::vector<Source>& sources);
std::vector<Source> load_sources(const std::string& path);
// Fills every {"from": ...} value of the tables from the value it names (see the layout above).
void resolve_references(std::vector<Table>& tables);
// Throws LoadError naming the file and the text attribute whose "{table/record/key}" names nothing.
void check_text_facts(const Catalog& c);

// The middle of the period a date names, as a decimal year ("2019-07-22" -> the middle of that day).
// Throws std::invalid_argument saying what is wrong for anything but YYYY, YYYY-MM or YYYY-MM-DD.
double decimal_year_of_date(const std::string& date);

// A value as the catalog shows it: the date as given for "date" fields, else format_quantity.
std::string display_value(const Sourced& v, const std::string& unit);

// Prose that states a fact the catalog holds names it rather than typing it again:
//   "{runs/gpt3-2020/params|words} parameters, {runs/gpt3-2020/train_flops|PF-days}, on V100s"
// "{table/record/key}" prints the value as display_value does; "|PF-days" prints a FLOPs value in
// petaflop/s-days (Brown et al. 2020, Table D.1 caption: 1 PF-day = 1e15 FLOP/s x 86400 s); "|words" a
// count as prose writes it ("175 billion"); "|percent" and "|times" a ratio ("34%", "300,000x"). `facts` are
// the values named, in order, for their sources and confidences. Throws std::invalid_argument naming the
// reference that names nothing. load_catalog checks every text attribute this way.
struct ExpandedText {
  std::string text;
  std::vector<const Sourced*> facts;
};
// `marks`: each fact that is not reported is followed by its confidence mark, " ~" inferred or " ?" assumed
// (the marks the UI's tables use, ui/widgets.h confidence_mark), so prose shows how sure a number is as a table cell
// does.
ExpandedText expand_facts(const Catalog& c, const std::string& text, bool marks = false);

json to_json(const Catalog& c);
json to_json(const Sourced& s);
// One table as the catalog's JSON export writes it, with every source (a record cites them by id):
// {"sources": [...], "table": name, "data": the table as in to_json(c)["tables"][name]}.
json table_export(const Catalog& c, const Table& t);

}  // namespace mc
