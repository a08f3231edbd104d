// fuzz_url_state.cpp - libFuzzer harness of the explorer's URL state (engine/core/url_state.h: what the
// web page's ?panel=&scenario=&step=&present=&edits.PART= means). Invariants: what is accepted is a plain id and a
// step in range; the state written back as a query string parses to the same state (every field: the
// present flag and the edits too) with no problem; accepted edits apply, and their config written as edits
// again applies to the same config; decoding what was encoded gives the bytes back.
#include "core/url_state.h"
#include "fuzz_common.h"

namespace {

// A config without its empty sections: encode_config_edits counts an empty object as absent.
nlohmann::json without_empty(const nlohmann::json& c) {
  if (!c.is_object()) return c;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : c.items()) {
    nlohmann::json x = without_empty(v);
    if (!(x.is_object() && x.empty())) out[k] = std::move(x);
  }
  return out;
}

}  // namespace

MC_FUZZ_TARGET(url_state) {
  const std::string_view q(reinterpret_cast<const char*>(data), size);
  const mc::UrlState s = mc::parse_url_state(q);
  if (s.step < -1 || s.step >= mc::kMaxUrlStep) mc::fuzz::finding("a step out of range was accepted");
  if (s.scenario.find('/') != std::string::npos || s.scenario.find("..") != std::string::npos)
    mc::fuzz::finding("a scenario id that is a path was accepted");
  if (s.step >= 0 && s.scenario.empty()) mc::fuzz::finding("a step without a scenario");
  const mc::UrlState back = mc::parse_url_state(mc::to_query(s));
  if (back.panel != s.panel || back.scenario != s.scenario || back.step != s.step || back.present != s.present ||
      back.edits != s.edits || !back.problems.empty())
    mc::fuzz::finding("to_query(state) does not parse back to the state");
  for (const auto& [part, edits] : s.edits) {
    if (edits.empty()) mc::fuzz::finding("an empty edits parameter was kept");
    nlohmann::json applied;
    try {
      applied = mc::apply_config_edits(nlohmann::json::object(), edits);
    } catch (const std::exception&) {
      mc::fuzz::finding("edits accepted by parse_url_state do not apply");
    }
    try {
      const std::string again = mc::encode_config_edits(nlohmann::json::object(), applied);
      if (without_empty(mc::apply_config_edits(nlohmann::json::object(), again)) != without_empty(applied))
        mc::fuzz::finding("a config written as edits does not read back to itself");
      const mc::UrlState read = mc::parse_url_state("?edits." + part + "=" + mc::url_encode(again, ",:"));
      if (!again.empty() && (read.edits.size() != 1 || read.edits[0].second != again))
        mc::fuzz::finding("edits written by encode_config_edits are refused in an address");
    } catch (const std::exception&) {
      mc::fuzz::finding("a config read from edits cannot be written as edits");
    }
  }
  const std::string raw(q.substr(0, 512));
  if (mc::url_decode(mc::url_encode(raw)) != raw) mc::fuzz::finding("url_decode(url_encode(x)) != x");
  for (const std::string& p : s.problems)
    if (p.size() > 400) mc::fuzz::finding("a problem message longer than a reader can use");
  return 0;
}
