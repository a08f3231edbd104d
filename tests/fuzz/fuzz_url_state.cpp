// fuzz_url_state.cpp - libFuzzer harness of the explorer's URL state (engine/core/url_state.h: what the
// web page's ?panel=&scenario=&step= means). Invariants: what is accepted is a plain id and a step in
// range; the state written back as a query string parses to the same state with no problem; decoding
// what was encoded gives the bytes back.
#include "core/url_state.h"
#include "fuzz_common.h"

MC_FUZZ_TARGET(url_state) {
  const std::string_view q(reinterpret_cast<const char*>(data), size);
  const mc::UrlState s = mc::parse_url_state(q);
  if (s.step < -1 || s.step >= mc::kMaxUrlStep) mc::fuzz::finding("a step out of range was accepted");
  if (s.scenario.find('/') != std::string::npos || s.scenario.find("..") != std::string::npos)
    mc::fuzz::finding("a scenario id that is a path was accepted");
  if (s.step >= 0 && s.scenario.empty()) mc::fuzz::finding("a step without a scenario");
  const mc::UrlState back = mc::parse_url_state(mc::to_query(s));
  if (back.panel != s.panel || back.scenario != s.scenario || back.step != s.step || !back.problems.empty())
    mc::fuzz::finding("to_query(state) does not parse back to the state");
  const std::string raw(q.substr(0, 512));
  if (mc::url_decode(mc::url_encode(raw)) != raw) mc::fuzz::finding("url_decode(url_encode(x)) != x");
  for (const std::string& p : s.problems)
    if (p.size() > 400) mc::fuzz::finding("a problem message longer than a reader can use");
  return 0;
}
