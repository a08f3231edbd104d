// widgets.cpp - the drawing helpers panels share (widgets.h): colours, sourced values, the inspector.
#include "ui/widgets.h"

#include "core/format.h"
#include "ui/access.h"

#include <imgui_internal.h>  // SetNextWindowScroll

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <sstream>

namespace mc::ui {

ImVec4 accent_color() { return ImVec4(0.38f, 0.72f, 1.0f, 1.0f); }

ImVec4 confidence_color(Confidence c) {
  switch (c) {
    case Confidence::reported:
      return ImGui::GetStyleColorVec4(ImGuiCol_Text);
    case Confidence::inferred:
      return ImVec4(0.95f, 0.85f, 0.45f, 1.0f);
    case Confidence::assumed:
      return ImVec4(1.0f, 0.58f, 0.35f, 1.0f);
  }
  return ImVec4(1, 1, 1, 1);
}

const char* confidence_mark(Confidence c) {
  return c == Confidence::inferred ? " ~" : c == Confidence::assumed ? " ?" : "";
}

void wrapped_text(bool disabled, const char* fmt, ...) {
  va_list args, size_args;
  va_start(args, fmt);
  va_copy(size_args, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, size_args);
  va_end(size_args);
  std::string text(size_t(std::max(n, 0)), '\0');
  if (n > 0) std::vsnprintf(text.data(), size_t(n) + 1, fmt, args);
  va_end(args);
  // Greedy: each word goes on the current line if the line still fits the width with it, else starts
  // the next one. Runs of spaces inside a line are kept ("MFU 20%   14 days"); at a break they are dropped.
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  std::string out;
  // Each paragraph ('\n' in the text) is wrapped on its own.
  for (size_t p = 0; p <= text.size();) {
    const size_t para_end = std::min(text.find('\n', p), text.size());
    const std::string para = text.substr(p, para_end - p);
    std::string line, gap;  // gap: the spaces between the line so far and the next word
    for (size_t i = 0; i < para.size();) {
      const size_t end = std::min(para.find(' ', i), para.size());
      const std::string word = para.substr(i, end - i);
      if (!line.empty() && ImGui::CalcTextSize((line + gap + word).c_str()).x > width) {
        out += line + '\n';
        line = word;
      } else {
        line += gap + word;
      }
      const size_t next = std::min(para.find_first_not_of(' ', end), para.size());
      gap = para.substr(end, next - end);
      i = next;
    }
    out += line;
    if (para_end < text.size()) out += '\n';
    p = para_end + 1;
  }
  if (disabled) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextUnformatted(out.c_str(), out.c_str() + out.size());
  if (disabled) ImGui::PopStyleColor();
  glossary_tooltip(text);
}

namespace {
const std::vector<GlossaryTerm>* g_glossary = nullptr;
std::string g_last_glossary_tooltip;
}  // namespace

void set_glossary(const std::vector<GlossaryTerm>* terms) { g_glossary = terms; }

const std::string& last_glossary_tooltip() { return g_last_glossary_tooltip; }

std::vector<const GlossaryTerm*> glossary_terms_in(const std::string& text) {
  std::vector<const GlossaryTerm*> out;
  if (!g_glossary) return out;
  // A form counts as a word of its own: "tp" in "tp comm" and "(tp)", not in "output"; "MFU" in "MFU 30%".
  auto letter = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const GlossaryTerm& t : *g_glossary) {
    bool found = false;
    for (const std::string& f : t.forms) {
      for (size_t at = text.find(f); at != std::string::npos && !found; at = text.find(f, at + 1))
        found = (at == 0 || !letter(text[at - 1])) && (at + f.size() == text.size() || !letter(text[at + f.size()]));
      if (found) break;
    }
    if (found) out.push_back(&t);
  }
  return out;
}

void glossary_tooltip(const std::string& text) {
  if (!g_glossary || g_glossary->empty() || !ImGui::IsItemHovered()) return;
  const std::vector<const GlossaryTerm*> terms = glossary_terms_in(text);
  if (terms.empty()) return;
  std::string tip;
  for (const GlossaryTerm* t : terms)
    tip += (tip.empty() ? "" : "\n\n") + t->term + ": " + t->definition +
           (t->source.empty() ? "" : " (" + t->source + ")");
  g_last_glossary_tooltip = tip;
  ImGui::BeginTooltip();  // appended to by a caller's own tooltip (a fact's sources) rather than hiding it
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
  ImGui::TextUnformatted(tip.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void sourced_tooltip(const Catalog& cat, const Sourced& v) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
  ImGui::TextColored(confidence_color(v.confidence), "%s", to_string(v.confidence));
  if (const Source* s = cat.source(v.source)) {
    ImGui::TextWrapped("%s", s->title.c_str());
    ImGui::TextDisabled("%s, %s", s->publisher.c_str(), s->date.c_str());
  } else {
    ImGui::TextUnformatted(v.source.c_str());
  }
  if (!v.note.empty()) ImGui::TextWrapped("Note: %s", v.note.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void sourced_text(const Catalog& cat, const Sourced& v, const std::string& unit) {
  std::string s = display_value(v, unit) + confidence_mark(v.confidence);
  ImGui::TextColored(confidence_color(v.confidence), "%s", s.c_str());
  if (ImGui::IsItemHovered()) sourced_tooltip(cat, v);
}

void facts_text(const Catalog& cat, const std::string& text, bool disabled) {
  ExpandedText e;
  try {
    e = expand_facts(cat, text, true);
  } catch (const std::exception& ex) {
    error_text("%s", ex.what());
    return;
  }
  wrapped_text(disabled, "%s", e.text.c_str());
  if (e.facts.empty() || !ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
  for (const Sourced* f : e.facts) {
    const Source* so = cat.source(f->source);
    ImGui::TextColored(confidence_color(f->confidence), "%s: %s%s%s", to_string(f->confidence),
                       so ? so->title.c_str() : f->source.c_str(), f->note.empty() ? "" : ". ", f->note.c_str());
  }
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

namespace detail {

HeldEntry& held_entry() {
  static HeldEntry held;
  return held;
}

bool typing_into(ImGuiID id) { return GImGui->ActiveId != 0 && ImGui::TempInputIsActive(id); }

}  // namespace detail

namespace {

// The value as the control draws it ("16 stages"), for a screen reader's value text.
template <class T>
std::string drawn_value(const char* fmt, T v) {
  char buf[96];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  std::snprintf(buf, sizeof buf, fmt, v);
#pragma GCC diagnostic pop
  return buf;
}

// A control's label (a slider's, a field's, a combo box's) is drawn to its right; where the window is too narrow for
// both (a phone, a page zoomed to 200 %) the label goes on its own line above and the control takes the line's width:
// at 320 px the simulation's "NIC Gb/s per node" read "NIC Gb/s per no", cut at the window's edge (WCAG 1.4.10 reflow).
// Returns the label to draw the control with: `label`, or "##" + `label` under the label drawn above (its
// ImGui id is then another; its name to a screen reader stays the label, note_value).
std::string placed_label(const char* label) {
  const char* end = ImGui::FindRenderedTextEnd(label);
  if (end == label) return label;
  const float beside =
      ImGui::CalcItemWidth() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, end).x;
  const float avail = ImGui::GetContentRegionAvail().x;
  if (beside <= avail + 0.5f) return label;
  wrapped_text(false, "%.*s", int(end - label), label);       // a label longer than the line wraps
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);  // the next line's whole width
  return std::string("##") + label;
}

// A value the page's mirror set (access::set_value) lands as a confirmed entry would, within [lo, hi]; the
// control drawn is then described to the mirror with its value and range. `drawn` is the label the control
// is drawn with (placed_label), `label` the one it is named by.
template <class T, class Draw>
bool mirrored(const char* label, const char* drawn, T& v, double lo, double hi, access::Role role, const char* fmt,
              Draw&& draw) {
  // Not ImGui::GetID, which keeps the id alive: a field with step buttons has its text field under this very
  // id, and kept alive past a click away it was marked edited while no longer active (IM_ASSERT in
  // MarkItemEdited, PerfControls.NoPriceNamesThePriceControlThatSetsIt under the sanitizers).
  const ImGuiID id = ImGui::GetCurrentWindow()->GetIDNoKeepAlive(drawn);
  bool set = false;
  if (double want = 0; access::take_value(id, want) && std::isfinite(want)) {
    const T x = T(lo < hi ? std::clamp(want, lo, hi) : want);
    set = x != v;
    v = x;
  }
  const bool changed = draw(v);
  access::note_value(id, role, double(v), lo, hi, drawn_value(fmt, v), label);
  return changed || set;
}

}  // namespace

bool slider_int(const char* label, int& v, int lo, int hi, const char* fmt, ImGuiSliderFlags flags) {
  const std::string placed = placed_label(label);
  const char* l = placed.c_str();
  return mirrored(label, l, v, lo, hi, access::Role::slider, fmt, [&](int& y) {
    return apply_when_confirmed(l, y, [&](int& x) { return ImGui::SliderInt(l, &x, lo, hi, fmt, flags); });
  });
}

bool slider_float(const char* label, float& v, float lo, float hi, const char* fmt, ImGuiSliderFlags flags) {
  const std::string placed = placed_label(label);
  const char* l = placed.c_str();
  return mirrored(label, l, v, lo, hi, access::Role::slider, fmt, [&](float& y) {
    return apply_when_confirmed(l, y, [&](float& x) { return ImGui::SliderFloat(l, &x, lo, hi, fmt, flags); });
  });
}

bool input_double(const char* label, double& v, double step, double step_fast, const char* fmt) {
  // applies as ImGui does: see widgets.h
  const std::string placed = placed_label(label);
  const char* l = placed.c_str();
  return mirrored(label, l, v, 0, 0, access::Role::field, fmt,
                  [&](double& x) { return ImGui::InputDouble(l, &x, step, step_fast, fmt); });
}

bool input_int_clamped(const char* label, int& v, int lo, int hi, int step, int step_fast) {
  const std::string placed = placed_label(label);
  const char* l = placed.c_str();
  return mirrored(label, l, v, lo, hi, access::Role::field, "%d", [&](int& y) {
    long long x = y;
    const long long s = step, sf = step_fast;
    if (!ImGui::InputScalar(l, ImGuiDataType_S64, &x, step > 0 ? &s : nullptr, step_fast > 0 ? &sf : nullptr, "%lld"))
      return false;
    y = int(std::clamp<long long>(x, lo, hi));
    return true;
  });
}

bool slider_int_clamped(const char* label, int& v, int lo, int hi, const char* fmt, ImGuiSliderFlags flags) {
  const std::string placed = placed_label(label);
  const char* l = placed.c_str();
  return mirrored(label, l, v, lo, hi, access::Role::slider, fmt, [&](int& y) {
    long long x = y;
    const long long a = lo, b = hi;
    std::string f = fmt;  // "%d nodes" -> "%lld nodes"
    if (auto p = f.find("%d"); p != std::string::npos) f.replace(p, 2, "%lld");
    if (!apply_when_confirmed(l, x, [&](long long& z) {
          return ImGui::SliderScalar(l, ImGuiDataType_S64, &z, &a, &b, f.c_str(), flags | ImGuiSliderFlags_AlwaysClamp);
        }))
      return false;
    y = int(std::clamp<long long>(x, lo, hi));
    return true;
  });
}

bool begin_combo(const char* label, const char* preview, ImGuiComboFlags flags, const char* spoken, const char* value) {
  const std::string placed = placed_label(label);
  access::next_item(access::Role::combo, spoken ? spoken : label, value ? value : preview ? preview : "");
  const ImGuiID id = ImGui::GetCurrentWindow()->GetIDNoKeepAlive(placed.c_str());
  const bool open = ImGui::BeginCombo(placed.c_str(), preview, flags);
  if (open) access::list_open(id);  // the current window is now the list's
  return open;
}

bool combo(const char* label, int* current, const char* const items[], int count) {
  const std::string placed = placed_label(label);
  access::next_item(access::Role::combo, label, *current >= 0 && *current < count ? items[*current] : "");
  return ImGui::Combo(placed.c_str(), current, items, count);
}

bool radio(const char* label, bool active, const char* spoken) {
  access::next_role(access::Role::radio, active ? 1 : 0);
  if (spoken) access::next_name(spoken);
  return ImGui::RadioButton(label, active);
}

bool radio(const char* label, int* v, int v_button) {
  access::next_role(access::Role::radio, *v == v_button ? 1 : 0);
  return ImGui::RadioButton(label, v, v_button);
}

bool combo(const char* label, int* current, const char* items_zero_separated) {
  const char* shown = items_zero_separated;
  for (int i = 0; i < *current && *shown; ++i) shown += std::strlen(shown) + 1;
  const std::string placed = placed_label(label);
  access::next_item(access::Role::combo, label, shown);
  return ImGui::Combo(placed.c_str(), current, items_zero_separated);
}

void error_text(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buf[2048];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.4f, 1));
  wrapped_text(false, "%s", buf);
  ImGui::PopStyleColor();
}

std::string control_label(const std::string& key, const ControlLabels& labels) {
  const std::string last = key.substr(key.find_last_of('/') == std::string::npos ? 0 : key.find_last_of('/') + 1);
  for (const std::string& k : {key, last})
    for (const auto& [from, to] : labels)
      if (from == k) return to;
  return "";
}

std::string in_control_words(const std::string& message, const ControlLabels& labels) {
  auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/';
  };
  std::string out = message;
  for (const auto& [key, label] : labels) {
    if (key.find_first_of("_./") == std::string::npos) continue;
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at)) {
      size_t b = at, e = at + key.size();
      // A dotted path's own dots end a word: "cluster.gpus;" is the key, "cluster.gpus.x" is not.
      const bool whole =
          (b == 0 || !word_char(out[b - 1]) || out[b - 1] == '/') &&
          (e == out.size() || !word_char(out[e]) || (out[e] == '.' && (e + 1 == out.size() || out[e + 1] == ' ')));
      if (!whole) {
        at = e;
        continue;
      }
      if (b > 0 && e < out.size() && out[b - 1] == '"' && out[e] == '"') --b, ++e;  // "key" -> 'label'
      const std::string quoted = "'" + label + "'";
      out.replace(b, e - b, quoted);
      at = b + quoted.size();
    }
  }
  return out;
}

void same_line_if_fits(float w) {
  const float x = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (x + w <= right) ImGui::SameLine();
}

void same_line_if_fits(const char* text) { same_line_if_fits(ImGui::CalcTextSize(text, nullptr, true).x); }

void same_line_if_fits_item(const char* label) {
  same_line_if_fits(ImGui::CalcItemWidth() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize(label, nullptr, true).x);
}

void same_line_if_fits_button(const char* label) {
  same_line_if_fits(ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x);
}

void end_table(const char* title) {
  access::table(title);
  ImGui::EndTable();
}

void next_row(int row_flags) {
  ImGui::TableNextRow(row_flags);
  access::table_row();
}

bool progress_and_cancel(float fraction) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float cancel_w = ImGui::CalcTextSize("Cancel").x + 2 * st.FramePadding.x;
  ImGui::ProgressBar(fraction, ImVec2(std::clamp(ImGui::GetContentRegionAvail().x - cancel_w - st.ItemSpacing.x,
                                                 ImGui::GetFontSize() * 4, 240.0f),
                                      0));
  same_line_if_fits_button("Cancel");
  return ImGui::Button("Cancel");
}

void describe_chart(const ChartData& d, ImVec2 min, ImVec2 max) {
  if (!access::collecting()) return;
  access::figure(d.title, chart_summary(d), to_tsv(chart_table(d)), min.x, min.y, max.x, max.y);
}

Panes two_panes(float first_w, float second_min_w, float h, float stacked_share) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  if (first_w + gap + second_min_w <= avail.x) return {ImVec2(first_w, h), ImVec2(0, h), false};
  const float whole = h > 0 ? h : avail.y;
  // Stacked, each pane scrolls on its own; a pane shorter than a few lines is no use, so the first keeps 8 em.
  const float top = std::max(ImGui::GetFontSize() * 8, std::floor(whole * stacked_share));
  return {ImVec2(0, top), ImVec2(0, h > 0 ? std::max(ImGui::GetFontSize() * 8, whole - top) : 0), true};
}

void between_panes(const Panes& p) {
  if (!p.stacked) ImGui::SameLine();
}

void same_line_if_fits_checkbox(const char* label) {
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize(label, nullptr, true).x);
}

void confidence_legend() {
  ImGui::TextDisabled("Confidence:");
  same_line_if_fits("reported");
  ImGui::TextColored(confidence_color(Confidence::reported), "reported");
  same_line_if_fits("~ inferred");
  ImGui::TextColored(confidence_color(Confidence::inferred), "~ inferred");
  same_line_if_fits("? assumed");
  ImGui::TextColored(confidence_color(Confidence::assumed), "? assumed");
  same_line_if_fits("(hover a value for its source)");
  ImGui::TextDisabled("(hover a value for its source)");
}

namespace {

// "Network" -> "network", "GPU" stays "GPU" (an acronym).
std::string lower_first(std::string x) {
  if (x.size() > 1 && !std::isupper(static_cast<unsigned char>(x[1])))
    x[0] = char(std::tolower(static_cast<unsigned char>(x[0])));
  return x;
}

// A catalog text attribute's key ("fabric_note") in a student's words ("Note on the network").
std::string text_attribute_label(const std::string& key) {
  static const std::map<std::string, std::string> words = {
      {"gpu", "GPU"},
      {"cpu", "CPU"},
      {"server", "Server"},
      {"fabric", "Network"},
      {"software", "Training stack"},
      {"story", "Story"},
      {"caution", "Caution"},
      {"note", "Note"},
      {"kind", "Kind"},
      {"topology", "Topology"},
      {"form", "Form factor"},
      {"architecture", "Architecture"},
      {"summary", "Summary"},
      {"topic", "Topic"},
      {"holder_kind", "Holder"},
      {"cap_from", "Cap as in"},
      {"basis_from", "Basis as in"},
      {"investment_from", "Investment as in"},
      {"layout_embedding_stages", "Embedding stages"},
      {"layout_recompute", "Recomputation"},
      {"layout_schedule", "Pipeline schedule"},
      {"norm", "Normalisation"},
      {"position_embedding", "Position embedding"},
      {"source_location", "Where the source says it"},
      {"typo", "Typo in the source"},
      {"data_parallel", "Data parallel"},
      {"framework", "Framework"},
      {"kernels", "Kernels"},
      {"pipeline", "Pipeline"},
      {"single_gpu_efficiency", "One-GPU efficiency"},
      {"zero3_gather", "ZeRO-3 gathers"},
  };
  if (auto it = words.find(key); it != words.end()) return it->second;
  const std::string note = "_note";
  if (key.size() > note.size() && key.compare(key.size() - note.size(), note.size(), note) == 0)
    return "Note on " + lower_first(text_attribute_label(key.substr(0, key.size() - note.size())));
  // Anything else: its words, spaced ("foo_bar" -> "Foo bar").
  std::string out = key;
  for (char& c : out)
    if (c == '_') c = ' ';
  if (!out.empty()) out[0] = char(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// A text attribute's value in words: a record's id ("v100-32gb") or a record named by its table
// ("prices/microsoft-2019") reads as that record's name.
std::string catalog_text_value(const Catalog& cat, const std::string& key, const std::string& value) {
  static const std::map<std::string, std::string> table_of = {
      {"gpu", "gpus"}, {"server", "systems"}, {"fabric", "fabrics"}, {"software", "software"}};
  if (auto it = table_of.find(key); it != table_of.end())
    if (const Table* t = cat.table(it->second))
      if (const Record* r = t->find(value)) return r->name;
  const size_t slash = value.find('/');
  if (slash != std::string::npos && value.find('/', slash + 1) == std::string::npos)
    if (const Table* t = cat.table(value.substr(0, slash)))
      if (const Record* r = t->find(value.substr(slash + 1))) return r->name;
  if (value.find(' ') == std::string::npos)
    for (const Table& t : cat.tables)
      if (const Record* r = t.find(value)) return r->name;
  return value;
}

}  // namespace

void draw_selection_inspector(ExplorerState& s) {
  if (!s.catalog || s.selection.empty()) {
    ImGui::TextWrapped(
        "Select a row to see each of its values with its source, how sure we are of it "
        "(reported, inferred or assumed) and why.");
    return;
  }
  const Table* t = s.catalog->table(s.selection.table);
  const Record* r = t ? t->find(s.selection.record) : nullptr;
  if (!r) {
    ImGui::TextWrapped("Nothing called \"%s\" in \"%s\".", s.selection.record.c_str(), s.selection.table.c_str());
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(accent_color(), "%s", r->name.c_str());
  ImGui::TextDisabled("in the table \"%s\"", t->title.c_str());  // its title, not the record's id
  for (const auto& [k, v] : r->text) {
    // Human words for the attribute and its value: "GPU: NVIDIA V100 SXM2 32 GB", not "gpu: v100-32gb"; a
    // note ("fabric_note") reads as a note on the attribute above it.
    const std::string label = text_attribute_label(k);
    const std::string value = catalog_text_value(*s.catalog, k, v);
    const Sourced* ts = r->text_source(k);
    if (!ts) {
      facts_text(*s.catalog, label + ": " + value);
      continue;
    }
    // A text attribute that is a fact (which GPU) shows its confidence and source like a value.
    ImGui::TextColored(confidence_color(ts->confidence), "%s: %s%s  (%s)", label.c_str(), value.c_str(),
                       confidence_mark(ts->confidence), to_string(ts->confidence));
    if (ImGui::IsItemHovered()) sourced_tooltip(*s.catalog, *ts);
    if (!ts->note.empty()) ImGui::TextWrapped("  %s", ts->note.c_str());
  }
  ImGui::Separator();
  for (const auto& f : t->fields) {
    const Sourced* v = r->find(f.key);
    if (!v) continue;
    ImGui::Spacing();
    ImGui::Text("%s", f.label.c_str());
    ImGui::SameLine();
    std::string val = display_value(*v, f.unit);
    ImGui::TextColored(confidence_color(v->confidence), "%s  (%s)", val.c_str(), to_string(v->confidence));
    if (const Source* src = s.catalog->source(v->source)) {
      wrapped_text(true, "  %s. %s, %s", src->title.c_str(), src->publisher.c_str(), src->date.c_str());
      if (!src->url.empty()) {
        ImGui::PushID(f.key.c_str());
        if (ImGui::SmallButton("open source") && s.platform) s.platform->open_url(src->url);
        ImGui::PopID();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", src->url.c_str());
      }
    }
    if (!v->note.empty()) ImGui::TextWrapped("  %s", v->note.c_str());
  }
  ImGui::PopTextWrapPos();
}

static std::string lower(std::string x) {
  for (char& c : x) c = char(std::tolower(static_cast<unsigned char>(c)));
  return x;
}

std::vector<const Record*> catalog_rows(const Table& t, const CatalogView& v) {
  std::vector<const Record*> rows;
  const std::string f = lower(v.filter);
  for (const auto& r : t.records) {
    if (!f.empty() && lower(r.name).find(f) == std::string::npos && lower(r.id).find(f) == std::string::npos) continue;
    rows.push_back(&r);
  }
  // Records without the sort field go last whatever the direction; ties keep file order.
  std::stable_sort(rows.begin(), rows.end(), [&](const Record* a, const Record* b) {
    if (v.sort_key == "name") return v.sort_ascending ? a->name < b->name : b->name < a->name;
    const Sourced* x = a->find(v.sort_key);
    const Sourced* y = b->find(v.sort_key);
    if (!x || !y) return x && !y;
    return v.sort_ascending ? x->value < y->value : y->value < x->value;
  });
  return rows;
}

std::vector<std::string> catalog_row_order(const ExplorerState& s) {
  std::vector<std::string> ids;
  if (!s.catalog) return ids;
  if (const Table* t = s.catalog->table(s.catalog_view.table))
    for (const Record* r : catalog_rows(*t, s.catalog_view)) ids.push_back(r->id);
  return ids;
}

static std::string csv_escape(const std::string& x) {
  if (x.find_first_of(",\"\n") == std::string::npos) return x;
  std::string out = "\"";
  for (char c : x) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string table_to_csv(const Catalog& cat, const Table& t) {
  std::ostringstream os;
  os.precision(10);
  os << "id,name";
  for (const auto& f : t.fields)
    os << ',' << csv_escape(f.key + " [" + f.unit + "]") << ',' << f.key << "_confidence," << f.key << "_source";
  os << '\n';
  for (const auto& r : t.records) {
    os << csv_escape(r.id) << ',' << csv_escape(r.name);
    for (const auto& f : t.fields) {
      const Sourced* v = r.find(f.key);
      if (!v) {
        os << ",,,";
        continue;
      }
      const Source* s = cat.source(v->source);
      if (v->date.empty())
        os << ',' << v->value;
      else
        os << ',' << v->date;  // a date as the source gives it
      os << ',' << to_string(v->confidence) << ',' << csv_escape(s ? s->title : v->source);
    }
    os << '\n';
  }
  return os.str();
}

std::string shorten_to_width(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  auto fits = [&](const std::string& head) { return ImGui::CalcTextSize((head + "...").c_str()).x <= width; };
  // Trailing spaces and punctuation go before "...": "DeepSpeed 0.2-0." would read as "0.2-0....".
  auto trim = [](std::string head) {
    while (!head.empty() && std::strchr(" .,;:-/(", head.back())) head.pop_back();
    return head;
  };
  // The longest head that fits, cut at a UTF-8 character boundary: a name is read from its start.
  std::string head;
  for (size_t i = text.size() - 1; i > 0 && head.empty(); --i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
    if (fits(trim(text.substr(0, i)))) head = trim(text.substr(0, i));
  }
  if (head.empty()) return "...";
  // Whole words where that keeps most of it ("DeepSpeed 0.2-0.3 (2020)" -> "DeepSpeed...", not a
  // version cut in two); a cut word only when the words alone would lose more than half.
  if (head.size() < text.size() && text[head.size()] != ' ') {
    const size_t space = head.rfind(' ');
    if (space != std::string::npos && space >= head.size() / 2) head = trim(head.substr(0, space));
  }
  return head + "...";
}

std::string combo_preview(const std::string& text) {
  const ImGuiStyle& st = ImGui::GetStyle();
  return shorten_to_width(text, ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - 2 * st.FramePadding.x);
}

void playback_controls(ExplorerState& s, const std::string& id, Playback p, const std::vector<double>& events,
                       double total_s, double seconds_per_run) {
  if (p.playing) {
    p.t_s += double(ImGui::GetIO().DeltaTime) * p.speed * total_s / seconds_per_run;
    if (p.t_s >= total_s) {
      p.t_s = total_s;
      p.playing = false;
    }
  }
  auto step_to = [&](int dir) {
    p.playing = false;
    if (dir > 0) {
      auto it = std::upper_bound(events.begin(), events.end(), p.t_s + 1e-15);
      p.t_s = it != events.end() ? *it : total_s;
    } else {
      auto it = std::lower_bound(events.begin(), events.end(), p.t_s - 1e-15);
      p.t_s = it != events.begin() ? *std::prev(it) : 0;
    }
  };
  const bool keys = !ImGui::GetIO().WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows);
  if (ImGui::Button(p.playing ? "Pause###play" : "Play###play") ||
      (keys && ImGui::IsKeyPressed(ImGuiKey_Space, false))) {
    if (!p.playing && p.t_s >= total_s) p.t_s = 0;
    p.playing = !p.playing;
  }
  track(s, id + ".play");
  ImGui::SameLine();
  access::next_name("Previous event");  // a screen reader would say "less than"
  if (ImGui::Button("<") || (keys && ImGui::IsKeyPressed(ImGuiKey_LeftArrow))) step_to(-1);
  ImGui::SameLine();
  access::next_name("Next event");
  if (ImGui::Button(">") || (keys && ImGui::IsKeyPressed(ImGuiKey_RightArrow))) step_to(+1);
  track(s, id + ".step");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  slider_float("speed", p.speed, 0.1f, 4.0f, "%.2gx", ImGuiSliderFlags_Logarithmic);
  same_line_if_fits_item("time");
  ImGui::SetNextItemWidth(
      std::max(ImGui::GetFontSize() * 10, ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4));
  // Seconds for a run of seconds, milliseconds or microseconds below.
  const double unit = total_s >= 1 ? 1 : total_s >= 1e-3 ? 1e-3 : 1e-6;
  const char* fmt = unit == 1 ? "%.3f s" : unit == 1e-3 ? "%.3f ms" : "%.1f us";
  float shown = float(p.t_s / unit);
  if (slider_float("time", shown, 0, float(total_s / unit), fmt)) {
    p.t_s = std::clamp(double(shown) * unit, 0.0, total_s);
    p.playing = false;
  }
  track(s, id + ".time");
}

void child_opens_at_top(const ExplorerState& s) {
  if (s.view_opened) ImGui::SetNextWindowScroll(ImVec2(0, 0));
}

}  // namespace mc::ui
