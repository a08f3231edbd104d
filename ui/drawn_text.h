// drawn_text.h - the text a frame really puts on screen, read back from ImGui's draw lists (each glyph quad
// of the font atlas, where it lies), and a mask drawn over chosen words. ImGui's log (the tests' text
// capture) records text laid out outside a window's clip rect too; a class sees only what is inside it, so a
// test that asks "can the class read this number" reads the glyphs instead. The mask works on the same
// glyphs, so it covers a value whichever panel, table or chart label drew it.
#pragma once

#include <string>
#include <vector>

struct ImDrawList;
struct ImGuiWindow;

namespace mc::ui {

struct DrawnGlyph {
  size_t at = 0;         // its first byte in DrawnLine::text
  unsigned vtx = 0;      // its first vertex (of 4) in the line's draw list
  bool visible = false;  // 70% of it or more inside its draw command's clip rect and the display (read as shown)
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // its cell: pen position to advance, the font's line height
};

struct DrawnLine {
  ImDrawList* list = nullptr;
  std::string text;  // UTF-8; a gap as wide as a space or wider is one space
  std::vector<DrawnGlyph> glyphs;
};

// The draw lists of window `root` and of its child windows (a table, a chart, a scrolled region).
std::vector<ImDrawList*> window_draw_lists(const ImGuiWindow* root);
// The lines of text drawn in `lists` this frame, top to bottom (call after the windows' End()).
std::vector<DrawnLine> drawn_lines(const std::vector<ImDrawList*>& lists);
// What a class can read of `lists`: the visible glyphs, one line of text per drawn line ('\n' between).
std::string visible_text(const std::vector<ImDrawList*>& lists);
// True if `text` contains `word` (whitespace runs as one space) where `word`'s digits do not continue a
// longer number ("98.3" is not in "198.31").
bool contains_word(const std::string& text, const std::string& word);
// Draws every occurrence of each of `words` in `lists` as a solid box (its glyphs become blocks of one
// colour), visible or not; returns how many occurrences were masked.
int mask_words(const std::vector<ImDrawList*>& lists, const std::vector<std::string>& words);

}  // namespace mc::ui
