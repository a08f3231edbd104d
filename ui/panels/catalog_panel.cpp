// catalog_panel.cpp - the hardware catalog of the era: one sortable table per catalog table, every
// value with its confidence mark and source on hover, the inspector for the selected row, CSV/JSON export.
#include "core/format.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>  // TableSetColumnSortDirection: keep header arrows in step with the state

#include <algorithm>
#include <string>

namespace mc::ui {
namespace {

void export_table(ExplorerState& s, const Table& t, bool as_json) {
  std::string err;
  std::string content;
  if (as_json) {
    content = table_export(*s.catalog, t).dump(2);
  } else {
    content = table_to_csv(*s.catalog, t);
  }
  std::string where = s.platform
                          ? s.platform->save_file("catalog-" + t.name + (as_json ? ".json" : ".csv"), content, err)
                          : std::string();
  s.status = where.empty() ? "export failed: " + (err.empty() ? std::string("no platform") : err) : "exported " + where;
}

void draw(ExplorerState& s) {
  const Catalog& cat = *s.catalog;
  wrapped_text(false,
               "The hardware of the era, as its makers and users published it. Click a column to sort, "
               "a row to see every value's source in the inspector.");
  confidence_legend();

  // The tables as a row of buttons that wraps onto more lines when the window is narrow: a scrolling tab
  // bar hid its last tables off the right edge on a projector. A name longer than a whole line (at 320
  // pixels, "Checkpoint storage and the data pipeline") is shortened with "...", and says itself whole on
  // hover and to a screen reader. The id is the table's, whatever the button shows.
  const float pad = 2 * ImGui::GetStyle().FramePadding.x, line_w = ImGui::GetContentRegionAvail().x;
  for (const auto& t : cat.tables) {
    const bool current = s.catalog_view.table == t.name;
    bool pick = take_tab_request(s, t.name);
    const std::string shown = shorten_to_width(t.title, line_w - pad);
    if (&t != &cat.tables.front()) same_line_if_fits(ImGui::CalcTextSize(shown.c_str()).x + pad);
    if (current) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_TabActive));
    if (shown != t.title) access::next_name(t.title);
    if (ImGui::Button((shown + "###" + t.name).c_str())) pick = true;
    if (shown != t.title && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", t.title.c_str());
    if (current) ImGui::PopStyleColor();
    track(s, "catalog.tab." + t.name);
    if (pick && !current) {
      s.catalog_view.table = t.name;
      s.catalog_view.sort_key = t.field("year") ? "year" : t.field("date") ? "date" : "name";
      s.catalog_view.sort_ascending = true;
    }
  }
  const Table* t = cat.table(s.catalog_view.table);
  if (!t) t = &cat.tables.front();
  s.shown_tab = t->name;  // the address names the table (?panel=catalog/systems)

  wrapped_text(true, "%s", t->description.c_str());
  // The filter and the exports on one line where they fit, else each on its own (a 320-pixel page).
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 14, ImGui::GetContentRegionAvail().x));
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s", s.catalog_view.filter.c_str());
  access::next_name("Filter by name");
  if (ImGui::InputTextWithHint("##filter", "filter by name", buf, sizeof buf)) s.catalog_view.filter = buf;
  same_line_if_fits(ImGui::CalcTextSize("Export CSV").x + pad);
  if (ImGui::Button("Export CSV")) export_table(s, *t, false);
  track(s, "catalog.export_csv");
  same_line_if_fits(ImGui::CalcTextSize("Export JSON").x + pad);
  if (ImGui::Button("Export JSON")) export_table(s, *t, true);

  // Only fields some record has.
  std::vector<const FieldDef*> cols;
  for (const auto& f : t->fields) {
    bool any = false;
    for (const auto& r : t->records) any = any || r.find(f.key);
    if (any) cols.push_back(&f);
  }
  const int ncols = int(cols.size()) + 1;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_BordersOuterH | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable(("##cat_" + t->name).c_str(), ncols, flags, ImVec2(0, 0))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  // The name column is as wide as the longest name up to 40% of the table, so that at a projector's 1280x720
  // the first values beside it (the ones narrations quote: GPUs, cores, network) are on screen without
  // scrolling; a cut name shows whole on hover and in the inspector.
  float name_w = 0;
  for (const auto& r : t->records) name_w = std::max(name_w, ImGui::CalcTextSize(r.name.c_str()).x);
  name_w = std::min(name_w + ImGui::GetStyle().CellPadding.x * 2, ImGui::GetContentRegionAvail().x * 0.4f);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_NoHide | ImGuiTableColumnFlags_WidthFixed, name_w, 0);
  for (int i = 0; i < int(cols.size()); ++i) ImGui::TableSetupColumn(cols[i]->label.c_str(), 0, 0.0f, ImGuiID(i + 1));

  // Keep the state authoritative: a scenario or test may set the sort; user clicks update it.
  auto key_of = [&](int col) { return col == 0 ? std::string("name") : cols[col - 1]->key; };
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsDirty && specs->SpecsCount > 0 && s.frame > 1) {
      const auto& sp = specs->Specs[0];
      s.catalog_view.sort_key = key_of(int(sp.ColumnUserID));
      s.catalog_view.sort_ascending = sp.SortDirection != ImGuiSortDirection_Descending;
    }
    specs->SpecsDirty = false;
    int want = 0;
    for (int c = 0; c < ncols; ++c)
      if (key_of(c) == s.catalog_view.sort_key) want = c;
    ImGuiSortDirection dir =
        s.catalog_view.sort_ascending ? ImGuiSortDirection_Ascending : ImGuiSortDirection_Descending;
    if (specs->SpecsCount == 0 || int(specs->Specs[0].ColumnUserID) != want || specs->Specs[0].SortDirection != dir) {
      ImGui::TableSetColumnSortDirection(want, dir, false);
      specs->SpecsDirty = false;
    }
  }

  next_row(ImGuiTableRowFlags_Headers);
  for (int c = 0; c < ncols; ++c) {
    ImGui::TableSetColumnIndex(c);
    ImGui::TableHeader(ImGui::TableGetColumnName(c));
    if (c > 0 && ImGui::IsItemHovered() && !cols[c - 1]->description.empty())
      ImGui::SetTooltip("%s [%s]", cols[c - 1]->description.c_str(), cols[c - 1]->unit.c_str());
    track(s, "catalog.header." + key_of(c));
  }

  for (const Record* r : catalog_rows(*t, s.catalog_view)) {
    next_row();
    ImGui::TableSetColumnIndex(0);
    bool sel = s.selection.table == t->name && s.selection.record == r->id;
    // Shortened at its end ("GPT-2 1.5B reproduced with...") rather than cut mid-letter by the column;
    // whole on hover and in the inspector.
    const std::string shown = shorten_to_width(r->name, ImGui::GetContentRegionAvail().x);
    if (ImGui::Selectable((shown + "##" + r->id).c_str(), sel, ImGuiSelectableFlags_SpanAllColumns)) {
      s.selection = Selection{t->name, r->id, ""};
    }
    if (ImGui::IsItemHovered() && shown != r->name) ImGui::SetTooltip("%s", r->name.c_str());
    track(s, "catalog.row." + r->id);
    // One value of the row a step points at ("catalog.cell.ID.KEY"): tracked, so the table scrolls to it
    // sideways as well (a narration quoting a price far right of the names).
    const std::string cell_prefix = "catalog.cell." + r->id + ".";
    const bool cell_shown = s.classroom.highlight_widget.rfind(cell_prefix, 0) == 0;
    for (int c = 1; c < ncols; ++c) {
      ImGui::TableSetColumnIndex(c);
      if (const Sourced* v = r->find(cols[c - 1]->key))
        sourced_text(cat, *v, cols[c - 1]->unit);
      else
        ImGui::TextDisabled("n/a");
      if (cell_shown && s.classroom.highlight_widget == cell_prefix + cols[c - 1]->key)
        track(s, s.classroom.highlight_widget);
    }
  }
  end_table((t->title.empty() ? t->name : t->title).c_str());
}

PanelRegistrar reg{Panel{.id = "catalog",
                         .title = "Hardware catalog",
                         .chapter = Chapter::cluster,
                         .order = 10,
                         .draw = draw,
                         .summary = "GPUs, servers and clusters of the era, each value with its source",
                         .tabs = {},  // its tabs are the catalog's tables, named once it is loaded
                         // A row's tab is its table (the current one if it has the record); so is a cell's
                         // ("catalog.cell.ID.KEY").
                         .tab_of_widget = [](const ExplorerState& s, const std::string& w) -> std::string {
                           const std::string row = "catalog.row.", cell = "catalog.cell.";
                           if (!s.catalog) return "";
                           std::string id;
                           if (w.rfind(row, 0) == 0)
                             id = w.substr(row.size());
                           else if (w.rfind(cell, 0) == 0 && w.rfind('.') > cell.size())
                             id = w.substr(cell.size(), w.rfind('.') - cell.size());
                           else
                             return "";
                           if (const Table* t = s.catalog->table(s.catalog_view.table); t && t->find(id))
                             return t->name;
                           for (const auto& t : s.catalog->tables)
                             if (t.find(id)) return t.name;
                           return "";
                         },
                         .needs_catalog = true}};

// Its tabs for an address (?panel=catalog/systems): the catalog's tables.
std::vector<std::string> table_names(const ExplorerState& s) {
  std::vector<std::string> tables;
  if (s.catalog)
    for (const auto& t : s.catalog->tables) tables.push_back(t.name);
  return tables;
}
const bool tabs_reg = (data_tabs()["catalog"] = table_names, true);

}  // namespace
}  // namespace mc::ui
