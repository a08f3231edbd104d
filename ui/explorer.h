// explorer.h - the one explorer: shared state that every panel reads and a scenario can drive, and the
// registry panels add themselves to (one file per panel, Box2D-samples style):
//
//   static void draw(mc::ui::ExplorerState& s) { ... }
//   static mc::ui::PanelRegistrar reg{{.id = "catalog", .title = "Hardware catalog",
//                                      .chapter = mc::ui::Chapter::cluster, .order = 10, .draw = draw}};
//
// Layout: sidebar of chapters (left) | the active panel (centre) | inspector + narration (right).
#pragma once

#include "catalog/catalog.h"
#include "ui/jobs.h"
#include "ui/platform.h"
#include "ui/state/perf_state.h"
#include "ui/state/lab_state.h"
#include "ui/state/capital_state.h"
#include "ui/state/scenario_state.h"
#include "ui/state/sim_state.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mc::ui {

enum class Chapter { story, capital, cluster, parallelism, run, lab, scenarios };
const char* chapter_title(Chapter c);
constexpr Chapter kChapters[] = {Chapter::story, Chapter::capital,   Chapter::cluster,  Chapter::parallelism,
                                 Chapter::run,   Chapter::lab, Chapter::scenarios};

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

// What the inspector shows: a catalog record (table + id), optionally one of its fields.
struct Selection {
  std::string table, record, field;
  bool empty() const { return record.empty(); }
};

// View state of the catalog panel (kept here so scenarios and tests can set and read it).
struct CatalogView {
  std::string table = "gpus";
  std::string sort_key = "year";  // "name" or a field key
  bool sort_ascending = true;
  std::string filter;
};

struct ExplorerState {
  Platform* platform = nullptr;
  std::string assets_dir;
  std::optional<Catalog> catalog;
  std::string catalog_error;  // shown instead of the catalog when loading failed
  // Long work of every panel and the scenario player (ui/jobs.h). Declared after the catalog, which jobs
  // read: members are destroyed in reverse order, and the runner waits for its worker jobs first.
  JobRunner jobs;

  std::string active_panel = "catalog";
  std::string tab_request;  // a tab of the active panel to bring forward once (open_panel "id/tab")
  Selection selection;
  CatalogView catalog_view;
  PerfView perf;  // performance panel: its config (estimate JSON) and cached results
  LabView lab;    // training lab: its config (train JSON), the live run and the scaling sweep
  CapitalView capital;     // capital panel: plan / waterfall / partnership configs (scenario JSON)
  ScenarioView scenarios;  // scenario gallery and player
  SimView sim;             // simulator panels: config (simulate JSON), iteration and run results

  // Scenario narration dock (filled by the scenario player).
  std::string narration_title, narration_markdown;
  std::string highlight_widget;  // id of a tracked widget to outline
  std::string highlight_scrolled;  // the highlight last scrolled into view (once, so the user may scroll away)

  std::string status;  // one line at the bottom (last export path, errors)
  // A panel that threw while drawing: panel id -> message (cleared when it draws cleanly again). The status
  // line shows it too, but tests assert on this, so an exception can never pass for a clean frame.
  std::map<std::string, std::string> panel_errors;
  // A default config under assets/configs/ that could not be read: panel id -> message. The panel shows it
  // above its own content (and the status line once), so the reason stays where the empty panel is.
  std::map<std::string, std::string> config_errors;
  std::string shown_tab;  // the tab a panel with tabs drew this frame ("scaling"), "" if none
  // A region of this frame to save as a PNG (the lab's loss chart): the shell reads the pixels after it
  // renders the frame and hands the file to Platform::save_file. Headless, nothing renders and it stays.
  struct Capture {
    std::string name;  // "loss-curves.png"; empty: nothing asked
    Rect rect;         // in ImGui's logical pixels
  } capture;
  bool show_help = false;
  unsigned long long frame = 0;
  std::map<std::string, Rect> widget_rects;  // tracked widgets, rebuilt each frame (for tests, highlights)
  bool capture_text = false;  // tests: log each window's text to the clipboard callback (app.cpp)
};

struct Panel {
  std::string id, title;
  Chapter chapter = Chapter::cluster;
  int order = 0;  // within the chapter
  std::function<void(ExplorerState&)> draw;
  std::string summary;  // one line shown under the title in the sidebar tooltip
  std::vector<std::string> tabs;  // ids open_panel accepts after "id/" (the panel's tab bar), if any
  // For a panel with tabs: the tab that shows tracked widget `widget` ("lab.sweep" -> "scaling"), or "" when
  // the panel brings it forward itself or has no such widget. A scenario's highlight opens that tab, so a
  // class never looks for an outline on a hidden tab.
  std::function<std::string(const ExplorerState&, const std::string& widget)> tab_of_widget;
};

std::vector<Panel>& panel_registry();  // sorted by chapter then order on first use
const Panel* find_panel(const std::string& id);
// Shows a panel, optionally at one of its tabs: "sim", "sim/links", "lab/scaling" (the web page's
// ?panel=, the native --panel and a scenario's focus_panel all take this form). False (and nothing
// changes) when there is no such panel or the panel has no such tab.
bool open_panel(ExplorerState& s, const std::string& id_and_tab);
// For a panel with tabs: true once (the request is then cleared) when the last open_panel asked for `tab`.
bool take_tab_request(ExplorerState& s, const std::string& tab);
// Brings forward the panel and tab that show tracked widget `widget` (its id starts with the panel id and a
// dot: "catalog.row.dgx1-p100"); false when no panel claims it.
bool reveal_widget(ExplorerState& s, const std::string& widget);
// The panels' default configs, assets/configs/{estimate,simulate,train}.json (App's constructor calls it).
// A file that cannot be read leaves its panel's config empty (the panel then says what is missing) and
// names the file, line and column in `s.status`.
void load_default_configs(ExplorerState& s);

// Every error a panel reports now: a panel that threw, a refused config of any panel, a failed simulation,
// the scenario step's failed actions. Empty when all is well (a user's cancel is not an error).
std::vector<std::string> explorer_errors(const ExplorerState& s);

struct PanelRegistrar {
  explicit PanelRegistrar(Panel p) { panel_registry().push_back(std::move(p)); }
};

// Files the user opens (native: dropped on the window; web: dropped on the page). Each handler says whether
// it took the file; the first that does wins (e.g. a scenario .json, a training corpus .txt). A handler
// never throws: it reports problems in ExplorerState::status or its own panel.
struct FileHandler {
  std::string id;
  std::function<bool(ExplorerState&, const std::string& name, const std::string& content)> open;
};
std::vector<FileHandler>& file_handlers();
struct FileHandlerRegistrar {
  explicit FileHandlerRegistrar(FileHandler h) { file_handlers().push_back(std::move(h)); }
};

// Records the last ImGui item's screen rectangle under `id` (for e2e tests and scenario highlights) and
// outlines it if a scenario asked to highlight it.
void track(ExplorerState& s, const std::string& id);

}  // namespace mc::ui
