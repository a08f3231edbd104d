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
#include "catalog/glossary.h"
#include "ui/jobs.h"
#include "ui/platform.h"
#include "ui/scenario_bindings.h"
#include "ui/state/capital_state.h"
#include "ui/state/collective_state.h"
#include "ui/state/lab_state.h"
#include "ui/state/perf_state.h"
#include "ui/state/pipeline_state.h"
#include "ui/state/scenario_state.h"
#include "ui/state/sim_state.h"
#include "ui/state/zero_state.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mc::ui {

enum class Chapter { story, capital, cluster, parallelism, run, lab, scenarios };
const char* chapter_title(Chapter c);
constexpr Chapter kChapters[] = {Chapter::story, Chapter::capital, Chapter::cluster,  Chapter::parallelism,
                                 Chapter::run,   Chapter::lab,     Chapter::scenarios};

struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
};

// A term of assets/glossary.json (catalog/glossary.h): its definition is shown when text naming it is hovered.
using mc::GlossaryTerm;

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

// The classroom layer over the session: what a scenario step narrates and points at, and presenter mode.
struct Classroom {
  // The narration dock (filled by the scenario player).
  std::string narration_title, narration_markdown;
  std::string highlight_widget;    // id of a tracked widget to outline
  std::string highlight_scrolled;  // the highlight the class scrolled or clicked since (no longer kept in view)
  // Presenter mode (F5, the sidebar's button, ?present=1): larger type for a projector, the narration
  // first (left of the panel), the inspector hidden, and the sidebar folded into a panel menu at the top.
  bool presenter = false;
};

// Where this frame drew what: the tracked widgets' rectangles (a highlight's outline and the tests read them)
// and, for the tests, the text each tracked group drew. Rebuilt every frame.
struct FrameProbe {
  std::map<std::string, Rect> widget_rects;
  // Tests (capture_text): the text each tracked group drew this frame, i.e. what its outline frames.
  std::map<std::string, std::string> widget_text;
  std::vector<int> group_log_starts;  // begin_tracked's place in ImGui's log, one per open group
  bool capture_text = false;          // tests: log each window's text to the clipboard callback (app.cpp)
};

// The session: what every panel holds and reads, with the classroom layer and the frame's probe beside it.
struct ExplorerState {
  Platform* platform = nullptr;
  std::string assets_dir;
  std::optional<Catalog> catalog;
  std::string catalog_error;  // shown instead of the catalog when loading failed
  // Long work of every panel and the scenario player (ui/jobs.h). Declared after the catalog, which jobs
  // read: members are destroyed in reverse order, and the runner waits for its worker jobs first.
  JobRunner jobs;

  std::string active_panel = "story";  // the first screen is the story, chapter 1
  std::string tab_request;             // a tab of the active panel to bring forward once (open_panel "id/tab")
  Selection selection;
  CatalogView catalog_view;
  PerfView perf;              // performance panel: its config (estimate JSON) and cached results
  LabView lab;                // training lab: its config (train JSON), the live run and the scaling sweep
  CapitalView capital;        // capital panel: plan / waterfall / partnership configs (scenario JSON)
  ScenarioView scenarios;     // scenario gallery and player
  SimView sim;                // simulator panels: config (simulate JSON), iteration and run results
  CollectiveView collective;  // "Collectives in motion": one collective animated on sim's cluster
  PipelineView pipeline;      // "Pipeline in motion": one replica's pipeline schedule animated
  ZeroView zero;              // "ZeRO, layer by layer": one ZeRO step from the simulator
  // assets/configs/{estimate,simulate,train}.json as read at start: what a fresh page's panels hold.
  std::map<std::string, nlohmann::json> default_configs;
  // Each address part's state on a fresh page (AddressPart::fresh), made once when the app starts: it depends
  // only on the catalog and the default configs, and the address is written every frame.
  std::map<std::string, nlohmann::json> fresh_parts;

  // The main view opens at its top on the next frame: a scenario step shows the same view however it was
  // reached (a link opens a fresh page at the top; "next" must not keep the previous step's scroll).
  bool scroll_to_top = false;
  bool view_opened = false;  // this frame the main view opens at its top: its scrolling children do too
  std::string drawn_panel;   // the panel the main view drew last frame (a new one opens at its top)

  std::string status;  // one line at the bottom (last export path, errors)
  // What the explorer was asked to open and could not (a bad address, --panel): named at the top of the main
  // view, with the real ids nearest it, until dismissed.
  std::string notice;
  std::string address;  // the query last handed to Platform::set_address ("" before the first)
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
  // F3: every glossary term the screen uses, with its definition (hovering shows one at a time; a keyboard
  // user reads them all here, WCAG 1.4.13 and 2.1.1). `screen_terms`: found in the last frame's drawn text.
  bool show_terms = false;
  std::vector<std::string> screen_terms;
  // assets/glossary.json: the terms hovered text defines, and each chapter's two-sentence opening (chapter
  // title -> text), drawn at the top of the chapter's first panel.
  std::vector<GlossaryTerm> glossary;
  std::map<std::string, std::string> chapter_openings;
  std::string glossary_error;  // why the glossary could not be read (the status line says so once)
  // The inspector (the selected record's sources) takes room only when it has something to show, so a
  // projector's width goes to the panel; F2 shows or hides it whatever it holds (nullopt: automatic).
  std::optional<bool> show_inspector;
  unsigned long long frame = 0;
  Classroom classroom;
  FrameProbe probe;
};

// One part of the page's address (ui/address.h): what a panel holds, written as its differences from what a
// fresh page's panel holds under ?edits.<id>=, so a copied link reopens the chapter as it was. Each panel
// lists its parts in its own registration.
struct AddressPart {
  std::string id;  // "simulate": the edits.simulate= parameter
  // What a fresh page's panel holds and what it holds now, in one JSON form (the panel's codec); fresh is null
  // when the panel cannot say (no catalog to take its defaults from), and the part is then left out; held is
  // null while the panel holds what a fresh page's does (it has not been drawn).
  std::function<nlohmann::json(const ExplorerState&)> fresh, held;
  // Makes the panel hold `config` (fresh's form, a link's edits applied). Throws std::exception saying what
  // is wrong with it (a LoadError naming the key), and then changes nothing.
  std::function<void(ExplorerState&, const nlohmann::json& config)> open;
};

struct Panel {
  std::string id, title;
  Chapter chapter = Chapter::cluster;
  int order = 0;  // within the chapter
  std::function<void(ExplorerState&)> draw;
  std::string summary;            // one line shown under the title in the sidebar tooltip
  std::vector<std::string> tabs;  // ids open_panel accepts after "id/" (the panel's tab bar), if any
  // For a panel with tabs: the tab that shows tracked widget `widget` ("lab.sweep" -> "scaling"), or "" when
  // the panel brings it forward itself or has no such widget. A scenario's highlight opens that tab, so a
  // class never looks for an outline on a hidden tab.
  std::function<std::string(const ExplorerState&, const std::string& widget)> tab_of_widget;
  // It reads the catalog: without one (a file of assets/catalog/ that cannot be read) the frame draws why in
  // its place, once for every such panel (app.cpp), and never calls draw.
  bool needs_catalog = false;
  // Whether it is still computing what it shows (a job, or work it starts when drawn), while it is the panel
  // on screen: a scenario's narration waits for it and tests wait on it (panels_busy). Unset: never busy.
  std::function<bool(const ExplorerState&)> busy;
  // What it is computing now, one sentence a screen reader announces now and then (a status message, WCAG
  // 4.1.3: "Training: step 40 of 300, loss 2.3141 nats/byte"); the words before a colon name the kind of news,
  // and a new kind ("Training finished: ...") is said at once. Empty when nothing runs. Unset: never says.
  std::function<std::string(const ExplorerState&)> progress;
  // How long the sliced jobs (the browser build) may run each frame while it is on screen; unset: the
  // runner's kSliceS. The lab asks for more while it trains, so training, not drawing, takes most of a frame.
  std::function<double(const ExplorerState&)> slice_s;
  // What of it travels in the page's address (AddressPart), in the order the parts open.
  std::vector<AddressPart> address;
  // The scenario config kinds it shows (ui/scenario_bindings.h: how a step's config reaches it and what it
  // shows of it); a kind no panel binds fails ScenarioBindings.EveryConfigKindHasAPanel.
  std::vector<ConfigBinding> configs;
  // The config kind whose shipped default, assets/configs/KIND.json, it starts from ("" for none): read once
  // by load_default_configs, which gives it to the panel through that kind's binding (restore).
  std::string default_config;
  // What is wrong now that it wants counted with every error (a refused config, a failed computation),
  // each prefixed with what it belongs to ("perf: ..."); explorer_errors collects them. A user's cancel is
  // not an error.
  std::function<std::vector<std::string>(const ExplorerState&)> errors;
};

std::vector<Panel>& panel_registry();  // sorted by chapter then order on first use
const Panel* find_panel(const std::string& id);
// Shows a panel, optionally at one of its tabs: "sim", "sim/links", "lab/scaling" (the web page's
// ?panel=, the native --panel and a scenario's focus_panel all take this form). False (and nothing
// changes) when there is no such panel or the panel has no such tab.
bool open_panel(ExplorerState& s, const std::string& id_and_tab);
// For a panel whose tabs come from data (the catalog's tables; its `tabs` stay empty): panel id -> its tab
// ids now. The panel's file adds itself.
std::map<std::string, std::function<std::vector<std::string>(const ExplorerState&)>>& data_tabs();
// The tab ids of panel `p` (its `tabs`, or its data_tabs() now).
std::vector<std::string> panel_tabs(const ExplorerState& s, const Panel& p);
// Why open_panel(s, id_and_tab) would refuse it, naming the real panel ids or the panel's tabs and the one
// nearest what was asked ("panel=Story: no panel has the id ...; did you mean \"story\"?"); "" if it opens.
std::string panel_problem(const ExplorerState& s, const std::string& id_and_tab);
// For a panel with tabs: true once (the request is then cleared) when the last open_panel asked for `tab`.
bool take_tab_request(ExplorerState& s, const std::string& tab);
// The panel and tab a view of `panel_and_tab` ("capital", "lab/scaling") settles on when `widget` ("" for
// none) is the latest thing pointed at on it: the named tab, else the tab that shows the widget, else the
// panel's first tab ("" for a panel without registered tabs). A function of its arguments only, so a view
// reached by a link and by stepping is the same view.
std::string settled_tab(const ExplorerState& s, const std::string& panel_and_tab, const std::string& widget);
// The panels' default configs, assets/configs/KIND.json for each Panel::default_config (App's constructor
// calls it). A file that cannot be read leaves its panels' config empty (each then says what is missing) and
// names the file, line and column in `s.status`.
void load_default_configs(ExplorerState& s);
// The default config `name` as read at start (assets/configs/NAME.json); an empty object when it could not be
// read.
nlohmann::json default_config(const ExplorerState& s, const std::string& name);
// assets/glossary.json into s.glossary and s.chapter_openings (App's constructor calls it).
void load_glossary(ExplorerState& s);

// Every error a panel reports now (a panel that threw, and each panel's Panel::errors: a refused config, a
// failed simulation, the scenario step's failed actions). Empty when all is well.
std::vector<std::string> explorer_errors(const ExplorerState& s);
// For Panel::errors: "what: e" added to `out` unless e is empty or the user's "cancelled".
inline void add_error(std::vector<std::string>& out, const char* what, const std::string& e) {
  if (!e.empty() && e != "cancelled") out.push_back(std::string(what) + ": " + e);
}

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
// A tracked group: what is drawn between begin_tracked() and end_tracked(s, id) is the one widget `id`, so
// its outline frames the whole group (a headline of several lines, a bar with its labels), not the last
// item. With probe.capture_text, the group's text is kept in probe.widget_text[id].
void begin_tracked(ExplorerState& s);
void end_tracked(ExplorerState& s, const std::string& id);

}  // namespace mc::ui
