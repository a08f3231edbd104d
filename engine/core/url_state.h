// url_state.h - the explorer's state in the page URL: ?panel=perf&scenario=gpt3-2020&step=3 opens a panel,
// or a class at a step (1-based in the URL, as a teacher writes it). The browser shell reads the query
// string; this is the part that decides what it means, in plain C++ so that it is tested and fuzzed
// (tests/fuzz/fuzz_url_state.cpp) like every other input.
//
//   mc::UrlState s = mc::parse_url_state("?scenario=gpt3-2020&step=3");   // s.step == 2 (0-based)
//   for (const std::string& p : s.problems) show(p);                       // what was ignored, and why
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mc {

struct UrlState {
  std::string panel;     // a panel id ("perf", "lab/scaling"); "" = the default
  std::string scenario;  // a shipped scenario's id; "" = none
  int step = -1;         // 0-based step of that scenario; -1 = the start
  bool present = false;  // ?present=1: presenter mode (larger type, narration first)
  // ?edits.estimate=parallel.tp:4,cluster.gpus:256&edits.simulate=...: each part of the explorer's state a
  // person changed (a panel's config, keyed by the part's id), as its differences from a fresh page's
  // (encode_config_edits), in the order given; a bare ?edits= is the "estimate" part. Checked for syntax
  // here; the app knows the parts and applies them.
  std::vector<std::pair<std::string, std::string>> edits;
  std::vector<std::string> problems;  // parameters that were ignored, each with the reason and the fix
  // A scenario= value that is not an id (decoded, at most 64 bytes): the app names the real ids nearest it,
  // which only the scenario gallery knows.
  std::string rejected_scenario;
  bool operator==(const UrlState&) const = default;
};

// Limits: a URL is typed or pasted by people; anything longer is not a link the explorer made.
constexpr size_t kMaxQueryBytes = 4096;
constexpr int kMaxUrlStep = 10000;

// One query component decoded as the browser's URLSearchParams does: '+' is a space, %XX a byte, and a
// '%' not followed by two hex digits stays as written.
std::string url_decode(std::string_view s);
// The inverse for the characters a query value may not hold (unreserved ones are kept as they are, and
// the characters of `keep_also`: ",:" keeps an edits list readable, as browsers leave those in a query).
std::string url_encode(std::string_view s, std::string_view keep_also = "");

// The parameters of a query string (with or without its leading '?', a '#fragment' ignored), decoded,
// in order. At most kMaxQueryBytes are read.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query);

// "3" -> 2: a step as the URL gives it (1-based) to the 0-based index; nullopt unless it is a whole
// decimal number in [1, kMaxUrlStep] (no sign, no spaces, at most 5 digits).
std::optional<int> parse_url_step(std::string_view s);

// The state a query string asks for. Unknown parameters are ignored silently (other sites add their own,
// e.g. utm_source); a known one with an unusable value is ignored and listed in `problems`.
UrlState parse_url_state(std::string_view query);

// The query string ("?panel=...&scenario=...&step=N", only the parts that are set) for a state: what the
// explorer writes into the address as the class moves, so parse_url_state(to_query(s)) gives s back.
std::string to_query(const UrlState& s);

// An edited config in an address: only what differs from `base` (a panel's default config), compact and
// readable in a link. Items are separated by ',': "path:value" sets, "~path" removes a key of `base`; a path
// is keys joined by '.' (letters, digits, '_', '-'); a value is a JSON number, true, false or null, a bare
// word (letters, digits, '_', '-', '.') for a string, or JSON text for anything else ("\"a b\"", [1,2]).
//   encode_config_edits({"parallel":{"tp":8,"pp":16}}, {"parallel":{"tp":4,"pp":16},"software":"deepspeed"})
//     == "parallel.tp:4,software:deepspeed"
// An empty object counts as absent (panels add empty sections while reading a config). Throws
// std::invalid_argument for a key that cannot be written in a path.
std::string encode_config_edits(const nlohmann::json& base, const nlohmann::json& edited);
// `base` with `edits` applied: apply_config_edits(b, encode_config_edits(b, e)) equals e (up to empty
// objects). Throws std::invalid_argument naming the item at fault for malformed edits, or a path through a
// value that is not a section.
nlohmann::json apply_config_edits(const nlohmann::json& base, std::string_view edits);
constexpr size_t kMaxEditsBytes = 2000;
constexpr size_t kMaxEditItems = 64;

// Levenshtein distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b);
// The id of `ids` nearest `wanted` ignoring case, when it is near enough to be what was meant (at most a
// third of its letters wrong, or 3); "" otherwise.
std::string closest_id(std::string_view wanted, const std::vector<std::string>& ids);

}  // namespace mc
