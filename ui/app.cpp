// app.cpp - the explorer's layout and chrome: sidebar, main view, inspector, narration, help, keys.
#include "ui/app.h"

#include "core/format.h"
#include "device/device.h"
#include "ui/scenario_bindings.h"
#include "ui/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>  // ErrorCheckEndWindowRecover

#include <cstdio>

namespace mc::ui {

// ImGui 1.86 indexes keys by the backend's own codes; its SDL2 backend (both shells) uses SDL scancodes,
// which are USB HID usage ids: F1 = 58, '1'..'9' = 30..38. Named keys go through GetKeyIndex.
constexpr int kKeyF1 = 58, kKey1 = 30;

App::App(AppConfig cfg) {
  s_.platform = cfg.platform;
  s_.jobs.set_platform(cfg.platform);
  s_.assets_dir = cfg.assets_dir;
  if (!cfg.start_panel.empty()) open_panel(s_, cfg.start_panel);
  try {
    s_.catalog = load_catalog(s_.assets_dir);
  } catch (const std::exception& e) {
    s_.catalog_error = e.what();
  }
  load_default_configs(s_);
}

// Tests (ExplorerState::capture_text): ImGui's log records the text a window draws, and End() of a
// top-level window hands it to the clipboard callback, which the headless tests read. Everything the
// window draws is then laid out unclipped, so hidden text is caught too.
static void capture_window_text(const ExplorerState& s) {
  if (s.capture_text) ImGui::LogToClipboard();
}

void App::handle_keys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(kKeyF1)) s_.show_help = !s_.show_help;
  // Ctrl+1..7 jump to the first panel of a chapter.
  if (io.KeyCtrl) {
    for (int i = 0; i < 7; ++i) {
      if (ImGui::IsKeyPressed(kKey1 + i)) {
        for (const auto& p : panel_registry())
          if (p.chapter == kChapters[i]) { s_.active_panel = p.id; break; }
      }
    }
  }
  // Ctrl+Up/Down: previous/next panel in sidebar order.
  if (io.KeyCtrl && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)))) {
    auto& reg = panel_registry();
    for (size_t i = 0; i < reg.size(); ++i) {
      if (reg[i].id != s_.active_panel) continue;
      size_t j = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) ? (i + 1) % reg.size() : (i + reg.size() - 1) % reg.size();
      s_.active_panel = reg[j].id;
      break;
    }
  }
}

void App::frame() {
  ++s_.frame;
  // Long work that runs in slices (the browser build; natively jobs run on worker threads): a share of
  // this frame, before the panels look at their jobs.
  s_.jobs.pump();
  s_.widget_rects.clear();
  s_.shown_tab.clear();
  handle_keys();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float W = vp->WorkSize.x, H = vp->WorkSize.y, X = vp->WorkPos.x, Y = vp->WorkPos.y;
  const float em = ImGui::GetFontSize();
  const float status_h = ImGui::GetFrameHeight() + 4;
  // The sidebar fits its longest entry (an indented panel title), so no title is cut off.
  float titles_w = ImGui::CalcTextSize("The machine behind modern AI").x;
  for (const auto& p : panel_registry()) titles_w = std::max(titles_w, ImGui::CalcTextSize(p.title.c_str()).x + 0.8f * em);
  const float side_w =
      std::max(titles_w + 2 * ImGui::GetStyle().WindowPadding.x + em, std::max(12.0f * em, std::min(16.0f * em, W * 0.17f)));
  const float insp_w = std::max(15.0f * em, std::min(24.0f * em, W * 0.25f));
  const float main_w = std::max(10.0f * em, W - side_w - insp_w);
  draw_sidebar(X, Y, side_w, H - status_h);
  draw_main(X + side_w, Y, main_w, H - status_h);
  scenario_frame(s_);  // a playing scenario advances whatever panel is shown
  draw_inspector(X + side_w + main_w, Y, W - side_w - main_w, H - status_h);

  // Status bar: device, frame rate, last message.
  ImGui::SetNextWindowPos(ImVec2(X, Y + H - status_h));
  ImGui::SetNextWindowSize(ImVec2(W, status_h));
  ImGui::Begin("##status", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  capture_window_text(s_);
  ImGui::TextDisabled("%s", status_line().c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", device_info().message.c_str());
  if (!s_.status.empty()) {
    ImGui::SameLine();
    ImGui::TextUnformatted(("| " + s_.status).c_str());
  }
  ImGui::End();
  if (s_.show_help) draw_help();
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
  ImGui::Separator();
  int chapter_no = 0;
  for (Chapter c : kChapters) {
    ++chapter_no;
    bool any = false;
    for (const auto& p : panel_registry()) any = any || p.chapter == c;
    if (!any) continue;
    ImGui::Spacing();
    ImGui::TextColored(accent_color(), "%d  %s", chapter_no, chapter_title(c));
    for (const auto& p : panel_registry()) {
      if (p.chapter != c) continue;
      ImGui::Indent(0.8f * ImGui::GetFontSize());
      if (ImGui::Selectable(p.title.c_str(), s_.active_panel == p.id)) s_.active_panel = p.id;
      track(s_, "sidebar." + p.id);
      if (!p.summary.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.summary.c_str());
      ImGui::Unindent(0.8f * ImGui::GetFontSize());
    }
  }
  ImGui::End();
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
  ImGui::Begin(title.c_str(), nullptr, kFixed);
  capture_window_text(s_);
  // A panel that throws (a bad value a scenario set, a bug) must not take the app down: close whatever
  // it left open, show the error in its place and keep running.
  std::string failure;
  try {
    if (p) {
      const auto bad_default = s_.config_errors.find(p->id);
      if (bad_default != s_.config_errors.end()) {
        error_text("Its default configuration could not be read:");
        wrapped_text(false, "%s", bad_default->second.c_str());
        track(s_, p->id + ".config_error");
        ImGui::Separator();
      }
      p->draw(s_);
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (p) {
    if (failure.empty()) s_.panel_errors.erase(p->id);
    else s_.panel_errors[p->id] = failure;
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
  const bool narrating = !s_.narration_markdown.empty();
  const float insp_h = narrating ? h * 0.5f : h;
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, insp_h));
  ImGui::Begin("Inspector", nullptr, kFixed);
  capture_window_text(s_);
  draw_selection_inspector(s_);
  ImGui::End();
  if (narrating) {
    ImGui::SetNextWindowPos(ImVec2(x, y + insp_h));
    ImGui::SetNextWindowSize(ImVec2(w, h - insp_h));
    ImGui::Begin("Narration###narration", nullptr, kFixed);
    capture_window_text(s_);
    // The scenario's title wraps here; a window title bar would cut it off.
    ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
    wrapped_text(false, "%s", s_.narration_title.c_str());
    ImGui::PopStyleColor();
    draw_scenario_controls(s_);
    ImGui::Separator();
    wrapped_text(false, "%s", s_.narration_markdown.c_str());
    track(s_, "narration.text");
    draw_scenario_questions(s_);
    ImGui::End();
  }
}

void App::draw_help() {
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::Begin("Keyboard", &s_.show_help, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
  ImGui::TextUnformatted("F1             show/hide this help");
  ImGui::TextUnformatted("Ctrl+1 .. 7    jump to a chapter");
  ImGui::TextUnformatted("Ctrl+Up/Down   previous/next panel");
  ImGui::TextUnformatted("Tab, arrows    move between widgets; Enter/Space activates");
  ImGui::TextUnformatted("Click a header sort a table; click a row to inspect its sources");
  ImGui::End();
}

std::string App::status_line() const {
  std::string compute = s_.platform ? s_.platform->compute_label() : std::string();
  if (compute.empty()) compute = device_info().label;
  char fps[32];
  std::snprintf(fps, sizeof fps, "%.0f fps", ImGui::GetCurrentContext() ? ImGui::GetIO().Framerate : 0.0f);
  return std::string(s_.platform ? s_.platform->name() : "headless") + " | " + compute + " | " + fps + " | F1: keys";
}

nlohmann::json App::state_json() const {
  nlohmann::json j;
  j["frame"] = s_.frame;
  j["active_panel"] = s_.active_panel;
  j["selection"] = {{"table", s_.selection.table}, {"record", s_.selection.record}, {"field", s_.selection.field}};
  j["catalog"] = {{"loaded", s_.catalog.has_value()},
                  {"error", s_.catalog_error},
                  {"table", s_.catalog_view.table},
                  {"sort_key", s_.catalog_view.sort_key},
                  {"sort_ascending", s_.catalog_view.sort_ascending},
                  {"row_order", catalog_row_order(s_)}};
  nlohmann::json rects = nlohmann::json::object();
  for (const auto& [id, r] : s_.widget_rects) rects[id] = {r.x, r.y, r.w, r.h};
  j["widgets"] = rects;
  j["status"] = s_.status;
  j["status_bar"] = status_line();
  j["narration_title"] = s_.narration_title;
  j["narration"] = s_.narration_markdown;
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
  j["highlight_widget"] = s_.highlight_widget;
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
    if (!open_panel(s_, id)) return "no panel (or tab) \"" + id + "\"";
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
