// story_panel.cpp - "The story": the dated events from the DGX-1 to GPT-4 (assets/catalog/events.json), each
// with its source, beside the "AI and Compute" log chart: the 3.4-month doubling line and the runs of the
// story (assets/catalog/runs.json), drawn with ImDrawList.
#include "capital/scaling_laws.h"
#include "capital/trend.h"
#include "core/format.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

namespace mc::ui {
namespace {

void draw_chart(ExplorerState& s, const Catalog& cat, ImVec2 size) {
  const capital::ComputeTrend t = capital::load_trend(cat);
  const auto runs = capital::run_points(cat);
  ImGui::InvisibleButton("##compute_chart", size);
  track(s, "story.chart");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
  const float left = 64, bottom = 28, top = 10, right = 12;
  const double x0 = 2012, x1 = 2023.5, y0 = 17, y1 = 26;  // years; log10 FLOPs
  auto X = [&](double year) { return p0.x + left + float((year - x0) / (x1 - x0)) * (p1.x - p0.x - left - right); };
  auto Y = [&](double flops) {
    double l = std::log10(std::max(flops, 1.0));
    return p1.y - bottom - float((l - y0) / (y1 - y0)) * (p1.y - p0.y - bottom - top);
  };
  const ImU32 grid = IM_COL32(120, 120, 120, 60), text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg));
  for (int d = int(y0); d <= int(y1); ++d) {
    float y = Y(std::pow(10.0, d));
    dl->AddLine(ImVec2(X(x0), y), ImVec2(X(x1), y), grid);
    char b[16];
    std::snprintf(b, sizeof b, "1e%d", d);
    dl->AddText(ImVec2(p0.x + 6, y - 7), text, b);
  }
  // A year every two, or every four where two years' labels would touch (a 320 px page).
  const int every = X(2014) - X(2012) < ImGui::CalcTextSize("2012").x + 8 ? 4 : 2;
  for (int yr = 2012; yr <= 2023; yr += every) {
    float x = X(yr);
    dl->AddLine(ImVec2(x, Y(std::pow(10.0, y0))), ImVec2(x, Y(std::pow(10.0, y1))), grid);
    dl->AddText(ImVec2(x - 14, p1.y - bottom + 6), text, std::to_string(yr).c_str());
  }
  // The trend: a straight line on a log axis, solid over the period the post measured, dashed after.
  const ImU32 trend_col = ImGui::GetColorU32(accent_color());
  const double end_measured = t.start_year + t.period_years() + 0.3;
  for (double yr = x0; yr < x1; yr += 0.25) {
    const double a = yr, b = std::min(yr + 0.25, x1);
    if (t.flops_at(b) < std::pow(10.0, y0) || t.flops_at(a) > std::pow(10.0, y1)) continue;
    const bool measured = a < end_measured;
    if (!measured && int(yr * 4) % 2) continue;
    dl->AddLine(ImVec2(X(a), Y(t.flops_at(a))), ImVec2(X(b), Y(t.flops_at(b))), trend_col, measured ? 2.0f : 1.2f);
  }
  char doubling[64];  // as the caption and the narrations write it ("%.1f": 3.4, never a cut "3.4000")
  std::snprintf(doubling, sizeof doubling, "doubling every %.1f months", t.doubling_months);
  const float dw = ImGui::CalcTextSize(doubling).x;  // kept inside the chart when it is narrow
  const ImVec2 doubling_at(std::max(p0.x + left, std::min(X(2016.8), p1.x - right - dw)), Y(t.flops_at(2014.2)));
  dl->AddText(doubling_at, trend_col, doubling);
  std::vector<ImRect> labels{
      ImRect(doubling_at, ImVec2(doubling_at.x + dw, doubling_at.y + ImGui::GetTextLineHeight()))};
  // The runs (`labels`: where the words drawn so far went; `dots`: every run's point).
  std::vector<ImRect> dots;
  for (const auto& r : runs) {
    const ImVec2 c(X(r.year), Y(r.flops));
    dots.emplace_back(ImVec2(c.x - 5, c.y - 5), ImVec2(c.x + 5, c.y + 5));
  }
  for (const auto& r : runs) {
    const ImVec2 c(X(r.year), Y(r.flops));
    const ImVec4 col = r.flops_value ? confidence_color(r.flops_value->confidence) : ImVec4(1, 1, 1, 1);
    const ImU32 u = ImGui::GetColorU32(col);
    if (r.kind == "machine")
      dl->AddRect(ImVec2(c.x - 4, c.y - 4), ImVec2(c.x + 4, c.y + 4), u, 0, 0, 2);
    else
      dl->AddCircleFilled(c, 5, u);
    // Short label ("GPT-3 175B", without the year in brackets) and its PF-days.
    // PF-days as the timeline and the panels print them ("3,640 PF-days", core/format.h).
    const std::string name = r.name.substr(0, r.name.find(" (")),
                      pf = format_quantity(capital::flops_to_pf_days(r.flops), "PF-days");
    const std::string one_line = name + "  " + pf;
    // Beside the point, right or left, on one line or with the PF-days on a second, wherever no word or
    // point drawn so far is covered (close runs on a narrow chart ran their labels together). A label with no
    // free place is left out: the chart's table and the point's tooltip still give it.
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    const float lh = ImGui::GetTextLineHeight();
    bool placed = false;
    for (const std::vector<std::string>& lines :
         {std::vector<std::string>{one_line}, std::vector<std::string>{name, pf}}) {
      float tw = 0;
      for (const std::string& l : lines) tw = std::max(tw, ImGui::CalcTextSize(l.c_str()).x);
      for (const float x : {c.x + 7, c.x - 7 - tw}) {
        const ImRect box(ImVec2(x, c.y - 7), ImVec2(x + tw, c.y - 7 + lh * float(lines.size())));
        if (placed || box.Min.x < p0.x + left || box.Max.x > p1.x - right || box.Max.y > p1.y - bottom + 4) continue;
        const auto covers = [&](const ImRect& o) { return o.Overlaps(box); };
        if (std::any_of(labels.begin(), labels.end(), covers) || std::any_of(dots.begin(), dots.end(), covers))
          continue;
        for (size_t i = 0; i < lines.size(); ++i)
          dl->AddText(ImVec2(x, box.Min.y + lh * float(i)), ink, lines[i].c_str());
        labels.push_back(box);
        placed = true;
      }
    }
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (ImGui::IsItemHovered() && std::fabs(m.x - c.x) < 7 && std::fabs(m.y - c.y) < 7 && r.flops_value) {
      sourced_tooltip(cat, *r.flops_value);
    }
  }
  // Its data: each run's compute beside the trend line's in the run's year.
  ChartData d{.title = std::string("Training compute by year, the trend ") + doubling, .x_name = "run"};
  d.series = {{"training compute", "PF-days", {}}, {"trend line", "PF-days", {}}};
  for (const auto& r : runs) {
    char year[16];
    std::snprintf(year, sizeof year, " (%.0f)", std::floor(r.year));
    d.x_labels.push_back(r.name.substr(0, r.name.find(" (")) + year);
    d.series[0].y.push_back(capital::flops_to_pf_days(r.flops));
    d.series[1].y.push_back(capital::flops_to_pf_days(t.flops_at(r.year)));
  }
  describe_chart(d, p0, p1);
}

// The numbers behind the line, in words above the chart (the trend's scenario quotes them): the post's
// measurement, the line carried on to mid-2020, and where each run sits against the line in its own year.
void draw_trend_caption(ExplorerState& s, const Catalog& cat) {
  const capital::ComputeTrend t = capital::load_trend(cat);
  begin_tracked(s);
  wrapped_text(true,
               "The line: doubling every %.1f months, %sx in %.1f years from %.0f (measured, solid); "
               "carried on (dashed) it reaches %.3g FLOPs by mid-2020.",
               t.doubling_months, with_thousands(t.growth).c_str(), t.period_years(), t.start_year,
               t.flops_at(2020.4));  // mid-2020: the year the scenario's "trend" action also reads the line at
  std::string runs;
  for (const auto& r : capital::run_points(cat)) {
    if (r.kind == "machine") continue;  // a machine's day of compute is no run on the line
    char one[160];
    std::snprintf(one, sizeof one, "%s%s %.3g FLOPs, %.2fx", runs.empty() ? "" : "; ",
                  r.name.substr(0, r.name.find(" (")).c_str(), r.flops, r.flops / t.flops_at(r.year));
    runs += one;
  }
  wrapped_text(true, "Each run against the line in its year: %s.", runs.c_str());
  end_tracked(s, "story.trend");
}

void draw_timeline(ExplorerState& s, const Catalog& cat) {
  const Table* ev = cat.table("events");
  if (!ev) {
    ImGui::TextDisabled("No events table in the catalog.");
    return;
  }
  std::vector<const Record*> rows;
  for (const auto& r : ev->records) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Record* a, const Record* b) { return a->get_or("date", 0) < b->get_or("date", 0); });
  for (const Record* r : rows) {
    ImGui::PushID(r->id.c_str());
    const Sourced* date = r->find("date");
    ImGui::TextColored(accent_color(), "%s", date ? date->date.c_str() : "");
    ImGui::SameLine(ImGui::GetFontSize() * 6);
    bool sel = s.selection.table == "events" && s.selection.record == r->id;
    // A selectable as tall as the name wrapped to the column (a long name ran past the edge), the name
    // drawn over it.
    const float wrap_w = std::max(1.0f, ImGui::GetContentRegionAvail().x);
    const ImVec2 name_size = ImGui::CalcTextSize(r->name.c_str(), nullptr, false, wrap_w);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    // The event's outline (a scenario's highlight) frames its name and its summary, whose numbers the
    // narration quotes ("256 GPUs for 296 days" sat under an outline round the name alone).
    begin_tracked(s);
    access::next_name(r->name);
    if (ImGui::Selectable("##event", sel, 0, ImVec2(wrap_w, name_size.y))) s.selection = Selection{"events", r->id, ""};
    ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at, ImGui::GetColorU32(ImGuiCol_Text),
                                        r->name.c_str(), nullptr, wrap_w);
    // The summary names the catalog's facts ({runs/gpt3-2020/train_flops|PF-days}): each prints as the
    // catalog holds it, with its confidence mark; hovering lists their sources. (Under the name: the group
    // begins where the name does, so it needs no indent of its own.)
    facts_text(cat, r->text_or("summary", ""));  // breaks at spaces, never inside "$129,000"
    end_tracked(s, "story.event." + r->id);
    ImGui::Indent(ImGui::GetFontSize() * 6);
    if (date)
      if (const Source* so = cat.source(date->source))
        wrapped_text(true, "%s, %s", so->title.c_str(), so->publisher.c_str());
    ImGui::Unindent(ImGui::GetFontSize() * 6);
    ImGui::PopID();
  }
}

void draw(ExplorerState& s) {
  const Catalog& cat = *s.catalog;
  wrapped_text(false,
               "From one donated box to a machine built for one customer: the events of the story, and the "
               "compute of its runs against the 'AI and Compute' trend. Hover a point for its source.");
  confidence_legend();
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetContentRegionAvail().y;
  const Panes panes = two_panes(w * 0.55f, ImGui::GetFontSize() * 12, h, 0.6f);
  ImGui::BeginChild("chart", panes.first, false);
  wrapped_text(true, "Training compute (FLOPs, log scale) by year; squares are machines, dots are runs");
  draw_trend_caption(s, cat);
  const float chart_h = ImGui::GetContentRegionAvail().y - 8;  // the chart takes what the captions leave
  draw_chart(s, cat,
             ImVec2(ImGui::GetContentRegionAvail().x,
                    std::clamp(chart_h, ImGui::GetFontSize() * 12, ImGui::GetFontSize() * 28)));
  ImGui::EndChild();
  between_panes(panes);
  ImGui::BeginChild("timeline", panes.second, true);
  draw_timeline(s, cat);
  ImGui::EndChild();
}

PanelRegistrar reg{Panel{.id = "story",
                         .title = "The story",
                         .chapter = Chapter::story,
                         .order = 10,
                         .draw = draw,
                         .summary = "Timeline 2016-2022 and the AI-and-Compute chart, every fact with its source",
                         .tabs = {},
                         .tab_of_widget = nullptr,
                         .needs_catalog = true}};

}  // namespace
}  // namespace mc::ui
