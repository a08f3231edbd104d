// address.h - the explorer's state in the page's address, beyond the panel and the scenario step
// (core/url_state.h): every part a panel registers (Panel::address) is written as its differences from a
// fresh page's, so a copied link reopens every chapter as it was, and a link's parts are opened here.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mc::ui {

struct ExplorerState;

// (part id, edits) of every registered part that differs from a fresh page's, in registry order; a part
// whose state an address cannot hold (a key that cannot be written as a path) is left out.
std::vector<std::pair<std::string, std::string>> address_edits(const ExplorerState& s);

// Opens a link's parts (UrlState::edits) in registry order, each as its fresh state with the edits applied.
// Returns what was ignored and why (an unknown part, with the ids nearest it; edits the part refuses), each
// naming the parameter and the fix; the other parts open.
std::vector<std::string> open_address_edits(ExplorerState& s,
                                            const std::vector<std::pair<std::string, std::string>>& edits);

// Makes s.fresh_parts (the App does, once the catalog and the default configs are read).
void remember_fresh_parts(ExplorerState& s);

// The ids of every registered part, in registry order.
std::vector<std::string> address_part_ids();

}  // namespace mc::ui
