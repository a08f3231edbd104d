// url_state.cpp - see url_state.h.
#include "core/url_state.h"

#include <algorithm>
#include <cmath>

namespace mc {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Panel ids ("perf", "lab/scaling") and scenario ids ("gpt3-2020") are short words of these characters:
// a scenario id becomes a file name under scenarios/, so no '/', no "..", nothing a path could misuse.
bool plain_id(const std::string& s, bool allow_slash) {
  if (s.empty() || s.size() > 64 || s.find("..") != std::string::npos) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || (allow_slash && c == '/');
    if (!ok) return false;
  }
  return s.front() != '.' && s.front() != '/' && s.back() != '/';
}

// A value quoted in a problem: at most 40 bytes, control bytes and non-ASCII as %XX (it may be anything).
std::string quoted(const std::string& v) {
  std::string e = url_encode(v.size() > 40 ? v.substr(0, 40) : v);
  return "\"" + e + (v.size() > 40 ? "...\"" : "\"");
}

}  // namespace

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += char(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string url_encode(std::string_view s, std::string_view keep_also) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    const bool keep = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' ||
                      b == '_' || b == '.' || b == '~' || b == '/' ||
                      (b != '%' && b != '&' && b != '#' && b != '+' && keep_also.find(c) != std::string_view::npos);
    if (keep) {
      out += c;
    } else {
      out += '%';
      out += digits[b >> 4];
      out += digits[b & 15];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view q) {
  if (q.size() > kMaxQueryBytes) q = q.substr(0, kMaxQueryBytes);
  if (const size_t hash = q.find('#'); hash != std::string_view::npos) q = q.substr(0, hash);
  if (!q.empty() && q.front() == '?') q.remove_prefix(1);
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    const size_t amp = q.find('&');
    const std::string_view part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    out.emplace_back(url_decode(part.substr(0, eq)),
                     eq == std::string_view::npos ? std::string() : url_decode(part.substr(eq + 1)));
  }
  return out;
}

std::optional<int> parse_url_step(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');  // at most 5 digits: no overflow
  }
  if (n < 1 || n > kMaxUrlStep) return std::nullopt;
  return n - 1;
}

UrlState parse_url_state(std::string_view query) {
  UrlState st;
  if (query.size() > kMaxQueryBytes)
    st.problems.push_back("the address's query is " + std::to_string(query.size()) + " bytes; only the first " +
                          std::to_string(kMaxQueryBytes) + " were read (use a link the explorer made)");
  std::string step_text;
  bool have_step = false;
  // As URLSearchParams.get: the first occurrence of a key wins.
  bool seen_panel = false, seen_scenario = false, seen_present = false;
  for (const auto& [k, v] : parse_query(query)) {
    if (k == "panel" && !seen_panel) {
      seen_panel = true;
      if (plain_id(v, true))
        st.panel = v;
      else if (!v.empty())
        st.problems.push_back("panel=" + quoted(v) +
                              " is not a panel id; use one such as panel=perf or panel=lab/scaling");
    } else if (k == "scenario" && !seen_scenario) {
      seen_scenario = true;
      if (plain_id(v, false))
        st.scenario = v;
      else if (!v.empty()) {
        // The fix names real ids: the app adds the gallery's nearest to rejected_scenario.
        st.problems.push_back("scenario=" + quoted(v) +
                              " is not a scenario id (letters, digits, '-', '_', '.'; "
                              "no '/')");
        st.rejected_scenario = v.substr(0, 64);
      }
    } else if (k == "present" && !seen_present) {
      seen_present = true;
      if (v == "1" || v == "true" || v == "yes" || v.empty())
        st.present = true;  // "?present" alone too
      else if (v != "0" && v != "false" && v != "no")
        st.problems.push_back("present=" + quoted(v) + " is not on or off; use present=1 (or present=0)");
    } else if (k == "edits" || k.rfind("edits.", 0) == 0) {
      // edits.PART=...: one part of the explorer's state (a panel's config) as its differences from a fresh
      // page's; a bare edits= is the "Train a transformer" config's, as links wrote it before every part
      // travelled.
      const std::string part = k == "edits" ? std::string("estimate") : k.substr(6);
      bool seen = false;
      for (const auto& e : st.edits) seen = seen || e.first == part;
      if (seen) continue;
      if (!plain_id(part, false) || part.size() > 32 || part.find('.') != std::string::npos) {
        st.problems.push_back("edits." + quoted(part) +
                              " was ignored: it names no part of the explorer's state; copy the link again from "
                              "the explorer");
        continue;
      }
      if (v.empty()) continue;  // nothing changed: as if absent
      try {
        (void)apply_config_edits(nlohmann::json::object(), v);  // the syntax; the app applies it to its base
        st.edits.emplace_back(part, v);
      } catch (const std::invalid_argument& e) {
        st.problems.push_back(k + "=" + quoted(v) + " was ignored: " + e.what() +
                              "; copy the link again from the explorer");
      }
    } else if (k == "step" && !have_step) {
      have_step = true;
      step_text = v;
    }
  }
  if (have_step) {
    if (const std::optional<int> n = parse_url_step(step_text)) {
      st.step = *n;
    } else {
      st.problems.push_back("step=" + mc::quoted(step_text) + " is not a step number; use 1 to " +
                            std::to_string(kMaxUrlStep) + " (the class starts at step 1)");
    }
    if (st.scenario.empty() && st.step >= 0) {
      st.problems.push_back("step=" + step_text + " without a scenario was ignored; add scenario=ID");
      st.step = -1;
    }
  }
  return st;
}

std::string to_query(const UrlState& s) {
  std::string q;
  // Appended piece by piece: gcc 12 warns (-Wrestrict, a false positive) on one chained operator+ here.
  auto add = [&](const std::string& k, const std::string& v, std::string_view keep_also = "") {
    q += q.empty() ? '?' : '&';
    q += k;
    q += '=';
    q += url_encode(v, keep_also);
  };
  if (!s.panel.empty()) add("panel", s.panel);
  if (!s.scenario.empty()) add("scenario", s.scenario);
  if (!s.scenario.empty() && s.step >= 0) add("step", std::to_string(s.step + 1));
  if (s.present) add("present", "1");
  for (const auto& [part, e] : s.edits)
    if (!e.empty()) add("edits." + part, e, ",:");
  return q;
}

// ---- edited configs ----------------------------------------------------------------------------------

namespace {

using nlohmann::json;

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool empty_section(const json& v) { return v.is_object() && v.empty(); }

// A value as an edits item writes it: a bare word when it reads back as the same string, else JSON.
std::string edit_value(const json& v) {
  if (v.is_string()) {
    const std::string& w = v.get_ref<const std::string&>();
    bool bare = !w.empty() && w.size() <= 64;
    for (char c : w) bare = bare && (key_char(c) || c == '.');
    // A word that JSON would read as something else ("true", "12", "1e3") is quoted.
    if (bare) {
      const json as = json::parse(w, nullptr, false);
      if (as.is_discarded()) return w;
    }
  }
  // A whole number held as a double (a typed config's Gb/s) reads as the person typed it: "100", not "100.0".
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15) return std::to_string((long long)d);
  }
  return v.dump();
}

void diff(const json& base, const json& edited, const std::string& path, std::vector<std::string>& out) {
  for (const auto& [k, v] : edited.items()) {
    if (k.empty() || !std::all_of(k.begin(), k.end(), key_char))
      throw std::invalid_argument("the key \"" + k.substr(0, 40) + "\" cannot be written in an address");
    const std::string p = path.empty() ? k : path + "." + k;
    const json* b = base.is_object() && base.contains(k) ? &base.at(k) : nullptr;
    if (v.is_object() && b && b->is_object()) {
      diff(*b, v, p, out);
    } else if (!b) {
      if (!empty_section(v)) out.push_back(p + ":" + edit_value(v));
    } else if (*b != v) {
      out.push_back(p + ":" + edit_value(v));
    }
  }
  if (base.is_object())
    for (const auto& [k, v] : base.items())
      if (!edited.contains(k) && !empty_section(v)) {
        if (k.empty() || !std::all_of(k.begin(), k.end(), key_char))
          throw std::invalid_argument("the key \"" + k.substr(0, 40) + "\" cannot be written in an address");
        out.push_back("~" + (path.empty() ? k : path + "." + k));
      }
}

// The end of the JSON text starting at s[i] ('"', '[' or '{'): brackets balanced outside strings.
size_t json_end(std::string_view s, size_t i) {
  int depth = 0;
  bool in_string = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

std::vector<std::string> split_path(std::string_view p, const std::string& item) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    const size_t dot = p.find('.', start);
    const std::string_view k = p.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (k.empty() || !std::all_of(k.begin(), k.end(), key_char))
      throw std::invalid_argument("\"" + item + "\" has no path of keys (letters, digits, '_', '-' joined by '.')");
    keys.emplace_back(k);
    if (keys.size() > 8) throw std::invalid_argument("\"" + item + "\" is nested deeper than a config");
    if (dot == std::string_view::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

std::string encode_config_edits(const json& base, const json& edited) {
  if (!edited.is_object()) throw std::invalid_argument("only a config object can be written in an address");
  std::vector<std::string> items;
  diff(base, edited, "", items);
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

json apply_config_edits(const json& base, std::string_view edits) {
  if (edits.size() > kMaxEditsBytes)
    throw std::invalid_argument("the edits are " + std::to_string(edits.size()) + " bytes, more than the " +
                                std::to_string(kMaxEditsBytes) + " a link of the explorer holds");
  json out = base.is_object() ? base : json::object();
  size_t i = 0, n_items = 0;
  while (i < edits.size()) {
    if (++n_items > kMaxEditItems)
      throw std::invalid_argument("more than " + std::to_string(kMaxEditItems) + " changes");
    const bool remove = edits[i] == '~';
    if (remove) ++i;
    // The path runs to ':' (a set) or to ',' or the end (a removal).
    size_t end_path = i;
    while (end_path < edits.size() && edits[end_path] != ':' && edits[end_path] != ',') ++end_path;
    const std::string_view path = edits.substr(i, end_path - i);
    const std::string item(edits.substr(remove ? i - 1 : i, std::min<size_t>(40, end_path - i + 1)));
    const std::vector<std::string> keys = split_path(path, item);
    json* at = &out;
    for (size_t k = 0; k + 1 < keys.size(); ++k) {
      if (!at->contains(keys[k])) (*at)[keys[k]] = json::object();
      at = &(*at)[keys[k]];
      if (!at->is_object())
        throw std::invalid_argument("\"" + item + "\" goes through \"" + keys[k].substr(0, 40) +
                                    "\", which is not a section");
    }
    i = end_path;
    if (remove) {
      if (i < edits.size() && edits[i] == ':')
        throw std::invalid_argument("\"" + item + "\" removes a key and cannot also give it a value");
      at->erase(keys.back());
    } else {
      if (i >= edits.size() || edits[i] != ':')
        throw std::invalid_argument("\"" + item + "\" has no value (write path:value, or ~path to remove)");
      ++i;
      size_t end = i;
      if (i < edits.size() && (edits[i] == '"' || edits[i] == '[' || edits[i] == '{'))
        end = json_end(edits, i);
      else
        while (end < edits.size() && edits[end] != ',') ++end;
      if (end == std::string_view::npos || end == i)
        throw std::invalid_argument("\"" + item + "\" has no value, or an unclosed quote or bracket");
      const std::string text(edits.substr(i, end - i));
      json v = json::parse(text, nullptr, false);
      if (v.is_discarded()) {
        const bool word = std::all_of(text.begin(), text.end(), [](char c) { return key_char(c) || c == '.'; });
        if (!word) throw std::invalid_argument("\"" + item + "\" has a value that is neither a word nor JSON");
        v = text;
      }
      (*at)[keys.back()] = std::move(v);
      i = end;
    }
    if (i < edits.size()) {
      if (edits[i] != ',') throw std::invalid_argument("\"" + item + "\" is not followed by ','");
      if (++i == edits.size()) throw std::invalid_argument("the edits end with ','");
    }
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_id(std::string_view wanted, const std::vector<std::string>& ids) {
  auto lower = [](std::string_view s) {
    std::string out(s.substr(0, 200));  // an address is typed by people; the distance is quadratic
    for (char& c : out) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    return out;
  };
  const std::string w = lower(wanted);
  std::string best;
  size_t best_d = ~size_t(0);
  for (const std::string& id : ids)
    if (const size_t d = edit_distance(w, lower(id)); d < best_d) best_d = d, best = id;
  return best_d <= std::max<size_t>(3, w.size() / 3) ? best : std::string();
}

}  // namespace mc
