// app.cpp - the explorer's layout and chrome: sidebar, main view, inspector, narration, help, keys.
#include "ui/app.h"

#include "ui/access.h"

#include "core/format.h"
#include "device/device.h"
#include "ui/address.h"
#include "ui/drawn_text.h"
#include "ui/scenario_bindings.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <imgui_internal.h>  // ErrorCheckEndWindowRecover

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace mc::ui {

// ImGui 1.86 indexes keys by the backend's own codes; its SDL2 backend (both shells) uses SDL scancodes,
// which are USB HID usage ids: F1 = 58, '1'..'9' = 30..38. Named keys go through GetKeyIndex.
constexpr int kKeyF1 = 58, kKeyF2 = 59, kKeyF3 = 60, kKeyF5 = 62, kKey1 = 30;
constexpr const char* kTermsWindow = "Terms on this screen (F3)";
// Presenter mode's type, relative to the shell's: a projector's back row reads 17 px as 22 px.
constexpr float kPresenterFontScale = 1.3f;

namespace {

// Presenter mode's type: 1.3 times the shell's, or as much larger as still leaves the panel its 40 em beside a
// 14 em narration column. On an older projector's 1024 px, 1.3 times left the panel too narrow for the column,
// the narration became a band over the panel and took a third of its height, so a step's quoted numbers
// sat below the fold (issue 41 item 5: 30 of them in 15 steps at 1024x768); 1.1 times keeps the column and
// the panel's whole height. Wide screens (1280 px and more) keep 1.3.
float presenter_font_scale(float view_w, bool column, float shell_scale) {
  if (!column) return kPresenterFontScale;
  const ImFont* font = ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
  const float base_px = font ? font->FontSize : 13.0f;  // the font as rasterized; the shell's scale aside
  const float fits = view_w / (54.5f * base_px * shell_scale);
  return std::clamp(fits, 1.0f, kPresenterFontScale);
}

}  // namespace

// Shown unless F2 said otherwise: only with a selection to show (an empty one is a quarter of the width
// spent on "Select a row").
// Presenter mode hides it: the class looks at the panel and the narration, not at sources.
static bool inspector_shown(const ExplorerState& s) {
  return !s.classroom.presenter && s.show_inspector.value_or(!s.selection.empty());
}

App::App(AppConfig cfg) {
  s_.platform = cfg.platform;
  s_.jobs.set_platform(cfg.platform);
  s_.assets_dir = cfg.assets_dir;
  try {
    s_.catalog = load_catalog(s_.assets_dir);
  } catch (const std::exception& e) {
    s_.catalog_error = e.what();
  }
  load_default_configs(s_);
  remember_fresh_parts(s_);
  load_glossary(s_);
  // A reader who asked the system for less motion (prefers-reduced-motion) finds the animations paused at
  // their start, each with its Play button (WCAG 2.3.3); a scenario's moment still shows as before.
  if (cfg.platform && cfg.platform->reduced_motion())
    s_.collective.playing = s_.pipeline.playing = s_.zero.playing = false;
  if (!cfg.start_panel.empty()) {  // after the catalog: its tables are tabs
    UrlState start;
    start.panel = cfg.start_panel;
    open_address(start);
  }
}

void App::open_address(const UrlState& url) {
  std::vector<std::string> problems = url.problems;
  if (!url.panel.empty()) {
    if (std::string p = panel_problem(s_, url.panel); !p.empty())
      problems.push_back(std::move(p));
    else
      open_panel(s_, url.panel);
  }
  s_.classroom.presenter = url.present;
  // What the link's chapters held: each part's differences from a fresh page's (ui/address.h).
  for (std::string& p : open_address_edits(s_, url.edits)) problems.push_back(std::move(p));
  ScenarioView& v = s_.scenarios;
  if (!url.scenario.empty()) {
    v.request_id = url.scenario;
    v.request_step = url.step;
  } else if (!url.rejected_scenario.empty()) {
    v.request_id = url.rejected_scenario;  // never opened: the narration pane names the real ids nearest it
  }
  s_.notice.clear();
  for (const auto& p : problems) s_.notice += (s_.notice.empty() ? "" : "\n") + p;
}

UrlState App::address() const {
  UrlState u;
  u.panel = s_.active_panel + (s_.shown_tab.empty() ? "" : "/" + s_.shown_tab);
  const ScenarioView& v = s_.scenarios;
  // A shipped scenario only: a dropped file's id opens nothing from a link.
  if (v.player && !v.scenarios_dir.empty() && v.file.rfind(v.scenarios_dir + "/", 0) == 0) {
    u.scenario = v.player->scenario().id;
    u.step = v.player->current();
  }
  u.present = s_.classroom.presenter;  // a link copied while presenting opens presenting
  // Outside a scenario (whose step sets the configs), what the class changed in every chapter travels with
  // the link.
  if (u.scenario.empty()) u.edits = address_edits(s_);
  return u;
}

void App::write_address() {
  const ScenarioView& v = s_.scenarios;
  if (!v.request_id.empty() || (v.job && v.job->opens)) return;  // a link still opening: it stays as given
  const std::string q = to_query(address());
  if (q == s_.address) return;
  s_.address = q;
  if (s_.platform) s_.platform->set_address(q);
}

// Tests (ExplorerState::capture_text): ImGui's log records the text a window draws, and End() of a
// top-level window hands it to the clipboard callback, which the headless tests read. Everything the
// window draws is then laid out unclipped, so hidden text is caught too.
static void capture_window_text(const ExplorerState& s) {
  if (!s.probe.capture_text) return;
  ImGui::LogFinish();  // the accessibility mirror's log mode (access.cpp unclip), whose text nobody reads
  ImGui::LogToClipboard();
}

void App::handle_keys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(kKeyF1)) s_.show_help = !s_.show_help;
  if (ImGui::IsKeyPressed(kKeyF2)) s_.show_inspector = !inspector_shown(s_);
  if (ImGui::IsKeyPressed(kKeyF3)) s_.show_terms = !s_.show_terms;
  if (ImGui::IsKeyPressed(kKeyF5)) s_.classroom.presenter = !s_.classroom.presenter;
  // Ctrl+1..7 jump to the first panel of a chapter.
  if (io.KeyCtrl) {
    for (int i = 0; i < 7; ++i) {
      if (ImGui::IsKeyPressed(kKey1 + i)) {
        for (const auto& p : panel_registry())
          if (p.chapter == kChapters[i]) {
            s_.active_panel = p.id;
            break;
          }
      }
    }
  }
  // Ctrl+Up/Down: previous/next panel in sidebar order.
  if (io.KeyCtrl && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)))) {
    auto& reg = panel_registry();
    for (size_t i = 0; i < reg.size(); ++i) {
      if (reg[i].id != s_.active_panel) continue;
      size_t j = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) ? (i + 1) % reg.size()
                                                                             : (i + reg.size() - 1) % reg.size();
      s_.active_panel = reg[j].id;
      break;
    }
  }
}

void App::frame() {
  ++s_.frame;
  // Long work that runs in slices (the browser build; natively jobs run on worker threads): a share of
  // this frame, before the panels look at their jobs.
  const Panel* on_screen = find_panel(s_.active_panel);
  s_.jobs.pump(on_screen && on_screen->slice_s ? on_screen->slice_s(s_) : JobRunner::kSliceS);
  access_on_ = !s_.platform || s_.platform->mirrors_access();
  if (access_on_) access::begin_frame();
  s_.probe.widget_rects.clear();
  s_.probe.widget_text.clear();
  s_.probe.group_log_starts.clear();  // a panel that threw inside a group left its start behind
  s_.shown_tab.clear();
  set_glossary(&s_.glossary);  // this App's: tests make several, one after another
  handle_keys();
  // Presenter mode enlarges the type from the shell's own scale (HiDPI), taken once. ImGui sizes the font at
  // NewFrame, so the type follows from the next frame.
  ImGuiIO& io = ImGui::GetIO();
  if (font_scale_base_ < 0) font_scale_base_ = io.FontGlobalScale;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float W = vp->WorkSize.x, H = vp->WorkSize.y, X = vp->WorkPos.x, Y = vp->WorkPos.y;
  const bool right_column = inspector_shown(s_) || !s_.classroom.narration_markdown.empty();
  io.FontGlobalScale =
      font_scale_base_ * (s_.classroom.presenter ? presenter_font_scale(W, right_column, font_scale_base_) : 1.0f);
  const float em = ImGui::GetFontSize();  // NewFrame's: a change of scale shows from the next frame
  const float status_h = ImGui::GetFrameHeight() + 4;
  // A view narrower than 40 em beside the narration (a 1024 px screen, a zoomed page) cuts panels laid out
  // for more: there the narration and inspector become a band across the view (below it; above it when
  // presenting, narration first) and the panel keeps the whole width. Presenting, the type gives way first
  // (presenter_font_scale): the band only comes below about 930 px.
  const float body_h = H - status_h, band_h = std::floor(body_h * 0.36f);
  folded_ = false;
  if (s_.classroom.presenter) {
    // Narration first (left), then the panel; no sidebar (the bar at the top of the panel picks panels). The
    // column gives up width down to 14 em before the panel does (presenter_font_scale keeps both possible).
    const float narr_w = right_column ? std::max(14.0f * em, std::min({22.0f * em, W * 0.3f, W - 40.0f * em})) : 0.0f;
    if (right_column && W - narr_w < 40.0f * em) {
      draw_inspector(X, Y, W, band_h);
      draw_main(X, Y + band_h, W, body_h - band_h);
    } else {
      if (right_column) draw_inspector(X, Y, narr_w, body_h);
      draw_main(X + narr_w, Y, W - narr_w, body_h);
    }
    scenario_frame(s_);
  } else {
    // The sidebar fits its longest entry (an indented panel title), so no title is cut off.
    float titles_w = ImGui::CalcTextSize("The machine behind modern AI").x;
    for (const auto& p : panel_registry())
      titles_w = std::max(titles_w, ImGui::CalcTextSize(p.title.c_str()).x + 0.8f * em);
    float side_w = std::max(titles_w + 2 * ImGui::GetStyle().WindowPadding.x + em,
                            std::max(12.0f * em, std::min(16.0f * em, W * 0.17f)));
    const float insp_w = right_column ? std::max(15.0f * em, std::min(24.0f * em, W * 0.25f)) : 0.0f;
    // A page zoomed to 200 % or a phone's width leaves the panel less than its 40 em beside the sidebar: the
    // sidebar folds into a chapter menu atop the panel, as in presenter mode (WCAG 2.1 1.4.10 Reflow).
    folded_ = W - side_w < 40.0f * em;
    if (folded_)
      side_w = 0;
    else
      draw_sidebar(X, Y, side_w, body_h);
    if (right_column && W - side_w - insp_w < 40.0f * em) {
      draw_main(X + side_w, Y, W - side_w, body_h - band_h);
      scenario_frame(s_);
      draw_inspector(X + side_w, Y + body_h - band_h, W - side_w, band_h);
    } else {
      const float main_w = std::max(10.0f * em, W - side_w - insp_w);
      draw_main(X + side_w, Y, main_w, body_h);
      scenario_frame(s_);  // a playing scenario advances whatever panel is shown
      if (right_column) draw_inspector(X + side_w + main_w, Y, W - side_w - main_w, body_h);
    }
  }
  mask_open_answers(s_);  // an open question's answer is not readable beside it (scenario_state.h)

  // Status bar: device, frame rate, last message.
  ImGui::SetNextWindowPos(ImVec2(X, Y + H - status_h));
  ImGui::SetNextWindowSize(ImVec2(W, status_h));
  ImGui::Begin("##status", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  capture_window_text(s_);
  {
    // Whole where it fits; on a narrow page (320 pixels) the platform's name goes first, then the compute
    // label is shortened, so that "F1: keys" stays in view.
    const std::string whole = status_line(), platform = std::string(s_.platform ? s_.platform->name() : "headless");
    const float room = ImGui::GetContentRegionAvail().x;
    std::string line = whole;
    if (ImGui::CalcTextSize(line.c_str()).x > room && line.rfind(platform + " | ", 0) == 0)
      line.erase(0, platform.size() + 3);
    if (ImGui::CalcTextSize(line.c_str()).x > room) {
      const size_t cut = line.find(" | ");
      const std::string tail = cut == std::string::npos ? std::string() : line.substr(cut);
      line = shorten_to_width(line.substr(0, cut), room - ImGui::CalcTextSize(tail.c_str()).x) + tail;
    }
    ImGui::TextDisabled("%s", line.c_str());
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", device_info().message.c_str());
  if (!s_.status.empty()) {
    ImGui::SameLine();
    // One line at every width: a message longer than the bar ends in "..." and reads whole on hover, rather
    // than running off the window's edge (an export's message names a file and a command).
    const std::string line = "| " + s_.status;
    const std::string shown = shorten_to_width(line, ImGui::GetContentRegionAvail().x);
    ImGui::TextUnformatted(shown.c_str());
    if (shown.size() != line.size() && ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
      ImGui::TextUnformatted(s_.status.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
  ImGui::End();
  if (s_.show_help) draw_help();
  if (s_.show_terms) draw_terms();
  write_address();
  publish_access();
}

// The frame as an accessibility tree (ui/access.h), its changes handed to the platform (the page's DOM
// mirror). The status message is the last message, not the bar's frame rate, which changes every frame. A
// screen reader needs no 60 updates a second: the tree is read at most every 100 ms, and at once when the
// narration or the status message changes or the mirror acted on the app (an animation redraws
// every frame, and reading its text each time cost over 1 ms a frame in the browser). A frame that draws
// other controls or windows (a chapter, a tab, a popup, rows scrolled in) is read at once.
void App::publish_access() {
  if (!access_on_) return;  // nothing reads the mirror here (Platform::mirrors_access)
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t shape = access::frame_shape();
  // Long work's progress (Panel::progress) as a status message: news of a new kind at once (it started,
  // finished, stopped), the same kind at most every kProgressEveryS.
  // A scenario's step computing (it trains or simulates before its narration is shown) comes first: the
  // chapter on screen is the step's, and what it waits for is the step.
  std::string progress;
  if (const auto& job = s_.scenarios.job; job && job->work) {
    progress = "Computing step " + std::to_string(job->target + 1) + " of " + std::to_string(job->work->step_count()) +
               ": " + std::to_string(int(std::lround(100 * job->progress()))) + " %";
  } else if (const Panel* p = find_panel(s_.active_panel); p && p->progress) {
    progress = p->progress(s_);
  }
  const auto kind = [](const std::string& t) { return t.substr(0, t.find(':')); };
  const double now = ImGui::GetTime();
  const bool progress_due = progress != progress_said_ && (progress.empty() || kind(progress) != kind(progress_said_) ||
                                                           now - progress_at_ >= kProgressEveryS);
  if (progress_due) progress_said_ = progress, progress_at_ = now;
  const bool due = t0 - access_at_ >= std::chrono::milliseconds(100) || shape != access_shape_ || access::acted() ||
                   access::keyboard_focus() != access_nav_ || s_.classroom.narration_markdown != access_narration_ ||
                   s_.status != access_status_ || progress_due;
  if (!due) {
    access::skip_frame();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    access_us_frame_ += (us - access_us_frame_) / 60.0;
    return;
  }
  access_at_ = t0;
  access_shape_ = shape;
  access_nav_ = access::keyboard_focus();
  access_narration_ = s_.classroom.narration_markdown;
  access_status_ = s_.status;
  access::Tree t = access::end_frame(s_.classroom.narration_markdown, s_.status);
  if (!progress_said_.empty()) {
    access::Node n;
    n.id = 0xA11E0003u, n.role = access::Role::status, n.name = "Progress", n.value = progress_said_;
    t.nodes.push_back(std::move(n));
  }
  // The glossary's definitions of the terms a line uses are its description, so a screen reader reaches
  // them without a mouse to hover (they were tooltips only).
  for (access::Node& n : t.nodes) {
    if (n.role != access::Role::text) continue;
    for (const GlossaryTerm* g : glossary_terms_in(n.name))
      n.value += (n.value.empty() ? "" : " ") + g->term + ": " + g->definition;
  }
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  if (s_.platform) {
    const std::string ops = access::diff(access_, t, d.x, d.y);
    if (!ops.empty()) s_.platform->publish_access(ops);
  }
  access_ = std::move(t);
  // What the mirror costs (the tree, its diff and, on the web, the DOM's update), for
  // scripts/bench-web-fps.sh: a mean over about the last 60 frames, read or not, one over about the last 20
  // readings, and the most one reading took since the panel opened (its first adds every node).
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (access_panel_ != s_.active_panel) access_panel_ = s_.active_panel, access_us_mean_ = us, access_us_max_ = 0;
  access_us_mean_ += (us - access_us_mean_) / 20.0;
  access_us_frame_ += (us - access_us_frame_) / 60.0;
  access_reads_ += 1;
  access_us_max_ = std::max(access_us_max_, us);
}

static constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                           ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                           ImGuiWindowFlags_NoBringToFrontOnFocus;

void App::draw_sidebar(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("Megacluster Explorer", nullptr, kFixed);
  capture_window_text(s_);
  ImGui::TextDisabled("The machine behind modern AI");
  if (ImGui::SmallButton("Presenter mode (F5)")) s_.classroom.presenter = true;
  track(s_, "sidebar.presenter");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("For a projector: larger type, the narration first, no inspector. F5 or ?present=1 too.");
  ImGui::Separator();
  int chapter_no = 0;
  for (Chapter c : kChapters) {
    ++chapter_no;
    std::vector<const Panel*> panels;
    for (const auto& p : panel_registry())
      if (p.chapter == c) panels.push_back(&p);
    if (panels.empty()) continue;
    ImGui::Spacing();
    char heading[96];
    std::snprintf(heading, sizeof heading, "%d  %s", chapter_no, chapter_title(c));
    // A chapter of one panel with the chapter's own title is one entry: its heading opens it (a heading
    // followed by the same words under it read as a stutter).
    if (panels.size() == 1 && panels.front()->title == chapter_title(c)) {
      const Panel& p = *panels.front();
      ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
      access::next_role(access::Role::nav, s_.active_panel == p.id);
      if (ImGui::Selectable(heading, s_.active_panel == p.id)) s_.active_panel = p.id;
      ImGui::PopStyleColor();
      track(s_, "sidebar." + p.id);
      if (!p.summary.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.summary.c_str());
      continue;
    }
    ImGui::TextColored(accent_color(), "%s", heading);
    for (const Panel* pp : panels) {
      const Panel& p = *pp;
      ImGui::Indent(0.8f * ImGui::GetFontSize());
      access::next_role(access::Role::nav, s_.active_panel == p.id);
      if (ImGui::Selectable(p.title.c_str(), s_.active_panel == p.id)) s_.active_panel = p.id;
      track(s_, "sidebar." + p.id);
      if (!p.summary.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.summary.c_str());
      ImGui::Unindent(0.8f * ImGui::GetFontSize());
    }
  }
  ImGui::End();
}

// Presenter mode and a view too narrow for the sidebar have none: one menu of every panel (numbered by chapter,
// as the sidebar) and the way in or out of presenter mode, on one line that wraps at a projector's width.
void App::draw_presenter_bar() {
  const Panel* cur = find_panel(s_.active_panel);
  auto entry = [](const Panel& p) {
    int n = 1;
    for (Chapter c : kChapters) {
      if (c == p.chapter) break;
      ++n;
    }
    return std::to_string(n) + "  " + p.title;
  };
  const std::string shown = cur ? entry(*cur) : std::string("(choose a panel)");
  ImGui::SetNextItemWidth(
      std::min(ImGui::GetContentRegionAvail().x, ImGui::CalcTextSize(shown.c_str()).x + 3 * ImGui::GetFrameHeight()));
  if (begin_combo("##presenter_panel", shown.c_str(), 0, "Panel")) {
    for (const Panel& p : panel_registry())
      if (ImGui::Selectable(entry(p).c_str(), cur == &p)) s_.active_panel = p.id;
    ImGui::EndCombo();
  }
  track(s_, "main.presenter.panel");
  const char* mode = s_.classroom.presenter ? "Leave presenter mode (F5)" : "Presenter mode (F5)";
  same_line_if_fits_button(mode);
  if (ImGui::Button(mode)) s_.classroom.presenter = !s_.classroom.presenter;
  track(s_, "main.presenter");
  ImGui::Separator();
}

// The chapter's ids in assets/glossary.json's "chapters".
static const char* chapter_key(Chapter c) {
  switch (c) {
    case Chapter::story:
      return "story";
    case Chapter::capital:
      return "capital";
    case Chapter::cluster:
      return "cluster";
    case Chapter::parallelism:
      return "parallelism";
    case Chapter::run:
      return "run";
    case Chapter::lab:
      return "lab";
    case Chapter::scenarios:
      return "scenarios";
  }
  return "";
}

// Two plain sentences at the top of a chapter's first panel: what the chapter is about, before any number.
static void draw_chapter_opening(ExplorerState& s, const Panel& p) {
  const Panel* first = nullptr;
  for (const Panel& q : panel_registry())
    if (q.chapter == p.chapter) {
      first = &q;
      break;
    }
  const auto it = s.chapter_openings.find(chapter_key(p.chapter));
  // A playing scenario's narration is the guide then: the opening would only push the step's view down.
  if (first != &p || it == s.chapter_openings.end() || !s.classroom.narration_markdown.empty()) return;
  begin_tracked(s);
  ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
  wrapped_text(false, "%s", it->second.c_str());
  ImGui::PopStyleColor();
  end_tracked(s, "main.opening");
  ImGui::Separator();
}

void App::draw_main(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  const Panel* p = find_panel(s_.active_panel);
  if (!p && !panel_registry().empty()) {
    s_.active_panel = panel_registry().front().id;
    p = &panel_registry().front();
  }
  std::string title = (p ? p->title : std::string("Explorer")) + "###main";
  // One window shows every panel: a panel opened (or a scenario step shown) starts at its top, not at the
  // scroll the last one left.
  s_.view_opened = s_.scroll_to_top || (p && p->id != s_.drawn_panel);
  if (s_.view_opened) ImGui::SetNextWindowScroll(ImVec2(0, 0));
  s_.scroll_to_top = false;
  s_.drawn_panel = p ? p->id : std::string();
  ImGui::Begin(title.c_str(), nullptr, kFixed);
  access::mark_main(p ? p->title : std::string("Explorer"));
  capture_window_text(s_);
  if (s_.classroom.presenter || folded_) draw_presenter_bar();
  // A panel that throws (a bad value a scenario set, a bug) must not take the app down: close whatever
  // it left open, show the error in its place and keep running.
  std::string failure;
  try {
    if (p) {
      if (!s_.notice.empty()) {  // a bad address: said where the class looks, until dismissed
        error_text("%s", s_.notice.c_str());
        track(s_, "main.notice");
        if (ImGui::SmallButton("Dismiss")) s_.notice.clear();
        track(s_, "main.notice.dismiss");
        ImGui::Separator();
      }
      const auto bad_default = s_.config_errors.find(p->id);
      if (bad_default != s_.config_errors.end()) {
        error_text("Its default configuration could not be read:");
        wrapped_text(false, "%s", bad_default->second.c_str());
        track(s_, p->id + ".config_error");
        ImGui::Separator();
      }
      draw_chapter_opening(s_, *p);
      if (p->needs_catalog && !s_.catalog) {
        error_text("The catalog could not be loaded:");
        wrapped_text(false, "%s", s_.catalog_error.c_str());
        wrapped_text(false, "Fix the file named above (or restore it from the repository) and restart.");
        track(s_, p->id + ".catalog_error");
      } else {
        p->draw(s_);
      }
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (p) {
    if (failure.empty())
      s_.panel_errors.erase(p->id);
    else
      s_.panel_errors[p->id] = failure;
  }
  if (!failure.empty()) {
    ImGui::ErrorCheckEndWindowRecover(nullptr);
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "This view hit an error and stopped drawing:");
    wrapped_text(false, "%s", failure.c_str());
    wrapped_text(false, "Change the setting that caused it, or pick another view; the rest of the explorer works.");
    s_.status = (p ? p->id : std::string("view")) + ": " + failure;
  }
  ImGui::End();
}

void App::draw_inspector(float x, float y, float w, float h) {
  const bool narrating = !s_.classroom.narration_markdown.empty(), inspecting = inspector_shown(s_);
  const float insp_h = !inspecting ? 0.0f : narrating ? h * 0.5f : h;
  if (inspecting) {
    ImGui::SetNextWindowPos(ImVec2(x, y));
    ImGui::SetNextWindowSize(ImVec2(w, insp_h));
    ImGui::Begin("Inspector", nullptr, kFixed);
    capture_window_text(s_);
    draw_selection_inspector(s_);
    ImGui::End();
  }
  if (narrating) {
    ImGui::SetNextWindowPos(ImVec2(x, y + insp_h));
    ImGui::SetNextWindowSize(ImVec2(w, h - insp_h));
    ImGui::Begin("Narration###narration", nullptr, kFixed);
    capture_window_text(s_);
    // The scenario's title wraps here; a window title bar would cut it off.
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
    wrapped_text(false, "%s", s_.classroom.narration_title.c_str());
    ImGui::PopStyleColor();
    draw_scenario_controls(s_);
    ImGui::Separator();
    // A step's numbers are the panel's: while the panel beside still computes what the step shows (a sweep
    // that trains for ~900 frames, a layout search), the narration waits for it instead of quoting numbers
    // that are not drawn yet (predictable-scaling step 3 quoted the trained loss while the chart still trained).
    // Held only until the view is first idle: a search the class starts later does not blank the narration
    // (nor move the question below it while they click Reveal).
    const scenario::StepOutcome* o = s_.scenarios.player ? s_.scenarios.player->outcome() : nullptr;
    if (s_.scenarios.narration_held && !panels_busy(s_)) s_.scenarios.narration_held = false;
    if (o && s_.scenarios.narration_held) {
      wrapped_text(false, "%s", o->title.c_str());
      wrapped_text(true,
                   "The view is still computing what this step shows; the narration and its numbers follow as "
                   "soon as it has drawn them.");
    } else {
      wrapped_text(false, "%s", s_.classroom.narration_markdown.c_str());
    }
    track(s_, "narration.text");
    draw_scenario_questions(s_);
    ImGui::End();
  }
}

void App::draw_help() {
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::Begin("Keyboard", &s_.show_help, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
  ImGui::TextUnformatted("F1             show/hide this help");
  ImGui::TextUnformatted("F2             show/hide the inspector (shown when a row is selected)");
  ImGui::TextUnformatted("F3             show/hide the terms on this screen and what they mean");
  ImGui::TextUnformatted("F5             presenter mode: larger type, narration first (?present=1)");
  ImGui::TextUnformatted("Ctrl+1 .. 7    jump to a chapter");
  ImGui::TextUnformatted("Ctrl+Up/Down   previous/next panel");
  ImGui::TextUnformatted("Tab, arrows    move between widgets; Enter/Space activates");
  ImGui::TextUnformatted("Click a header sort a table; click a row to inspect its sources");
  ImGui::End();
}

// The glossary's terms in what the other windows drew this frame (each in the order first met), then the
// window that defines them: what a mouse reads term by term on hover, for the keyboard at once.
void App::draw_terms() {
  std::vector<std::string> found;
  for (const ImGuiWindow* w : GImGui->Windows) {
    if (!w->WasActive || w->Hidden || w->RootWindow != w || (w->Flags & ImGuiWindowFlags_Tooltip)) continue;
    if (std::strncmp(w->Name, kTermsWindow, std::strlen(kTermsWindow)) == 0) continue;  // last frame's list
    for (const GlossaryTerm* t : glossary_terms_in(visible_text(window_draw_lists(w))))
      if (std::find(found.begin(), found.end(), t->term) == found.end()) found.push_back(t->term);
  }
  s_.screen_terms = std::move(found);
  const ImVec2 vp = ImGui::GetMainViewport()->Size;
  ImGui::SetNextWindowPos(ImVec2(vp.x * 0.5f, vp.y * 0.5f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(vp.x * 0.6f, ImGui::GetFontSize() * 36), vp.y * 0.6f), ImGuiCond_Appearing);
  ImGui::Begin(kTermsWindow, &s_.show_terms, ImGuiWindowFlags_NoSavedSettings);
  if (ImGui::IsWindowAppearing()) ImGui::SetWindowFocus();  // the keyboard is in it at once; Escape leaves
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    s_.show_terms = false;
  if (s_.screen_terms.empty()) ImGui::TextWrapped("No term of the glossary is on this screen.");
  // Each term a heading the keyboard reaches (Tab or the arrows move between them and scroll the list;
  // Enter folds one), its definition below.
  for (const std::string& name : s_.screen_terms)
    for (const GlossaryTerm& t : s_.glossary)
      if (t.term == name && ImGui::TreeNodeEx(t.term.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextUnformatted(t.definition.c_str());
        if (!t.source.empty()) ImGui::TextDisabled("(%s)", t.source.c_str());
        ImGui::PopTextWrapPos();
        ImGui::TreePop();
      }
  ImGui::End();
}

std::string App::status_line() const {
  std::string compute = s_.platform ? s_.platform->compute_label() : std::string();
  if (compute.empty()) compute = device_info().label;
  char fps[32];
  const float rate = drawn_rate_ >= 0 ? drawn_rate_ : ImGui::GetCurrentContext() ? ImGui::GetIO().Framerate : 0.0f;
  if (drawn_rate_ >= 0 && rate < 2.0f && !s_.jobs.running())  // a slow frame while jobs run is not idle
    std::snprintf(fps, sizeof fps, "idle");
  else
    std::snprintf(fps, sizeof fps, "%.0f fps", rate);
  return std::string(s_.platform ? s_.platform->name() : "headless") + " | " + compute + " | " + fps + " | F1: keys";
}

nlohmann::json App::view_json() const {
  return {{"active_panel", s_.active_panel},
          {"busy", panels_busy(s_)},
          {"scenario_step", s_.scenarios.player ? s_.scenarios.player->current() + 1 : 0}};
}

nlohmann::json App::state_json() const {
  nlohmann::json j;
  j["frame"] = s_.frame;
  j["active_panel"] = s_.active_panel;
  nlohmann::json chapters = nlohmann::json::array();  // every panel, in the sidebar's order
  for (const Panel& p : panel_registry()) chapters.push_back(p.id);
  j["panels"] = std::move(chapters);
  j["presenter"] = s_.classroom.presenter;
  j["selection"] = {{"table", s_.selection.table}, {"record", s_.selection.record}, {"field", s_.selection.field}};
  j["inspector"] = inspector_shown(s_);
  j["catalog"] = {{"loaded", s_.catalog.has_value()},
                  {"error", s_.catalog_error},
                  {"table", s_.catalog_view.table},
                  {"sort_key", s_.catalog_view.sort_key},
                  {"sort_ascending", s_.catalog_view.sort_ascending},
                  {"row_order", catalog_row_order(s_)}};
  nlohmann::json rects = nlohmann::json::object();
  for (const auto& [id, r] : s_.probe.widget_rects) rects[id] = {r.x, r.y, r.w, r.h};
  j["widgets"] = rects;
  j["status"] = s_.status;
  j["status_bar"] = status_line();
  j["animations_playing"] = {s_.collective.playing, s_.pipeline.playing, s_.zero.playing};
  j["access_us"] = {
      {"frame", access_us_frame_}, {"reading", access_us_mean_}, {"max", access_us_max_}, {"reads", access_reads_}};
  j["narration_title"] = s_.classroom.narration_title;
  j["narration"] = s_.classroom.narration_markdown;
  j["scenario_step"] = s_.scenarios.player ? s_.scenarios.player->current() + 1 : 0;  // 1-based, as in a link
  j["scenario_steps"] = s_.scenarios.player ? s_.scenarios.player->step_count() : 0;
  j["tab"] = s_.shown_tab;
  j["errors"] = explorer_errors(s_);
  // What each panel shows now, in the shape of the engine result a scenario action produces for its
  // config kind (ui/scenario_bindings.h): tests compare the narration's numbers with these.
  nlohmann::json shown = nlohmann::json::object();
  for (const auto& b : config_bindings())
    if (b.shown) shown[b.kind] = b.shown(s_);
  j["shown"] = shown;
  j["busy"] = panels_busy(s_);
  j["highlight_widget"] = s_.classroom.highlight_widget;
  j["address"] = s_.address;
  j["notice"] = s_.notice;
  return j;
}

bool App::open_file(const std::string& name, const std::string& content) {
  for (const auto& h : file_handlers())
    if (h.open(s_, name, content)) return true;
  s_.status = "nothing here opens \"" + name + "\" (drop a scenario .json or a UTF-8 text corpus .txt)";
  return false;
}

std::string App::command(const nlohmann::json& cmd) {
  if (cmd.contains("panel")) {
    std::string id = cmd["panel"].get<std::string>();
    if (std::string problem = panel_problem(s_, id); !problem.empty()) return problem;
    open_panel(s_, id);
  }
  if (cmd.contains("select")) {
    s_.selection = Selection{cmd["select"][0].get<std::string>(), cmd["select"][1].get<std::string>(), ""};
  }
  if (cmd.contains("scenario")) {  // ["ID", step (1-based)]: what a ?scenario=ID&step=N link opens
    s_.scenarios.request_id = cmd["scenario"][0].get<std::string>();
    s_.scenarios.request_step = cmd["scenario"].size() > 1 ? std::max(0, cmd["scenario"][1].get<int>() - 1) : -1;
  }
  if (cmd.contains("sort")) {
    s_.catalog_view.sort_key = cmd["sort"][0].get<std::string>();
    s_.catalog_view.sort_ascending = cmd["sort"][1].get<bool>();
  }
  return "";
}

}  // namespace mc::ui
