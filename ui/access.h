// access.h - each frame as an accessibility tree (issue 42): the windows as regions, every control ImGui drew
// with its role, name and value, the text the frame drew in reading order, the narration as a polite live
// region and the status bar as a status message, each where it lies on screen; the difference from the last
// tree as DOM operations the web page applies to its mirror (web/platform.js), and what the assistive
// technology asks for (a press, a slider's new value) handed back to ImGui on the next frame.
//
// Where each part comes from:
//   controls   ImGui's item hooks (ui/hooks/imgui_hooks.h): id, rectangle, label, checkable/checked,
//              openable/open; the widget layer adds a slider's or field's value and range (note_value) and a
//              role ImGui's flags cannot tell (next_role: a chapter entry is a navigation link). Those scrolled
//              out of view too: ImGui's log mode, on while the tree is collected, lays out clipped items
//   tables     widgets.h end_table: each row's cells from ImGui's log (all rows and columns), else the glyphs
//   regions    ImGui's visible top-level windows, named by their title
//   text       the glyphs each window drew inside its clip rect (ui/drawn_text.h), a line at a time, and from
//              ImGui's log each text item laid out beyond its window's view, whole (scrolled away: marked
//              not visible); less the lines inside a control (its name says them) or a table
// Built where something reads it (Platform::mirrors_access: the web page, the tests); the native shell builds none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mc::ui::access {

enum class Role : uint8_t {
  region,
  button,
  nav,
  tablist,  // a tab bar: its tabs are its children
  tab,
  checkbox,
  radio,
  option,
  listbox,  // a combo box's or menu's list: its options are its children
  combo,
  disclosure,
  slider,
  field,
  text,
  live,
  status,
  figure,  // a chart: its name the title, its value the engine's one-sentence summary (core/chart_data.h)
  table    // a chart's data, a figure's child: its value the table as tab-separated lines, the header first
};
const char* role_name(Role r);  // "region", "button", ... (the names the page's mirror reads)

struct Node {
  uint32_t id = 0;      // a control's ImGui id (the same every frame); a region's window id; text: its place
  uint32_t parent = 0;  // the region it is in (0: a region itself); a tab its tablist, an option its listbox
  Role role = Role::text;
  std::string name;                // a control's label (without ImGui's ##id part); a region's title; a text's words
  std::string value;               // a slider's or field's value as drawn ("16 stages")
  double now = 0, lo = 0, hi = 0;  // a slider's or field's value and range (lo == hi: no range)
  int8_t checked = -1, expanded = -1;  // -1: not checkable / not openable; a nav entry: checked = current
  uint32_t controls = 0;               // a combo box: the listbox its open list is (0: closed)
  bool visible = true;                 // inside its window's view (a control or text scrolled away is listed too)
  bool main = false;                   // the region of the chapter's content (the page's skip link goes there)
  int x = 0, y = 0, w = 0, h = 0;      // where it is drawn, display pixels
  bool operator==(const Node&) const = default;
};

struct Tree {
  std::vector<Node> nodes;  // reading order: each region, then what is in it
  // The control ImGui's keyboard navigation is on (its highlight shown: Ctrl+Tab, arrows on the canvas), so the
  // page moves the DOM's focus to its mirror; 0 when the mouse is in charge, a field is being typed into or the
  // item is not in the tree.
  uint32_t focus = 0;
  const Node* find(const std::string& name, Role role) const;  // the first node with that name and role
};

// --- Collecting (App::frame) ---
// Starts a frame's tree: turns on ImGui's item hooks. Call after ImGui::NewFrame, before drawing.
void begin_frame();
// Ends it after the last window's End(): regions and text are read from ImGui's windows; `narration` (plain
// text) and `status` become the live region and the status message.
Tree end_frame(const std::string& narration, const std::string& status);
// Ends a frame whose tree is not wanted (the page reads it at most every 100 ms): the hooks stop.
void skip_frame();
// Whether the mirror asked for something since the last tree (a press or a value still to apply, or applied
// in this frame).
bool acted();
// Which controls and windows this frame drew, as a number: a reading is due when it changes.
uint64_t frame_shape();
// The widget layer's additions for the item just drawn (ImGui::GetItemID()): a slider's or field's value,
// its range (lo == hi: none) and the value as drawn.
void note_value(uint32_t id, Role role, double now, double lo, double hi, const std::string& text, const char* label);
// The role of the next item drawn and, for one that is on or off (a chapter entry: the one shown), its state:
// ImGui 1.86's Selectable reports neither.
void next_role(Role r, int checked = -1);
// The next item's role, name and value where ImGui gives it no label hook (a combo box: its label and what
// it shows chosen).
void next_item(Role r, const std::string& name, const std::string& value);
void mark_main(const std::string& title);  // the window being drawn holds the chapter's content
void next_name(const std::string& name);   // the next item's name, where its label is hidden or says less
// The combo box `id`'s list is open and the current window is it (widgets.h begin_combo): the box is then
// expanded and controls the list's listbox.
void list_open(uint32_t id);
// Whether this frame's tree is being collected (what a chart's text alternative costs is paid only then).
bool collecting();
// The table ImGui is drawing (call before ImGui::EndTable; widgets.h end_table does): a table named
// `title` in the tree, its cells read back from the glyphs it drew, column by column, on the frame's end, its
// header the columns' names. Its text is then read as the table's, not as lines.
void table(const std::string& title);
// A row of the table being drawn begins (call after ImGui::TableNextRow; widgets.h next_row does): its top,
// so that a cell wrapped onto more lines, or holding more than one item, is read as one row, not several.
void table_row();
// A chart drawn in the current window over (x0, y0)-(x1, y1): a figure named `title` whose value is
// `summary`, holding its data as a table (`table_tsv`: core/chart_data.h to_tsv). A title is its id in its
// window: the same chart keeps its node from frame to frame.
void figure(const std::string& title, const std::string& summary, const std::string& table_tsv, float x0, float y0,
            float x1, float y1);

// --- Actions (the page's mirror, a test) ---
// Each applies on the next frame: press() clicks the control as keyboard activation would (ImGui's
// ActivateItem: a button, checkbox, chapter entry, tab or header), set_value() gives a slider or field its
// new value through the widget layer, as if it had been typed and confirmed.
void press(uint32_t id);
void set_value(uint32_t id, double v);
// The page's focus moved to the mirror of control `id` (Tab, a screen reader's cursor): ImGui's keyboard
// navigation goes to it, with its highlight, on the next frame that draws it (ImGui::SetFocusID).
void focus(uint32_t id);
// ImGui's keyboard focus as Tree::focus reads it, before the tree is built (a change makes a reading due).
uint32_t keyboard_focus();
// The widget layer asks whether `id` was given a value; true once per set_value.
bool take_value(uint32_t id, double& v);

// --- The page's mirror ---
// The DOM operations that turn `before` into `after`, as JSON text: [{"op":"add"|"set"|"del", "id":..,
// the changed fields...}, ...] in reading order; "" when nothing changed. Geometry is in percent of the
// display (`display_w` x `display_h`), so the mirror lies over the canvas whatever its CSS size.
std::string diff(const Tree& before, const Tree& after, float display_w, float display_h);

}  // namespace mc::ui::access
