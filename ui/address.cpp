// address.cpp - the panels' parts of the page's address (address.h).
#include "ui/address.h"

#include "core/json_doc.h"
#include "core/url_state.h"
#include "ui/explorer.h"

#include <algorithm>
#include <stdexcept>

namespace mc::ui {

std::vector<std::string> address_part_ids() {
  std::vector<std::string> ids;
  for (const Panel& p : panel_registry())
    for (const AddressPart& a : p.address) ids.push_back(a.id);
  return ids;
}

void remember_fresh_parts(ExplorerState& s) {
  s.fresh_parts.clear();
  for (const Panel& p : panel_registry())
    for (const AddressPart& a : p.address) s.fresh_parts[a.id] = a.fresh(s);
}

namespace {

nlohmann::json fresh_part(const ExplorerState& s, const AddressPart& a) {
  const auto it = s.fresh_parts.find(a.id);
  return it != s.fresh_parts.end() ? it->second : a.fresh(s);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> address_edits(const ExplorerState& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Panel& p : panel_registry())
    for (const AddressPart& a : p.address) {
      const auto it = s.fresh_parts.find(a.id);
      const nlohmann::json& fresh = it != s.fresh_parts.end() ? it->second : nullptr;
      if (it == s.fresh_parts.end() || fresh.is_null()) continue;
      const nlohmann::json held = a.held(s);
      if (held.is_null()) continue;
      try {
        std::string e = encode_config_edits(fresh, held);
        if (!e.empty()) out.emplace_back(a.id, std::move(e));
      } catch (const std::invalid_argument&) {
        // A key no path can name: left out rather than written wrong (the link then opens the default).
      }
    }
  return out;
}

std::vector<std::string> open_address_edits(ExplorerState& s,
                                            const std::vector<std::pair<std::string, std::string>>& edits) {
  std::vector<std::string> problems;
  const std::vector<std::string> ids = address_part_ids();
  for (const auto& [id, e] : edits) {
    bool known = false;
    for (const std::string& k : ids) known = known || k == id;
    if (known) continue;
    const std::string near = closest_id(id, ids);
    std::string list;
    for (const std::string& k : ids) list += (list.empty() ? "" : ", ") + k;
    problems.push_back("edits." + id.substr(0, 32) + "= was ignored: no part of the explorer is called that" +
                       (near.empty() ? std::string() : "; did you mean edits." + near + "=?") + " The parts: " + list +
                       ".");
  }
  for (const Panel& p : panel_registry())
    for (const AddressPart& a : p.address)
      for (const auto& [id, e] : edits) {
        if (id != a.id) continue;
        try {
          const nlohmann::json fresh = fresh_part(s, a);
          if (fresh.is_null()) throw std::runtime_error("the " + p.title + " panel cannot open without its catalog");
          a.open(s, apply_config_edits(fresh, e));
        } catch (const LoadError& ex) {
          // A link is not a file: the key as the link writes it (a path of keys joined by '.'), not a line.
          std::string key = ex.key;
          std::replace(key.begin(), key.end(), '/', '.');
          problems.push_back("edits." + id + "= was ignored: " + (key.empty() ? "" : key + ": ") + ex.message +
                             "; set it in the panel, or copy the link again from the explorer");
        } catch (const std::exception& ex) {
          problems.push_back("edits." + id + "= was ignored: " + ex.what());
        }
      }
  return problems;
}

}  // namespace mc::ui
