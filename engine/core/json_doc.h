// json_doc.h - JSON files with error locations.
//
// Every file the engine reads (catalog tables, configs, scenarios) goes through JsonDoc so that a bad
// value is reported as  FILE:LINE:COLUMN: key "a/b/3/c": what was expected, what was found.
// nlohmann::json does not keep source positions, so JsonDoc scans the text once more with a small
// tokenizer that records where every object key and array element starts (by JSON pointer).
//
// Usage:
//   JsonDoc doc = JsonDoc::load("assets/catalog/gpus.json");      // throws LoadError on bad syntax
//   JsonCursor root = doc.root();
//   root.only_keys({"title", "records"});                           // unknown key -> LoadError
//   for (JsonCursor r : root["records"].elements()) { double x = r["value"].number(); }
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mc {

using json = nlohmann::json;

// A located error. what() is the full one-line message; the fields let a UI or a test pick it apart.
class LoadError : public std::runtime_error {
 public:
  LoadError(std::string file, int line, int column, std::string key, std::string message);

 private:
  LoadError(std::string file, int line, int column, std::string key, std::string message, int /*printable*/);

 public:
  const std::string file;
  const int line;             // 1-based; 0 when unknown
  const int column;           // 1-based; 0 when unknown
  const std::string key;      // JSON pointer without the leading '/', e.g. "records/3/hbm_bytes"
  const std::string message;  // what was wrong and what to do
};

class JsonCursor;

// Size limits by kind of file (docs/testing.md lists them): a file over its limit is refused before it is
// parsed, naming its size and the limit. The largest shipped files are ~40 KB (a catalog table) and ~20 KB
// (a scenario); a checkpoint's header holds one loss per step trained.
constexpr size_t kMaxConfigBytes = size_t(4) << 20;              // estimate/search/simulate/train configs
constexpr size_t kMaxScenarioBytes = size_t(4) << 20;            // scenarios, answers files
constexpr size_t kMaxCatalogBytes = size_t(16) << 20;            // one catalog table or index
constexpr size_t kMaxCheckpointHeaderBytes = size_t(256) << 20;  // the JSON header of a checkpoint
constexpr size_t kMaxJsonBytes = size_t(16) << 20;               // any other JSON input (the default)
// Arrays and objects nested deeper than this are refused (every reader recurses over the value).
constexpr int kMaxJsonDepth = 128;
// A located value's JSON pointer is at most this long: a value whose pointer would be longer (long keys,
// deep nesting) shares its nearest such ancestor's pointer and place. Cursors and the locator hold one
// pointer per value, so this bounds their memory by the value count (a crafted file of long keys nested
// deep asked for terabytes); real files' pointers ("records/12/values/hbm_bytes") are far shorter.
constexpr size_t kMaxPointerBytes = 128;

class JsonDoc {
 public:
  // Parses text; `file` is only used in messages. Throws LoadError (with line/column) on a syntax error,
  // for text over `max_bytes` or nested deeper than kMaxJsonDepth.
  static JsonDoc parse(std::string text, std::string file, size_t max_bytes = kMaxJsonBytes);
  // Reads and parses a file. Throws LoadError naming the file if it cannot be read or is over `max_bytes`
  // (checked before reading it).
  static JsonDoc load(const std::string& path, size_t max_bytes = kMaxJsonBytes);

  JsonCursor root() const;
  const std::string& file() const { return file_; }
  const json& value() const { return root_; }

  // Line/column (1-based) of the key or element at `pointer` ("" is the root); {0,0} if unknown.
  std::pair<int, int> where(const std::string& pointer) const;
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const;

 private:
  std::string file_;
  std::string text_;
  json root_;
  std::unordered_map<std::string, size_t> offsets_;  // JSON pointer -> byte offset in text_
  std::vector<size_t> line_starts_;                  // byte offset where each line begins
  // UTF-8 continuation bytes before each kBlock-byte block: a column is counted in code points in
  // O(kBlock), not O(line length) (a one-line 4 MiB file located value by value was quadratic).
  static constexpr size_t kBlock = 1024;
  std::vector<size_t> continuations_before_block_;
  size_t continuations_before(size_t offset) const;
  std::pair<int, int> line_col(size_t offset) const;

 public:
  // Byte offset of the value at `pointer` (for ordering); SIZE_MAX if unknown.
  size_t offset(const std::string& pointer) const;
};

// A typed, located view of one value inside a JsonDoc. Cheap to copy.
class JsonCursor {
 public:
  JsonCursor(const JsonDoc* doc, std::string pointer, const json* value)
      : doc_(doc), ptr_(std::move(pointer)), v_(value) {}

  const json& value() const { return *v_; }
  const std::string& pointer() const { return ptr_; }
  const JsonDoc& doc() const { return *doc_; }
  std::string key_name() const;  // last path component

  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  bool has(std::string_view key) const;
  JsonCursor operator[](std::string_view key) const;  // missing key -> LoadError
  std::optional<JsonCursor> get(std::string_view key) const;
  std::vector<JsonCursor> elements() const;                       // array elements (must be an array)
  std::vector<std::pair<std::string, JsonCursor>> items() const;  // object members in file order

  double number() const;                         // any JSON number; NaN/inf cannot occur in JSON
  double number_in(double lo, double hi) const;  // with a range check
  long long integer() const;                     // must be integral
  long long integer_in(long long lo, long long hi) const;
  bool boolean() const;
  std::string string() const;
  std::string one_of(std::initializer_list<std::string_view> choices) const;
  std::string one_of(const std::vector<std::string>& choices) const;  // a list known at run time (a registry's)

  double number_or(std::string_view key, double fallback) const;
  long long integer_or(std::string_view key, long long fallback) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;

  // Rejects keys not in `allowed` (a misspelt key is an error, never silently ignored).
  void only_keys(std::initializer_list<std::string_view> allowed) const;
  void only_keys(const std::vector<std::string>& allowed) const;

  [[noreturn]] void fail(const std::string& message) const { doc_->fail(ptr_, message); }

 private:
  const JsonDoc* doc_;
  std::string ptr_;
  const json* v_;
  static std::string type_name(const json& v);
  [[noreturn]] void fail_type(const char* expected) const;
};

// JSON pointer escaping of one key ("a/b" -> "a~1b").
std::string json_pointer_escape(std::string_view key);

}  // namespace mc
