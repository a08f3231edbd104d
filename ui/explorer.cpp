// explorer.cpp - the explorer's shared state and panel registry (explorer.h): opening panels and tabs,
// the default configs, the glossary, and the errors every panel reports.
#include "ui/explorer.h"

#include "core/url_state.h"

#include <imgui.h>
#include <imgui_internal.h>  // GImGui->LogBuffer: the text a tracked group drew, for tests

#include <algorithm>
#include <cmath>
#include <map>

namespace mc::ui {

const char* chapter_title(Chapter c) {
  switch (c) {
    case Chapter::story:
      return "The story";
    case Chapter::capital:
      return "Capital";
    case Chapter::cluster:
      return "The cluster";
    case Chapter::parallelism:
      return "Parallelism";
    case Chapter::run:
      return "The run";
    case Chapter::lab:
      return "Training lab";
    case Chapter::scenarios:
      return "Scenarios";
  }
  return "";
}

std::vector<Panel>& panel_registry() {
  static std::vector<Panel> panels;
  static size_t sorted_size = 0;
  if (sorted_size != panels.size()) {
    std::stable_sort(panels.begin(), panels.end(), [](const Panel& a, const Panel& b) {
      return a.chapter != b.chapter ? a.chapter < b.chapter : a.order < b.order;
    });
    sorted_size = panels.size();
  }
  return panels;
}

const Panel* find_panel(const std::string& id) {
  for (const auto& p : panel_registry())
    if (p.id == id) return &p;
  return nullptr;
}

std::map<std::string, std::function<std::vector<std::string>(const ExplorerState&)>>& data_tabs() {
  static std::map<std::string, std::function<std::vector<std::string>(const ExplorerState&)>> tabs;
  return tabs;
}

std::vector<std::string> panel_tabs(const ExplorerState& s, const Panel& p) {
  const auto from_data = data_tabs().find(p.id);
  return !p.tabs.empty() || from_data == data_tabs().end() ? p.tabs : from_data->second(s);
}

std::string panel_problem(const ExplorerState& s, const std::string& id_and_tab) {
  const size_t slash = id_and_tab.find('/');
  const std::string id = id_and_tab.substr(0, slash),
                    tab = slash == std::string::npos ? "" : id_and_tab.substr(slash + 1);
  auto listed = [](const std::vector<std::string>& ids) {
    std::string all;
    for (const auto& i : ids) all += (all.empty() ? "" : ", ") + i;
    return all;
  };
  auto nearest = [](const std::string& wanted, const std::vector<std::string>& ids) {
    const std::string n = closest_id(wanted, ids);
    return n.empty() ? std::string(".") : "; did you mean \"" + n + "\"?";
  };
  const std::string shown = id_and_tab.size() > 64 ? id_and_tab.substr(0, 64) + "..." : id_and_tab;
  const Panel* p = find_panel(id);
  if (!p) {
    std::vector<std::string> ids;
    for (const auto& q : panel_registry()) ids.push_back(q.id);
    return "panel=" + shown + ": no panel has the id \"" + id.substr(0, 64) + "\"" + nearest(id, ids) +
           " The panels: " + listed(ids) + ".";
  }
  const std::vector<std::string> tabs = panel_tabs(s, *p);
  if (tab.empty() || std::find(tabs.begin(), tabs.end(), tab) != tabs.end()) return "";
  if (tabs.empty())
    return "panel=" + shown + ": the panel \"" + id + "\" (" + p->title + ") has no tabs; use panel=" + id + ".";
  return "panel=" + shown + ": the panel \"" + id + "\" (" + p->title + ") has no tab \"" + tab.substr(0, 64) + "\"" +
         nearest(tab, tabs) + " Its tabs: " + listed(tabs) + " (panel=" + id + "/" + tabs.front() + ").";
}

bool open_panel(ExplorerState& s, const std::string& id_and_tab) {
  if (!panel_problem(s, id_and_tab).empty()) return false;
  const size_t hash = id_and_tab.find('/');
  const std::string id = id_and_tab.substr(0, hash);
  const std::string tab = hash == std::string::npos ? std::string() : id_and_tab.substr(hash + 1);
  s.active_panel = id;
  s.tab_request = tab;
  return true;
}

bool take_tab_request(ExplorerState& s, const std::string& tab) {
  if (s.tab_request != tab) return false;
  s.tab_request.clear();
  return true;
}

std::string settled_tab(const ExplorerState& s, const std::string& panel_and_tab, const std::string& widget) {
  const size_t slash = panel_and_tab.find('/');
  if (slash != std::string::npos) return panel_and_tab.substr(slash + 1);
  const Panel* p = find_panel(panel_and_tab);
  if (!p) return "";
  if (!widget.empty() && widget.rfind(p->id + ".", 0) == 0 && p->tab_of_widget) {
    std::string tab = p->tab_of_widget(s, widget);
    if (!tab.empty()) return tab;
  }
  const std::vector<std::string> tabs = panel_tabs(s, *p);
  return tabs.empty() ? std::string() : tabs.front();
}

void load_default_configs(ExplorerState& s) {
  // Each file once, in registry order; its panels (the sim and run panels share one) are told of a failure.
  std::map<std::string, std::vector<std::string>> panels_of;
  std::vector<std::string> kinds;
  for (const Panel& p : panel_registry())
    if (!p.default_config.empty()) {
      if (!panels_of.count(p.default_config)) kinds.push_back(p.default_config);
      panels_of[p.default_config].push_back(p.id);
    }
  for (const std::string& name : kinds) {
    const std::string path = s.assets_dir + "/configs/" + name + ".json";
    try {
      const JsonDoc doc = JsonDoc::load(path);  // errors name the file, line and column
      if (!doc.value().is_object()) doc.fail("", "a panel config must be a JSON object");
      s.default_configs[name] = doc.value();
      if (const ConfigBinding* b = find_config_binding(name); b && b->restore) b->restore(s);
    } catch (const std::exception& e) {
      s.status =
          std::string(e.what()) + " (restore it from the release, or fix it: it is the " + name + " panel's default)";
      for (const std::string& panel : panels_of[name])
        s.config_errors[panel] =
            std::string(e.what()) +
            "\nThis panel starts from that file. Restore it from the release "
            "(or fix the place named above) and restart; until then the panel has no configuration.";
    }
  }
}

nlohmann::json default_config(const ExplorerState& s, const std::string& name) {
  const auto it = s.default_configs.find(name);
  return it == s.default_configs.end() ? nlohmann::json::object() : it->second;
}

void load_glossary(ExplorerState& s) {
  const std::string path = s.assets_dir + "/glossary.json";
  try {
    Glossary g = mc::load_glossary(path);
    s.glossary = std::move(g.terms);
    s.chapter_openings = std::move(g.chapter_openings);
  } catch (const std::exception& e) {
    // Definitions are help, not content: the explorer runs without them and says why.
    s.glossary_error = std::string(e.what()) + " (the glossary: hovered terms are not defined)";
    if (s.status.empty()) s.status = s.glossary_error;
  }
}

std::vector<std::string> explorer_errors(const ExplorerState& s) {
  std::vector<std::string> out;
  for (const auto& [id, e] : s.panel_errors) out.push_back(id + ": " + e);
  for (const auto& [id, e] : s.config_errors) out.push_back(id + ": " + e);  // its default file was refused
  for (const Panel& p : panel_registry())
    if (p.errors)
      for (std::string& e : p.errors(s)) out.push_back(std::move(e));
  return out;
}

std::vector<FileHandler>& file_handlers() {
  static std::vector<FileHandler> h;
  return h;
}

void track(ExplorerState& s, const std::string& id) {
  ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  s.probe.widget_rects[id] = Rect{a.x, a.y, b.x - a.x, b.y - a.y};
  if (!s.classroom.highlight_widget.empty() && s.classroom.highlight_widget == id) {
    // Centred in view, and kept there while the panel's content above it grows (the lab's memory figures
    // appear after its first training step, under a chart), until the class scrolls or clicks: from then on
    // the view is theirs. Centred each frame, the view a step settles on is the same however it was reached.
    const ImGuiIO& io = ImGui::GetIO();
    if (io.MouseWheel != 0 || io.MouseWheelH != 0 || ImGui::IsMouseDown(0) || ImGui::IsAnyItemActive())
      s.classroom.highlight_scrolled = id;
    if (s.classroom.highlight_scrolled != id) {
      // As little scrolling as shows it whole: not at all when it is in view from the top (centring what was
      // already in view left the panel's first line half under the top edge: network-matters step 1), its top
      // when it is taller than the view, else centred.
      ImGuiWindow* w = ImGui::GetCurrentWindow();
      const float view_h = w->InnerRect.GetHeight(), margin = ImGui::GetTextLineHeightWithSpacing();
      const float top = a.y - w->InnerRect.Min.y + w->Scroll.y, bottom = b.y - w->InnerRect.Min.y + w->Scroll.y;
      if (bottom + margin <= view_h)
        ImGui::SetScrollY(0.0f);
      else if (bottom - top + 2 * margin > view_h)
        ImGui::SetScrollY(top - margin);
      else
        ImGui::SetScrollHereY(0.5f);
      // Sideways too, where the window scrolls that way (a catalog value right of the columns in view).
      // (Not for what is wider than the view: a table row spanning its columns keeps its names in view.)
      if (w->ScrollMax.x > 0 && b.x - a.x < w->InnerClipRect.GetWidth() &&
          (a.x < w->InnerClipRect.Min.x || b.x > w->InnerClipRect.Max.x))
        ImGui::SetScrollHereX(0.5f);
    }
    float t = float(ImGui::GetTime());
    float pulse = 0.5f + 0.5f * float(std::sin(t * 4.0));
    // Inside the window that shows it: a table row spans all its columns, most of them scrolled away, and
    // its outline must not run across the next window.
    const ImVec2 w0 = ImGui::GetWindowPos(), w1(w0.x + ImGui::GetWindowWidth(), w0.y + ImGui::GetWindowHeight());
    a = ImVec2(std::max(a.x, w0.x + 3), std::max(a.y, w0.y + 3));
    b = ImVec2(std::min(b.x, w1.x - 3), std::min(b.y, w1.y - 3));
    ImGui::GetForegroundDrawList()->AddRect(ImVec2(a.x - 3, a.y - 3), ImVec2(b.x + 3, b.y + 3),
                                            ImGui::GetColorU32(ImVec4(1.0f, 0.75f, 0.2f, 0.5f + 0.5f * pulse)), 4.0f, 0,
                                            3.0f);
  }
}

void begin_tracked(ExplorerState& s) {
  ImGui::BeginGroup();
  s.probe.group_log_starts.push_back(GImGui->LogBuffer.size());
}

void end_tracked(ExplorerState& s, const std::string& id) {
  ImGui::EndGroup();
  const int start = s.probe.group_log_starts.empty() ? 0 : s.probe.group_log_starts.back();
  if (!s.probe.group_log_starts.empty()) s.probe.group_log_starts.pop_back();
  if (s.probe.capture_text && GImGui->LogBuffer.size() >= start)
    s.probe.widget_text[id] = std::string(GImGui->LogBuffer.c_str() + start, size_t(GImGui->LogBuffer.size() - start));
  track(s, id);
}

}  // namespace mc::ui
