// access.cpp - the frame's accessibility tree and its DOM operations (see access.h).
//
// Sections: [collecting] the hooks' items and the widget layer's additions; [tree] regions, controls, tabs
// and text in reading order; [actions] press and set_value; [diff] the page's operations.
#include "ui/access.h"

#include "ui/drawn_text.h"
#include "ui/hooks/imgui_hooks.h"

#include <imgui.h>
#include <imgui_internal.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace mc::ui::access {

const char* role_name(Role r) {
  switch (r) {
    case Role::region:
      return "region";
    case Role::button:
      return "button";
    case Role::nav:
      return "nav";
    case Role::tablist:
      return "tablist";
    case Role::listbox:
      return "listbox";
    case Role::tab:
      return "tab";
    case Role::checkbox:
      return "checkbox";
    case Role::radio:
      return "radio";
    case Role::option:
      return "option";
    case Role::combo:
      return "combo";
    case Role::disclosure:
      return "disclosure";
    case Role::slider:
      return "slider";
    case Role::field:
      return "field";
    case Role::text:
      return "text";
    case Role::live:
      return "live";
    case Role::status:
      return "status";
    case Role::figure:
      return "figure";
    case Role::table:
      return "table";
  }
  return "text";
}

const Node* Tree::find(const std::string& name, Role role) const {
  for (const Node& n : nodes)
    if (n.role == role && n.name == name) return &n;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------------
// [collecting]

namespace {

struct Item {
  uint32_t id = 0, root = 0;
  ImRect bb;
  ImRect full;  // with its label (a slider's words beside its frame): text drawn there is its name, not a line
  bool visible = true, has_info = false, has_role = false, has_value = false, in_popup = false, has_spoken = false;
  std::string spoken;
  std::string label;
  int flags = 0;
  Role role = Role::button;
  double now = 0, lo = 0, hi = 0;
  std::string value;
  int checked = -1;  // next_role's
  uint32_t bar = 0;  // a tab's tab bar
  ImVec2 group;      // where the root's child window holding it begins (the root's own: the item itself)
};

struct Figure {
  uint32_t id = 0, root = 0;
  ImRect bb;
  ImVec2 group;
  std::string title, summary, table;
};

// A text item as ImGui's log wrote it (Text, TextWrapped, a progress bar's words: items without an id), with
// where it was laid out and the view of the window it is in. Its lines are those of the text ('\n'); a
// wrapped paragraph is one line.
struct Logged {
  const ImGuiWindow* window = nullptr;
  uint32_t root = 0;
  ImRect item, clip;
  std::vector<std::string> lines;
  bool newline = false;  // the log ended a line after the last piece: the next piece of this item starts one
};

struct TableMark {
  uint32_t table = 0, root = 0;  // ImGui's table id (looked up again at the frame's end), its window's root
  ImVec2 group;
  std::string title;
  std::vector<float> row_tops;  // where each row began (table_row), top to bottom; empty: rows by line
  // Each row's cells as ImGui's log wrote them, by column (log_cells): the text of cells scrolled out of view,
  // whose glyphs the font culled. Empty when the log could not be read (see RowsSoFar).
  std::vector<std::vector<std::string>> log_rows;
};

// A table's rows while it is drawn (table_row): where each began on screen and in ImGui's log, which the
// mirror's log mode (unclip) or the tests' capture keeps on. A top-level window's End() inside the table (a
// tooltip's) empties the log: the words before each row's start are kept to see that they are still there,
// and where they are not the rows are read from glyphs alone.
struct RowsSoFar {
  std::vector<float> tops;
  std::vector<int> log_at;         // the log's size when the row began; -1: the log was off
  std::vector<std::string> marks;  // the log's last bytes then
};

struct Collector {
  bool on = false;
  std::vector<Figure> figures;
  std::vector<TableMark> tables;
  std::map<uint32_t, RowsSoFar> row_tops;  // a table's id -> its rows so far (table_row)
  std::map<uint32_t, uint32_t> lists;      // a combo box's id -> the root window of its open list
  std::vector<Item> items;
  std::unordered_map<uint32_t, size_t> at;
  bool has_next_role = false, has_next_name = false;
  Role next_role = Role::button;
  int next_checked = -1;
  std::string next_name, next_value;
  bool has_spoken = false;  // next_name's: the next item's name instead of its label
  std::string spoken;
  std::string main_title;
  std::vector<uint32_t> presses;
  std::map<uint32_t, double> values;
  uint32_t focus_to = 0;  // focus()'s control, waiting for the frame that draws it
  uint32_t main = 0;
  bool acted = false;  // a press or value applied since the last tree
  // The mirror's log mode writes to `sink` (unclip), a stream whose every write is handed to log_write at
  // once: `log` is what ImGui logged since it opened (the tables' rows are read from it), `texts` each text
  // item logged this frame with where it lies.
  FILE* sink = nullptr;
  std::string log;
  std::vector<Logged> texts;
};

Collector& col() {
  static Collector c;
  return c;
}

// "Run##perf" -> "Run"; "###main" -> ""; ImGui's "##" hides what follows from the screen.
std::string shown_label(const char* label) {
  const char* end = label;
  while (*end && !(end[0] == '#' && end[1] == '#')) ++end;
  return std::string(label, end);
}

// Reading order in a window with columns of child windows (the perf panel's controls beside its results): a
// column is read whole before the next, so each item is placed by where its column (the root's direct child
// window that holds it) begins, then by its own row.
ImVec2 group_of(const ImGuiWindow* w, ImVec2 own) {
  const ImGuiWindow* root = w ? w->RootWindow : nullptr;
  if (!w || w == root) return own;
  while (w->ParentWindow && w->ParentWindow != root) w = w->ParentWindow;
  return w->Pos;
}

// A control scrolled out of its window's view is still the page's to reach: a screen reader's cursor and Tab
// go through a whole page, not only what is on screen. ImGui 1.86 gives a clipped item no label hook
// (ItemAdd returns before the widget calls ItemInfo), except in its log mode, which lays out every item,
// clipped or not, so that "copy the window" gets all of it (imgui.cpp IsClippedEx, TextEx's "can't skip when
// logging text"). The mirror turns that mode on while it collects, with its one side effect on what is shown
// turned off: tree nodes are not opened for the log (LogDepthToExpand below any depth). Glyphs outside the
// clip rect are still culled by the font, so the GPU draws the same pixels.
// End() of a top-level window (a tooltip's too) ends the log, so each item's hook turns it on again before
// ImGui's clipping test (on_add); the tests' own capture of each window's text (app.cpp) takes it over.
//
// Text scrolled out of view has no glyphs to read back (the font draws none outside the clip rect), but the
// log has its words. The log is written to a stream of our own (fopencookie, in glibc and in musl, hence
// Emscripten), unbuffered, so each piece reaches log_write while ImGui still holds where it goes: the
// window, the item just laid out (a text item has no id) and the line's top (LogRenderedText's LogLinePosY).
void log_write_text(const char* s, size_t n);

ssize_t log_write(void*, const char* s, size_t n) {
  col().log.append(s, n);
  log_write_text(s, n);
  return ssize_t(n);
}

int log_close(void*) {
  col().sink = nullptr;
  col().log.clear();  // as ImGui clears its buffer when End() ends a log: the tables see the break
  return 0;
}

void unclip() {
  ImGuiContext& g = *GImGui;
  Collector& c = col();
  if (!c.on || g.LogEnabled) return;
  c.sink = fopencookie(nullptr, "w", cookie_io_functions_t{nullptr, log_write, nullptr, log_close});
  if (c.sink) setvbuf(c.sink, nullptr, _IONBF, 0);
  g.LogEnabled = true, g.LogType = c.sink ? ImGuiLogType_File : ImGuiLogType_Buffer, g.LogFile = c.sink;
  g.LogDepthRef = 0, g.LogDepthToExpand = -1, g.LogLinePosY = FLT_MAX, g.LogLineFirstItem = true;
  g.LogNextPrefix = g.LogNextSuffix = nullptr;
  g.LogBuffer.clear();
  c.log.clear();
}

void stop_unclip() {
  ImGuiContext& g = *GImGui;
  if (g.LogEnabled && g.LogType == ImGuiLogType_File && g.LogFile == col().sink) ImGui::LogFinish();  // closes it
  if (g.LogEnabled && g.LogType == ImGuiLogType_Buffer) g.LogEnabled = false, g.LogType = ImGuiLogType_None;
  g.LogBuffer.clear();
}

// What the log holds so far: the mirror's own (log mode), or ImGui's buffer (the tests' capture to the
// clipboard); false when the log is off.
bool log_so_far(std::string_view& out) {
  const ImGuiContext& g = *GImGui;
  if (!g.LogEnabled) return false;
  if (g.LogType == ImGuiLogType_File && g.LogFile == col().sink && col().sink) return out = col().log, true;
  if (g.LogType == ImGuiLogType_File) return false;  // somebody else's file: not ours to read
  out = std::string_view(g.LogBuffer.c_str(), size_t(g.LogBuffer.size()));
  return true;
}

// A piece of the log: the words of the text item ImGui just laid out (LastItemData: a text item has no id; a
// control's label is its name in the tree, not text), appended to that item's entry. A piece logged where the
// item is not (a window's title, which Begin draws without an item) and a separator's dashes are not text.
void log_write_text(const char* s, size_t n) {
  Collector& c = col();
  const ImGuiContext& g = *GImGui;
  const ImGuiWindow* w = g.CurrentWindow;
  if (!c.on || !w) return;
  if (n == 1 && s[0] == '\n') {
    if (!c.texts.empty()) c.texts.back().newline = true;
    return;
  }
  const ImGuiLastItemData& last = g.LastItemData;
  if (last.ID != 0 || (w->RootWindow && (w->RootWindow->Flags & ImGuiWindowFlags_Tooltip))) return;
  if (g.CurrentTable) return;  // a table's cell: read as the table's (end_table), columns scrolled away too
  if (g.LogLinePosY < last.Rect.Min.y - 1 || g.LogLinePosY > last.Rect.Max.y + 1) return;
  const std::string_view piece(s, n);
  if (piece.find_first_not_of(" -|") == std::string_view::npos) return;  // indentation, a separator, a table's bars
  Logged* e = c.texts.empty() ? nullptr : &c.texts.back();
  if (!e || e->window != w || e->item.Min.x != last.Rect.Min.x || e->item.Min.y != last.Rect.Min.y ||
      e->item.Max.x != last.Rect.Max.x || e->item.Max.y != last.Rect.Max.y) {
    Logged next;
    next.window = w, next.root = w->RootWindow ? w->RootWindow->ID : w->ID;
    next.item = last.Rect, next.clip = w->ClipRect;
    next.lines.emplace_back();
    c.texts.push_back(std::move(next));
    e = &c.texts.back();
  } else if (e->newline) {
    e->lines.emplace_back();
  }
  e->newline = false;
  e->lines.back().append(piece);
}

void on_add(ImGuiID id, float x0, float y0, float x1, float y1) {
  Collector& c = col();
  if (!c.on || id == 0 || c.at.count(id)) return;
  unclip();
  ImGuiContext& g = *GImGui;
  ImGuiWindow* w = g.CurrentWindow;
  if (id == c.focus_to && w) {
    // Inside ItemAdd the window's navigation layer and focus scope are this item's, as SetFocusID needs. It
    // hides the highlight unless the keyboard activated something: the page's focus is the keyboard's.
    ImGui::SetFocusID(id, w);
    g.NavDisableHighlight = false, g.NavDisableMouseHover = true;
    // A control scrolled out of its window's view (it is mirrored all the same) comes into view, as ImGui's
    // own navigation brings it, so a sighted keyboard user sees where the screen reader is.
    if (!ImRect(x0, y0, x1, y1).Overlaps(w->ClipRect)) ImGui::ScrollToBringRectIntoView(w, ImRect(x0, y0, x1, y1));
    c.focus_to = 0, c.acted = true;
  }
  if (!w || (w->Flags & ImGuiWindowFlags_Tooltip)) return;
  if (id == w->MoveId) return;  // a title bar: its window's region says it
  Item it;
  it.id = id;
  it.root = w->RootWindow ? w->RootWindow->ID : w->ID;
  it.bb = ImRect(x0, y0, x1, y1);
  it.full = g.LastItemData.ID == id ? g.LastItemData.Rect : it.bb;  // ItemAdd's whole rectangle, label and all
  it.full.Add(it.bb);
  it.visible = it.bb.Overlaps(w->ClipRect);
  it.in_popup = w->RootWindow && (w->RootWindow->Flags & ImGuiWindowFlags_Popup);
  it.group = group_of(w, it.bb.Min);
  if (c.has_next_role) {
    it.role = c.next_role, it.has_role = true, it.checked = c.next_checked;
    c.has_next_role = false, c.next_checked = -1;
  }
  if (c.has_spoken) it.spoken = c.spoken, it.has_spoken = true, c.has_spoken = false;
  if (c.has_next_name)
    it.label = shown_label(c.next_name.c_str()), it.value = c.next_value, it.has_info = true, c.has_next_name = false;
  c.at[id] = c.items.size();
  c.items.push_back(std::move(it));
}

void on_info(ImGuiID id, const char* label, int flags) {
  Collector& c = col();
  if (!c.on) return;
  auto f = c.at.find(id);
  if (f == c.at.end()) return;
  Item& it = c.items[f->second];
  if (it.has_info) return;
  it.has_info = true;
  it.label = it.has_spoken ? it.spoken : label ? shown_label(label) : std::string();
  it.flags = flags;
  const ImGuiContext& g = *GImGui;
  if (!it.has_role && g.LastItemData.ID == id && (g.LastItemData.InFlags & ImGuiItemFlags_Inputable))
    it.role = Role::field, it.has_role = true;  // a text field (a slider's own role comes from the widget layer)
}

}  // namespace

void begin_frame() {
  Collector& c = col();
  c.on = true;
  c.items.clear();
  c.at.clear();
  c.figures.clear();
  c.tables.clear();
  c.row_tops.clear();
  c.lists.clear();
  c.texts.clear();
  c.has_next_role = c.has_next_name = c.has_spoken = false;
  c.main = 0;
  hooks::item_sink() = {.add = on_add, .info = on_info};
  GImGui->TestEngineHookItems = true;
  unclip();
  // What the page asked for last frame: ImGui activates on its next NewFrame (NavUpdate), as if by keyboard.
  for (uint32_t id : c.presses) ImGui::ActivateItem(id), c.acted = true;
  c.presses.clear();
}

void note_value(uint32_t id, Role role, double now, double lo, double hi, const std::string& text, const char* label) {
  Collector& c = col();
  if (!c.on) return;
  auto f = c.at.find(id);
  if (f == c.at.end() || c.items[f->second].label.empty()) {
    // A field with step buttons is a group: a text field without a label (its id is the field's own, as
    // ImGui hashes "" under the label's id), "-" and "+". The group is the control, named by its label; the
    // step buttons say what they step.
    ImGuiContext& g = *GImGui;
    const ImRect bb = g.LastItemData.Rect;
    const std::string name = shown_label(label);
    for (Item& it : c.items) {
      if (!bb.Contains(it.bb) || it.id == id) continue;
      if (it.label == "-") it.label = "Decrease " + name;
      if (it.label == "+") it.label = "Increase " + name;
    }
    if (f == c.at.end()) {
      Item it;
      it.id = id, it.root = g.CurrentWindow->RootWindow ? g.CurrentWindow->RootWindow->ID : g.CurrentWindow->ID;
      it.visible = bb.Overlaps(g.CurrentWindow->ClipRect);
      c.at[id] = c.items.size();
      c.items.push_back(std::move(it));
      f = c.at.find(id);
    }
    Item& it = c.items[f->second];
    it.bb = bb, it.has_info = true, it.label = name;
  }
  Item& it = c.items[f->second];
  it.has_value = true, it.has_role = true;
  it.role = role, it.now = now, it.lo = lo, it.hi = hi, it.value = text;
}

void mark_main(const std::string& title) {
  const ImGuiWindow* w = GImGui->CurrentWindow;
  if (w) col().main = w->RootWindow ? w->RootWindow->ID : w->ID;
  col().main_title = title;
}

void next_role(Role r, int checked) {
  col().has_next_role = true;
  col().next_role = r;
  col().next_checked = checked;
}

void next_name(const std::string& name) {
  Collector& c = col();
  c.has_spoken = true;
  c.spoken = name;
}

bool collecting() { return col().on; }

void list_open(uint32_t id) {
  Collector& c = col();
  const ImGuiWindow* w = GImGui->CurrentWindow;
  if (c.on && w) c.lists[id] = w->RootWindow ? w->RootWindow->ID : w->ID;
}

void figure(const std::string& title, const std::string& summary, const std::string& table_tsv, float x0, float y0,
            float x1, float y1) {
  Collector& c = col();
  ImGuiWindow* w = GImGui->CurrentWindow;
  if (!c.on || !w) return;
  Figure f;
  f.root = w->RootWindow ? w->RootWindow->ID : w->ID;
  f.id = ImHashStr(title.c_str(), 0, ImHashStr("figure", 0, f.root));
  for (const Figure& o : c.figures)
    if (o.id == f.id) return;  // drawn twice in one frame (a window's second pass): the first is kept
  f.bb = ImRect(x0, y0, x1, y1);
  f.group = group_of(w, f.bb.Min);
  f.title = title, f.summary = summary, f.table = table_tsv;
  c.figures.push_back(std::move(f));
}

// The cells ImGui's log wrote for one row, by column: TableBeginCell writes "|" before each cell and TableEndRow
// one after the row, so the text between two is a cell (a button's "[ " and " ]" decoration taken off). Empty
// when the row holds more cells than the table has columns (a "|" in a cell's text: not to be guessed at).
std::vector<std::string> log_cells(const char* a, const char* b, int columns, bool ended) {
  std::vector<std::string> cells;
  const char* start = static_cast<const char*>(std::memchr(a, '|', size_t(b - a)));
  if (!start) return cells;
  for (const char* p = start + 1;; ++p) {
    if (p < b && *p != '|') continue;
    std::string cell;
    for (const char* q = start + 1; q < p; ++q) cell += (*q == '\n' || *q == '\r' || *q == '\t') ? ' ' : *q;
    std::string tidy;  // one space between words
    for (char ch : cell)
      if (ch != ' ' || (!tidy.empty() && tidy.back() != ' ')) tidy += ch;
    while (!tidy.empty() && tidy.back() == ' ') tidy.pop_back();
    if (tidy.size() >= 4 && tidy.rfind("[ ", 0) == 0 && tidy.compare(tidy.size() - 2, 2, " ]") == 0)
      tidy = tidy.substr(2, tidy.size() - 4);
    cells.push_back(std::move(tidy));
    if (p >= b) break;
    start = p;
  }
  if (ended && !cells.empty()) cells.pop_back();  // what follows TableEndRow's "|": the next row's
  if (int(cells.size()) > columns) cells.clear();
  return cells;
}

void table(const std::string& title) {
  Collector& c = col();
  const ImGuiTable* t = ImGui::GetCurrentTable();
  ImGuiWindow* w = GImGui->CurrentWindow;
  if (!c.on || !t || !w) return;
  TableMark m;
  m.table = t->ID, m.root = w->RootWindow ? w->RootWindow->ID : w->ID;
  m.group = group_of(t->OuterWindow ? t->OuterWindow : w, t->OuterRect.Min);
  m.title = title;
  if (auto r = c.row_tops.find(t->ID); r != c.row_tops.end()) {
    const RowsSoFar& rows = r->second;
    m.row_tops = rows.tops;
    // The log's rows, where it ran unbroken from the first row to here (the last row's "|" comes in EndTable).
    std::string_view log;
    const int end = log_so_far(log) ? int(log.size()) : -1;
    const char* base = log.data();
    bool whole = end >= 0;
    for (size_t i = 0; whole && i < rows.log_at.size(); ++i) {
      const int at = rows.log_at[i];
      whole = at >= 0 && at <= (i + 1 < rows.log_at.size() ? rows.log_at[i + 1] : end) &&
              std::string_view(base + at - rows.marks[i].size(), rows.marks[i].size()) == rows.marks[i];
    }
    for (size_t i = 0; whole && i < rows.log_at.size(); ++i) {
      const bool last = i + 1 == rows.log_at.size();
      m.log_rows.push_back(
          log_cells(base + rows.log_at[i], base + (last ? end : rows.log_at[i + 1]), t->ColumnsCount, !last));
    }
    c.row_tops.erase(r);
  }
  c.tables.push_back(std::move(m));
}

void table_row() {
  Collector& c = col();
  const ImGuiTable* t = ImGui::GetCurrentTable();
  if (!c.on || !t) return;
  RowsSoFar& r = c.row_tops[t->ID];
  r.tops.push_back(t->RowPosY1);
  std::string_view log;
  const int at = log_so_far(log) ? int(log.size()) : -1;
  r.log_at.push_back(at);
  r.marks.push_back(at > 0 ? std::string(log.substr(size_t(std::max(0, at - 24)), size_t(at - std::max(0, at - 24))))
                           : "");
}

void next_item(Role r, const std::string& name, const std::string& value) {
  Collector& c = col();
  c.has_next_role = c.has_next_name = true;
  c.next_checked = -1;
  c.next_role = r, c.next_name = name, c.next_value = value;
}

// ---------------------------------------------------------------------------------------------------------
// [actions]

void press(uint32_t id) { col().presses.push_back(id); }
void focus(uint32_t id) { col().focus_to = id; }

uint32_t keyboard_focus() {
  const ImGuiContext& g = *GImGui;
  // Not while a field takes typing (a slider's Ctrl+click entry): the keys must stay with ImGui.
  if (!g.NavWindow || g.NavDisableHighlight || g.ActiveId != 0 || g.IO.WantTextInput) return 0;
  return g.NavId;
}
void set_value(uint32_t id, double v) { col().values[id] = v; }
bool take_value(uint32_t id, double& v) {
  auto& values = col().values;
  auto f = values.find(id);
  if (f == values.end()) return false;
  v = f->second;
  values.erase(f);
  col().acted = true;
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// [tree]

namespace {

Node node_of(const Item& it) {
  Node n;
  n.id = it.id, n.parent = it.root, n.name = it.label, n.visible = it.visible;
  n.x = int(std::lround(it.bb.Min.x)), n.y = int(std::lround(it.bb.Min.y));
  n.w = int(std::lround(it.bb.GetWidth())), n.h = int(std::lround(it.bb.GetHeight()));
  n.value = it.value;
  if (it.has_value) n.now = it.now, n.lo = it.lo, n.hi = it.hi;
  if (it.has_role) {
    n.role = it.role;
  } else if (it.in_popup && !(it.flags & ImGuiItemStatusFlags_Openable)) {
    n.role = Role::option;  // an entry of a combo's list or a menu (ImGui 1.86's Selectable reports no state)
  } else if (it.flags & ImGuiItemStatusFlags_Checkable) {
    n.role = Role::checkbox;
  } else if (it.flags & ImGuiItemStatusFlags_Openable) {
    n.role = Role::disclosure;
  } else {
    n.role = Role::button;
  }
  if (it.flags & ImGuiItemStatusFlags_Checkable) n.checked = (it.flags & ImGuiItemStatusFlags_Checked) ? 1 : 0;
  if (it.checked >= 0) n.checked = int8_t(it.checked);
  if (it.flags & ImGuiItemStatusFlags_Openable) n.expanded = (it.flags & ImGuiItemStatusFlags_Opened) ? 1 : 0;
  return n;
}

// Tabs have no ImGui label hook in 1.86: their names and which is selected come from the tab bars.
void name_tabs(std::vector<Item>& items, const std::unordered_map<uint32_t, size_t>& at) {
  ImGuiContext& g = *GImGui;
  for (int i = 0; i < g.TabBars.GetMapSize(); ++i) {
    ImGuiTabBar* bar = g.TabBars.TryGetMapData(i);
    if (!bar || bar->PrevFrameVisible < g.FrameCount - 1) continue;
    for (const ImGuiTabItem& tab : bar->Tabs) {
      auto f = at.find(tab.ID);
      if (f == at.end() || tab.NameOffset < 0) continue;
      Item& it = items[f->second];
      it.label = shown_label(bar->GetTabName(&tab));
      it.has_info = true, it.has_role = true, it.role = Role::tab, it.bar = bar->ID;
      it.flags = ImGuiItemStatusFlags_Checkable | (bar->SelectedTabId == tab.ID ? ImGuiItemStatusFlags_Checked : 0);
    }
  }
}

std::string region_name(const ImGuiWindow* w) {
  std::string name = shown_label(w->Name);
  if (!name.empty()) return name;
  const char* hidden = std::strstr(w->Name, "##");
  name = hidden ? hidden + 2 : w->Name;
  while (!name.empty() && name.front() == '#') name.erase(name.begin());
  return name;
}

// The text lines of a window that are not inside one of its controls (a button's label is its name) or a
// table (read as its cells): the glyphs it drew in view, and from ImGui's log the text items laid out beyond
// the view (scrolled away, or cut by the window's edge), whole and marked not visible when none of it shows,
// and those of several lines, a node each. A text item partly in view is read from the log alone: its words,
// not what the edge left of them.
void add_text(const ImGuiWindow* root, const std::vector<DrawnLine>& lines, const std::vector<Logged>& logged,
              const std::vector<const Item*>& controls, const std::vector<ImRect>& covered, std::vector<Node>& out,
              std::vector<ImVec2>& groups) {
  // Words inside a control (its label: a slider's words beside its frame too) or over a table or a chart (read
  // as its cells or its data) are said there; a screen reader heard them twice ("tensor (tp) slider 8", then "8
  // tensor (tp)"; a chart's table, then its axis labels).
  const auto inside = [&](ImVec2 mid) {
    for (const Item* c : controls)
      if (c->full.Contains(mid)) return true;
    for (const ImRect& t : covered)
      if (t.Contains(mid)) return true;
    return false;
  };
  const auto add = [&](const std::string& text, const ImRect& box, bool visible, const ImGuiWindow* in) {
    Node n;  // its id: its place in the region's reading order (end_frame)
    n.parent = root->ID, n.role = Role::text, n.name = text, n.visible = visible;
    n.x = int(std::lround(box.Min.x)), n.y = int(std::lround(box.Min.y));
    n.w = int(std::lround(box.GetWidth())), n.h = int(std::lround(box.GetHeight()));
    out.push_back(std::move(n));
    groups.push_back(group_of(in, box.Min));
  };
  std::vector<ImRect> from_log;  // the text items read from the log: their glyphs are not read again
  for (const Logged& e : logged) {
    ImRect clip = e.clip;
    clip.Expand(0.5f);
    // A text item of one line wholly in view is read from its glyphs, as drawn. One of several lines (a
    // paragraph wrapped by the widget layer) is one node, its lines joined, wherever it is: Orca read such a
    // paragraph a drawn line at a time.
    if (e.root != root->ID || (clip.Contains(e.item) && e.lines.size() < 2) || inside(e.item.GetCenter())) continue;
    std::string text;
    for (const std::string& line : e.lines) {
      const size_t a = line.find_first_not_of(' '), b = line.find_last_not_of(' ');
      if (a != std::string::npos) text += (text.empty() ? "" : " ") + line.substr(a, b - a + 1);
    }
    if (text.empty()) continue;
    from_log.push_back(e.item);
    add(text, e.item, e.item.Overlaps(e.clip), e.window);
  }
  std::map<const ImDrawList*, const ImGuiWindow*> owner;
  for (const ImGuiWindow* w : GImGui->Windows)
    if (w->RootWindow == root) owner[w->DrawList] = w;
  for (const DrawnLine& line : lines) {
    std::string text;
    ImRect box(FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX);
    for (size_t i = 0; i < line.glyphs.size(); ++i) {
      const DrawnGlyph& gl = line.glyphs[i];
      const ImRect cell(gl.x0, gl.y0, gl.x1, gl.y1);
      if (!gl.visible || inside(cell.GetCenter())) continue;
      const size_t end = i + 1 < line.glyphs.size() ? line.glyphs[i + 1].at : line.text.size();
      if (text.empty() && line.text.compare(gl.at, end - gl.at, " ") == 0) continue;
      text += line.text.substr(gl.at, end - gl.at);
      box.Add(cell);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    if (text.empty()) continue;
    const ImVec2 mid = box.GetCenter();
    if (std::any_of(from_log.begin(), from_log.end(), [&](const ImRect& r) { return r.Contains(mid); })) continue;
    const auto o = owner.find(line.list);
    add(text, box, true, o == owner.end() ? root : o->second);
  }
}

// A table's cells as tab-separated lines (core/chart_data.h's form): the glyphs drawn inside its rectangle,
// each in the column whose span holds its centre, a row a drawn line (lines within 2 px are one row) or, with
// the rows' tops, the row begun at or above it. Where ImGui's log gave the rows (log_rows), every column and
// row is there, those scrolled out of view too, each cell as the log wrote it (glyphs where it has none). The header
// is the columns' names; a drawn header row that repeats them is not a row again.
std::string table_cells(const ImGuiTable& t, const std::vector<DrawnLine>& lines, const std::vector<float>& row_tops,
                        const std::vector<std::vector<std::string>>& log_rows) {
  const bool logged = !log_rows.empty() && log_rows.size() == row_tops.size();
  std::vector<int> shown;
  std::vector<std::string> names;
  for (int c = 0; c < t.ColumnsCount; ++c) {
    // Hidden columns are left out; without the log, so are those scrolled out of view (the class's view).
    if (!t.Columns[c].IsEnabled) continue;
    if (!logged && (!t.Columns[c].IsVisibleX || t.Columns[c].MaxX <= t.Columns[c].MinX)) continue;
    shown.push_back(c);
    const char* name = ImGui::TableGetColumnName(&t, c);
    names.push_back(name ? shown_label(name) : std::string());
  }
  // The row a line is in: the last one begun at or above it (a cell wrapped onto more lines, or holding
  // two items, stays one row: the scenario gallery's titles and audiences).
  const auto row_of = [&](float at) {
    return int(std::upper_bound(row_tops.begin(), row_tops.end(), at + 1.0f) - row_tops.begin());
  };
  std::vector<std::pair<float, std::vector<std::string>>> rows;  // (y, cells)
  if (logged)
    for (float top : row_tops) rows.push_back({top, std::vector<std::string>(shown.size())});
  for (const DrawnLine& line : lines) {
    std::vector<std::string> cells(shown.size());
    float y = -1;
    for (size_t i = 0; i < line.glyphs.size(); ++i) {
      const DrawnGlyph& gl = line.glyphs[i];
      const ImVec2 mid((gl.x0 + gl.x1) / 2, (gl.y0 + gl.y1) / 2);
      if (!gl.visible || !t.OuterRect.Contains(mid)) continue;
      for (size_t k = 0; k < shown.size(); ++k) {
        const ImGuiTableColumn& col = t.Columns[shown[k]];
        if (mid.x < col.MinX || mid.x >= col.MaxX) continue;
        const size_t end = i + 1 < line.glyphs.size() ? line.glyphs[i + 1].at : line.text.size();
        cells[k] += line.text.substr(gl.at, end - gl.at);
        y = gl.y0;
        break;
      }
    }
    if (y < 0) continue;
    for (std::string& cell : cells) {
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
    }
    const int r = logged ? row_of(y) - 1 : -1;
    if (logged && r < 0) continue;  // above the first row: the header ImGui drew (TableHeadersRow)
    const bool same = logged || (!rows.empty() && (row_tops.empty() ? std::fabs(rows.back().first - y) <= 2
                                                                    : row_of(rows.back().first) == row_of(y)));
    auto& into = logged ? rows[size_t(r)].second : rows.empty() ? cells : rows.back().second;
    if (same) {
      for (size_t k = 0; k < cells.size(); ++k)
        if (!cells[k].empty()) into[k] += (into[k].empty() ? "" : " ") + cells[k];
    } else {
      rows.push_back({y, std::move(cells)});
    }
  }
  if (logged)  // the log's words, whole where the glyphs are cut by the view's edge; a row it lost: the glyphs
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t k = 0; k < shown.size(); ++k)
        if (size_t(shown[k]) < log_rows[r].size() && !log_rows[r].empty())
          rows[r].second[k] = log_rows[r][size_t(shown[k])];
  const bool named = std::any_of(names.begin(), names.end(), [](const std::string& n) { return !n.empty(); });
  std::string out;
  auto add = [&](const std::vector<std::string>& cells) {
    if (!out.empty()) out += '\n';
    for (size_t k = 0; k < cells.size(); ++k) {
      if (k > 0) out += '\t';
      for (char ch : cells[k]) out += ch == '\t' || ch == '\n' ? ' ' : ch;
    }
  };
  size_t first = 0;
  if (named) {
    add(names);
    // The header row ImGui drew (its cells are the names; a name cut by its column's width is shorter).
    bool header = !rows.empty();
    for (size_t k = 0; header && k < names.size(); ++k)
      header = rows.front().second[k].empty() || names[k].rfind(rows.front().second[k], 0) == 0;
    if (header) first = 1;
  }
  for (size_t r = first; r < rows.size(); ++r) add(rows[r].second);
  return out;
}

}  // namespace

void skip_frame() {
  stop_unclip();
  col().on = false;
  col().focus_to = 0;  // not drawn this frame: a control that went away
  hooks::item_sink() = {};
}

bool acted() {
  const Collector& c = col();
  return c.acted || !c.presses.empty() || !c.values.empty() || c.focus_to != 0;
}

uint64_t frame_shape() {
  const Collector& c = col();
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const Item& it : c.items) mix(it.id);
  for (const ImGuiWindow* w : GImGui->Windows)
    if (w->WasActive && !w->Hidden && w->RootWindow == w) mix(w->ID);
  return h;
}

Tree end_frame(const std::string& narration, const std::string& status) {
  Collector& c = col();
  stop_unclip();
  c.on = false;
  c.acted = false;
  c.focus_to = 0;
  hooks::item_sink() = {};
  ImGuiContext& g = *GImGui;
  name_tabs(c.items, c.at);

  // The regions: visible top-level windows (a popup, a combo's list and a modal included; tooltips not),
  // read left to right, then top to bottom, the status bar along the bottom last.
  std::vector<ImGuiWindow*> roots;
  for (ImGuiWindow* w : g.Windows)
    if (w->WasActive && !w->Hidden && w->RootWindow == w && !(w->Flags & ImGuiWindowFlags_Tooltip)) roots.push_back(w);
  const float H = ImGui::GetIO().DisplaySize.y;
  auto along_bottom = [&](const ImGuiWindow* w) { return w->Pos.y > 0.9f * H; };
  std::stable_sort(roots.begin(), roots.end(), [&](const ImGuiWindow* a, const ImGuiWindow* b) {
    if (along_bottom(a) != along_bottom(b)) return !along_bottom(a);
    if (a->Pos.x != b->Pos.x) return a->Pos.x < b->Pos.x;
    return a->Pos.y < b->Pos.y;
  });

  Tree t;
  for (ImGuiWindow* w : roots) {
    Node r;
    r.id = w->ID, r.role = Role::region, r.main = w->ID == c.main;
    r.name = r.main ? c.main_title : region_name(w);  // ImGui keeps a "###id" window's first title
    r.x = int(std::lround(w->Pos.x)), r.y = int(std::lround(w->Pos.y));
    r.w = int(std::lround(w->Size.x)), r.h = int(std::lround(w->Size.y));
    t.nodes.push_back(r);
    std::vector<const Item*> controls;
    for (const Item& it : c.items)
      if (it.root == w->ID && it.has_info) controls.push_back(&it);
    std::vector<Node> in;
    std::vector<ImVec2> groups;
    for (const Item* it : controls) {
      in.push_back(node_of(*it)), groups.push_back(it->group);
      if (in.back().role != Role::combo) continue;
      const auto open = c.lists.find(it->id);  // its list's options are the children of that window's listbox
      in.back().expanded = open != c.lists.end();
      in.back().controls = open != c.lists.end() ? ImHashStr("listbox", 0, open->second) : 0;
    }
    // A chart is a figure (read where it is drawn) holding its data as a table over the drawing.
    std::map<uint32_t, Node> tables;
    for (const Figure& f : c.figures) {
      if (f.root != w->ID) continue;
      Node n;
      n.id = f.id, n.parent = w->ID, n.role = Role::figure, n.name = f.title, n.value = f.summary;
      n.x = int(std::lround(f.bb.Min.x)), n.y = int(std::lround(f.bb.Min.y));
      n.w = int(std::lround(f.bb.GetWidth())), n.h = int(std::lround(f.bb.GetHeight()));
      Node table = n;
      table.id = ImHashStr("table", 0, f.id), table.parent = f.id, table.role = Role::table;
      table.name = f.title + ": data", table.value = f.table;
      tables[f.id] = std::move(table);
      in.push_back(std::move(n)), groups.push_back(f.group);
    }
    // A table drawn with ImGui's tables is a table node over it, its cells read from what it drew.
    const std::vector<DrawnLine> lines = drawn_lines(window_draw_lists(w));
    std::vector<ImRect> covered;
    for (const TableMark& m : c.tables) {
      const ImGuiTable* tb = m.root == w->ID ? g.Tables.GetByKey(m.table) : nullptr;
      if (!tb) continue;
      Node n;
      n.id = ImHashStr(m.title.c_str(), 0, m.table), n.parent = w->ID, n.role = Role::table;
      n.name = m.title, n.value = table_cells(*tb, lines, m.row_tops, m.log_rows);
      n.x = int(std::lround(tb->OuterRect.Min.x)), n.y = int(std::lround(tb->OuterRect.Min.y));
      n.w = int(std::lround(tb->OuterRect.GetWidth())), n.h = int(std::lround(tb->OuterRect.GetHeight()));
      covered.push_back(tb->OuterRect);
      in.push_back(std::move(n)), groups.push_back(m.group);
    }
    for (const Figure& f : c.figures)
      if (f.root == w->ID) covered.push_back(f.bb);
    add_text(w, lines, c.texts, controls, covered, in, groups);
    // Reading order: column by column (group_of), then rows top to bottom (a row is 4 px: a label and its
    // control share one), then left to right.
    std::vector<size_t> order(in.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto key = [&](size_t i) { return std::make_tuple(int(groups[i].y) / 4, int(groups[i].x), in[i].y / 4, in[i].x); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    // A line of text is known by its place in the region's reading order: a line whose words change (a
    // number) keeps its node, and a line added below the view is a node added at the end, not every line's
    // node renamed (the page then moves no node, and a focused control keeps its focus).
    uint32_t line = 0;
    for (size_t i : order)
      if (in[i].role == Role::text) in[i].id = ImHashData(&line, sizeof line, w->ID), ++line;
    // ARIA gives tabs and options a required parent: a tab bar's tabs are the children of a tablist, a list's
    // options (a combo box's, a menu's) of a listbox, each placed where its first member is read, over their
    // hull.
    const uint32_t list_id = ImHashStr("listbox", 0, w->ID);
    auto container = [&](size_t i) -> std::pair<uint32_t, Role> {
      if (i >= controls.size()) return {0, Role::text};
      if (controls[i]->bar) return {controls[i]->bar, Role::tablist};
      if (in[i].role == Role::option) return {list_id, Role::listbox};
      return {0, Role::text};
    };
    std::map<uint32_t, ImRect> hulls;
    for (size_t i = 0; i < controls.size(); ++i)
      if (const uint32_t c = container(i).first)
        hulls.try_emplace(c, controls[i]->bb).first->second.Add(controls[i]->bb);
    std::set<uint32_t> placed;
    for (size_t i : order) {
      const auto [c, role] = container(i);
      if (c && placed.insert(c).second) {
        const ImRect& b = hulls[c];
        Node l;
        l.id = c, l.parent = w->ID, l.role = role;
        l.x = int(std::lround(b.Min.x)), l.y = int(std::lround(b.Min.y));
        l.w = int(std::lround(b.GetWidth())), l.h = int(std::lround(b.GetHeight()));
        t.nodes.push_back(l);
      }
      if (c) in[i].parent = c;
      const uint32_t id = in[i].id;
      t.nodes.push_back(std::move(in[i]));
      if (auto tb = tables.find(id); tb != tables.end()) t.nodes.push_back(std::move(tb->second));
    }
  }
  if (!narration.empty()) {
    Node n;
    n.id = 0xA11E0001u, n.role = Role::live, n.name = "Narration", n.value = narration;
    t.nodes.push_back(n);
  }
  Node s;
  s.id = 0xA11E0002u, s.role = Role::status, s.name = "Status", s.value = status;
  t.nodes.push_back(s);
  if (const uint32_t f = keyboard_focus())
    for (const Node& n : t.nodes)
      if (n.id == f && c.at.count(f)) t.focus = f;  // a control drawn this frame (not a region or a line)
  return t;
}

// ---------------------------------------------------------------------------------------------------------
// [diff]

namespace {

nlohmann::json fields(const Node& n, const Node* was, float W, float H) {
  nlohmann::json j;
  auto pct = [](int v, float d) { return d > 0 ? std::round(10000.0 * v / d) / 100.0 : 0.0; };
  if (!was || was->role != n.role) j["role"] = role_name(n.role);
  if (!was || was->parent != n.parent) j["parent"] = n.parent;
  if (!was || was->name != n.name) j["name"] = n.name;
  if (!was || was->value != n.value) j["value"] = n.value;
  if (!was || was->now != n.now || was->lo != n.lo || was->hi != n.hi) j["range"] = {n.now, n.lo, n.hi};
  if (!was || was->checked != n.checked) j["checked"] = n.checked;
  if (!was || was->expanded != n.expanded) j["expanded"] = n.expanded;
  if (!was || was->controls != n.controls) j["controls"] = n.controls;
  if (!was || was->visible != n.visible) j["visible"] = n.visible;
  if (!was || was->main != n.main) j["main"] = n.main;
  if (!was || was->x != n.x || was->y != n.y || was->w != n.w || was->h != n.h)
    j["box"] = {pct(n.x, W), pct(n.y, H), pct(n.w, W), pct(n.h, H)};
  return j;
}

}  // namespace

std::string diff(const Tree& before, const Tree& after, float W, float H) {
  std::unordered_map<uint32_t, const Node*> was, now;
  for (const Node& n : before.nodes) was[n.id] = &n;
  for (const Node& n : after.nodes) now[n.id] = &n;
  nlohmann::json ops = nlohmann::json::array();
  for (const Node& n : before.nodes)
    if (!now.count(n.id)) ops.push_back({{"op", "del"}, {"id", n.id}});
  for (const Node& n : after.nodes) {
    auto f = was.find(n.id);
    if (f == was.end()) {
      nlohmann::json j = fields(n, nullptr, W, H);
      j["op"] = "add", j["id"] = n.id;
      ops.push_back(std::move(j));
    } else if (!(*f->second == n)) {
      nlohmann::json j = fields(n, f->second, W, H);
      if (j.empty()) continue;
      j["op"] = "set", j["id"] = n.id;
      ops.push_back(std::move(j));
    }
  }
  // Reading order, for each parent whose children changed order or membership.
  auto children = [](const Tree& t) {
    std::map<uint32_t, std::vector<uint32_t>> m;
    for (const Node& n : t.nodes) m[n.parent].push_back(n.id);
    return m;
  };
  const auto cb = children(before), ca = children(after);
  for (const auto& [parent, ids] : ca) {
    auto f = cb.find(parent);
    if (f == cb.end() || f->second != ids) ops.push_back({{"op", "order"}, {"id", parent}, {"ids", ids}});
  }
  // Last, once its node is in place: ImGui's keyboard navigation moved, and the DOM's focus follows.
  if (after.focus != 0 && after.focus != before.focus) ops.push_back({{"op", "focus"}, {"id", after.focus}});
  return ops.empty() ? std::string() : ops.dump();
}

}  // namespace mc::ui::access
