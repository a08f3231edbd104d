// json_doc.cpp - see json_doc.h. The locator is a minimal recursive JSON scanner; it runs only after
// nlohmann::json has accepted the text, so it may assume the text is well formed.
#include "json_doc.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mc {

namespace {
// The pointer of a child: parent/key, or the parent's own when that would pass kMaxPointerBytes.
std::string child_pointer(const std::string& parent, std::string_view escaped) {
  if (parent.size() + 1 + escaped.size() > kMaxPointerBytes) return parent;
  std::string p;
  p.reserve(parent.size() + 1 + escaped.size());
  return p.append(parent).append(1, '/').append(escaped);
}

// A message may quote the input (an unknown id, a key): control bytes and invalid UTF-8 are written as
// \xNN, and a quote longer than a reader can use is cut with a count of what was left out.
std::string printable(const std::string& in, size_t max_bytes = 2000) {
  std::string out;
  auto hex = [&](unsigned char b) {
    static const char* d = "0123456789abcdef";
    out += "\\x";
    out += d[b >> 4];
    out += d[b & 15];
  };
  size_t i = 0;
  while (i < in.size() && out.size() < max_bytes) {
    const unsigned char b = static_cast<unsigned char>(in[i]);
    if (b < 0x20 || b == 0x7f) {
      hex(b), ++i;
      continue;
    }
    if (b < 0x80) {
      out += char(b), ++i;
      continue;
    }
    // Length of a well-formed UTF-8 sequence starting here, or 0.
    const size_t n = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    bool ok = n > 0 && i + n <= in.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(in[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(in, i, n), i += n;
    } else {
      hex(b), ++i;
    }
  }
  if (i < in.size()) out += "... (" + std::to_string(in.size() - i) + " more bytes)";
  return out;
}
}  // namespace

LoadError::LoadError(std::string f, int l, int c, std::string k, std::string m0)
    : LoadError(std::move(f), l, c, printable(k, 300), printable(m0), 0) {}

LoadError::LoadError(std::string f, int l, int c, std::string k, std::string m, int)
    : std::runtime_error([&] {
        std::ostringstream os;
        os << (f.empty() ? "<input>" : f);
        if (l > 0) os << ':' << l << ':' << c;
        os << ": ";
        if (!k.empty()) os << "key \"" << k << "\": ";
        os << m;
        return os.str();
      }()),
      file(std::move(f)),
      line(l),
      column(c),
      key(std::move(k)),
      message(std::move(m)) {}

std::string json_pointer_escape(std::string_view key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~')
      out += "~0";
    else if (ch == '/')
      out += "~1";
    else
      out += ch;
  }
  return out;
}

namespace {

// A code point as UTF-8 (a lone surrogate as its three-byte form, which nlohmann would have refused).
void append_utf8(std::string& v, uint32_t cp) {
  if (cp < 0x80) {
    v += char(cp);
  } else if (cp < 0x800) {
    v += char(0xC0 | (cp >> 6)), v += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    v += char(0xE0 | (cp >> 12)), v += char(0x80 | ((cp >> 6) & 0x3F)), v += char(0x80 | (cp & 0x3F));
  } else {
    v += char(0xF0 | (cp >> 18)), v += char(0x80 | ((cp >> 12) & 0x3F)), v += char(0x80 | ((cp >> 6) & 0x3F)),
        v += char(0x80 | (cp & 0x3F));
  }
}

// Records the byte offset of every value's key (objects) or first character (arrays) by JSON pointer.
// Bounded: the pointers stored hold at most `budget` bytes in all and each at most kMaxPointer bytes. A
// crafted file of long keys nested deep with many elements under them would otherwise need (key bytes x
// depth) per element, terabytes from a few MB; past the bound, values are scanned without being recorded
// (a message then points at the nearest recorded ancestor) and duplicate keys are still found.
struct Locator {
  static constexpr size_t kMaxPointer = kMaxPointerBytes;
  const std::string& s;
  std::unordered_map<std::string, size_t>& out;
  size_t i = 0;
  size_t budget = 0;  // bytes of pointers still to be stored
  struct Duplicate {
    std::string pointer;  // of the second key (shortened when unrecorded)
    size_t at, first_at;
  };
  std::vector<Duplicate> duplicates;

  bool record(const std::string& p, size_t at) {
    if (p.size() > kMaxPointer || p.size() > budget) return false;
    budget -= p.size();
    out.emplace(p, at);
    return true;
  }

  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  // At '"'; returns the key decoded as nlohmann decodes it (every escape, \uXXXX and surrogate pairs to
  // UTF-8), so "\u0061" and "a" are one key (a duplicate) and a pointer names the key nlohmann stores.
  // The text already parsed as JSON, so escapes are well formed; a stray one is kept as written.
  std::string str() {
    std::string v;
    ++i;
    auto hex4 = [&](size_t at, uint32_t& cp) {
      if (at + 4 > s.size()) return false;
      cp = 0;
      for (size_t k = at; k < at + 4; ++k) {
        const char h = s[k];
        const int d = h >= '0' && h <= '9'   ? h - '0'
                      : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                             : -1;
        if (d < 0) return false;
        cp = cp * 16 + uint32_t(d);
      }
      return true;
    };
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) {
        const char e = s[i + 1];
        uint32_t cp = 0;
        if (e == 'u' && hex4(i + 2, cp)) {
          i += 6;
          uint32_t lo = 0;
          if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i] == '\\' && s[i + 1] == 'u' && hex4(i + 2, lo) &&
              lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
          append_utf8(v, cp);
          continue;
        }
        switch (e) {
          case 'b':
            v += '\b';
            break;
          case 'f':
            v += '\f';
            break;
          case 'n':
            v += '\n';
            break;
          case 'r':
            v += '\r';
            break;
          case 't':
            v += '\t';
            break;
          case '"':
          case '\\':
          case '/':
            v += e;
            break;
          default:
            v += '\\', v += e;
        }
        i += 2;
      } else {
        v += s[i++];
      }
    }
    ++i;
    return v;
  }
  // `ptr` null: an unrecorded subtree (scanned for its extent and duplicate keys only).
  void value(const std::string* ptr, int depth) {
    ws();
    if (i >= s.size() || depth > 512) return;
    char c = s[i];
    if (c == '{') {
      ++i;
      ws();
      if (i < s.size() && s[i] == '}') {
        ++i;
        return;
      }
      std::unordered_map<std::string, size_t> seen;  // this object's keys (unrecorded objects only)
      while (i < s.size()) {
        ws();
        size_t at = i;
        std::string k = str();
        std::string p;
        const std::string* child = nullptr;
        if (ptr) {
          p = *ptr + "/" + json_pointer_escape(k);
          if (auto it = out.find(p); it != out.end())
            duplicates.push_back({p, at, it->second});
          else if (record(p, at))
            child = &p;
        }
        if (!child) {
          if (auto [it, fresh] = seen.emplace(k, at); !fresh)
            duplicates.push_back({(ptr && ptr->size() <= kMaxPointer ? *ptr : std::string("/...")) + "/" +
                                      json_pointer_escape(k.substr(0, 200)),
                                  at, it->second});
        }
        ws();
        ++i;  // ':'
        value(child, depth + 1);
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        ++i;  // '}'
        return;
      }
    } else if (c == '[') {
      ++i;
      ws();
      if (i < s.size() && s[i] == ']') {
        ++i;
        return;
      }
      for (size_t n = 0; i < s.size(); ++n) {
        ws();
        std::string p;
        const std::string* child = nullptr;
        if (ptr) {
          p = *ptr + "/" + std::to_string(n);
          if (record(p, i)) child = &p;
        }
        value(child, depth + 1);
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        ++i;  // ']'
        return;
      }
    } else if (c == '"') {
      str();
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' &&
             s[i] != '\t')
        ++i;
    }
  }
};

}  // namespace

JsonDoc JsonDoc::parse(std::string text, std::string file, size_t max_bytes) {
  JsonDoc d;
  d.file_ = std::move(file);
  d.text_ = std::move(text);
  if (d.text_.size() > max_bytes)
    throw LoadError(d.file_, 0, 0, "",
                    "the input is " + std::to_string(d.text_.size()) + " bytes; a file of this kind is at most " +
                        std::to_string(max_bytes) + " bytes (" + std::to_string(max_bytes >> 20) +
                        " MiB): is this the right file?");
  d.line_starts_.push_back(0);
  size_t continuations = 0;
  for (size_t k = 0; k < d.text_.size(); ++k) {
    if (k % kBlock == 0) d.continuations_before_block_.push_back(continuations);
    if (d.text_[k] == '\n') d.line_starts_.push_back(k + 1);
    continuations += (static_cast<unsigned char>(d.text_[k]) & 0xC0) == 0x80;
  }
  if (d.text_.size() % kBlock == 0) d.continuations_before_block_.push_back(continuations);  // the end's block
  if (size_t nul = d.text_.find('\0'); nul != std::string::npos) {
    auto [l, c] = d.line_col(nul);
    throw LoadError(d.file_, l, c, "", "a NUL byte at this place: a JSON file is text (is this the right file?)");
  }
  // Nesting is bounded before anything recurses over the value (the locator here, dump() and == in
  // nlohmann, every reader): a crafted "[[[[..." a million deep would otherwise overflow the stack.
  {
    int depth = 0;
    bool in_string = false;
    for (size_t k = 0; k < d.text_.size(); ++k) {
      const char ch = d.text_[k];
      if (in_string) {
        if (ch == '\\')
          ++k;
        else if (ch == '"')
          in_string = false;
      } else if (ch == '"') {
        in_string = true;
      } else if (ch == '[' || ch == '{') {
        if (++depth > kMaxJsonDepth) {
          auto [l, c] = d.line_col(k);
          throw LoadError(d.file_, l, c, "",
                          "arrays and objects are nested more than " + std::to_string(kMaxJsonDepth) +
                              " deep here: no input of this program nests so deep (is this the right file?)");
        }
      } else if (ch == ']' || ch == '}') {
        --depth;
      }
    }
  }
  try {
    d.root_ = json::parse(d.text_);
  } catch (const json::parse_error& e) {
    // e.byte is 1-based, pointing just past the offending character.
    size_t off = e.byte > 0 ? e.byte - 1 : 0;
    auto [l, c] = d.line_col(std::min(off, d.text_.size()));
    std::string msg = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 3, column 5: " prefix.
    if (auto p = msg.find(": "); p != std::string::npos && msg.rfind("[json.exception", 0) == 0)
      msg = msg.substr(p + 2);
    throw LoadError(d.file_, l, c, "", "invalid JSON: " + msg + " (fix the syntax at this place)");
  } catch (const json::out_of_range& e) {
    // nlohmann's only out_of_range while parsing: a number beyond a double's range (406, "number overflow
    // parsing '1e400'"). It carries no byte offset: the number is found by its own text.
    std::string msg = e.what(), number;
    if (auto a = msg.find('\''), b = msg.rfind('\''); a != std::string::npos && b > a)
      number = msg.substr(a + 1, b - a - 1);
    const size_t at = number.empty() ? std::string::npos : d.text_.find(number);
    auto [l, c] = at == std::string::npos ? std::pair<int, int>{0, 0} : d.line_col(at);
    throw LoadError(d.file_, l, c, "",
                    "the number " + (number.size() > 40 ? number.substr(0, 40) + "..." : number) +
                        " is beyond the range of a double (about 1.8e308): write a smaller number");
  }
  d.offsets_.emplace("", 0);
  Locator loc{d.text_, d.offsets_, 0, 8 * d.text_.size() + (size_t(1) << 20), {}};
  const std::string root_pointer;
  loc.value(&root_pointer, 0);
  // nlohmann keeps the last of two equal keys silently; a config that says two things is refused.
  if (!loc.duplicates.empty()) {
    const Locator::Duplicate& dup = loc.duplicates.front();
    const std::string& ptr = dup.pointer;
    auto [l, c] = d.line_col(dup.at);
    auto [l0, c0] = d.line_col(dup.first_at);
    throw LoadError(d.file_, l, c, ptr.substr(1),
                    "this key appears twice in its object (first at line " + std::to_string(l0) + ", column " +
                        std::to_string(c0) + "): keep one");
  }
  return d;
}

JsonDoc JsonDoc::load(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path, 0, 0, "", "cannot open the file (check the path and permissions)");
  // The size is checked before reading: a 200 MB file is refused at once, not after parsing it.
  in.seekg(0, std::ios::end);
  if (const std::streamoff n = in.tellg(); n > 0 && size_t(n) > max_bytes)
    throw LoadError(path, 0, 0, "",
                    "the file is " + std::to_string(n) + " bytes; a file of this kind is at most " +
                        std::to_string(max_bytes) + " bytes (" + std::to_string(max_bytes >> 20) +
                        " MiB): is this the right file?");
  in.seekg(0, std::ios::beg);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, max_bytes);
}

size_t JsonDoc::continuations_before(size_t offset) const {
  offset = std::min(offset, text_.size());
  const size_t block = offset / kBlock;
  size_t n = continuations_before_block_[block];
  for (size_t k = block * kBlock; k < offset; ++k) n += (static_cast<unsigned char>(text_[k]) & 0xC0) == 0x80;
  return n;
}

std::pair<int, int> JsonDoc::line_col(size_t offset) const {
  // Binary search of the line; the column counts UTF-8 code points from the line's start: O(log lines + kBlock).
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = size_t(it - line_starts_.begin());  // 1-based
  size_t start = line_starts_[line - 1];
  const size_t code_points = (offset - start) - (continuations_before(offset) - continuations_before(start));
  return {int(line), int(code_points) + 1};
}

size_t JsonDoc::offset(const std::string& pointer) const {
  auto it = offsets_.find(pointer);
  return it == offsets_.end() ? SIZE_MAX : it->second;
}

std::pair<int, int> JsonDoc::where(const std::string& pointer) const {
  auto it = offsets_.find(pointer);
  if (it == offsets_.end()) return {0, 0};
  return line_col(it->second);
}

void JsonDoc::fail(const std::string& pointer, const std::string& message) const {
  // Walk up to the nearest located ancestor (a missing key is reported at its parent object).
  std::string p = pointer;
  auto lc = where(p);
  while (lc.first == 0 && !p.empty()) {
    p = p.substr(0, p.rfind('/'));
    lc = where(p);
  }
  throw LoadError(file_, lc.first, lc.second, pointer.empty() ? "" : pointer.substr(1), message);
}

JsonCursor JsonDoc::root() const { return JsonCursor(this, "", &root_); }

// ---- JsonCursor ------------------------------------------------------------------------------------

std::string JsonCursor::type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string \"" + v.get<std::string>().substr(0, 40) + "\"";
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "the number " + v.dump();
    default:
      return "an unsupported value";
  }
}

void JsonCursor::fail_type(const char* expected) const {
  fail(std::string("expected ") + expected + ", found " + type_name(*v_));
}

std::string JsonCursor::key_name() const {
  auto p = ptr_.rfind('/');
  return p == std::string::npos ? ptr_ : ptr_.substr(p + 1);
}

bool JsonCursor::has(std::string_view key) const { return v_->is_object() && v_->contains(key); }

JsonCursor JsonCursor::operator[](std::string_view key) const {
  if (!v_->is_object()) fail_type("an object");
  auto it = v_->find(key);
  if (it == v_->end())
    doc_->fail(ptr_ + "/" + json_pointer_escape(key), "missing required key \"" + std::string(key) + "\"");
  return JsonCursor(doc_, child_pointer(ptr_, json_pointer_escape(key)), &*it);
}

std::optional<JsonCursor> JsonCursor::get(std::string_view key) const {
  if (!v_->is_object()) fail_type("an object");
  auto it = v_->find(key);
  if (it == v_->end()) return std::nullopt;
  return JsonCursor(doc_, child_pointer(ptr_, json_pointer_escape(key)), &*it);
}

std::vector<JsonCursor> JsonCursor::elements() const {
  if (!v_->is_array()) fail_type("an array");
  std::vector<JsonCursor> out;
  out.reserve(v_->size());
  for (size_t n = 0; n < v_->size(); ++n) out.emplace_back(doc_, child_pointer(ptr_, std::to_string(n)), &(*v_)[n]);
  return out;
}

std::vector<std::pair<std::string, JsonCursor>> JsonCursor::items() const {
  if (!v_->is_object()) fail_type("an object");
  std::vector<std::pair<std::string, JsonCursor>> out;
  for (auto it = v_->begin(); it != v_->end(); ++it)
    out.emplace_back(it.key(), JsonCursor(doc_, child_pointer(ptr_, json_pointer_escape(it.key())), &it.value()));
  // nlohmann::json sorts keys; restore file order so tables keep the author's column order.
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return doc_->offset(a.second.pointer()) < doc_->offset(b.second.pointer());
  });
  return out;
}

double JsonCursor::number() const {
  if (!v_->is_number()) fail_type("a number");
  return v_->get<double>();
}

double JsonCursor::number_in(double lo, double hi) const {
  double x = number();
  if (!(x >= lo && x <= hi)) {
    std::ostringstream os;
    os << "value " << x << " is out of range: expected between " << lo << " and " << hi;
    fail(os.str());
  }
  return x;
}

long long JsonCursor::integer() const {
  if (!v_->is_number()) fail_type("an integer");
  const bool too_big = v_->is_number_unsigned() ? v_->get<unsigned long long>() > 9000000000000000ULL
                       : v_->is_number_integer()
                           ? (v_->get<long long>() > 9000000000000000LL || v_->get<long long>() < -9000000000000000LL)
                           : std::fabs(v_->get<double>()) > 9.0e15;
  if (too_big && (v_->is_number_integer() || std::floor(v_->get<double>()) == v_->get<double>()))
    fail("value " + v_->dump() + " is out of range: an integer here is at most 9e15 in magnitude");
  if (v_->is_number_integer()) return v_->get<long long>();
  double x = v_->get<double>();
  if (std::floor(x) != x) fail_type("an integer");
  return static_cast<long long>(x);
}

long long JsonCursor::integer_in(long long lo, long long hi) const {
  if (v_->is_number_float()) {  // compare before converting: 1e308 must not wrap into range
    const double d = v_->get<double>();
    if (std::floor(d) == d && (d < double(lo) || d > double(hi)))
      fail("value " + v_->dump() + " is out of range: expected between " + std::to_string(lo) + " and " +
           std::to_string(hi));
  }
  long long x = integer();
  if (x < lo || x > hi)
    fail("value " + std::to_string(x) + " is out of range: expected between " + std::to_string(lo) + " and " +
         std::to_string(hi));
  return x;
}

bool JsonCursor::boolean() const {
  if (!v_->is_boolean()) fail_type("true or false");
  return v_->get<bool>();
}

std::string JsonCursor::string() const {
  if (!v_->is_string()) fail_type("a string");
  return v_->get<std::string>();
}

std::string JsonCursor::one_of(std::initializer_list<std::string_view> choices) const {
  std::string s = string();
  std::string list;
  for (auto c : choices) {
    if (s == c) return s;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  fail("\"" + s + "\" is not allowed: expected one of " + list);
}

std::string JsonCursor::one_of(const std::vector<std::string>& choices) const {
  std::string s = string();
  std::string list;
  for (const std::string& c : choices) {
    if (s == c) return s;
    list += (list.empty() ? "" : ", ") + c;
  }
  fail("\"" + s + "\" is not allowed: expected one of " + list);
}

double JsonCursor::number_or(std::string_view key, double fallback) const {
  auto c = get(key);
  return c ? c->number() : fallback;
}
long long JsonCursor::integer_or(std::string_view key, long long fallback) const {
  auto c = get(key);
  return c ? c->integer() : fallback;
}
std::string JsonCursor::string_or(std::string_view key, std::string fallback) const {
  auto c = get(key);
  return c ? c->string() : fallback;
}
bool JsonCursor::boolean_or(std::string_view key, bool fallback) const {
  auto c = get(key);
  return c ? c->boolean() : fallback;
}

void JsonCursor::only_keys(const std::vector<std::string>& allowed) const {
  if (!v_->is_object()) fail_type("an object");
  for (auto it = v_->begin(); it != v_->end(); ++it) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      doc_->fail(ptr_ + "/" + json_pointer_escape(it.key()), "unknown key (a typo?): allowed keys here are " + list);
    }
  }
}

void JsonCursor::only_keys(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> v(allowed.begin(), allowed.end());
  only_keys(v);
}

}  // namespace mc
