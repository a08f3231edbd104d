// widgets.h - small drawing helpers shared by panels: colours, sourced values, the inspector.
#pragma once

#include "catalog/catalog.h"
#include "core/chart_data.h"
#include "ui/explorer.h"

#include <imgui.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace mc::ui {

ImVec4 accent_color();
ImVec4 confidence_color(Confidence c);
const char* confidence_mark(Confidence c);  // "" reported, "~" inferred, "?" assumed

// Draws a value with its confidence mark; hovering shows source, confidence and note.
void sourced_text(const Catalog& cat, const Sourced& v, const std::string& unit);
void sourced_tooltip(const Catalog& cat, const Sourced& v);
void confidence_legend();
// Prose that names catalog facts ("{events/openai-lp/date}", see catalog.h expand_facts): drawn wrapped,
// each fact with its confidence mark; hovering lists every fact's confidence, source and note. A
// reference that names nothing prints the error instead (load_catalog refuses such catalog text).
void facts_text(const Catalog& cat, const std::string& text, bool disabled = false);

// printf-style text wrapped at the window's right edge, breaking only at spaces, drawn as one item (so
// track() and tooltips see all of it); `disabled` draws it in the disabled colour. ImGui 1.86's own
// wrapping (TextWrapped, PushTextWrapPos) also breaks after '.', which splits "1.04 s" into "1." / "04 s".
void wrapped_text(bool disabled, const char* fmt, ...) IM_FMTARGS(2);

// ---- numeric controls: a typed entry applies when it is confirmed ----
//
// A value typed into a slider (Ctrl+click) applies when the entry is confirmed (Enter, Tab, a click
// elsewhere), never at each keystroke: typing "100" into the nodes slider must not run a layout of 1 node,
// then of 10, on the way (the perf panel then fitted its pipeline to 1 node and kept it). Escape gives the old
// value back; dragging applies at once. Every numeric control of the explorer goes through these.
//
// Input fields (input_double, input_int_clamped) still apply as ImGui 1.86 does: its InputScalar marks an
// edit when a held value lands on the frame focus moves to another item, which its own assertion refuses
// (IM_ASSERT in MarkItemEdited, hit under the sanitizer build), so a field's text cannot be held back safely.

// The core: `draw(T&)` draws the ImGui slider labelled `label` on the value it is handed and returns what
// ImGui returns. Returns true when `value` changed.
template <class T, class Draw>
bool apply_when_confirmed(const char* label, T& value, Draw&& draw);

bool slider_int(const char* label, int& v, int lo, int hi, const char* fmt = "%d", ImGuiSliderFlags flags = 0);
bool slider_float(const char* label, float& v, float lo, float hi, const char* fmt = "%.3f",
                  ImGuiSliderFlags flags = 0);
bool input_double(const char* label, double& v, double step = 0, double step_fast = 0, const char* fmt = "%.6f");
// Integer entry that cannot wrap: ImGui's InputInt/SliderInt parse typed text into a 32-bit int, so
// "999999999999" became a negative count. These parse 64-bit and clamp to [lo, hi] (typed values too).
bool input_int_clamped(const char* label, int& v, int lo, int hi, int step = 1, int step_fast = 0);
bool slider_int_clamped(const char* label, int& v, int lo, int hi, const char* fmt = "%d", ImGuiSliderFlags flags = 0);

// Combo boxes through the widget layer, so the accessibility mirror (ui/access.h) can name them and say what
// they show chosen: ImGui 1.86 calls no label hook for a combo. `spoken` names a combo whose label is hidden
// ("##id") for a screen reader.
// `value`: what a screen reader says is chosen, where `preview` is shortened to the box (combo_preview).
// The mirror marks the box expanded while its list is open and points it at the list (aria-controls).
bool begin_combo(const char* label, const char* preview, ImGuiComboFlags flags = 0, const char* spoken = nullptr,
                 const char* value = nullptr);
bool combo(const char* label, int* current, const char* const items[], int count);
bool combo(const char* label, int* current, const char* items_zero_separated);
// Radio buttons the mirror reads as radios, checked or not (ImGui 1.86 reports them as plain buttons);
// `spoken` names one whose label is hidden ("##choice": a question's choice is drawn wrapped beside it).
bool radio(const char* label, bool active, const char* spoken = nullptr);
bool radio(const char* label, int* v, int v_button);

namespace detail {
// The one entry being typed into (only one control has the keyboard): its id and the value typed so far.
struct HeldEntry {
  ImGuiID id = 0;
  alignas(8) unsigned char bytes[16] = {};
};
HeldEntry& held_entry();
// Whether the slider with id `id` is taking typed text now (its Ctrl+click entry).
bool typing_into(ImGuiID id);
}  // namespace detail

template <class T, class Draw>
bool apply_when_confirmed(const char* label, T& value, Draw&& draw) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(detail::HeldEntry::bytes));
  detail::HeldEntry& held = detail::held_entry();
  const ImGuiID id = ImGui::GetID(label);
  T x = value;
  if (held.id == id) std::memcpy(&x, held.bytes, sizeof(T));  // what was typed so far
  draw(x);
  if (detail::typing_into(id)) {  // still typing: held, the model untouched
    held.id = id;
    std::memcpy(held.bytes, &x, sizeof(T));
    return false;
  }
  if (held.id == id) held.id = 0;  // confirmed (Escape gave ImGui the old text back, so x is the old value)
  if (!(x != value)) return false;
  value = x;
  return true;
}

// An error in red, wrapped at the window's edge (an error cut off mid-sentence cannot be acted on).
void error_text(const char* fmt, ...) IM_FMTARGS(1);

// Before a scrolling child of the main view: where the view opens at its top this frame (a scenario step, a
// panel opened; app.cpp), the child does too, not at the scroll the last step's outline left it at.
void child_opens_at_top(const ExplorerState& s);

// The glossary (assets/glossary.json) that hovered text is looked up in; the App sets its own each frame.
void set_glossary(const std::vector<GlossaryTerm>* terms);
// The glossary's terms that `text` names (a form as a whole word), in the glossary's order.
std::vector<const GlossaryTerm*> glossary_terms_in(const std::string& text);
// When the last item is hovered and `text` names glossary terms: a tooltip with each one's plain-language
// definition. wrapped_text calls it, so every sentence, narrations included, defines its terms on hover;
// a control's label (a slider's "tensor (tp)") calls it after the control.
void glossary_tooltip(const std::string& text);
// The text of the last glossary tooltip drawn (tests: a tooltip is its own window, outside the captured text).
const std::string& last_glossary_tooltip();

// An engine message in the words of the screen: each config key a panel's control sets ("parallel/dp",
// "cluster.gpus", "node_network_Gbps") becomes that control's label in quotes, so an error names what the
// class can see and move, not a JSON key. Pairs are (key, label); a key is replaced only as a whole word
// (quoted or not) and only if it holds '_', '.' or '/' (never a word of the sentence), except for the
// message's leading key, which `key` names (LoadError::key) and which is replaced whatever it is.
using ControlLabels = std::vector<std::pair<std::string, std::string>>;
std::string in_control_words(const std::string& message, const ControlLabels& labels);
// The label of the control that sets `key` (its last path part is tried too: "parallel/dp" -> "dp"), or "".
std::string control_label(const std::string& key, const ControlLabels& labels);

// Before an item `w` pixels wide that should follow the previous one: SameLine when it fits in the
// window, else it starts the next line (a row of labels that wraps instead of running off the edge).
void same_line_if_fits(float w);
// The preview a combo box of the next item's width can show for `text`: the whole text when it fits, else
// its start before "..." ("Azure AI supercomputer bu..."): a name is read from its start, and the open list
// shows every name whole.
std::string combo_preview(const std::string& text);
// `text` in at most `width` pixels: whole when it fits, else its start before "...", at a word's end where
// that keeps at least half of what fits, never ending in punctuation (combo previews, catalog names).
std::string shorten_to_width(const std::string& text, float width);
// The same for a text item (its width measured).
void same_line_if_fits(const char* text);
// The same before a slider or input with `label` at the current item width, a button, a checkbox.
void same_line_if_fits_item(const char* label);
void same_line_if_fits_button(const char* label);
void same_line_if_fits_checkbox(const char* label);

// ImGui::EndTable for a table named `title`: the accessibility tree reads it as a table with header cells
// (WCAG 1.3.1), not as lines of text. Every table ends here.
void end_table(const char* title);
// ImGui::TableNextRow (flags: ImGuiTableRowFlags_), and where the row begins for the mirror's table
// (access::table_row): a cell that wraps stays one row there.
void next_row(int row_flags = 0);

// A long job's progress bar with Cancel beside it, the bar (at most 240 px) leaving room for the button: at 320 px
// a fixed 240 px bar ran Cancel 10 px past the window. Returns true when Cancel is pressed.
bool progress_and_cancel(float fraction);

// A chart's text alternative (WCAG 1.1.1) for the drawing just made over `min`-`max`: the engine's summary of
// `d` and its data as a table, given to the accessibility tree as a figure. Costs nothing on a frame whose
// tree is not collected.
void describe_chart(const ChartData& d, ImVec2 min, ImVec2 max);

// Two panes (child windows) side by side while the view holds the first's width and the second's minimum beside
// it; stacked otherwise, the first taking `stacked_share` of the height (a page zoomed to 200 %, a phone:
// WCAG 1.4.10 Reflow). `h` is the panes' height (0: what is left). Call between_panes() between the two.
struct Panes {
  ImVec2 first, second;
  bool stacked = false;
};
Panes two_panes(float first_w, float second_min_w, float h = 0, float stacked_share = 0.45f);
void between_panes(const Panes& p);

// The inspector: the selected record's values, each with source title, URL, confidence and note.
// The clock of an animation drawn from the engine's events (collectives, pipeline, ZeRO): Play/Pause
// (Space), step to the next or previous event (< > and the arrow keys), speed, and a time slider in s, ms
// or us as the animation's length calls for. At speed 1 the whole animation plays in `seconds_per_run`.
// The clock advances first, so the slider, the picture and the figures of a frame show one moment.
// Tracked widgets: "<id>.play", "<id>.step", "<id>.time".
struct Playback {
  double& t_s;
  bool& playing;
  float& speed;
};
void playback_controls(ExplorerState& s, const std::string& id, Playback p, const std::vector<double>& events,
                       double total_s, double seconds_per_run);

void draw_selection_inspector(ExplorerState& s);

// Rows of the catalog view's table in display order (filtered and sorted), as record ids.
std::vector<std::string> catalog_row_order(const ExplorerState& s);
std::vector<const Record*> catalog_rows(const Table& t, const CatalogView& v);

// Exports: CSV (one row per record, a value column and a source column per field) and JSON.
std::string table_to_csv(const Catalog& cat, const Table& t);

}  // namespace mc::ui
