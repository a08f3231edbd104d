// url_state.h - the explorer's state in the page URL: ?panel=perf&scenario=gpt3-2020&step=3 opens a panel,
// or a class at a step (1-based in the URL, as a teacher writes it). The browser shell reads the query
// string; this is the part that decides what it means, in plain C++ so that it is tested and fuzzed
// (tests/fuzz/fuzz_url_state.cpp) like every other input.
//
//   mc::UrlState s = mc::parse_url_state("?scenario=gpt3-2020&step=3");   // s.step == 2 (0-based)
//   for (const std::string& p : s.problems) show(p);                       // what was ignored, and why
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mc {

struct UrlState {
  std::string panel;                  // a panel id ("perf", "lab/scaling"); "" = the default
  std::string scenario;               // a shipped scenario's id; "" = none
  int step = -1;                      // 0-based step of that scenario; -1 = the start
  bool present = false;               // ?present=1: presenter mode (larger type, narration first)
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
// The inverse for the characters a query value may not hold (unreserved ones are kept as they are).
std::string url_encode(std::string_view s);

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

// Levenshtein distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b);
// The id of `ids` nearest `wanted` ignoring case, when it is near enough to be what was meant (at most a
// third of its letters wrong, or 3); "" otherwise.
std::string closest_id(std::string_view wanted, const std::vector<std::string>& ids);

}  // namespace mc
